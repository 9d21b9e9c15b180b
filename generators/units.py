"""How numbers are shown: one formatter for tables, values and figure labels.

A column's unit is given by its name's suffix, so SQL stays the single source of both the number
and its meaning: ``_ns`` (nanoseconds), ``_s`` (seconds), ``_bytes``, ``_pct`` (0-100),
``_tflops`` (TFLOP/s). Anything else is a plain count or text.
"""

from __future__ import annotations

import math

UNIT_SUFFIXES = ("_ns", "_s", "_bytes", "_pct", "_tflops")


def unit_of(column: str) -> str | None:
    for suffix in UNIT_SUFFIXES:
        if column.endswith(suffix):
            return suffix[1:]
    return None


def strip_unit(column: str) -> str:
    unit = unit_of(column)
    return column[: -len(unit) - 1] if unit else column


def _sig3(x: float) -> str:
    """Three significant figures without scientific notation: 1.23, 12.3, 123."""
    if x == 0:
        return "0"
    digits = max(0, 2 - math.floor(math.log10(abs(x))))
    return f"{x:.{digits}f}"


def format_duration_ns(ns: float) -> str:
    magnitude = abs(ns)
    if magnitude < 1e3:
        return f"{ns:.0f} ns"
    if magnitude < 1e6:
        return f"{_sig3(ns / 1e3)} µs"
    if magnitude < 1e9:
        return f"{_sig3(ns / 1e6)} ms"
    return f"{_sig3(ns / 1e9)} s"


def format_bytes(n: float) -> str:
    for unit, scale in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if abs(n) >= scale:
            return f"{_sig3(n / scale)} {unit}"
    return f"{n:.0f} B"


def format_count(n: float) -> str:
    if float(n).is_integer():
        return f"{int(n):,}"
    return _sig3(float(n))


def format_value(value: object, column: str) -> str:
    """Format one cell or value for a reader, by the unit its column name carries."""
    if value is None:
        return "–"
    if isinstance(value, bool) or not isinstance(value, int | float):
        return str(value)
    unit = unit_of(column)
    if unit == "ns":
        return format_duration_ns(value)
    if unit == "s":
        return format_duration_ns(value * 1e9)
    if unit == "bytes":
        return format_bytes(value)
    if unit == "pct":
        return f"{_sig3(value)} %"
    if unit == "tflops":
        return f"{_sig3(value)} TFLOP/s"
    return format_count(value)
