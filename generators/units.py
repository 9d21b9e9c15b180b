"""How numbers are shown: one formatter for tables, values and figure labels.

A column's unit is given by its name's suffix, so SQL stays the single source of both the number
and its meaning: ``_ns`` (nanoseconds), ``_s`` (seconds), ``_bytes``, ``_pct`` (0-100),
``_tflops`` (TFLOP/s), also before a ``_per_<thing>`` tail (``self_ns_per_step``), and
``_bytes_per_s`` (a bandwidth). Anything else is a plain count or text.

The suffix also says what values are possible, and tests/test_physics.py holds every derived
number to it: a ``_pct`` is a share, 0 to 100 (a ratio that can exceed 100 is named for what it
is, e.g. ``_over_`` or ``_x``, never ``_pct``); a duration (``_ns``, ``_s``) is never negative
unless the name ends in ``_offset_ns`` / ``_offset_s`` (a signed distance between two moments);
a rate (``_tflops``, ``_bytes_per_s``) is at most the capture GPU's peak, unless the name starts
with ``peak_`` (a datasheet figure, not a measurement).
"""

from __future__ import annotations

import math
import re

UNIT_SUFFIXES = ("_ns", "_s", "_bytes", "_pct", "_tflops")
#: Durations that may be negative: the signed distance from one moment to another.
SIGNED_SUFFIXES = ("_offset_ns", "_offset_s")
#: A rate column named ``peak_...`` holds a datasheet peak, not something the trace measured.
DATASHEET_PREFIX = "peak_"


_PER = re.compile(r"_per_[a-z0-9_]+$")


def unit_of(column: str) -> str | None:
    """The unit a column name carries; a rate keeps it: ``cpu_ns_per_step`` is in ns."""
    if column.endswith("_bytes_per_s"):
        return "bytes/s"
    if column.endswith("_per_s"):  # a rate such as tokens_per_s, not a duration
        return "/s"
    for name in (column, _PER.sub("", column)):  # "cpu_per_fwd_ns", then "cpu_ns_per_fwd"
        for suffix in UNIT_SUFFIXES:
            if name.endswith(suffix):
                return suffix[1:]
    return None


def is_signed(column: str) -> bool:
    """Whether a duration column may hold negative values (see ``SIGNED_SUFFIXES``)."""
    return any(_PER.sub("", column).endswith(s) or column.endswith(s) for s in SIGNED_SUFFIXES)


def is_datasheet(column: str) -> bool:
    """Whether a rate column holds a datasheet peak rather than a measured rate."""
    return column.startswith(DATASHEET_PREFIX)


def _sig3(x: float) -> str:
    """Three significant figures without scientific notation: 1.23, 12.3, 123 (9.996 -> 10.0)."""
    if x == 0:
        return "0"
    digits = max(0, 2 - math.floor(math.log10(abs(x))))
    rounded = round(x, digits)
    if rounded != 0:  # rounding may have carried into the next decade
        digits = max(0, 2 - math.floor(math.log10(abs(rounded))))
    return f"{rounded:.{digits}f}"


def _scaled(value: float, scales: tuple[tuple[float, str], ...]) -> str:
    """Pick the largest unit whose rounded value stays below 1000 (999 999 ns -> 1.00 ms)."""
    for scale, unit in scales:
        text = _sig3(value / scale)
        if abs(float(text)) < 1000 or scale == scales[-1][0]:
            return f"{text} {unit}"
    raise AssertionError("unreachable")


def format_duration_ns(ns: float) -> str:
    if abs(ns) < 999.5:
        return f"{ns:.0f} ns"
    return _scaled(ns, ((1e3, "µs"), (1e6, "ms"), (1e9, "s")))


def format_bytes(n: float) -> str:
    if abs(n) < 1023.5:
        return f"{n:.0f} B"
    return _scaled(n, ((1 << 10, "KiB"), (1 << 20, "MiB"), (1 << 30, "GiB"), (1 << 40, "TiB")))


def format_count(n: float) -> str:
    if float(n).is_integer():
        return f"{int(n):,}"
    if abs(n) >= 999.5:
        # Three significant figures of a mean this large are a whole number: its digits are
        # grouped like a whole count's, so 2,497 and 2,382 read alike side by side.
        return f"{round(n):,}"
    return _sig3(float(n))


def format_value(value: object, column: str) -> str:
    """Format one cell or value for a reader, by the unit its column name carries."""
    if value is None or (isinstance(value, float) and not math.isfinite(value)):
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
    if unit == "bytes/s":
        return f"{format_bytes(value)}/s"
    if unit == "/s":
        return f"{format_count(value)}/s"
    if unit == "pct":
        return f"{_sig3(value)} %"
    if unit == "tflops":
        return f"{_sig3(value)} TFLOP/s"
    return format_count(value)
