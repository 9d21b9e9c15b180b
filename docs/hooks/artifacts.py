"""The one MkDocs hook: fills page placeholders from ``artifacts/`` and publishes the artifacts.

Placeholders, each alone on a line except ``value`` (which is inline)::

    {{ table("matmul_add", "small_cold", "ops") }}               Markdown table + CSV link
    {{ value("matmul_add", "small_cold", "step_summary.steps") }}  one formatted number
    {{ figure("matmul_add", "small_cold", "timeline", alt="...", caption="...") }}
    {{ profiler_table("matmul_add", "small_cold") }}              key_averages() text
    {{ perfetto("matmul_add", "small_cold", focus="step_summary.first_step") }}  (or whole="why")
    {{ command("mlp", "eager") }}                                 the capture's command line
    {{ setting("mlp", "eager", "hidden") }}                      one setting it ran with (inline)
    {{ screenshot("kernel-selected", alt="...", caption="...") }}   the Perfetto UI, with callouts
    {{ notebook("part-1-first-trace.ipynb") }}                   a download link for a notebook
    {{ capture_file("train", "memory", "memory_snapshot.html", label="...") }}  a file the
        capture wrote beside its trace (the memory snapshot), as a link

``command`` and ``setting`` read the capture record in the set's ``MANIFEST.json``
(``variants[step][variant]``: ``command``, with ``<folder>`` standing for the output folder, and
``settings``; a dotted key such as ``model.hidden_size`` reads a nested setting), so a page never
retypes a workload's sizes or command line.

A capture made before its workload learned to record something (a profiler-off timing read by
``value("...", "capture.<key>")``, a file named by ``capture_file``) lacks it: where the CUDA
capture's workload code has changed since (the capture is stale) the placeholder renders a
"needs a CUDA recapture" notice instead of failing the build, and ``STRICT_GPU=1`` names it. A
fresh capture that lacks it is an error, as any missing key or file is.

Every placeholder takes ``cpu=False`` for a concept that only exists on a GPU. The CUDA set is
preferred; without a CUDA capture a placeholder falls back to the CPU set (unless ``cpu=False``,
which renders a "needs a CUDA capture" notice instead; the rule is
``generators.devices.shown_device``). ``make site STRICT_GPU=1`` (the environment variable
``PROFILING_GUIDE_STRICT_GPU=1``) turns every fallback into a build error. Any missing artifact,
key or file fails the build with the page and the placeholder named. Pages that show data get a
box naming the hardware and versions behind it.
"""

from __future__ import annotations

import ast
import html
import json
import logging
import posixpath
import re
import shlex
import sys
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import quote, urljoin, urlsplit

from mkdocs.exceptions import PluginError
from mkdocs.structure.files import File, Files

REPO_ROOT = Path(__file__).resolve().parents[2]
if str(REPO_ROOT) not in sys.path:  # the hook imports the project's own formatting and queries
    sys.path.insert(0, str(REPO_ROOT))

from generators import env  # noqa: E402
from generators.devices import DEVICES, is_fallback, shown_device  # noqa: E402
from generators.i18n import (  # noqa: E402
    CELL_WORDS_JA,
    DECODED_SEPARATOR,
    NO_ROWS,
    decoded_part_in_japanese,
    edition_language,
    figure_file,
    translated,
)
from generators.markdown import fenced  # noqa: E402
from generators.queries import Query, QueryFileError, load_query  # noqa: E402
from generators.sql_sources import objects_used  # noqa: E402
from generators.store import CAPTURE_FILE, sources_changed  # noqa: E402
from generators.table_cells import FULL_NAME_TITLE, cell_html, wrappable  # noqa: E402
from generators.units import format_value  # noqa: E402

log = logging.getLogger("mkdocs.hooks.artifacts")

# Tests build the site against a scratch copy of the artifacts through this variable.
ARTIFACTS_DIR = Path(env.ARTIFACTS_DIR.get() or REPO_ROOT / "artifacts")
DEVICE_LABEL = {"cuda": "CUDA", "cpu": "CPU"}
PLACEHOLDER = re.compile(r"\{\{\s*(?P<func>[a-z_]+)\((?P<args>.*?)\)\s*\}\}", re.S)
FUNCTIONS = (
    "table",
    "value",
    "figure",
    "profiler_table",
    "perfetto",
    "command",
    "setting",
    "screenshot",
    "notebook",
    "capture_file",
)
#: Screenshots of the Perfetto UI (generators/perfetto_shots.py), beside the device sets.
SHOTS_FOLDER = "perfetto-ui"
#: A page's opening "In short" box (any title): the admonition line and its indented body.
IN_SHORT_BOX = re.compile(r'\s*\n!!! abstract "[^"\n]*"\n(?:[ \t]*\n|    .*\n)*')
#: The page that teaches the Perfetto UI (docs/perfetto-ui.md), as a site path.
PERFETTO_UI_PAGE = "perfetto-ui"
#: The page that teaches writing one's own PerfettoSQL (docs/write-your-own-query.md).
OWN_QUERY_PAGE = "write-your-own-query"
#: The "Open in Perfetto" buttons' ids on a page: the prefix, then 1, 2, ... in page order.
PERFETTO_BUTTON_ID = "pg-perfetto-"
#: Where the guide explains why Perfetto's importer drops slices of a trace (a site path).
IMPORTER_DROPS_EXPLAINED = "part-4/02-decode-step/#why-decode-on-a-gpu-is-overhead-bound-at-batch-1"
#: values.json sections derive reads from the trace's JSON rather than by SQL (the events they
#: count are the ones Perfetto's importer drops), with the module that reads them.
JSON_VALUES = {"kernel_overlaps": "generators/trace_json.py"}
# The output folder in a recorded command line (the capture chose its own).
FOLDER = "<folder>"
# A command block wraps before this many characters, between one option and the next.
COMMAND_WIDTH = 96
# On a narrow screen a figure is never drawn so small that its smallest text falls under this
# many CSS px: below that width it keeps this width and scrolls sideways in its frame.
READABLE_TEXT_PX = 9.5
SVG_VIEWBOX = re.compile(r'<svg\b[^>]*\bviewBox="[-\d.]+[ ,]+[-\d.]+[ ,]+([\d.]+)')
SVG_FONT_SIZE = re.compile(r"font-size:\s*([\d.]+)px")


class PlaceholderError(ValueError):
    pass


@dataclass(frozen=True)
class Call:
    func: str
    args: tuple[object, ...]
    kwargs: dict[str, object]
    text: str

    @property
    def step(self) -> str:
        return str(self.args[0])

    @property
    def variant(self) -> str:
        return str(self.args[1])

    @property
    def cpu_ok(self) -> bool:
        return bool(self.kwargs.get("cpu", True))

    @property
    def device(self) -> str | None:
        """The set a placeholder pins (`device="cpu"` in a CPU tab); None: CUDA, else CPU."""
        device = self.kwargs.get("device")
        return None if device is None else str(device)


