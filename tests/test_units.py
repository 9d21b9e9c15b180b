"""Units come from column names; every shown number goes through one formatter."""

import pytest

from generators.units import format_value, unit_of


@pytest.mark.parametrize(
    ("value", "column", "expected"),
    [
        (512, "dur_ns", "512 ns"),
        (1234, "dur_ns", "1.23 µs"),
        (45_600, "self_ns", "45.6 µs"),
        (999_499, "x_ns", "999 µs"),
        (999_999, "x_ns", "1.00 ms"),
        (999.7, "x_ns", "1.00 µs"),
        (70_919, "wrapper_self_ns_per_step", "70.9 µs"),
        (4.2 * (1 << 30), "peak_bytes_per_s", "4.20 GiB/s"),
        (4470 * (1 << 30), "peak_bytes_per_s", "4.37 TiB/s"),
        (float("nan"), "dur_ns", "–"),
        (float("inf"), "gpu_busy_pct", "–"),
        (2_500_000, "x_ns", "2.50 ms"),
        (3.2e9, "x_ns", "3.20 s"),
        (0.0015, "window_s", "1.50 ms"),
        (1536, "size_bytes", "1.50 KiB"),
        (3 * (1 << 30), "size_bytes", "3.00 GiB"),
        (100, "size_bytes", "100 B"),
        (12.345, "gpu_busy_pct", "12.3 %"),
        (0, "gpu_busy_pct", "0 %"),
        (312.0, "achieved_tflops", "312 TFLOP/s"),
        (4350, "kernels", "4,350"),
        # A mean of a count groups its digits like a whole count beside it.
        (2496.8, "kernels_per_step", "2,497"),
        (999.6, "kernels_per_step", "1,000"),
        (999.4, "kernels_per_step", "999"),
        (12.34, "kernels_per_step", "12.3"),
        (2.5, "ratio", "2.50"),
        (9.996, "x_pct", "10.0 %"),
        (123.456, "tokens_per_s", "123/s"),
        (None, "dur_ns", "–"),
        ("aten::mm", "name", "aten::mm"),
    ],
)
def test_format_value(value: object, column: str, expected: str) -> None:
    assert format_value(value, column) == expected


def test_unit_suffixes() -> None:
    assert unit_of("first_step_start_s") == "s"
    assert unit_of("calls") is None
    assert unit_of("wrapper_self_ns_per_step") == "ns"
    assert unit_of("peak_bytes_per_s") == "bytes/s"
    assert unit_of("tokens_per_s") == "/s"
    assert unit_of("cpu_per_fwd_ns") == "ns"
