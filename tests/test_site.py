"""The site build: strict, complete, every artifact used, every reference resolvable."""

from __future__ import annotations

import html
import importlib.util
import json
import os
import posixpath
import re
import shutil
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path
from types import SimpleNamespace

import markdown
import pytest

from generators.derive import Rows, to_markdown
from generators.figures import FigureContext, render_svg
from generators.i18n import LANGUAGES, figure_file
from generators.queries import load_query
from generators.steps import STEPS
from generators.store import CAPTURE_FILE, KEY_AVERAGES_FILE, MANIFEST_FILE, sha256_file
from generators.trace_json import load_events
from generators.units import format_value
from tests.reference_traces import A100_ADD

REPO = Path(__file__).resolve().parents[1]
DOCS = REPO / "docs"
ARTIFACTS = REPO / "artifacts"


def load_hook():
    spec = importlib.util.spec_from_file_location("artifacts_hook", DOCS / "hooks" / "artifacts.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while the file runs
    spec.loader.exec_module(module)
    return module


hook = load_hook()


def build(dest: Path, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "-d", str(dest)],
        cwd=REPO,
        env={
            **os.environ,
            "NO_MKDOCS_2_WARNING": "1",
            # its own notebook cache: builds running at once must not share one (tests/serving.py)
            "PROFILING_GUIDE_NOTEBOOK_CACHE": f"{dest}.notebook-cache",
            **env,
        },
        capture_output=True,
        text=True,
        check=False,
        timeout=600,
    )


@pytest.fixture(scope="session")
def site(built_site: Path) -> Path:
    """The English edition of the site built once per test run (tests/serving.py)."""
    return built_site