def parse_calls(markdown: str) -> list[tuple[re.Match[str], Call]]:
    """Every placeholder in a page, parsed (arguments are Python literals)."""
    calls = []
    for match in PLACEHOLDER.finditer(markdown):
        func = match["func"]
        if func.startswith("doctor_"):  # the doctor's own placeholders (docs/hooks/doctor.py)
            continue
        if func not in FUNCTIONS:
            raise PlaceholderError(
                f"{match[0]}: unknown placeholder (known: {', '.join(FUNCTIONS)})"
            )
        try:
            node = ast.parse(f"f({match['args']})", mode="eval").body
            assert isinstance(node, ast.Call)
            args = tuple(ast.literal_eval(a) for a in node.args)
            kwargs = {k.arg: ast.literal_eval(k.value) for k in node.keywords if k.arg}
        except (SyntaxError, ValueError, AssertionError) as exc:
            raise PlaceholderError(f"{match[0]}: arguments are not plain literals ({exc})") from exc
        needed = {
            "table": 3,
            "value": 3,
            "figure": 3,
            "setting": 3,
            "screenshot": 1,
            "notebook": 1,
            "capture_file": 3,
        }.get(func, 2)
        if kwargs.get("device", DEVICES[0]) not in DEVICES:
            raise PlaceholderError(f"{match[0]}: device= must be one of {', '.join(DEVICES)}")
        if len(args) != needed:
            raise PlaceholderError(f"{match[0]}: {func}() takes {needed} positional arguments")
        calls.append((match, Call(func, args, kwargs, match[0])))
    return calls


@dataclass
class DeviceSet:
    device: str
    root: Path
    manifest: dict

    @classmethod
    def load(cls, device: str, artifacts: Path | None = None) -> DeviceSet | None:
        artifacts = artifacts or ARTIFACTS_DIR  # read at call time: tests point it elsewhere
        path = artifacts / device / "MANIFEST.json"
        if not path.exists():
            return None
        try:
            return cls(device, artifacts / device, json.loads(path.read_text()))
        except ValueError as exc:
            raise PluginError(f"{path} is not valid JSON ({exc}); run `make derive`") from exc

    def has_variant(self, step: str, variant: str) -> bool:
        return variant in self.manifest.get("variants", {}).get(step, {})

    def file(self, step: str, variant: str, name: str) -> Path:
        rel = f"{step}/{variant}/{name}"
        if rel not in self.manifest["files"]:
            raise PlaceholderError(
                f"artifacts/{self.device}/{rel} is not in the {self.device} manifest: "
                "run `make derive`, or fix the placeholder's step, variant or name"
            )
        path = self.root / rel
        if not path.exists():
            raise PlaceholderError(f"artifacts/{self.device}/{rel} is listed but missing")
        return path


def alt_and_caption(call: Call) -> tuple[str, str]:
    """A figure's alt text and caption, HTML-escaped: the alt says what the figure shows, the
    caption what to notice. A screen reader reads both, so they must differ."""
    alt = str(call.kwargs.get("alt") or "").strip()
    caption = str(call.kwargs.get("caption") or "").strip()
    if not alt or not caption:
        raise PlaceholderError(
            f'{call.func}() needs alt="..." (what the figure shows: its lanes, bars, marks) and '
            'caption="..." (what to notice in it)'
        )
    if alt == caption:
        raise PlaceholderError(f"{call.func}(): the caption repeats the alt text: {call.text}")
    return html.escape(alt), html.escape(caption)


def files_for(call: Call) -> list[str]:
    """The artifact file names (inside the variant folder) a placeholder reads."""
    if call.func == "table":
        return [f"{call.args[2]}.md", f"{call.args[2]}.csv"]
    if call.func == "value":
        return ["values.json"]
    if call.func == "figure":
        return [f"{call.args[2]}.svg", f"{call.kwargs.get('data', call.args[2])}.csv"]
    if call.func == "profiler_table":
        return ["key_averages.txt"]
    if call.func == "perfetto":
        # values.json: the focus window and what the importer dropped (trace_import.sql).
        return ["trace.json.gz", "values.json"]
    if call.func in ("command", "setting"):
        return []  # the capture record in the manifest itself
    if call.func == "capture_file":
        return []  # optional: a capture from before its workload wrote it lacks it
    raise PlaceholderError(call.text)


@dataclass
class PageState:
    used: dict[tuple[str, str, str], None] = field(default_factory=dict)  # (device, step, variant)
    fallbacks: list[str] = field(default_factory=list)
    missing_cuda: list[str] = field(default_factory=list)
    # Placeholders whose CUDA capture is stale and lacks what they show (see the module's doc).
    needs_recapture: list[str] = field(default_factory=list)
    # Module objects whose definition a table's SQL block on this page already shows.
    shown_objects: set[str] = field(default_factory=set)
    # Whether a SQL block on this page already said what such a block is and how to run it.
    explained_sql_block: bool = False
    # "Open in Perfetto" buttons rendered so far: each gets an id a skip link can lead to.
    perfetto_buttons: int = 0


