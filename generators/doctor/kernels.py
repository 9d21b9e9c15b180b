"""What a trace's kernels achieved, and how its launches met the GPU: the doctor's kernel view.

Two questions the findings do not answer on their own, asked of any trace with GPU kernels:

- **Which kernels take the GPU's time, and how well do they run?** The kernels with the most
  summed time (``guide_achieved_top_kernels``, ``generators/sql/achieved.sql``): each one's
  library and what its name says, how often it ran, its share of all kernel time, and where the
  launching operator's recorded shapes allow, the rate it achieved against the GPU's peak and its
  side of the roofline.
- **Did the CPU keep the GPU fed?** Each kernel launch either found its stream idle (the kernel
  starts a launch latency after the call: the GPU waited for the CPU) or still busy with earlier
  work (the kernel queues: the CPU ran ahead). The share queued tells a job the CPU paces from
  one the GPU paces, even on a trace with no step markers (``guide_launch_queue``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from generators.tp import rows_of

#: Kernel names the view lists, the most time first.
TOP_KERNELS = 10
#: A trace whose kernel launches queue at least this share (%) of the time: the CPU runs ahead
#: and the GPU sets the pace; at most ``CPU_PACED_PCT``: the GPU mostly waits for the CPU.
GPU_PACED_PCT = 50.0
CPU_PACED_PCT = 10.0

_TOP_SQL = f"""
INCLUDE PERFETTO MODULE guide.achieved;
SELECT * FROM guide_achieved_top_kernels!({TOP_KERNELS})
"""

# Medians in SQL (the middle value, the lower of two), so that no launch crosses to Python.
_QUEUE_SQL = """
INCLUDE PERFETTO MODULE guide.launch;
WITH
  q AS MATERIALIZED (
    SELECT queued, latency_ns, queue_ns FROM guide_launch_queue WHERE gpu_category = 'kernel'
  ),
  idle AS MATERIALIZED (
    SELECT latency_ns AS ns FROM q WHERE NOT queued AND latency_ns IS NOT NULL ORDER BY ns
  ),
  waited AS MATERIALIZED (
    SELECT queue_ns AS ns FROM q WHERE queued AND queue_ns IS NOT NULL ORDER BY ns
  )
SELECT
  (SELECT COUNT(*) FROM q) AS launches,
  (SELECT COALESCE(SUM(queued), 0) FROM q) AS queued,
  (SELECT ns FROM idle LIMIT 1 OFFSET (SELECT (COUNT(*) - 1) / 2 FROM idle)) AS latency_ns,
  (SELECT ns FROM waited LIMIT 1 OFFSET (SELECT (COUNT(*) - 1) / 2 FROM waited)) AS queue_ns
"""


@dataclass(frozen=True)
class LaunchQueue:
    """How the trace's kernel launches met their streams."""

    launches: int
    queued: int
    #: Median launch latency of the launches that found their stream idle (call start to kernel
    #: start, ns), and median wait of the queued ones (call end to stream free, ns); the lower
    #: middle value of an even count.
    latency_median_ns: int | None
    queue_median_ns: int | None

    @property
    def queued_pct(self) -> float:
        return 100.0 * self.queued / self.launches if self.launches else 0.0

    @property
    def pace(self) -> str:
        """'gpu' when the CPU ran ahead (most launches queued), 'cpu' when the GPU mostly waited,
        'mixed' between."""
        if self.queued_pct >= GPU_PACED_PCT:
            return "gpu"
        if self.queued_pct <= CPU_PACED_PCT:
            return "cpu"
        return "mixed"

    def to_json(self) -> dict[str, Any]:
        return {
            "kernel_launches": self.launches,
            "queued": self.queued,
            "queued_pct": round(self.queued_pct, 2),
            "latency_median_ns": self.latency_median_ns,
            "queue_median_ns": self.queue_median_ns,
            "paced_by": self.pace,
        }


@dataclass
class KernelView:
    """The kernel view of one trace: the top kernels' rows (the columns of
    ``guide_achieved_top_kernels``) and the launch queue (None without linked launches)."""

    top: list[dict[str, Any]] = field(default_factory=list)
    queue: LaunchQueue | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "top_kernels": self.top,
            "launch_queue": self.queue.to_json() if self.queue else None,
        }


def kernel_view(tp: Any) -> KernelView:
    """The kernel view of the opened trace ``tp`` (empty on a trace without kernels)."""
    names, rows = rows_of(tp, _TOP_SQL)
    top = [dict(zip(names, r, strict=True)) for r in rows]
    if not top:
        return KernelView()
    _, ((launches, queued, latency_ns, queue_ns),) = rows_of(tp, _QUEUE_SQL)
    queue = None
    if launches:
        queue = LaunchQueue(launches, queued, latency_ns, queue_ns)
    return KernelView(top, queue)