def load_doctor_hook():
    spec = importlib.util.spec_from_file_location("doctor_hook", DOCS / "hooks" / "doctor.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


doctor_hook = load_doctor_hook()
EDITION_CONFIG = {"extra": {}, "site_url": ""}


def page_markdown(hook_module, rel: str) -> str:
    """What a hook's ``on_page_markdown`` makes of the page ``docs/<rel>``, as a build calls it."""
    file = SimpleNamespace(src_uri=rel, url=rel.removesuffix(".md") + "/")
    text = (DOCS / rel).read_text()
    return hook_module.on_page_markdown(text, SimpleNamespace(file=file), EDITION_CONFIG, None)


def pages() -> list[Path]:
    return sorted(p for p in DOCS.rglob("*.md") if "hooks" not in p.parts)


def all_calls():
    """Every placeholder that reads a device set (screenshots: tests/test_perfetto_shots.py;
    notebook links: test_every_notebook_download_is_published)."""
    for page in pages():
        for _, call in hook.parse_calls(page.read_text()):
            if call.func not in ("screenshot", "notebook"):
                yield page.relative_to(DOCS).as_posix(), call


def test_site_builds_strict_and_first_page_has_data(site: Path) -> None:
    page = (site / "part-1" / "01-first-trace" / "index.html").read_text()
    assert "Where these numbers come from" in page
    assert "<table>" in page
    assert 'class="pg-figure"' in page
    assert 'class="pg-perfetto"' in page
    text = re.sub(r"<[^>]+>", "", page)
    assert "def matmul_add" in text, "the workload snippet was not included"
    assert "{{" not in page, "an unfilled placeholder reached the page"
    assert (site / "artifacts" / "cpu" / "matmul_add" / "small_cold" / "trace.json.gz").exists()


def test_pages_load_nothing_from_other_hosts(site: Path) -> None:
    """Scripts, styles, images and fonts all come from the site itself."""
    loaded = re.compile(
        r'<(?:script|img|link|iframe|source)\b[^>]*?(?:src|href)="(https?:)?//', re.I
    )
    offenders = []
    for page in site.rglob("*.html"):
        for match in loaded.finditer(page.read_text()):
            tag = page.read_text()[match.start() : match.start() + 200]
            if 'rel="canonical"' in tag or 'rel="alternate"' in tag:
                continue
            offenders.append(f"{page.relative_to(site)}: {tag[:120]}")
    for css in site.rglob("*.css"):
        offenders += [
            f"{css.name}: {u}" for u in re.findall(r"url\((?:'|\")?https?://[^)]*", css.read_text())
        ]
    assert not offenders, "\n".join(offenders)


def _used_files(device: str) -> set[str]:
    """Artifact paths (relative to the device set) that the pages read from ``device``."""
    manifest = json.loads((ARTIFACTS / device / MANIFEST_FILE).read_text())
    used: set[str] = set()
    for _, call in all_calls():
        if device == "cpu" and not call.cpu_ok:
            continue
        if call.device and call.device != device:
            continue
        if call.variant not in manifest["variants"].get(call.step, {}):
            continue
        base = f"{call.step}/{call.variant}"
        used |= {f"{base}/{name}" for name in hook.files_for(call)}
        if call.func == "capture_file":  # optional, so not among the files it must find
            used.add(f"{base}/{call.args[2]}")
        # Each edition shows its own drawing of a figure.
        used |= {
            f"{base}/{figure_file(name, lang)}"
            for name in hook.files_for(call)
            if name.endswith(".svg")
            for lang in LANGUAGES
        }
        # The capture record feeds the page's provenance box; the profiler's own table travels
        # with its trace (published beside it) even where a page does not print it.
        used |= {f"{base}/{CAPTURE_FILE}", f"{base}/{KEY_AVERAGES_FILE}"}
    return used


@pytest.mark.parametrize(
    "device", sorted(p.name for p in ARTIFACTS.iterdir() if (p / MANIFEST_FILE).exists())
)
def test_every_artifact_is_used_by_a_page(device: str) -> None:
    manifest = json.loads((ARTIFACTS / device / MANIFEST_FILE).read_text())
    unused = sorted(set(manifest["files"]) - _used_files(device))
    assert not unused, f"artifacts/{device} files no page shows: {unused}"


def test_every_trace_has_a_perfetto_button() -> None:
    """One "Open in Perfetto" button per trace: every registered variant has one on a page."""
    buttons = {(c.step, c.variant) for _, c in all_calls() if c.func == "perfetto"}
    missing = [
        f"{s.slug}/{v.name}" for s in STEPS for v in s.variants if (s.slug, v.name) not in buttons
    ]
    assert not missing, f"variants without a Perfetto button on any page: {missing}"


def test_every_page_reference_exists() -> None:
    """Each placeholder resolves in the set the page will use (CUDA, else CPU if allowed)."""
    sets = {d: hook.DeviceSet.load(d) for d in ("cuda", "cpu")}
    problems = []
    for page, call in all_calls():
        candidates = [sets["cuda"]] + ([sets["cpu"]] if call.cpu_ok else [])
        if call.device:
            candidates = [sets[call.device]]
        found = [s for s in candidates if s and s.has_variant(call.step, call.variant)]
        if not found:
            if call.cpu_ok:
                problems.append(f"{page}: {call.text}: no capture")
            continue
        for name in hook.files_for(call):
            rel = f"{call.step}/{call.variant}/{name}"
            if rel not in found[0].manifest["files"]:
                problems.append(f"{page}: {call.text}: {rel} missing")
        if call.func == "table":
            load_query(str(call.args[2]))
    assert not problems, "\n".join(problems)


def _lacks_what_it_shows(ds, call) -> bool:
    """A capture-record value or a capture's own file that this (stale) capture does not hold."""
    base = f"{call.step}/{call.variant}"
    if call.func == "capture_file":
        return f"{base}/{call.args[2]}" not in ds.manifest["files"]
    if call.func == "value" and str(call.args[2]).startswith("capture."):
        values = json.loads((ds.root / base / "values.json").read_text())
        return str(call.args[2]).partition(".")[2] not in values.get("capture", {})
    return False


def test_strict_gpu_build_fails_exactly_while_cuda_artifacts_are_missing(monkeypatch) -> None:
    """`make site STRICT_GPU=1` passes only when every placeholder has its CUDA artifact: the hook
    run over every page as a build runs it (pre-build, each page, post-build)."""
    cuda = hook.DeviceSet.load("cuda")
    missing = sorted(
        {
            f"{call.step}/{call.variant}"
            for _, call in all_calls()
            if call.device != "cpu"
            and (
                cuda is None
                or not cuda.has_variant(call.step, call.variant)
                or _lacks_what_it_shows(cuda, call)
            )
        }
    )
    monkeypatch.setenv("PROFILING_GUIDE_STRICT_GPU", "1")
    hook.on_pre_build(EDITION_CONFIG)
    try:
        for page in pages():
            page_markdown(hook, page.relative_to(DOCS).as_posix())
        if not missing:
            hook.on_post_build(EDITION_CONFIG)
            return
        with pytest.raises(hook.PluginError, match="STRICT_GPU=1") as failure:
            hook.on_post_build(EDITION_CONFIG)
    finally:
        hook.on_pre_build(EDITION_CONFIG)  # leave the hook as a new build finds it
    for variant in missing:
        step, name = variant.split("/")
        assert f'"{step}", "{name}"' in str(failure.value), f"{variant} not named"


def test_a_failing_hook_fails_the_build_with_its_message(tmp_path: Path) -> None:
    """One real build with an artifact taken out of the manifest: MkDocs stops at the page and
    prints the hook's message (the hook's other error cases are tested through the hook)."""
    copy = tmp_path / "artifacts"
    shutil.copytree(ARTIFACTS / "cpu", copy / "cpu", ignore=shutil.ignore_patterns(".*"))
    shutil.copytree(ARTIFACTS / "doctor", copy / "doctor")
    shutil.copytree(ARTIFACTS / "perfetto-ui", copy / "perfetto-ui")
    manifest_path = copy / "cpu" / MANIFEST_FILE
    manifest = json.loads(manifest_path.read_text())
    del manifest["files"]["matmul_add/small_cold/ops.md"]
    manifest_path.write_text(json.dumps(manifest))
    result = build(tmp_path / "site", PROFILING_GUIDE_ARTIFACTS_DIR=str(copy))
    assert result.returncode != 0
    assert "part-1/01-first-trace.md" in result.stderr
    assert '{{ table("matmul_add", "small_cold", "ops") }}' in result.stderr
    assert "matmul_add/small_cold/ops.md" in result.stderr


def test_missing_artifact_names_page_and_placeholder(tmp_path: Path, monkeypatch) -> None:
    copy = tmp_path / "artifacts"
    shutil.copytree(ARTIFACTS / "cpu", copy / "cpu", ignore=shutil.ignore_patterns(".*"))
    manifest_path = copy / "cpu" / MANIFEST_FILE
    manifest = json.loads(manifest_path.read_text())
    del manifest["files"]["matmul_add/small_cold/ops.md"]
    manifest_path.write_text(json.dumps(manifest))
    monkeypatch.setattr(hook, "ARTIFACTS_DIR", copy)
    with pytest.raises(hook.PluginError) as failure:
        page_markdown(hook, "part-1/01-first-trace.md")
    message = str(failure.value)
    assert message.startswith("part-1/01-first-trace.md: ")
    assert '{{ table("matmul_add", "small_cold", "ops") }}' in message
    assert "matmul_add/small_cold/ops.md is not in the cpu manifest" in message
    # A file the manifest lists but the folder lacks is named too.
    shutil.copyfile(ARTIFACTS / "cpu" / MANIFEST_FILE, manifest_path)
    (copy / "cpu" / "matmul_add" / "small_cold" / "ops.md").unlink()
    with pytest.raises(hook.PluginError, match=r"small_cold/ops\.md is listed but missing"):
        page_markdown(hook, "part-1/01-first-trace.md")
    monkeypatch.setattr(hook, "ARTIFACTS_DIR", ARTIFACTS)
    assert "{{" not in page_markdown(hook, "part-1/01-first-trace.md")  # the committed set


def test_missing_doctor_gallery_names_the_page(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setattr(doctor_hook, "ARTIFACTS_DIR", tmp_path / "artifacts")
    for rel in ("doctor-gallery.md", "check-your-trace.md"):
        with pytest.raises(doctor_hook.PluginError) as failure:
            page_markdown(doctor_hook, rel)
        assert str(failure.value).startswith(f"{rel}: ")
        assert "gallery.json is missing: run `make derive`" in str(failure.value)
    monkeypatch.setattr(doctor_hook, "ARTIFACTS_DIR", ARTIFACTS)
    assert "{{" not in page_markdown(doctor_hook, "doctor-gallery.md")


def test_placeholder_syntax_errors_are_named() -> None:
    with pytest.raises(hook.PlaceholderError, match="unknown placeholder"):
        hook.parse_calls('{{ tabel("a", "b", "c") }}')
    with pytest.raises(hook.PlaceholderError, match="not plain literals"):
        hook.parse_calls('{{ table("a", "b", some_name) }}')
    with pytest.raises(hook.PlaceholderError, match="takes 3 positional"):
        hook.parse_calls('{{ value("a", "b") }}')


# -- escaping: real kernel names from GPU traces stay text everywhere ------------------------------


@pytest.fixture(scope="module")
def kernel_names() -> list[str]:
    events = load_events(A100_ADD)
    names = sorted({e["name"] for e in events if e.get("cat") == "kernel"})
    tricky = [n for n in names if "<" in n and "&" not in n] + [
        "void (anonymous namespace)::softmax_warp_forward<float, float, float, 10, false>(float*)",
        "kernel<a & b | c>",
    ]
    assert any("vectorized_elementwise_kernel<4" in n for n in names)
    return tricky


def test_kernel_names_render_as_text_in_tables(kernel_names: list[str]) -> None:
    query = load_query("ops")
    rows = Rows(["name", "calls"], [{"name": n, "calls": 1} for n in kernel_names])
    rendered = markdown.markdown(to_markdown(rows, query), extensions=["tables"])
    # Name cells are left-aligned (<td>); the numeric column is <td align="right">. A long name
    # shows a short form and opens to the full one; every tag in a cell is ours (<wbr>, <code>,
    # <details>), since a name's own < and & arrive escaped.
    cells = re.findall(r"<td>(.*?)</td>", rendered)
    full = [re.search(r'class="pg-name__full">(.*?)</code>', c) for c in cells]
    shown = [
        html.unescape(re.sub(r"<[^>]+>", "", m[1] if m else c))
        for c, m in zip(cells, full, strict=True)
    ]
    assert shown == kernel_names
    assert any(m for m in full), "no long kernel name was folded"


def test_table_cells_fold_long_names_and_keep_words_whole() -> None:
    from generators.table_cells import cell_html, short_kernel_name

    name = (
        "void at::native::vectorized_elementwise_kernel<8, at::native::BinaryFunctor<float, "
        "float, float, at::native::binary_internal::MulFunctor<float> >, std::array<char*, 3ul> >"
        "(int, at::native::BinaryFunctor<float, float, float, "
        "at::native::binary_internal::MulFunctor<float> >, std::array<char*, 3ul>)"
    )
    assert short_kernel_name(name) == "vectorized_elementwise_kernel<…MulFunctor…>"
    assert short_kernel_name("void cutlass::Kernel2<cutlass_80_tensorop_gemm>(x::Params)") == (
        "Kernel2<cutlass_80_tensorop_gemm…>"
    )
    # Identifiers wrap only after a separator, never inside a word.
    assert cell_html("guide_kernel_names_family") == (
        "guide\\_<wbr>kernel\\_<wbr>names\\_<wbr>family"
    )
    assert cell_html("short_name") == "short\\_name"
    assert cell_html("https://www.nvidia.com/en-us/data-center/h200/") == (
        '<a href="https://www.nvidia.com/en-us/data-center/h200/">www.nvidia.com</a>'
    )
    assert "<script>" not in cell_html("<script>alert(1)</script>" * 5)


def test_an_empty_result_is_a_sentence() -> None:
    from generators.derive import NO_ROWS

    assert to_markdown(Rows(["name"], []), load_query("ops")) == f"*{NO_ROWS}*\n"


def test_kernel_names_render_as_text_in_figures(kernel_names: list[str]) -> None:
    rows = [
        {
            "lane": "CPU thread 1",
            "depth": 0,
            "name": "ProfilerStep#2",
            "category": "user_annotation",
            "start_ns": 0,
            "dur_ns": 10_000,
            "id": 1,
            "launched_by": None,
        },
        {
            "lane": "CPU thread 1",
            "depth": 1,
            "name": "cudaLaunchKernel",
            "category": "cuda_runtime",
            "start_ns": 1_000,
            "dur_ns": 2_000,
            "id": 2,
            "launched_by": None,
        },
    ] + [
        {
            "lane": "GPU 0 stream 7",
            "depth": 0,
            "name": n,
            "category": "kernel",
            "start_ns": 4_000 + 2_000 * i,
            "dur_ns": 1_900,
            "id": 10 + i,
            "launched_by": 2,
        }
        for i, n in enumerate(kernel_names)
    ]
    svg = render_svg("timeline", rows, FigureContext("s", "Title <&>", "v", "cuda")).decode()
    assert "Title &lt;&amp;&gt;" in svg
    assert "<float" not in svg
    # Parsable XML proves nothing leaked unescaped.
    import xml.etree.ElementTree as ET

    ET.fromstring(svg)


def _perfetto_files(ds, step: str, variant: str) -> list[Path]:
    return [ds.file(step, variant, name) for name in ("trace.json.gz", "values.json")]


def test_kernel_names_render_as_text_in_buttons() -> None:
    renderer = hook.Renderer({}, "part-1/x/", {"extra": {}, "site_url": ""})
    call = hook.Call(
        "perfetto",
        ("matmul_add", "small_cold"),
        {
            "label": "Open void at::k<4, F<float>, (anonymous namespace)::x> & more",
            "whole": "why <b>the whole</b> trace",
        },
        "",
    )
    ds = hook.DeviceSet.load("cpu")
    out = renderer._perfetto(call, ds, _perfetto_files(ds, "matmul_add", "small_cold"))
    assert "&lt;4, F&lt;float&gt;, (anonymous namespace)::x&gt; &amp; more</button>" in out
    assert "why &lt;b&gt;the whole&lt;/b&gt; trace.</p>" in out


@pytest.mark.parametrize(
    "kwargs",
    [{}, {"focus": "step_summary.first_step", "whole": "the whole run is the point"}],
    ids=["neither", "both"],
)
def test_a_button_opens_on_a_window_or_says_why_not(kwargs: dict) -> None:
    """A button with no window and no reason, or both, fails the build."""
    renderer = hook.Renderer({}, "part-1/x/", {"extra": {}, "site_url": ""})
    call = hook.Call("perfetto", ("matmul_add", "small_cold"), kwargs, "perfetto(...)")
    ds = hook.DeviceSet.load("cpu")
    with pytest.raises(hook.PlaceholderError, match=r"exactly one of focus= .* and whole="):
        renderer._perfetto(call, ds, _perfetto_files(ds, "matmul_add", "small_cold"))


_WIDGET = re.compile(r'<div class="pg-perfetto" (?P<attrs>[^>]*)>(?P<body>.*?)\n</div>', re.S)
_ATTR = re.compile(r'([a-z-]+)="([^"]*)"')


def _buttons(edition: Path) -> list[tuple[str, dict[str, str], str]]:
    """Every "Open in Perfetto" widget of a built edition: (page, attributes, inner HTML)."""
    found = []
    for page in sorted(edition.rglob("index.html")):
        rel = page.parent.relative_to(edition).as_posix()
        if rel == "ja" or rel.startswith("ja/"):
            continue  # the Japanese edition is read as an edition of its own
        for m in _WIDGET.finditer(page.read_text(encoding="utf-8")):
            attrs = {k: html.unescape(v) for k, v in _ATTR.findall(m["attrs"])}
            found.append((rel, attrs, m["body"]))
    return found


def _edition_buttons(site: Path) -> dict[str, list[tuple[str, dict[str, str], str]]]:
    editions = {"en": _buttons(site), "ja": _buttons(site / "ja")}
    for lang, buttons in editions.items():
        assert buttons, f"no Perfetto button in the {lang} edition"
    return editions


def test_every_button_opens_on_a_window_or_its_page_says_why(site: Path) -> None:
    """Every button of both editions names the window its text discusses, or carries the page's
    reason for the whole trace; the two editions open the same traces on the same windows."""
    opened: dict[str, list[tuple[str, str, str, str]]] = {}
    for lang, buttons in _edition_buttons(site).items():
        for page, attrs, body in buttons:
            window = [attrs.get(k) for k in ("data-vis-start", "data-vis-end")]
            seconds = [attrs.get(k) for k in ("data-time-start", "data-time-end")]
            reason = re.search(r'class="pg-perfetto__note pg-perfetto__whole">([^<]+)</p>', body)
            where = f"{lang} {page} {attrs['data-trace-src']}"
            if reason is None:
                assert all(window) and all(seconds), f"{where}: no window and no reason"
                assert int(window[0]) < int(window[1]), f"{where}: empty window {window}"
                assert float(seconds[0]) < float(seconds[1]), f"{where}: empty window {seconds}"
            else:
                assert not any(window) and not any(seconds), f"{where}: a window and a reason"
                assert len(reason[1]) > 40, f"{where}: no reason given: {reason[1]!r}"
            trace = attrs["data-trace-src"].rsplit("artifacts/", 1)[1]
            opened.setdefault(lang, []).append((page, trace, *map(str, window)))
    assert opened["en"] == opened["ja"]


_DROP_NOTE = re.compile(r'<p class="pg-perfetto__note pg-perfetto__drops"([^>]*)>(.*?)</p>')


def _trace_values(src: str) -> dict:
    """The values.json beside the trace a button opens (its own derive's record)."""
    device, step, variant, _ = src.rsplit("artifacts/", 1)[1].split("/")
    return json.loads((ARTIFACTS / device / step / variant / "values.json").read_text())


def test_drop_notes_stand_exactly_where_the_trace_has_drops(site: Path) -> None:
    """A button whose trace the UI opens with an import-error badge says so with that trace's own
    counts (trace_import.sql); no other button carries the note."""
    noted = 0
    for lang, buttons in _edition_buttons(site).items():
        for page, attrs, body in buttons:
            record = _trace_values(attrs["data-trace-src"])["trace_import"]
            note = re.search(
                r'<p class="pg-perfetto__note pg-perfetto__drops"([^>]*)>(.*?)</p>', body
            )
            where = f"{lang} {page} {attrs['data-trace-src']}"
            if record["import_problems"] == 0:
                assert note is None, f"{where}: a drop note on a trace without drops"
                continue
            assert note is not None, f"{where}: the trace has drops, the button no note"
            noted += 1
            assert f'data-import-problems="{record["import_problems"]}"' in note[1], where
            dropped = record["overlapping_slices_dropped"]
            assert f'data-dropped-slices="{dropped}"' in note[1], where
            kernels = record["kernels_dropped"]
            assert f'data-dropped-kernels="{kernels}"' in note[1], where
            text = html.unescape(re.sub(r"<[^>]+>", "", note[2]))
            n, k = format_value(dropped, "count"), format_value(kernels, "count")
            # What is missing, in the trace's own counts: all kernels, or how many of them are.
            said = {
                "en": f" {n} GPU kernels " if kernels == dropped else f" {n} slices ({k} of them",
                "ja": f"{n} 個の GPU カーネル"
                if kernels == dropped
                else f"うち GPU カーネルは {k} 個",
            }[lang]
            assert said in text, (where, text)
            link = re.search(r'href="([^"]+)"', note[2])
            # To the page that explains the drops (its own section when the note is on it).
            assert link, (where, note[2])
            path, _, anchor = link[1].partition("#")
            target = posixpath.normpath(posixpath.join(page, path)) + "/#" + anchor
            assert target == hook.IMPORTER_DROPS_EXPLAINED, (where, link[1])
    assert noted, "no button opens a trace with drops: the note is untested"


def test_every_table_shows_the_sql_behind_it(site: Path) -> None:
    """Under each table: its query file and the module objects it uses, as they are on disk."""
    from generators.sql_sources import objects_used

    checked = 0
    for rel, call in all_calls():
        if call.func != "table":
            continue
        html_page = (site / rel.removesuffix(".md") / "index.html").read_text()
        query = load_query(str(call.args[2]))
        assert f"The SQL behind this: <code>{query.path.name}</code>" in html_page, (rel, call)
        text = html.unescape(re.sub(r"<[^>]+>", "", html_page))
        for obj in objects_used(query.sql):  # each definition once per page
            assert text.count(f"{obj.module} · {obj.name} (") == 1, (rel, query.name, obj.name)
        checked += 1
    assert checked > 20


@pytest.mark.parametrize("lang", ["en", "ja"])
def test_the_first_sql_block_says_what_it_is_and_how_to_run_it(lang: str) -> None:
    """The first SQL block a page shows opens with one line: what the block is, the command that
    runs its query on one's own trace, and the page that teaches the rest; later blocks do not."""
    config = {"extra": {}, "site_url": "", "theme": {"language": lang}}
    renderer = hook.Renderer({}, "part-1/01-first-trace/", config)
    first = renderer.sql_block(load_query("matmul_add_chain"))
    second = renderer.sql_block(load_query("matmul_add_overhead"))
    command = (
        "`.venv/bin/python -m generators.tp query TRACE @generators/queries/matmul_add_chain.sql`"
    )
    assert command in first
    assert "(../../write-your-own-query/)" in first
    assert first.index(command) < first.index("```")  # before the query, inside the fold
    assert ("What this is" in first) == (lang == "en")
    assert "generators.tp query" not in second


def test_sql_objects_are_found_with_their_dependencies() -> None:
    from generators.sql_sources import catalog, objects_used

    names = [o.name for o in objects_used(load_query("matmul_add_overhead").sql)]
    # The query names guide_launch_gemm; that view reads guide_kineto_slice, which must come first.
    assert "guide_launch_gemm" in names and "guide_kineto_slice" in names
    assert names.index("guide_kineto_slice") < names.index("guide_launch_gemm")
    assert len(names) == len(set(names))
    for obj in catalog().values():
        assert obj.text.startswith("--"), f"{obj.name}: no doc comment above its definition"
        assert f" {obj.name}" in obj.text.splitlines()[-1] or obj.name in obj.text


def test_tables_and_code_stay_out_of_the_search_index(site: Path) -> None:
    index = json.loads((site / "search" / "search_index.json").read_text())
    text = " ".join(d["text"] for d in index["docs"] if not d["location"].startswith("notebooks"))
    assert "-- output: table" not in text, "the SQL under a table reached the search index"
    assert "Self CPU %" not in text, "a profiler table reached the search index"
    # Two adjacent cells only a generated table holds (the ops table: a name, its category).
    assert "ProfilerStep#2 user_annotation" not in text, "a table reached the search index"


def test_every_perfetto_button_has_a_download_link(site: Path) -> None:
    page = (site / "part-1" / "01-first-trace" / "index.html").read_text()
    buttons = re.findall(r'<div class="pg-perfetto".*?</div>', page, re.S)
    assert buttons
    for block in buttons:
        src = re.search(r'data-trace-src="([^"]+)"', block)[1]  # type: ignore[index]
        assert re.search(
            rf'<a class="pg-perfetto__download" href="{re.escape(src)}" download=', block
        )


def test_provenance_box_names_each_environment_once(site: Path) -> None:
    page = (site / "part-1" / "01-first-trace" / "index.html").read_text()
    box = page[page.index("Where these numbers come from") :][:4000]
    assert box.count("torch ") >= 1
    assert "Every trace on this page" in box
    assert hook._cudnn_version(91900) == "9.19.0" and hook._cudnn_version(8906) == "8.9.6"


def test_abbreviations_are_explained_on_pages(site: Path) -> None:
    page = (site / "glossary" / "index.html").read_text()
    assert '<abbr title="Streaming multiprocessor' in page


def test_block_placeholders_keep_their_indentation() -> None:
    """A table placed in a content tab or an admonition stays inside it: every line it expands
    to is indented like the placeholder (a line at the margin would end the block)."""
    page = '=== "CUDA"\n\n    {{ table("matmul_add", "small_cold", "ops") }}\n'
    ((match, call),) = hook.parse_calls(page)
    renderer = hook.Renderer(hook._load_sets(), "part-1/t/", {"extra": {}, "site_url": ""})
    rendered = renderer.render(call)
    assert "\n<section" in rendered  # unindented as rendered
    out = hook._indented(rendered, page, match.start())
    lines = [line for line in out.split("\n")[1:] if line.strip()]
    assert len(lines) > 10 and all(line.startswith("    ") for line in lines)
    # Inline placeholders (in a sentence, in a table row) are left as they are.
    inline = 'The steps: {{ value("matmul_add", "small_cold", "step_summary.steps") }}.'
    ((match, call),) = hook.parse_calls(inline)
    assert hook._indented("a\nb", inline, match.start()) == "a\nb"


def test_perfetto_buttons_on_a_page_have_distinct_labels(site: Path) -> None:
    """A reader choosing between buttons can tell which trace and moment each one opens."""
    repeated = []
    for html_page in sorted(site.rglob("index.html")):
        labels = re.findall(
            r'class="[^"]*pg-perfetto__open[^"]*">(.*?)</button>', html_page.read_text()
        )
        repeated += [
            f"{html_page.parent.relative_to(site)}: {label!r}"
            for label in sorted(set(labels))
            if labels.count(label) > 1
        ]
    assert not repeated, "\n".join(repeated)


def test_a_placeholder_can_pin_the_cpu_set() -> None:
    """`device="cpu"` shows the CPU capture where the CUDA one exists (a CPU tab); it is a
    choice, not a fallback, so STRICT_GPU does not count it."""
    sets = hook._load_sets()
    text = '{{ value("matmul_add", "small_cold", "step_summary.steps", device="cpu") }}'
    ((_, call),) = hook.parse_calls(text)
    renderer = hook.Renderer(sets, "part-1/t/", {"extra": {}, "site_url": ""})
    assert renderer.pick(call) is sets["cpu"]
    ((_, plain),) = hook.parse_calls(text.replace(', device="cpu"', ""))
    assert renderer.pick(plain) is sets["cuda"]
    assert renderer.state.fallbacks == []
    assert list(renderer.state.used) == []
    renderer.render(call)
    assert ("cpu", "matmul_add", "small_cold") in renderer.state.used
    assert "CPU show the same workload" in renderer.provenance()
    with pytest.raises(hook.PlaceholderError, match="device= must be one of"):
        hook.parse_calls('{{ value("a", "b", "c", device="tpu") }}')
    missing = '{{ value("attention", "sdpa_cudnn", "attention_forward.seq", device="cpu") }}'
    ((_, call),) = hook.parse_calls(missing)
    with pytest.raises(hook.PlaceholderError, match="no cpu capture of attention/sdpa_cudnn"):
        renderer.pick(call)


def test_no_placeholder_sits_inside_inline_code() -> None:
    """A value inside backticks would show its HTML as text: names render as code themselves."""
    offenders = [
        f"{page.relative_to(DOCS)}: {m[0][:80]}"
        for page in pages()
        for m in re.finditer(r"`[^`\n]+`", page.read_text())  # code spans, paired left to right
        if "{{" in m[0]
    ]
    assert not offenders, offenders


def test_a_name_value_renders_as_code_that_wraps_between_words() -> None:
    renderer = hook.Renderer(hook._load_sets(), "part-1/x/", {"extra": {}, "site_url": ""})
    ((_, call),) = hook.parse_calls(
        '{{ value("matmul_add", "large_cold", "matmul_add_compiled.gemm_kernel", cpu=False) }}'
    )
    out = renderer.render(call)
    assert out.startswith('<code class="pg-value pg-value--name"') and "<wbr>" in out


def test_a_value_minus_another_variants_is_their_difference_with_its_sign() -> None:
    """`minus="a"` shows b's value less a's, from the same device set, signed (+ for a rise, a
    typographic minus for a fall), and names both variants in its tooltip."""
    sets = hook._load_sets()
    device = "cuda" if sets.get("cuda") else "cpu"
    key = "train_casts.step_cpu_ns"
    step_ns = {
        v: json.loads((ARTIFACTS / device / "train" / v / "values.json").read_text())[
            "train_casts"
        ]["step_cpu_ns"]
        for v in ("naive", "tuned")
    }
    up = _render(f'{{{{ value("train", "naive", "{key}", minus="tuned") }}}}', sets)
    down = _render(f'{{{{ value("train", "tuned", "{key}", minus="naive") }}}}', sets)
    change = step_ns["naive"] - step_ns["tuned"]
    rise, fall = (up, down) if change > 0 else (down, up)
    assert f">+{format_value(abs(change), 'step_cpu_ns')}<" in rise
    assert f">\N{MINUS SIGN}{format_value(abs(change), 'step_cpu_ns')}<" in fall
    assert "of tuned less that of naive" in down
    with pytest.raises(hook.PlaceholderError, match="is not in the"):
        _render(f'{{{{ value("train", "naive", "{key}", minus="no_such_variant") }}}}', sets)
    with pytest.raises(hook.PlaceholderError, match="minus= needs two numbers"):
        _render('{{ value("train", "naive", "train_data.iterator", minus="tuned") }}', sets)


# -- commands and settings come from the capture record ----------------------------------------


def _render(text: str, sets: dict | None = None) -> str:
    renderer = hook.Renderer(
        hook._load_sets() if sets is None else sets, "part-2/x/", {"extra": {}, "site_url": ""}
    )
    ((_, call),) = hook.parse_calls(text)
    return renderer.render(call)


def _record(device: str, step: str, variant: str) -> dict:
    manifest = json.loads((ARTIFACTS / device / MANIFEST_FILE).read_text())
    return manifest["variants"][step][variant]


def test_a_command_is_the_captures_own_command_line() -> None:
    """`command()` prints the recorded argv as a bash block: the same words in the same order,
    `<folder>` left for the reader, long lines continued with a backslash."""
    for device, extra in (("cuda", ""), ("cpu", ', device="cpu"')):
        out = _render(f'{{{{ command("mlp", "eager"{extra}) }}}}')
        lines = out.strip("\n").split("\n")
        assert lines[0] == "```bash" and lines[-1] == "```"
        body = lines[1:-1]
        assert all(len(line) <= hook.COMMAND_WIDTH for line in body)
        assert all(line.endswith(" \\") for line in body[:-1])
        words = " ".join(line.removesuffix(" \\") for line in body).split()
        assert words == _record(device, "mlp", "eager")["command"]
        assert "<folder>" in words and f"--device {device}" in " ".join(words)


def test_command_words_are_quoted_for_the_shell() -> None:
    words = [
        "python",
        "-m",
        "w",
        "--name",
        "a b",
        "--flag",
        "--x",
        "$(rm -rf ~)",
        "--out",
        "<folder>",
    ]
    text = hook.command_lines(words, width=200)
    assert text == "python -m w --name 'a b' --flag --x '$(rm -rf ~)' --out <folder>"
    # An option stays on one line with its value.
    wrapped = hook.command_lines(["python", "--aaaa", "1", "--bbbb", "2"], width=20)
    assert wrapped.split("\n") == ["python --aaaa 1 \\", "    --bbbb 2"]


def test_a_setting_is_read_from_the_capture_record() -> None:
    settings = _record("cuda", "mlp", "eager")["settings"]
    out = _render('{{ setting("mlp", "eager", "hidden") }}')
    assert out.startswith('<span class="pg-value"')
    assert re.sub(r"<[^>]+>|,", "", out) == str(settings["hidden"])
    assert "capture record of mlp/eager" in out
    # A name renders as code; a nested setting is named with a dot; the CPU set when pinned.
    assert _render('{{ setting("mlp", "eager", "dtype", device="cpu") }}').startswith("<code")
    model = _record("cuda", "llm", "eager_b1")["settings"]["model"]
    nested = _render('{{ setting("llm", "eager_b1", "model.num_hidden_layers") }}')
    assert re.sub(r"<[^>]+>|,", "", nested) == str(model["num_hidden_layers"])


def test_an_unknown_setting_or_command_fails_the_build_by_name() -> None:
    with pytest.raises(hook.PlaceholderError, match=r"no setting 'hiden'.*known: .*hidden"):
        _render('{{ setting("mlp", "eager", "hiden") }}')
    with pytest.raises(hook.PlaceholderError, match="is a group"):
        _render('{{ setting("llm", "eager_b1", "model") }}')
    with pytest.raises(hook.PlaceholderError, match="takes 3 positional"):
        hook.parse_calls('{{ setting("mlp", "eager") }}')
    page = type("Page", (), {"file": type("F", (), {"src_uri": "p.md", "url": "p/"})()})()
    with pytest.raises(hook.PluginError, match=r"p\.md: .*setting\(\"mlp\", \"eager\", \"x\"\)"):
        hook.on_page_markdown('{{ setting("mlp", "eager", "x") }}', page, {"extra": {}}, None)
    cpu = hook.DeviceSet("cpu", ARTIFACTS / "cpu", {"variants": {"s": {"v": {"settings": {}}}}})
    with pytest.raises(hook.PlaceholderError, match="names no command line"):
        _render('{{ command("s", "v") }}', {"cpu": cpu})


def test_a_recorded_command_and_setting_stay_text() -> None:
    """A capture record is data: its words cannot become markup or close the code block."""
    record = {"command": ["python", "```", "<b>x</b>"], "settings": {"name": "<i>y</i>"}}
    sets = {"cpu": hook.DeviceSet("cpu", ARTIFACTS / "cpu", {"variants": {"s": {"v": record}}})}
    block = _render('{{ command("s", "v") }}', sets)
    assert block.strip().startswith("````bash")  # a fence longer than any run inside
    html_out = markdown.markdown(block, extensions=["fenced_code"])
    assert "<b>" not in html_out and "&lt;b&gt;" in html_out
    assert "<i>" not in _render('{{ setting("s", "v", "name") }}', sets)


def test_every_notebook_download_is_published(site: Path) -> None:
    """Each lesson page's companion-notebook box downloads a notebook the build published, in
    each edition its own copy."""
    found = 0
    for edition in (site, site / "ja"):
        for page in edition.rglob("index.html"):
            if edition == site and page.is_relative_to(site / "ja"):
                continue
            links = re.findall(r'class="pg-notebook-download" href="([^"]+)"', page.read_text())
            for href in links:
                target = (page.parent / html.unescape(href)).resolve()
                assert target.is_file() and target.suffix == ".ipynb", (page, href)
                json.loads(target.read_text())  # the notebook itself, not a rendered page
                in_other_edition = edition == site and target.is_relative_to(site / "ja")
                assert target.is_relative_to(edition) and not in_other_edition, (page, href)
                found += 1
    assert found == 10  # five notebooks, two editions
    renderer = hook.Renderer({}, "x/", {"extra": {}})
    with pytest.raises(hook.PlaceholderError, match=r"no notebook 'nope\.ipynb'"):
        renderer.render(hook.Call("notebook", ("nope.ipynb",), {}, ""))


# -- figures: the alt text says what a figure shows, the caption what to notice ------------------

_FIGURE = re.compile(r'<figure class="pg-(?:figure|shot)">(.*?)</figure>', re.S)


def _figures(edition: Path) -> list[tuple[str, str, str]]:
    """(page, alt text, caption) of every figure and screenshot of a built edition."""
    found = []
    for page in sorted(edition.rglob("index.html")):
        rel = page.parent.relative_to(edition).as_posix()
        if edition.name != "ja" and (rel == "ja" or rel.startswith("ja/")):
            continue
        for figure in _FIGURE.findall(page.read_text(encoding="utf-8")):
            alt = re.search(r'<img [^>]*alt="([^"]*)"', figure)
            caption = re.search(r'<figcaption>(.*?)<span class="pg-source"', figure, re.S)
            assert alt and caption, f"{rel}: a figure without alt text or caption"
            found.append((rel, html.unescape(alt[1]).strip(), html.unescape(caption[1]).strip()))
    return found


def test_every_figure_alt_differs_from_its_caption(site: Path) -> None:
    """A screen reader reads the alt text and the caption: neither may repeat the other, in
    either edition."""
    editions = {"en": _figures(site), "ja": _figures(site / "ja")}
    assert editions["en"] and len(editions["en"]) == len(editions["ja"]), {
        lang: len(figures) for lang, figures in editions.items()
    }
    for lang, figures in editions.items():
        for page, alt, caption in figures:
            assert alt and caption, f"{lang} {page}: empty alt text or caption"
            assert alt not in caption and caption not in alt, f"{lang} {page}: {caption!r}"


@pytest.mark.parametrize(
    "kwargs",
    [{"alt": "bars"}, {"alt": "bars", "caption": "bars"}, {"caption": "notice"}],
    ids=["no caption", "caption repeats alt", "no alt"],
)
def test_a_figure_needs_an_alt_and_a_different_caption(kwargs: dict) -> None:
    call = hook.Call("figure", ("matmul_add", "small_cold", "timeline"), kwargs, "figure(...)")
    renderer = hook.Renderer(hook._load_sets(), "part-1/x/", {"extra": {}, "site_url": ""})
    with pytest.raises(hook.PlaceholderError, match=r"needs alt=|caption repeats the alt"):
        renderer.render(call)


def test_every_in_page_anchor_exists(site: Path) -> None:
    """Every link to an anchor of a page of the site (both editions, tables of contents
    included) lands on an element with that id."""
    from urllib.parse import unquote, urljoin, urlsplit

    pages = {}
    for path in sorted(site.rglob("index.html")):
        rel = path.parent.relative_to(site).as_posix()
        pages["/" if rel == "." else f"/{rel}/"] = path.read_text(encoding="utf-8")
    ids = {url: set(re.findall(r'\bid="([^"]+)"', text)) for url, text in pages.items()}
    assert "/ja/" in ids and len(ids) > 40
    broken, checked = [], 0
    for url, text in pages.items():
        for href in re.findall(r'\bhref="([^"]*#[^"]*)"', text):
            target = urlsplit(urljoin(f"http://site{url}", html.unescape(href)))
            if target.netloc != "site" or not target.fragment or target.path not in ids:
                continue
            checked += 1
            if unquote(target.fragment) not in ids[target.path]:
                broken.append(f"{url}: {href}")
    assert checked > 500, checked
    assert broken == []


def test_long_list_cells_fold() -> None:
    table = "| Op | GPU work |\n| --- | --- |\n| a | x; y; z; x; y; w |\n| b | x; y |"
    folded = hook._fold_list_cells(table, "Show all {n}").splitlines()
    assert folded[:2] == table.splitlines()[:2]
    assert '<details class="pg-list"><summary title="Show all 6">x; y; … ' in folded[2]
    assert "(+4)</span></summary>x; y; z; x; y; w</details>" in folded[2]
    assert folded[3] == "| b | x; y |"


def test_the_sql_behind_a_table_shows_only_the_editions_language() -> None:
    query = load_query("attention_ops")
    english, japanese = query.sql_shown("en"), query.sql_shown("ja")
    assert english.startswith(f"-- {query.question}\n")
    assert "_ja:" not in english and not re.search(r"[\u3040-\u30ff\u4e00-\u9fff]", english)
    assert japanese.startswith("-- output: table\n-- question_ja: ")
    assert query.question not in japanese and "-- columns:" not in japanese
    # The SQL itself, comments inside it included, is the same in both.
    assert english.split("INCLUDE", 1)[1] == japanese.split("INCLUDE", 1)[1]


def test_japanese_tables_show_the_guides_own_words_in_japanese() -> None:
    rows = (
        "| --- | --- |\n| rest of the step | aten::mm |\n"
        "| forward | copy / cast; memcpy; elementwise |\n| registers | optimizer_step |"
    )
    shown = hook._cells_in_japanese(rows).splitlines()
    word = '<span class="pg-word">{}</span>'.format  # a katakana word never breaks in two
    assert shown[0] == "| --- | --- |"
    # A trace's names are left as they are.
    assert shown[1] == f"| {word('ステップ')}の残り | aten::mm |"
    assert shown[2] == f"| forward（順伝播） | {word('コピー')} / 型変換; memcpy; 要素ごとの演算 |"
    assert shown[3] == f"| {word('レジスタ')} | optimizer_step |"


def test_japanese_tables_show_the_kernel_name_decoders_words_in_japanese() -> None:
    rows = (
        "| --- | --- | --- |\n"
        "| a\\_b | cuBLAS · GEMM · sm90 · tile 64x8 · fuses bias | tile 64x8 |\n"
        "| c | Inductor (Triton) · pointwise · fuses \\_unsafe\\_view, gelu, mul · #0 "
        "| reduction |\n"
        "| d | reduction | \\[1024, 32\\] · \\[64\\] |"
    )
    shown = hook._cells_in_japanese(rows, ["kernel", "decoded", "other"]).splitlines()
    # Only the decoder's column: its kinds of work and prefixes, each Japanese word kept whole;
    # names and sizes stay as spelled.
    word = '<span class="pg-word">{}</span>'.format
    assert shown[1] == (
        f"| a\\_b | cuBLAS · GEMM · sm90 · {word('タイル')} 64x8 · bias {word('を融合')} "
        "| tile 64x8 |"
    )
    assert shown[2] == (
        f"| c | Inductor (Triton) · {word('ポイントワイズ')} · \\_unsafe\\_view, gelu, mul "
        f"{word('を融合')} · #0 | {word('リダクション')} |"
    )
    assert shown[3] == f"| d | {word('リダクション')} | \\[1024, 32\\] · \\[64\\] |"
    # A table without the decoder's column is left to the cell words alone.
    assert hook._cells_in_japanese(rows).splitlines()[1] == rows.splitlines()[1]


# -- English left in the Japanese edition's tables ------------------------------------------------
# A Japanese page's table cell written only in Latin script is a name the guide keeps as it is
# spelled (an API, operator, kernel, library, variant, option, type or unit, or a name a trace
# records), never the guide's own wording: those are translated where the table is made
# (CELL_WORDS_JA and DECODED_WORDS_JA in generators/i18n.py, or the page itself). Code, numbers
# (a cell starting with a digit) and identifiers (`_`, `::`, `#`, brackets, arrows, dots) pass.
JAPANESE_TABLE_NAMES = [
    # Kineto categories and Perfetto's own names; the trace's own rows, threads and streams.
    r"kernel|Trace|PyTorch Profiler|stream \d+|thread \d+ \(\w+\)|Memset \(Device\)",
    r"TorchDynamo Cache Lookup|AOTDispatcher Runtime Wrapper Prologue|Pregraph bytecode",
    r"Torch-Compiled Region: \d+/\d+|\w+Backward\d",
    # CUDA runtime and driver calls, operators and copies by their trace names.
    r"cudaLaunchKernel(ExC)?|cuLaunchKernelEx|cudaMemcpyAsync|cudaMemsetAsync",
    r"softmax|where|memcpy|memset",
    # Libraries, kernels' families and attention back ends, as their projects name them.
    r"GEMM|cuBLAS|cuDNN|Liger|LigerGELUMulFunction|split-K",
    r"flash attention|cuDNN attention|efficient attention \(CUTLASS fmha\)",
    r"SDPA (math|efficient|flash|cuDNN)",
    # The workloads' own record_function labels and the guide's variants.
    r"attention|mlp|norm|eager|compiled|naive|foreach|tuned",
    # A gap's cause as `guide.windows` returns it (the page names the values in code).
    r"host|sync|profiler",
    # Types, architectures, layouts, units and abbreviations the Japanese text uses as they are.
    r"fp32|fp16|bf16|tf32|sm\d+|tn|nt|nn|tt|dtype|FLOPs|GPU|CPU|SQL|doctor",
    # GPU models (the peak-rate table), as their makers name them.
    r"(NVIDIA |AMD )?(Tesla |GeForce RTX |Instinct )?[A-Z]{0,2}\d+[A-Z]?([ -][\w*-]+)*\*?",
    # The doctor's detector names (the cheatsheet's links to them).
    r"[a-z0-9]+(-[a-z0-9]+)+",
]
_JAPANESE_TABLE_NAME = re.compile("|".join(f"(?:{name})" for name in JAPANESE_TABLE_NAMES))
#: Japanese script, and the full-width punctuation that only Japanese text uses.
_JAPANESE_SCRIPT = re.compile(r"[\u3000-\u30ff\u4e00-\u9fff\uff00-\uffef]")
_IDENTIFIER = re.compile(r"_|::|#|<|>|\[|\]|→|->|\.|@|=|\\")


class _TableCells(HTMLParser):
    """The text of each table cell of a page's article, without the code inside it."""

    def __init__(self) -> None:
        super().__init__()
        self.cells: list[str] = []
        self._cell: list[str] | None = None
        self._in_article = False
        self._code_depth = 0

    def handle_starttag(self, tag: str, attrs: list) -> None:
        if tag == "article":
            self._in_article = True
        elif tag in ("td", "th") and self._in_article:
            self._cell = []
        elif tag == "code":
            self._code_depth += 1

    def handle_endtag(self, tag: str) -> None:
        if tag == "code":
            self._code_depth -= 1
        elif tag in ("td", "th") and self._cell is not None:
            self.cells.append(" ".join("".join(self._cell).split()))
            self._cell = None

    def handle_data(self, data: str) -> None:
        if self._cell is not None and not self._code_depth:
            self._cell.append(data)


def english_in_japanese_tables(site_ja: Path) -> list[str]:
    """``page: cell`` for each Japanese page's table cell that is Latin text and no known name."""
    found = []
    for page in sorted(site_ja.rglob("index.html")):
        rel = page.parent.relative_to(site_ja).as_posix()
        # The translation's conventions list each English term beside its Japanese one.
        if rel == "terms":
            continue
        cells = _TableCells()
        cells.feed(page.read_text(encoding="utf-8"))
        for cell in dict.fromkeys(cells.cells):
            if (
                _JAPANESE_SCRIPT.search(cell)
                or not re.search(r"[A-Za-z]{2}", cell)
                or re.match(r"[\d−+-]", cell)
                or _IDENTIFIER.search(cell)
                or _JAPANESE_TABLE_NAME.fullmatch(cell)
            ):
                continue
            found.append(f"{rel}: {cell}")
    return found


def test_japanese_tables_show_no_english_but_names(site: Path) -> None:
    assert english_in_japanese_tables(site / "ja") == []


def test_the_english_check_of_japanese_tables_names_page_and_cell(tmp_path: Path) -> None:
    page = tmp_path / "part-9" / "index.html"
    page.parent.mkdir()
    page.write_text(
        "<table><tr><td>rest of the step</td></tr></table><article><table>"
        "<tr><th>フェーズ</th><th>dtype</th></tr>"
        "<tr><td>rest of the step</td><td>copy / cast</td><td>fp32 on CUDA cores (FMA)</td></tr>"
        "<tr><td><code>label start</code></td><td>ステップの残り</td><td>aten::mm</td></tr>"
        "<tr><td>2.72 ms</td><td>cudaLaunchKernel</td><td>Torch-Compiled Region: 0/0</td></tr>"
        "<tr><td>cuBLAS · GEMM · sm90 · tile 64x8</td><td>optimizer-single-tensor</td></tr>"
        "</table></article>"
    )
    assert english_in_japanese_tables(tmp_path) == [
        "part-9: rest of the step",
        "part-9: copy / cast",
        "part-9: fp32 on CUDA cores (FMA)",
        "part-9: cuBLAS · GEMM · sm90 · tile 64x8",
    ]


def test_the_sql_under_a_table_shows_only_its_editions_header_lines(site: Path) -> None:
    """The built pages: no Japanese header lines in the English edition's SQL, no English
    question or column titles in the Japanese edition's where the query has Japanese ones."""
    checked = 0
    for rel, call in all_calls():
        if call.func != "table":
            continue
        query = load_query(str(call.args[2]))
        page = rel.removesuffix(".md") + "/index.html"
        english = html.unescape(re.sub(r"<[^>]+>", "", (site / page).read_text()))
        japanese = html.unescape(re.sub(r"<[^>]+>", "", (site / "ja" / page).read_text()))
        assert "question_ja:" not in english and "columns_ja:" not in english, rel
        assert f"-- question_ja: {query.question_ja}" in japanese, (rel, query.name)
        assert f"-- {query.question}\n" not in japanese, (rel, query.name)
        assert "\n-- columns: " not in japanese, (rel, query.name)
        checked += 1
    assert checked > 20


def _snapshot_set(root: Path, device: str, *, snapshot: bool, stale: bool) -> object:
    """A one-variant device set of train/memory: with or without its memory snapshot, its
    capture record naming today's workload source or an older one."""
    folder = root / device / "train" / "memory"
    folder.mkdir(parents=True)
    workload = "generators/workloads/train.py"
    digest = "0" * 64 if stale else sha256_file(REPO / workload)
    files = {
        f"train/memory/{CAPTURE_FILE}": {"sources": {workload: digest}},
        "train/memory/values.json": {},
    }
    (folder / "values.json").write_text(json.dumps({"capture": {"warmup_s": 0.0}}))
    if snapshot:
        (folder / "memory_snapshot.html").write_text("<html></html>")
        files["train/memory/memory_snapshot.html"] = {}
    manifest = {"variants": {"train": {"memory": {}}}, "files": files}
    return hook.DeviceSet(device, root / device, manifest)


def test_a_misspelt_capture_value_fails_even_on_a_stale_cuda_capture(tmp_path: Path) -> None:
    """A stale CUDA capture lacks the profiler-off timings today's workload writes, and the page
    then says a recapture would bring them; but only for a value the CPU set, captured with
    today's workload, has. A key it lacks too is a misspelt placeholder: the build fails."""
    config = {"extra": {}, "site_url": "", "theme": {"language": "en"}}
    cuda = _snapshot_set(tmp_path / "a", "cuda", snapshot=False, stale=True)
    cpu = _snapshot_set(tmp_path / "a", "cpu", snapshot=False, stale=False)
    (cpu.root / "train" / "memory" / "values.json").write_text(
        json.dumps({"capture": {"warmup_s": 0.0, "step_median_s": 0.1}})
    )
    renderer = hook.Renderer({"cuda": cuda, "cpu": cpu}, "part-5/03-memory-and-precision/", config)
    ((_, written),) = hook.parse_calls('{{ value("train", "memory", "capture.step_median_s") }}')
    assert 'class="pg-needs-cuda"' in renderer.render(written)
    ((_, misspelt),) = hook.parse_calls('{{ value("train", "memory", "capture.step_mediam_s") }}')
    with pytest.raises(hook.PlaceholderError, match=r"no value 'capture\.step_mediam_s'"):
        renderer.render(misspelt)


@pytest.mark.parametrize("lang", ["en", "ja"])
def test_capture_file_links_the_snapshot_or_says_it_needs_a_recapture(
    tmp_path: Path, lang: str
) -> None:
    """The memory page's snapshot link: a link where the CUDA capture holds the file; where a
    stale CUDA capture lacks it, a notice naming the recapture (and STRICT_GPU's list); where
    a fresh capture lacks it, or no CUDA capture exists, no silent link."""
    config = {"extra": {}, "site_url": "", "theme": {"language": lang}}
    link = 'capture_file("train", "memory", "memory_snapshot.html", label="Open it", cpu=False)'
    ((_, call),) = hook.parse_calls("{{ " + link + " }}")
    value_text = '{{ value("train", "memory", "capture.step_median_s") }}'
    ((_, value_call),) = hook.parse_calls(value_text)

    def renderer(ds) -> object:
        sets = {ds.device: ds} if ds is not None else {}
        return hook.Renderer(sets, "part-5/03-memory-and-precision/", config)

    present = _snapshot_set(tmp_path / "a", "cuda", snapshot=True, stale=False)
    r = renderer(present)
    out = r.render(call)
    assert 'href="../../artifacts/cuda/train/memory/memory_snapshot.html"' in out
    assert ">Open it</a>" in out and not r.state.needs_recapture

    stale = _snapshot_set(tmp_path / "b", "cuda", snapshot=False, stale=True)
    r = renderer(stale)
    out = r.render(call)
    assert "<a " not in out and "make artifacts DEVICE=cuda STEP=train" in out
    assert ("recapture" if lang == "en" else "再キャプチャ") in out
    assert r.state.needs_recapture == [call.text]
    # A profiler-off timing the stale capture lacks: the same notice, inline.
    out = r.render(value_call)
    assert 'class="pg-needs-cuda"' in out and r.state.needs_recapture[-1] == value_call.text

    fresh = _snapshot_set(tmp_path / "c", "cuda", snapshot=False, stale=False)
    with pytest.raises(hook.PlaceholderError, match="recapture it"):
        renderer(fresh).render(call)
    with pytest.raises(hook.PlaceholderError, match="step_median_s"):
        renderer(fresh).render(value_call)
    # A stale CPU set does not earn the notice: the CPU set is recaptured here, not on a GPU.
    cpu = _snapshot_set(tmp_path / "d", "cpu", snapshot=False, stale=True)
    with pytest.raises(hook.PlaceholderError):
        renderer(cpu).render(value_call)
    # No CUDA capture at all (cpu=False): the usual "needs a CUDA capture" notice.
    r = renderer(None)
    assert "CUDA" in r.render(call) and r.state.missing_cuda == [call.text]


def test_the_memory_page_links_both_snapshots_or_names_their_recapture() -> None:
    """Part 5's memory page, rendered from the committed sets: each memory variant's snapshot
    is a link where the CUDA set holds it, and a recapture notice where it does not."""
    cuda = hook.DeviceSet.load("cuda")
    page = page_markdown(hook, "part-5/03-memory-and-precision.md")
    for variant in ("memory", "memory_fp32"):
        file = f"train/{variant}/memory_snapshot.html"
        if cuda is not None and file in cuda.manifest["files"]:
            assert f"artifacts/cuda/{file}" in page
        else:
            assert f"committed CUDA capture of train/{variant}" in page
            assert "Needs a CUDA recapture" in page