class Renderer:
    def __init__(self, sets: dict[str, DeviceSet], page_url: str, config: dict) -> None:
        self.sets = sets
        self.page_dir = (
            posixpath.dirname(page_url.rstrip("/"))
            if page_url.endswith(".html")
            else page_url.rstrip("/")
        )
        self.config = config
        self.lang = edition_language(config)
        self.state = PageState()

    # -- locating -----------------------------------------------------------------------------
    def pick(self, call: Call) -> DeviceSet | None:
        def has_capture(device: str) -> bool:
            ds = self.sets.get(device)
            return ds is not None and ds.has_variant(call.step, call.variant)

        device = shown_device(has_capture, cpu_ok=call.cpu_ok, pinned=call.device)
        if device is not None:
            if is_fallback(device, pinned=call.device):
                self.state.fallbacks.append(call.text)
            return self.sets[device]
        if call.device == "cpu":
            raise PlaceholderError(
                f"no cpu capture of {call.step}/{call.variant}: "
                f"run `make artifacts DEVICE=cpu STEP={call.step}`"
            )
        if call.cpu_ok and call.device is None:
            raise PlaceholderError(
                f"no capture of {call.step}/{call.variant} in any device set: "
                f"run `make artifacts DEVICE=cpu STEP={call.step}` (or DEVICE=cuda on a GPU)"
            )
        self.state.missing_cuda.append(call.text)
        return None

    def url(self, device: str, rel: str) -> str:
        """A URL relative to the page for ``artifacts/<device>/<rel>``.

        An edition that does not publish the artifacts itself links to the copy that
        ``extra.artifacts_edition`` names (relative to its root): the Japanese edition links to
        the English edition's.
        """
        target = posixpath.join(artifacts_edition(self.config) or "", f"artifacts/{device}/{rel}")
        return posixpath.relpath(target, self.page_dir or ".")

    # -- rendering ----------------------------------------------------------------------------
    def render(self, call: Call) -> str:
        if call.func == "screenshot":
            return self._screenshot(call)
        if call.func == "notebook":
            return self._notebook(call)
        ds = self.pick(call)
        if ds is None:
            return self.needs_cuda(call)
        self.state.used[(ds.device, call.step, call.variant)] = None
        paths = [ds.file(call.step, call.variant, name) for name in files_for(call)]
        return getattr(self, f"_{call.func}")(call, ds, paths)

    def t(self, en: str, ja: str) -> str:
        """The text in this edition's language: each translation sits beside its English."""
        return translated(self.lang, en, ja)

    def written_now(self, call: Call, key: str) -> bool:
        """Whether today's workload writes the value ``key``, as far as the captures show: the
        CPU set (captured with the current code) has it for the same variant, or has no capture
        of that variant to say otherwise (a CUDA-only variant). A misspelt key is then an
        error, not a notice that a recapture would bring it."""
        cpu = self.sets.get("cpu")
        if cpu is None or not cpu.has_variant(call.step, call.variant):
            return True
        query, _, column = key.partition(".")
        path = cpu.file(call.step, call.variant, "values.json")
        return path.exists() and column in json.loads(path.read_text()).get(query, {})

    def stale(self, call: Call, ds: DeviceSet) -> bool:
        """Whether the workload code behind this capture has changed since it was made."""
        record = ds.manifest["files"].get(f"{call.step}/{call.variant}/{CAPTURE_FILE}", {})
        return bool(record) and sources_changed(record.get("sources", {}))

    def needs_recapture(self, call: Call, ds: DeviceSet, missing: str) -> str:
        """The notice for what a stale CUDA capture lacks; anything else missing is an error."""
        if ds.device != "cuda" or not self.stale(call, ds):
            raise PlaceholderError(
                f"the {ds.device} capture of {call.step}/{call.variant} has no {missing}: "
                f"recapture it (`make artifacts DEVICE={ds.device} STEP={call.step}`)"
            )
        self.state.needs_recapture.append(call.text)
        command = f"make artifacts DEVICE=cuda STEP={call.step}"
        if call.func == "value":
            text = self.t("(needs a CUDA recapture)", "（CUDA での再キャプチャが必要）")
            return f'<span class="pg-needs-cuda">{text}</span>'
        title = self.t("Needs a CUDA recapture", "CUDA での再キャプチャが必要です")
        body = self.t(
            f"The committed CUDA capture of {call.step}/{call.variant} was made before its "
            f"workload wrote `{missing}`. On a machine with an NVIDIA GPU, run `{command}`.",
            f"コミットされている {call.step}/{call.variant} の CUDA キャプチャは、ワークロードが "
            f"`{missing}` を書き出すようになる前のものです。NVIDIA GPU のあるマシンで "
            f"`{command}` を実行してください。",
        )
        return f'\n!!! warning "{title}"\n\n    {body}\n'

    def needs_cuda(self, call: Call) -> str:
        command = f"make artifacts DEVICE=cuda STEP={call.step}"
        if call.func == "value":
            text = self.t("(needs a CUDA capture)", "（CUDA でのキャプチャが必要）")
            return f'<span class="pg-needs-cuda">{text}</span>'
        if call.func == "perfetto":
            return ""  # no trace to open; the section's own notice says what is missing
        title = self.t("Needs a CUDA capture", "CUDA でのキャプチャが必要です")
        body = self.t(
            "This part shows GPU activity, and no trace captured on an NVIDIA GPU has been "
            f"committed for it yet. On a machine with one, run `{command}`.",
            "この部分は GPU の動作を示しますが、NVIDIA GPU で記録したトレースはまだコミットされて"
            f"いません。NVIDIA GPU のあるマシンで `{command}` を実行してください。",
        )
        notice = f'\n!!! warning "{title}"\n\n    {body}\n'
        if call.func != "table":
            return notice
        # A table without its data still shows its question and the SQL that will answer it.
        query = load_query(str(call.args[2]))
        return (
            f'{notice}\n<section class="pg-table" data-search-exclude="" markdown>\n'
            f'<p class="pg-caption">{html.escape(query.caption(self.lang))}</p>\n\n'
            f"{self.sql_block(query)}\n</section>\n"
        )

    def source_link(self, path: Path) -> str:
        """The file's path, linked to the repository when ``repo_url`` is set."""
        rel = path.relative_to(REPO_ROOT).as_posix()
        repo = (self.config.get("repo_url") or "").rstrip("/")
        if not repo:
            return f"`{rel}`"
        branch = self.config["extra"].get("source_branch", "main")
        return f"[`{rel}`]({repo}/blob/{branch}/{rel})"

    def sql_block_explained(self, query: Query) -> str:
        """The first SQL block's opening line: what such a block is and how to run its query."""
        rel = query.path.relative_to(REPO_ROOT).as_posix()
        command = f"`.venv/bin/python -m generators.tp query TRACE @{rel}`"
        page = posixpath.relpath(OWN_QUERY_PAGE, self.page_dir or ".") + "/"
        return self.t(
            "    **What this is:** the query that made the table above, as the guide's build ran "
            "it on the guide's trace, with the `guide.*` definitions its `INCLUDE` lines bring "
            f"in. Nothing here needs running to read the page; to ask your own trace the same, "
            f"run {command} in a clone of the guide, or see [Write your own query]({page}) "
            "(also for Perfetto's Query page).",
            "    **これは何か:** 上の表を出したクエリです。このガイドのビルド時に、ガイド自身の"
            "トレースに対して実行したもので、`INCLUDE` 行が読み込む `guide.*` の定義も載せて"
            "います。ページを読む"
            f"だけなら何も実行する必要はありません。自分のトレースに同じことを聞くには、ガイドの"
            f"クローンで {command} を実行します。詳しくは [自分でクエリを書く]({page})"
            "（Perfetto の Query ページでの実行方法も）を見てください。",
        )

    def sql_block(self, query: Query) -> str:
        """A folded block with the query and every module object it uses, read from the files."""
        objects = objects_used(query.sql)
        n = len(objects)
        used = self.t(
            f" and {n} module object{'s' if n != 1 else ''}" if objects else "",
            f"（ほかにモジュールのオブジェクト {n} 個）" if objects else "",
        )
        link = self.source_link(query.path)
        parts = [
            self.t(
                f'??? abstract "The SQL behind this: `{query.path.name}`{used}"',
                f'??? abstract "この結果を出した SQL: `{query.path.name}`{used}"',
            ),
            "",
            self.t(
                f"    {link}, run on the trace by `make derive`:",
                f"    {link}（`make derive` がトレースに対して実行します）:",
            ),
            "",
            *fenced(query.sql_shown(self.lang), "sql", indent="    "),
        ]
        if not self.state.explained_sql_block:
            self.state.explained_sql_block = True
            parts[2:2] = [self.sql_block_explained(query), ""]
        # Each definition is printed once per page (highlighting them all under every table made
        # the build several times slower); later blocks name what an earlier one shows.
        earlier = [obj for obj in objects if obj.name in self.state.shown_objects]
        new = [obj for obj in objects if obj.name not in self.state.shown_objects]
        self.state.shown_objects.update(obj.name for obj in new)
        if earlier:
            names = ", ".join(f"`{obj.name}`" for obj in earlier)
            names_ja = "、".join(f"`{obj.name}`" for obj in earlier)
            parts += [
                "",
                self.t(
                    f"    It also uses, as shown under a table above on this page: {names}.",
                    "    次のオブジェクトも使います（定義はこのページの前の表の下にあります）: "
                    f"{names_ja}。",
                ),
            ]
        if new:
            parts += [
                "",
                self.t(
                    "    The `guide.*` module objects it relies on, each before its first use:",
                    "    使っている `guide.*` モジュールのオブジェクト"
                    "（それぞれ最初に使う箇所より前に定義）:",
                ),
            ]
            for obj in new:
                parts += [
                    "",
                    *fenced(
                        obj.text,
                        "sql",
                        indent="    ",
                        title=f"{obj.module} · {obj.name} ({obj.path.relative_to(REPO_ROOT)})",
                    ),
                ]
        return "\n".join(parts) + "\n"

    def _table(self, call: Call, ds: DeviceSet, paths: list[Path]) -> str:
        md_path, csv_path = paths
        query = load_query(str(call.args[2]))
        csv_url = self.url(ds.device, f"{call.step}/{call.variant}/{csv_path.name}")
        caption = (
            f'<p class="pg-caption">{html.escape(query.caption(self.lang))} '
            f'<span class="pg-source">{DEVICE_LABEL[ds.device]} · '
            f'<a href="{html.escape(csv_url)}">CSV</a></span></p>'
        )
        table = md_path.read_text().rstrip()
        if self.lang == "ja":
            table = _table_in_japanese(table, query, csv_path)
        table = _fold_list_cells(table, self.t("Show all {n}", "全 {n} 件を表示"))
        table = _fold_long_table(table, self.t("All {n} rows", "全 {n} 行"))
        # Tables and their SQL stay out of the search index: their text is kernel names and code.
        # A <section>, not a <div>: Material's search stops excluding at the first closing tag of
        # the same name, and the code blocks inside are divs.
        return (
            f'\n<section class="pg-table" data-search-exclude="" markdown>\n{caption}\n\n'
            f"{table}\n\n{self.sql_block(query)}\n</section>\n"
        )

    def _value(self, call: Call, ds: DeviceSet, paths: list[Path]) -> str:
        key = str(call.args[2])
        query, _, column = key.partition(".")
        values = json.loads(paths[0].read_text())
        missing = query == "capture" and column not in values.get(query, {})
        if missing and self.written_now(call, key):
            return self.needs_recapture(call, ds, f"the capture record's {column}")
        if query not in values or column not in values[query]:
            known = ", ".join(f"{q}.{c}" for q, cols in values.items() for c in cols)
            raise PlaceholderError(f"no value {key!r} (known: {known})")
        value = values[query][column]
        minus = call.kwargs.get("minus")
        if minus is not None:
            value = self._difference(call, ds, value, str(minus))
        text = format_value(value, column)
        if minus is not None and isinstance(value, int | float):
            # A change reads with its sign, a typographic minus for a fall: +6.87 ms, −4.20 ms.
            text = f"+{text}" if value > 0 else text.replace("-", "\N{MINUS SIGN}", 1)
        # Measured by the workload outside the profiler, or the settings it ran with.
        if query in ("capture", "settings"):
            record = f"{call.step}/{call.variant}/capture.json"
            source = self.t(f"the capture record ({record})", f"キャプチャ記録（{record}）")
        elif query in JSON_VALUES:
            source = self.t(
                f"the trace's JSON, read by {JSON_VALUES[query]}",
                f"トレースの JSON（{JSON_VALUES[query]} が読む）",
            )
        else:
            source = load_query(query).path.relative_to(REPO_ROOT).as_posix()
        device = DEVICE_LABEL[ds.device]
        what = key
        if minus is not None:
            what = self.t(
                f"{key} of {call.variant} less that of {minus}",
                f"{call.variant} の {key} から {minus} の値を引いた差",
            )
        title = html.escape(
            self.t(f"{what} ({device}), from {source}", f"{what}（{device}）、出典: {source}")
        )
        if isinstance(values[query][column], str):  # a name: code, wrapping only between words
            return f'<code class="pg-value pg-value--name" title="{title}">{wrappable(text)}</code>'
        return f'<span class="pg-value" title="{title}">{html.escape(text)}</span>'

    def _difference(self, call: Call, ds: DeviceSet, value: object, minus: str) -> float:
        """``value("step", "b", "q.col", minus="a")``: b's value less a's, from one device set.

        A change between two captures is a number a reader should not have to work out, and
        typing it would be a hand-made measurement: both values come from the same set.
        """
        key = str(call.args[2])
        query, _, column = key.partition(".")
        other = json.loads(ds.file(call.step, minus, "values.json").read_text())
        if query not in other or column not in other[query]:
            raise PlaceholderError(f"no value {key!r} in {call.step}/{minus} (minus={minus!r})")
        base = other[query][column]
        numbers = [v for v in (value, base) if isinstance(v, int | float)]
        if len(numbers) != 2 or any(isinstance(v, bool) for v in numbers):
            raise PlaceholderError(f"minus= needs two numbers, got {value!r} and {base!r}")
        self.state.used[(ds.device, call.step, minus)] = None
        return value - base  # type: ignore[operator]

    @staticmethod
    def _record(call: Call, ds: DeviceSet) -> dict:
        return ds.manifest["variants"][call.step][call.variant]

    def _command(self, call: Call, ds: DeviceSet, paths: list[Path]) -> str:
        words = self._record(call, ds).get("command")
        if not isinstance(words, list) or not words or not all(isinstance(w, str) for w in words):
            raise PlaceholderError(
                f"the {ds.device} capture record of {call.step}/{call.variant} names no command "
                "line: recapture it"
            )
        block = "\n".join(fenced(command_lines(words), "bash"))
        return f"\n{block}\n"

    def _setting(self, call: Call, ds: DeviceSet, paths: list[Path]) -> str:
        key = str(call.args[2])
        value: object = self._record(call, ds).get("settings") or {}
        for part in key.split("."):
            if not isinstance(value, dict) or part not in value:
                known = ", ".join(_setting_keys(self._record(call, ds).get("settings") or {}))
                raise PlaceholderError(
                    f"no setting {key!r} in the {ds.device} capture record of "
                    f"{call.step}/{call.variant} (known: {known or 'none'})"
                )
            value = value[part]
        if isinstance(value, dict):
            raise PlaceholderError(f"setting {key!r} is a group: name one of its keys")
        column = key.rpartition(".")[2]
        items = value if isinstance(value, list) else [value]
        text = ", ".join(format_value(item, column) for item in items)
        device, record = DEVICE_LABEL[ds.device], f"{call.step}/{call.variant}"
        title = html.escape(
            self.t(
                f"{key} ({device}), from the capture record of {record}",
                f"{key}（{device}）、出典: {record} のキャプチャ記録",
            )
        )
        if any(isinstance(item, str) for item in items):  # a name: code, as value() shows one
            return f'<code class="pg-value pg-value--name" title="{title}">{wrappable(text)}</code>'
        return f'<span class="pg-value" title="{title}">{html.escape(text)}</span>'

    def _figure(self, call: Call, ds: DeviceSet, paths: list[Path]) -> str:
        alt, caption = alt_and_caption(call)
        svg, data = paths
        base = f"{call.step}/{call.variant}"
        # The figure drawn with this edition's labels (tests require one per language).
        translated = figure_file(svg.name, self.lang)
        if f"{base}/{translated}" in ds.manifest["files"]:
            svg = ds.file(call.step, call.variant, translated)
        src = html.escape(self.url(ds.device, f"{base}/{svg.name}"))
        # The image links to itself: on a narrow screen a tap opens the SVG at full size. Its
        # frame scrolls sideways when the screen is narrower than the figure's readable width.
        return (
            '\n<figure class="pg-figure">\n<div class="pg-figure__scroll">'
            f'<a class="pg-figure__full" href="{src}" '
            f'title="{self.t("Open the figure full size", "図を原寸で開く")}">'
            f'<img src="{src}" alt="{alt}" '
            f'style="min-width:{readable_width(svg):.0f}px"></a></div>\n'
            f'<figcaption>{caption} <span class="pg-source">{DEVICE_LABEL[ds.device]} · '
            f'<a href="{html.escape(self.url(ds.device, f"{base}/{data.name}"))}">'
            f"{self.t('data (CSV)', 'データ (CSV)')}</a>"
            "</span></figcaption>\n</figure>\n"
        )

    def _notebook(self, call: Call) -> str:
        """A link that downloads the edition's copy of a companion notebook (``.ipynb``).

        The notebook renderer publishes each notebook's file beside its page
        (``notebooks/<name>/<name>.ipynb``); a Markdown link to the ``.ipynb`` would lead to the
        rendered page instead, so the link is HTML."""
        name = str(call.args[0])
        docs_dir = Path(self.config.get("docs_dir") or REPO_ROOT / "docs")
        if not name.endswith(".ipynb") or not (docs_dir / "notebooks" / name).is_file():
            raise PlaceholderError(f"no notebook {name!r} in {docs_dir.name}/notebooks/")
        target = posixpath.relpath(
            f"notebooks/{name.removesuffix('.ipynb')}/{name}", self.page_dir or "."
        )
        text = self.t("Download the notebook", "ノートブックをダウンロード")
        return (
            f'<a class="pg-notebook-download" href="{html.escape(target)}" '
            f'download="{html.escape(name)}">{text} (<code>{html.escape(name)}</code>)</a>'
        )

    def _capture_file(self, call: Call, ds: DeviceSet, paths: list[Path]) -> str:
        name = str(call.args[2])
        label = str(call.kwargs.get("label") or "").strip()
        if not label:
            raise PlaceholderError(f'{call.text}: capture_file() needs label="..." (the link text)')
        rel = f"{call.step}/{call.variant}/{name}"
        if rel not in ds.manifest["files"]:
            return self.needs_recapture(call, ds, name)
        ds.file(call.step, call.variant, name)  # listed and present
        href = html.escape(self.url(ds.device, rel))
        device = DEVICE_LABEL[ds.device]
        link = f'<a href="{href}">{html.escape(label)}</a>'
        return f'\n<p class="pg-capture-file">{link} ({device})</p>\n'

    def _screenshot(self, call: Call) -> str:
        """A screenshot of the Perfetto UI with its numbered callouts drawn over it: the
        numbers are HTML (sharp at any size), the arrows an SVG scaled with the picture."""
        name = str(call.args[0])
        alt, caption = alt_and_caption(call)
        shot = load_shots().get(name)
        if shot is None:
            raise PlaceholderError(
                f"no screenshot named {name!r} in artifacts/{SHOTS_FOLDER}/shots.json: "
                "run `python -m generators.perfetto_shots`"
            )
        width, height = int(shot["width"]), int(shot["height"])
        src = html.escape(self.url(SHOTS_FOLDER, str(shot["file"])))
        arrows, numbers = [], []
        for c in shot["callouts"]:
            n, x, y = int(c["number"]), float(c["x"]), float(c["y"])
            lx, ly = float(c["label_x"]), float(c["label_y"])
            arrows.append(
                f'<line x1="{lx:g}" y1="{ly:g}" x2="{x:g}" y2="{y:g}" marker-end="url(#pg-arrow)"/>'
            )
            numbers.append(
                f'<span class="pg-shot__callout" style="left:{100 * lx / width:.2f}%;'
                f'top:{100 * ly / height:.2f}%">{n}</span>'
            )
        full_size = self.t("Open the screenshot full size", "スクリーンショットを原寸で開く")
        return (
            '\n<figure class="pg-shot">\n<div class="pg-shot__scroll">'
            f'<div class="pg-shot__frame" style="aspect-ratio:{width}/{height}">'
            f'<a href="{src}" title="{full_size}">'
            f'<img src="{src}" alt="{alt}" width="{width}" height="{height}" '
            'loading="lazy"></a>'
            f'<svg class="pg-shot__arrows" viewBox="0 0 {width} {height}" aria-hidden="true">'
            '<defs><marker id="pg-arrow" viewBox="0 0 10 10" refX="9" refY="5" '
            'markerWidth="5" markerHeight="5" orient="auto-start-reverse">'
            '<path d="M0,0 L10,5 L0,10 z"/></marker></defs>'
            f"{''.join(arrows)}</svg>{''.join(numbers)}</div></div>\n"
            f'<figcaption>{caption} <span class="pg-source">Perfetto UI '
            f"{html.escape(str(load_shots_manifest().get('perfetto_ui', '')))}</span>"
            "</figcaption>\n</figure>\n"
        )

    def _profiler_table(self, call: Call, ds: DeviceSet, paths: list[Path]) -> str:
        text = paths[0].read_text().rstrip("\n")
        title = f"key_averages().table() — {DEVICE_LABEL[ds.device]}"
        block = "\n".join(fenced(text, "text", title=title))
        return (
            '\n<section class="pg-profiler-table" data-search-exclude="" markdown>\n'
            f"{block}\n</section>\n"
        )

    def _perfetto(self, call: Call, ds: DeviceSet, paths: list[Path]) -> str:
        rel = f"{call.step}/{call.variant}/trace.json.gz"
        attrs = {
            "data-trace-src": self.url(ds.device, rel),
            "data-title": f"{call.step} · {call.variant} ({DEVICE_LABEL[ds.device]})",
            "data-file-name": f"{call.step}-{call.variant}-{ds.device}.trace.json.gz",
            "data-perfetto-origin": self.config["extra"].get(
                "perfetto_origin", "https://ui.perfetto.dev"
            ),
        }
        start = end = None
        focus = call.kwargs.get("focus")
        whole = str(call.kwargs.get("whole") or "").strip()
        if bool(focus) == bool(whole):
            # Every button opens on the moment its text discusses, or the page says why the
            # whole trace is the point.
            raise PlaceholderError(
                f"{call.text}: give exactly one of focus= (the window the text discusses) "
                "and whole= (why the whole trace is the point)"
            )
        values_of_trace = json.loads(paths[1].read_text())
        if focus:
            query, _, prefix = str(focus).partition(".")
            values = values_of_trace.get(query, {})
            try:
                start, end = values[f"{prefix}_start_s"], values[f"{prefix}_end_s"]
            except KeyError as exc:
                raise PlaceholderError(
                    f"focus {focus!r} needs values {query}.{prefix}_start_s and _end_s"
                ) from exc
            attrs["data-time-start"] = repr(float(start))
            attrs["data-time-end"] = repr(float(end))
            attrs["data-vis-start"] = str(round(start * 1e9))
            attrs["data-vis-end"] = str(round(end * 1e9))
        origin = attrs["data-perfetto-origin"].rstrip("/")
        link = ""
        site_url = (self.config.get("site_url") or "").rstrip("/")
        if site_url.startswith("https://"):
            root = posixpath.normpath(
                posixpath.join(urlsplit(site_url).path or "/", artifacts_edition(self.config) or "")
            )
            trace_url = urljoin(site_url, f"{root.rstrip('/')}/artifacts/{ds.device}/{rel}")
            href = f"{origin}/#!/?url={quote(trace_url, safe='')}"
            if start is not None and end is not None:
                href += f"&visStart={round(start * 1e9)}&visEnd={round(end * 1e9)}"
            link = (
                f'\n  <a class="pg-perfetto__link" href="{html.escape(href)}" target="_blank" '
                'rel="noopener">'
                f"{self.t('open by URL', 'URL で開く')}</a>"
            )
        size = format_value(paths[0].stat().st_size, "trace_bytes")
        attrs["data-trace-size"] = size  # the status line says how much the UI has to load
        rendered = " ".join(f'{k}="{html.escape(str(v))}"' for k, v in attrs.items())
        label = call.kwargs.get("label", self.t("Open in Perfetto", "Perfetto で開く"))
        download = (
            f'\n  <a class="pg-perfetto__download" href="{html.escape(attrs["data-trace-src"])}" '
            f'download="{html.escape(attrs["data-file-name"])}">'
            f"{self.t(f'download the trace ({size})', f'トレースをダウンロード（{size}）')}</a>"
        )
        help_link = ""
        if self.page_dir != PERFETTO_UI_PAGE:
            # Every button leads a newcomer to the page that teaches the UI it opens.
            target = posixpath.relpath(PERFETTO_UI_PAGE, self.page_dir or ".") + "/"
            help_link = (
                f'\n  <a class="pg-perfetto__help" href="{html.escape(target)}">'
                f"{self.t('new to Perfetto?', 'Perfetto は初めてですか？')}</a>"
            )
        notes = []
        if whole:
            reason = html.escape(whole.rstrip("。."))
            text = self.t(
                f"Opens on the whole trace: {reason}.", f"トレース全体を表示します。{reason}。"
            )
            notes.append(f'  <p class="pg-perfetto__note pg-perfetto__whole">{text}</p>\n')
        notes.append(self.importer_drops_note(call, ds, values_of_trace))
        self.state.perfetto_buttons += 1
        button_id = f"{PERFETTO_BUTTON_ID}{self.state.perfetto_buttons}"
        return (
            f'\n<div class="pg-perfetto" {rendered}>\n'
            f'  <button type="button" id="{button_id}" '
            'class="md-button md-button--primary pg-perfetto__open">'
            f"{html.escape(str(label))}</button>{link}{download}{help_link}\n"
            f"{''.join(notes)}"
            '  <p class="pg-perfetto__status" role="status" hidden></p>\n</div>\n'
        )

    def importer_drops_note(self, call: Call, ds: DeviceSet, values: dict) -> str:
        """A warning beside a button whose trace the Perfetto UI opens with an import-error badge.

        The counts are the trace's own (``trace_import.sql``, run on every trace by derive).
        """
        record = values.get("trace_import")
        if record is None:
            raise PlaceholderError(
                f"artifacts/{ds.device}/{call.step}/{call.variant}/values.json has no "
                "trace_import record: run `make derive`"
            )
        problems = int(record["import_problems"])
        if problems == 0:
            return ""
        overlapping = int(record["overlapping_slices_dropped"])
        kernels = int(record["kernels_dropped"])
        others = problems - overlapping
        target = html.escape(posixpath.relpath(IMPORTER_DROPS_EXPLAINED, self.page_dir or "."))
        why = self.t("why a trace has them", "こうしたイベントができる理由")
        parts = []
        if overlapping:
            n, k = format_value(overlapping, "count"), format_value(kernels, "count")
            what = (
                self.t(f"{n} GPU kernels", f"{n} 個の GPU カーネル")
                if kernels == overlapping
                else self.t(
                    f"{n} slices ({k} of them GPU kernels)",
                    f"{n} 個のスライス（うち GPU カーネルは {k} 個）",
                )
            )
            parts.append(
                self.t(
                    f"Its importer drops {what} that overlap another slice on their track "
                    "without nesting in it: they are in the trace file, not on the timeline "
                    f'(<a href="{target}">{why}</a>).',
                    f"読み込み時に、同じトラック上のほかのスライスと入れ子にならずに重なる "
                    f"{what}を落とします。トレースファイルにはありますが、タイムラインには表示"
                    f'されません（<a href="{target}">{why}</a>）。',
                )
            )
        if others:
            n = format_value(others, "count")
            parts.append(
                self.t(
                    f"It also counts {n} other import problems, listed under the badge.",
                    f"ほかにも読み込みの問題を {n} 件数えます（バッジの中に一覧があります）。",
                )
            )
        lead = self.t(
            "Perfetto opens this trace with a red import-error badge. ",
            "Perfetto はこのトレースを赤い読み込みエラーのバッジ付きで開きます。",
        )
        body = self.t(" ".join(parts), "".join(parts))
        return (
            f'  <p class="pg-perfetto__note pg-perfetto__drops" data-import-problems="{problems}" '
            f'data-dropped-slices="{overlapping}" data-dropped-kernels="{kernels}">'
            f"{lead}{body}</p>\n"
        )

    def perfetto_skip_link(self) -> str:
        """A skip link, shown only when focused, to the page's first "Open in Perfetto" button
        (none on a page without one): a keyboard reader reaches it in a few key presses."""
        if not self.state.perfetto_buttons:
            return ""
        text = self.t(
            "Skip to the first \u201cOpen in Perfetto\u201d button",
            "最初の「Perfetto で開く」ボタンへ移動",
        )
        return f'<a class="md-skip pg-perfetto-skip" href="#{PERFETTO_BUTTON_ID}1">{text}</a>'

    # -- provenance ---------------------------------------------------------------------------
    def provenance(self) -> str:
        """The "measured on" box: one line per distinct environment, every trace on demand."""
        if not self.state.used:
            return ""
        t = self.t
        groups: dict[str, list[str]] = {}
        for device, step, variant in self.state.used:
            info = self.sets[device].manifest["variants"][step][variant]
            env = info.get("environment") or {}
            day = str(info.get("captured_at", ""))[:10]
            groups.setdefault(_environment_line(device, env, self.lang), []).append(
                t(
                    f"`{step}/{variant}` ({DEVICE_LABEL[device]}), captured {day}",
                    f"`{step}/{variant}`（{DEVICE_LABEL[device]}）、{day} にキャプチャ",
                )
            )
        engines = set()
        for device, *_ in self.state.used:
            tp = self.sets[device].manifest["trace_processor"]
            build = (
                t("WebAssembly build", "WebAssembly 版")
                if tp.get("engine") == "wasm-node"
                else t("native build", "ネイティブ版")
            )
            engines.add(f"{tp.get('version')}, {build}")
        count = len(self.state.used)
        engine_list = ", ".join(sorted(engines))
        lines = [
            t(
                f"    Every number, table and figure on this page is computed from "
                f"{count} trace{'s' if count != 1 else ''} by Perfetto's trace processor "
                f"({engine_list}), captured on:",
                f"    このページの数値・表・図はすべて、{count} 個のトレースから Perfetto の "
                f"トレースプロセッサ（{engine_list}）で計算したものです。キャプチャした環境は次のとおりです。",
            ),
            "",
        ]
        for line, traces in groups.items():
            n = len(traces)
            lines.append(
                t(f"    - {line} ({n} trace{'s' if n != 1 else ''})", f"    - {line}（{n} 個）")
            )
        lines += [
            "",
            f'    ??? note "{t("Every trace on this page", "このページのトレース一覧")}"',
            "",
        ]
        lines += [f"        - {trace}" for traces in groups.values() for trace in traces]
        kind = "info"
        uses_cpu = any(d == "cpu" for d, *_ in self.state.used)
        if uses_cpu and not self.state.fallbacks:
            # Every CPU trace here was pinned by a placeholder: a comparison, not a stand-in.
            lines += [
                "",
                t(
                    "    The tabs marked CPU show the same workload captured on a CPU, for "
                    "comparison.",
                    "    CPU と書かれたタブは、比較のために同じワークロードを CPU でキャプチャした"
                    "ものです。",
                ),
            ]
        elif uses_cpu:
            kind = "note"
            lines += [
                "",
                t(
                    "    The guide has no CUDA capture of some of these steps yet, so this page "
                    "also shows traces captured on a CPU: they have no GPU lanes, kernels or "
                    "launches, and the sections about those say so. `make artifacts DEVICE=cuda` "
                    "on a machine with an NVIDIA GPU adds them.",
                    "    このガイドには、これらのステップの一部について CUDA でのキャプチャがまだ"
                    "ないため、このページには CPU でキャプチャしたトレースも使っています。CPU の"
                    "トレースには GPU のレーンもカーネルも起動もなく、それを扱う節にはその旨を"
                    "書いています。NVIDIA GPU のあるマシンで `make artifacts DEVICE=cuda` を実行"
                    "すると追加されます。",
                ),
            ]
        title = t("Where these numbers come from", "これらの数値の出どころ")
        # Folded when every trace is what the page is about; open when it says that some are
        # CPU stand-ins, which a reader must not miss.
        marker = "???" if kind == "info" else "!!!"
        return f'{marker} {kind} "{title}"\n\n' + "\n".join(lines) + "\n"


