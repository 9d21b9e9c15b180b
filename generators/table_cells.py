"""How a text cell of a derived table is shown on a page: readable, never rewritten.

Demangled kernel names run to a thousand characters of templates and parameter lists. A table
cell shows a short form (the function's own name, ``<…>`` for its template, and the functor that
says what it computes) and opens to the full name on a click; the CSV always keeps the full name.
Long identifiers may wrap only after ``_``, ``::``, ``.`` or ``/`` (through ``<wbr>``), never
inside a word, and a URL becomes a link whose text is its host.

Every piece of trace text is escaped here: the result is HTML that Markdown passes through.
"""

from __future__ import annotations

import html
import re
from urllib.parse import urlsplit

#: Names at least this long that look like C++ (templates or a parameter list) are shortened.
SHORTEN_FROM = 48
#: Tokens at least this long get wrap opportunities after separators.
WRAP_FROM = 20

_MARKDOWN_SPECIALS = re.compile(r"([\\`*_\[\]~])")
_SEPARATORS = re.compile(r"(::|_|\.|/)")
#: Inside a long camelCase name (cudaOccupancyMaxActiveClusters): before each capital.
_CAMEL = re.compile(r"(?<=[a-z])(?=[A-Z])")
_URL = re.compile(r"^https?://[^\s<>\"']+$")
#: What a templated kernel computes: a functor, an op, or the function a lambda came from.
_HINT = re.compile(r"\b(CUDAFunctor\w*|[A-Z]\w*(?:Functor|Impl|Ops?)\b|\w+(?=\((?:at|c10)::))")
_GENERIC_HINTS = {
    "AUnaryFunctor",
    "BUnaryFunctor",
    "BinaryFunctor",
    "UnaryFunctor",
    "ReduceOp",
    "gpu_kernel_impl",
    "gpu_kernel_impl_nocast",
}
#: Kernels that only wrap another, named by their first template argument.
_WRAPPER_KERNELS = {"Kernel", "Kernel2", "device_kernel"}
#: A chain of calls as the dispatch-chain queries write it.
CHAIN_SEPARATOR = " → "


def markdown_text(text: str) -> str:
    """Literal text inside a Markdown table cell: no emphasis, code, links or cell breaks."""
    text = _MARKDOWN_SPECIALS.sub(r"\\\1", text)
    return html.escape(text, quote=False).replace("|", "&#124;").replace("\n", " ")


def wrappable(text: str) -> str:
    """Escaped text whose long tokens may wrap after separators, never inside a word."""
    pieces = []
    for token in re.split(r"(\s+)", text):
        if len(token) < WRAP_FROM:
            pieces.append(markdown_text(token))
            continue
        if not _SEPARATORS.search(token):
            pieces.append("<wbr>".join(markdown_text(p) for p in _CAMEL.split(token)))
            continue
        parts = _SEPARATORS.split(token)
        pieces.append(
            "".join(markdown_text(p) + ("<wbr>" if _SEPARATORS.fullmatch(p) else "") for p in parts)
        )
    return "".join(pieces)


def _first_top_level(text: str, bracket: str) -> int | None:
    """Index of the first ``bracket`` at nesting depth 0 (counting <> and ()), or None."""
    depth = 0
    for i, ch in enumerate(text):
        if ch == bracket and depth == 0:
            return i
        if ch in "<(":
            depth += 1
        elif ch in ">)":
            depth = max(0, depth - 1)
    return None


def looks_like_cpp(name: str) -> bool:
    """A demangled C++ name: qualified, with templates or a parameter list, and long."""
    return (
        len(name) >= SHORTEN_FROM
        and ("::" in name or name.startswith("void "))
        and ("<" in name or "(" in name)
    )


def short_kernel_name(name: str) -> str:
    """``void at::native::f<8, MulFunctor<float>>(int, …)`` -> ``f<…MulFunctor…>``."""
    text = name.strip()
    if text.startswith("void "):
        text = text[len("void ") :]
    text = text.replace("(anonymous namespace)::", "")
    cut = min(
        (i for i in (_first_top_level(text, "<"), _first_top_level(text, "(")) if i is not None),
        default=len(text),
    )
    head, rest = text[:cut], text[cut:]
    base = head.rsplit("::", 1)[-1] or head
    if not rest.startswith("<"):
        return base + ("(…)" if rest else "")
    if base in _WRAPPER_KERNELS:  # cutlass::Kernel2<the_real_kernel_name<…>>: show the inside
        inner_name = rest[1:]
        end = min(
            (i for i in (_first_top_level(inner_name, c) for c in "<(,>") if i is not None),
            default=len(inner_name),
        )
        return f"{base}<{inner_name[:end].rsplit('::', 1)[-1]}…>"
    hints = [h for h in dict.fromkeys(_HINT.findall(rest)) if h not in _GENERIC_HINTS and h != base]
    inner = f"…{hints[0]}…" if hints else "…"
    return f"{base}<{inner}>"


#: The tooltip of a folded name (the Japanese edition's hook translates it).
FULL_NAME_TITLE = "Show the full name"


def _kernel_cell(name: str) -> str:
    return (
        f'<details class="pg-name"><summary title="{FULL_NAME_TITLE}"><code>'
        f"{wrappable(short_kernel_name(name))}</code></summary>"
        f'<code class="pg-name__full">{wrappable(name)}</code></details>'
    )


def cell_html(text: str) -> str:
    """The Markdown/HTML for one formatted cell (numbers arrive already formatted)."""
    if _URL.match(text):
        host = urlsplit(text).hostname or text
        return f'<a href="{html.escape(text)}">{markdown_text(host)}</a>'
    if CHAIN_SEPARATOR in text and any(looks_like_cpp(p) for p in text.split(CHAIN_SEPARATOR)):
        parts = text.split(CHAIN_SEPARATOR)
        shown = [short_kernel_name(p) if looks_like_cpp(p) else p for p in parts]
        return (
            f'<details class="pg-name"><summary title="{FULL_NAME_TITLE}">'
            f"{wrappable(CHAIN_SEPARATOR.join(shown))}</summary>"
            f'<code class="pg-name__full">{wrappable(text)}</code></details>'
        )
    if looks_like_cpp(text):
        return _kernel_cell(text)
    return wrappable(text)
