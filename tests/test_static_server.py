"""The static server that serves the local Perfetto UI and the built site to the browser tests
(generators/perfetto_ui.py): files with the headers the UI needs, and a page closed halfway
through a download is not an error worth a traceback."""

from __future__ import annotations

import socket
import struct
import threading
import time
import urllib.request
from pathlib import Path

import pytest

from generators.perfetto_ui import static_servers


def _requests_in_flight() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if "process_request_thread" in t.name]


def test_serves_files_with_cors(tmp_path: Path) -> None:
    (tmp_path / "trace.json.gz").write_bytes(b"\x1f\x8b not really")
    with static_servers() as servers:
        origin = servers.serve(tmp_path)
        with urllib.request.urlopen(f"{origin}/trace.json.gz", timeout=10) as response:
            assert response.read() == b"\x1f\x8b not really"
            assert response.headers["Access-Control-Allow-Origin"] == "*"
            assert response.headers["Content-Type"] == "application/gzip"


def test_a_download_cut_short_prints_no_traceback(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A reader who closes the tab while a large trace is on its way: the server's write fails
    (the connection is reset), and the test run's output stays clean."""
    (tmp_path / "large.bin").write_bytes(b"\0" * (32 << 20))
    with static_servers() as servers:
        host, port = servers.serve(tmp_path).removeprefix("http://").split(":")
        others = set(_requests_in_flight())  # another server's, in a process that runs several
        client = socket.create_connection((host, int(port)), timeout=10)
        client.sendall(b"GET /large.bin HTTP/1.1\r\nHost: x\r\n\r\n")
        assert client.recv(1024).startswith(b"HTTP/1.0 200")
        # Close with a reset, as a browser tearing down a tab does: the next write fails.
        client.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        client.close()
        deadline = time.monotonic() + 20
        while set(_requests_in_flight()) - others and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not set(_requests_in_flight()) - others, (
            "the server kept writing to a closed connection"
        )
    assert "Traceback" not in capsys.readouterr().err