def _table_in_japanese(table: str, query: Query, csv_path: Path) -> str:
    """A derived Markdown table with the query's Japanese column titles (the cells are the same)."""
    table = table.replace(f'title="{FULL_NAME_TITLE}"', 'title="完全な名前を表示"')
    if table == f"*{NO_ROWS['en']}*":
        return f"*{NO_ROWS['ja']}*"
    header, _, rest = table.partition("\n")
    columns = list(query.shown) or csv_path.read_text().partition("\n")[0].strip().split(",")
    titles = [cell_html(query.title(c, "ja")) for c in columns]
    if header.count("|") != len(titles) + 1:
        raise PlaceholderError(
            f"{csv_path.name}: the table's header has {header.count('|') - 1} columns, "
            f"the query {len(titles)}"
        )
    return "| " + " | ".join(titles) + " |\n" + _cells_in_japanese(rest, columns)


def _japanese_word(text: str) -> str:
    """Japanese words kept whole: a table cell may break between any two kana or kanji (タイ／ル),
    and a decoded part's own words are short."""
    return f'<span class="pg-word">{text}</span>'


def _katakana_whole(text: str) -> str:
    """``text`` with each katakana word kept whole (GPU カーネ／ル), the rest free to wrap."""
    return re.sub(r"[\u30a0-\u30ff]{2,}", lambda m: _japanese_word(m[0]), text)


#: The guide's own words as a Markdown cell holds them (escaped as ``cell_html`` escapes them).
_CELL_WORDS_JA = {cell_html(en): _katakana_whole(ja) for en, ja in CELL_WORDS_JA.items()}
#: The column every query names ``guide_kernel_names_summary``'s decoding.
DECODED_COLUMN = "decoded"


def _decoded_part_in_japanese(part: str) -> str:
    """One part of a decoded kernel name in a Japanese cell, its Japanese words kept whole."""
    return decoded_part_in_japanese(part, word=_japanese_word, key=cell_html)


def _cells_in_japanese(rows: str, columns: list[str] | None = None) -> str:
    """Table rows (the separator line first) whose cells, or list items, that are the guide's
    own words are shown in Japanese; in the ``decoded`` column (when ``columns`` names the
    table's columns), each part of the kernel-name decoder's line."""
    decoded_at = columns.index(DECODED_COLUMN) + 1 if columns and DECODED_COLUMN in columns else 0

    def cell(text: str, position: int) -> str:
        if position == decoded_at:
            items = text.strip().split(DECODED_SEPARATOR)
            shown = [_decoded_part_in_japanese(item) for item in items]
            return text if shown == items else f" {DECODED_SEPARATOR.join(shown)} "
        items = text.strip().split(LIST_SEPARATOR)
        shown = [_CELL_WORDS_JA.get(item, item) for item in items]
        return text if shown == items else f" {LIST_SEPARATOR.join(shown)} "

    lines = rows.split("\n")
    return "\n".join(
        "|".join(cell(c, position) for position, c in enumerate(line.split("|")))
        if i and line.startswith("|")
        else line
        for i, line in enumerate(lines)
    )


def _cudnn_version(number: object) -> str:
    """cuDNN's integer version as its release name: 91900 -> 9.19.0, 8906 -> 8.9.6."""
    if not isinstance(number, int):
        return str(number)
    if number >= 90000:
        return f"{number // 10000}.{number % 10000 // 100}.{number % 100}"
    return f"{number // 1000}.{number % 1000 // 100}.{number % 100}"


def _environment_line(device: str, env: dict, lang: str = "en") -> str:
    """Hardware and software versions of one capture, as one line of the provenance box."""
    ja = lang == "ja"
    libraries = env.get("libraries") or {}
    if device == "cuda":
        driver = "ドライバ" if ja else "driver"
        hardware = (
            f"**{env.get('gpu')}** ({driver} {env.get('nvidia_driver')}, "
            f"CUDA {env.get('cuda_runtime')}, cuDNN {_cudnn_version(env.get('cudnn'))})"
        )
    else:
        threads = env.get("cpu_threads")
        if ja:
            hardware = f"**{env.get('cpu_model')} CPU**、{threads} スレッド、GPU なし"
        else:
            hardware = (
                f"**{env.get('cpu_model')} CPU**, {threads} "
                f"{'thread' if threads == 1 else 'threads'}, no GPU"
            )
    software = f"torch {env.get('torch')}, Python {env.get('python')}"
    if libraries:
        software += ", " + ", ".join(f"{name} {version}" for name, version in libraries.items())
    elif device == "cuda":
        software += (
            "（このキャプチャはほかのライブラリのバージョンを記録していません）"
            if ja
            else " (other library versions were not recorded by this capture)"
        )
    return f"{hardware}; {software}"


#: A table with more rows than this shows its first FOLD_SHOW rows and folds the rest.
FOLD_OVER = 15
FOLD_SHOW = 10


#: A cell listing at least this many items (``a; b; c``, as the queries' GROUP_CONCAT writes
#: them) shows its first LIST_SHOW items and opens to the whole list on a tap: unfolded, such a
#: column makes rows hundreds of pixels tall and squeezes the columns beside it.
LIST_SEPARATOR = "; "
LIST_FOLD_FROM = 5
LIST_SHOW = 2


def _fold_list_cells(table: str, show_all: str = "Show all {n}") -> str:
    """A derived Markdown table whose long list cells are folded (``show_all`` titles the fold,
    in the edition's language)."""

    def fold(cell: str) -> str:
        items = cell.strip().split(LIST_SEPARATOR)
        if len(items) < LIST_FOLD_FROM or "<details" in cell:
            return cell
        shown = LIST_SEPARATOR.join(items[:LIST_SHOW])
        more = f"+{len(items) - LIST_SHOW}"
        return (
            f' <details class="pg-list"><summary title="{show_all.format(n=len(items))}">'
            f'{shown}; … <span class="pg-list__more">({more})</span></summary>'
            f"{LIST_SEPARATOR.join(items)}</details> "
        )

    lines = table.splitlines()
    for i, line in enumerate(lines[2:], start=2):
        if line.startswith("|") and LIST_SEPARATOR in line:
            lines[i] = "|".join(fold(cell) for cell in line.split("|"))
    return "\n".join(lines)


def _fold_long_table(table: str, all_rows: str = "All {n} rows") -> str:
    """A long Markdown table: its top rows, then every row in a folded block (``all_rows``
    titles the block, in the edition's language)."""
    lines = table.splitlines()
    header, rows = lines[:2], lines[2:]
    if len(rows) <= FOLD_OVER or not all(line.startswith("|") for line in lines):
        return table
    everything = "\n".join("    " + line for line in lines)
    return (
        "\n".join(header + rows[:FOLD_SHOW])
        + f'\n\n??? note "{all_rows.format(n=len(rows))}"\n\n{everything}'
    )


def _indented(rendered: str, markdown: str, start: int) -> str:
    """A block placeholder's output, indented like the placeholder itself.

    A placeholder inside an admonition, a list item or a content tab is indented; every line of
    what replaces it must be too, or the block would end at its second line.
    """
    line_start = markdown.rfind("\n", 0, start) + 1
    prefix = markdown[line_start:start]
    if not prefix or prefix.strip():
        return rendered  # at the margin, or inline in a sentence or a table row
    return "\n".join(
        (prefix + line if line.strip() else "") if i else line
        for i, line in enumerate(rendered.split("\n"))
    )


def readable_width(svg: Path) -> float:
    """The width (CSS px) at which the figure's smallest text shows at ``READABLE_TEXT_PX``."""
    text = svg.read_text(encoding="utf-8")
    viewbox, sizes = SVG_VIEWBOX.search(text), [float(s) for s in SVG_FONT_SIZE.findall(text)]
    if not viewbox or not sizes:
        raise PlaceholderError(f"{svg.name}: no viewBox or no text sizes to scale the figure by")
    return float(viewbox[1]) * READABLE_TEXT_PX / min(sizes)


def command_lines(words: list[str], width: int = COMMAND_WIDTH) -> str:
    """A recorded command line as a shell reader would type it: each word quoted where the shell
    needs it (``<folder>`` left as is, for the reader to replace), an option kept on one line
    with its value, and lines continued with a backslash before ``width`` characters."""
    groups: list[list[str]] = []
    for word in words:
        quoted = word if word == FOLDER else shlex.quote(word)
        option_waits = bool(groups) and groups[-1][0].startswith("-") and len(groups[-1]) == 1
        if option_waits and not word.startswith("-"):
            groups[-1].append(quoted)
        else:
            groups.append([quoted])
    lines = [""]
    for group in groups:
        piece = " ".join(group)
        if lines[-1].strip() and len(lines[-1]) + 1 + len(piece) + 2 > width:
            lines[-1] += " \\"
            lines.append("    ")
        lines[-1] += (" " if lines[-1].strip() else "") + piece
    return "\n".join(lines)


def _setting_keys(settings: dict, prefix: str = "") -> list[str]:
    keys = []
    for key, value in settings.items():
        if isinstance(value, dict):
            keys += _setting_keys(value, f"{prefix}{key}.")
        else:
            keys.append(f"{prefix}{key}")
    return keys


def _load_sets() -> dict[str, DeviceSet]:
    sets = {}
    for device in DEVICES:
        ds = DeviceSet.load(device)
        if ds is not None:
            sets[device] = ds
    return sets


def load_shots_manifest() -> dict:
    """``artifacts/perfetto-ui/shots.json`` (empty when no screenshot has been made)."""
    path = ARTIFACTS_DIR / SHOTS_FOLDER / "shots.json"
    return json.loads(path.read_text(encoding="utf-8")) if path.exists() else {}


def load_shots() -> dict[str, dict]:
    return load_shots_manifest().get("shots", {})


_strict_problems: list[str] = []


def on_pre_build(config: dict) -> None:
    _strict_problems.clear()


def artifacts_edition(config: dict) -> str | None:
    """Where another edition publishes the artifacts, relative to this one's root (None: here)."""
    return (config.get("extra") or {}).get("artifacts_edition")


def on_files(files: Files, config: dict) -> Files:
    """Publish every artifact of every device set beside the pages, under artifacts/.

    Markdown tables are left out: they are embedded in pages (and MkDocs would take them for
    pages of their own); each one's CSV is published and linked instead. An edition that links
    to another edition's copy (``extra.artifacts_edition``) publishes none.
    """
    if artifacts_edition(config):
        return files
    for shot in load_shots().values():
        rel = f"artifacts/{SHOTS_FOLDER}/{shot['file']}"
        files.append(
            File.generated(
                config, rel, abs_src_path=str(ARTIFACTS_DIR / SHOTS_FOLDER / shot["file"])
            )
        )
    for device, ds in _load_sets().items():
        for rel in sorted(ds.manifest["files"]):
            if rel.endswith(".md"):
                continue
            files.append(
                File.generated(config, f"artifacts/{device}/{rel}", abs_src_path=str(ds.root / rel))
            )
    return files


#: A page's include of a query file (``--8<-- "generators/queries/own_tables.sql"``).
QUERY_SNIPPET = re.compile(
    r'^(?P<indent>[ \t]*)--8<-- "generators/queries/(?P<name>[\w-]+)\.sql"[ \t]*$', re.M
)


def _query_snippets_shown(markdown: str, lang: str) -> str:
    """Each included query file as the edition shows it (``Query.sql_shown``: without the other
    language's question and column titles), in place of the include the snippets extension
    would expand to the whole file."""

    def shown(match: re.Match[str]) -> str:
        lines = load_query(match["name"]).sql_shown(lang).splitlines()
        return "\n".join(match["indent"] + line if line else "" for line in lines)

    return QUERY_SNIPPET.sub(shown, markdown)


def on_page_markdown(markdown: str, page, config, files) -> str:  # type: ignore[no-untyped-def]
    src = page.file.src_uri
    try:
        markdown = _query_snippets_shown(markdown, edition_language(config))
        calls = parse_calls(markdown)
    except (PlaceholderError, QueryFileError) as exc:
        raise PluginError(f"{src}: {exc}") from exc
    if not calls:
        return markdown
    renderer = Renderer(_load_sets(), page.file.url, config)
    pieces, last = [], 0
    for match, call in calls:
        try:
            rendered = renderer.render(call)
        except (PlaceholderError, OSError, ValueError) as exc:
            raise PluginError(f"{src}: {call.text}: {exc}") from exc
        pieces += [markdown[last : match.start()], _indented(rendered, markdown, match.start())]
        last = match.end()
    pieces.append(markdown[last:])
    body = "".join(pieces)
    if env.STRICT_GPU.get() == "1":
        problems = [f"{src}: {t} fell back to the CPU set" for t in renderer.state.fallbacks]
        problems += [f"{src}: {t} has no CUDA capture" for t in renderer.state.missing_cuda]
        problems += [f"{src}: {t} needs a CUDA recapture" for t in renderer.state.needs_recapture]
        _strict_problems.extend(problems)
    box = renderer.provenance()
    # The box goes right under the page's title, after the page's "In short" box if it opens
    # with one: the answer first, then where its numbers come from.
    heading = re.search(r"^# .*$", body, re.M)
    if heading:
        at = heading.end()
        skip = renderer.perfetto_skip_link()
        if skip:
            # Right after the title: from Material's "Skip to content", the next Tab.
            body = f"{body[:at]}\n\n{skip}\n{body[at:]}"
            at += len(skip) + 3
        opening = IN_SHORT_BOX.match(body, at)
        if opening:
            at = opening.end()
        return body[:at] + "\n\n" + box + "\n" + body[at:]
    return box + "\n" + body


def on_post_build(config: dict) -> None:
    if _strict_problems:
        raise PluginError(
            "STRICT_GPU=1: these placeholders have no (or a stale) CUDA artifact:\n  "
            + "\n  ".join(_strict_problems)
        )
