"""Writes the small synthetic Kineto traces in this folder (run it to regenerate them).

They exist only where no real trace shows a pattern a detector looks for (see README.md). Every
event is written here by hand, in the shape torch.profiler writes it; none is a measurement.
"""

from __future__ import annotations

import json
from pathlib import Path

HERE = Path(__file__).resolve().parent
PID, TID = 100, 100
GPU_PROPS = [
    {
        "id": 0,
        "name": "NVIDIA H100 80GB HBM3",
        "totalGlobalMem": 85018279936,
        "computeMajor": 9,
        "computeMinor": 0,
        "numSms": 132,
    }
]


class Trace:
    def __init__(self, gpu: bool) -> None:
        self.events: list[dict] = [
            {"name": "process_name", "ph": "M", "pid": PID, "tid": 0, "args": {"name": "python3"}},
            {
                "name": "thread_name",
                "ph": "M",
                "pid": PID,
                "tid": TID,
                "args": {"name": "thread 100 (python3)"},
            },
        ]
        self.gpu = gpu
        self.correlation = 1
        #: The GPU the kernels run on (a rank's own, in a job's traces).
        self.device = 0
        #: Kineto's ``distributedInfo`` block, for a rank of a job.
        self.distributed: dict | None = None

    def cpu(self, cat: str, name: str, ts: float, dur: float, **args: object) -> None:
        self.events.append(
            {
                "ph": "X",
                "cat": cat,
                "name": name,
                "pid": PID,
                "tid": TID,
                "ts": ts,
                "dur": dur,
                "args": dict(args),
            }
        )

    def launch(
        self,
        api: str,
        ts: float,
        dur: float,
        kernels: list[tuple[str, float, float, int]],
        cat: str = "kernel",
        args: dict | None = None,
    ) -> None:
        """A runtime call and the GPU activities it started: (name, ts, dur, stream), each with
        ``args`` beside the usual ones."""
        corr = self.correlation
        self.correlation += 1
        self.cpu("cuda_runtime", api, ts, dur, correlation=corr)
        self.events.append(
            {"ph": "s", "id": corr, "pid": PID, "tid": TID, "ts": ts, "cat": "ac2g", "name": "ac2g"}
        )
        for name, kts, kdur, stream in kernels:
            self.events.append(
                {
                    "ph": "X",
                    "cat": cat,
                    "name": name,
                    "pid": self.device,
                    "tid": stream,
                    "ts": kts,
                    "dur": kdur,
                    "args": {
                        "device": self.device,
                        "stream": stream,
                        "correlation": corr,
                        **(args or {}),
                    },
                }
            )
            self.events.append(
                {
                    "ph": "f",
                    "id": corr,
                    "pid": self.device,
                    "tid": stream,
                    "ts": kts,
                    "cat": "ac2g",
                    "name": "ac2g",
                    "bp": "e",
                }
            )

    def write(self, name: str) -> None:
        doc: dict = {"schemaVersion": 1}
        if self.distributed:  # before the events, where Kineto writes it
            doc["distributedInfo"] = self.distributed
        doc |= {"traceEvents": self.events, "displayTimeUnit": "ms"}
        if self.gpu:
            doc["deviceProperties"] = [p | {"id": self.device} for p in GPU_PROPS]
        (HERE / name).write_text(json.dumps(doc, indent=0) + "\n", encoding="utf-8")


def recompiled() -> None:
    """Three steps of a compiled function; the third runs a recompiled frame (0/1)."""
    t = Trace(gpu=False)
    for i, start in enumerate((1000.0, 2000.0, 3000.0)):
        t.cpu("user_annotation", f"ProfilerStep#{i}", start, 900)
        t.cpu("cpu_op", "TorchDynamo Cache Lookup", start + 10, 20)
        region = "Torch-Compiled Region: 0/1" if i == 2 else "Torch-Compiled Region: 0/0"
        t.cpu("cpu_op", region, start + 40, 800)
        t.cpu("cpu_op", "aten::addmm", start + 60, 700)
    t.write("recompiled.json")


def graphs_and_comm() -> None:
    """Two training steps on one GPU: a CUDA graph replaying four kernels, a backward node, then
    an all-reduce kernel on its own stream that no compute kernel overlaps (a gradient sync)."""
    t = Trace(gpu=True)
    for i, start in enumerate((1000.0, 3000.0)):
        t.cpu("user_annotation", f"ProfilerStep#{i}", start, 1900)
        t.cpu("cpu_op", "autograd::engine::evaluate_function: AddmmBackward0", start + 500, 50)
        t.launch(
            "cudaGraphLaunch",
            start + 50,
            30,
            [
                (f"void graph_node_kernel_{k}(float const*, float*)", start + 100 + 100 * k, 90, 7)
                for k in range(4)
            ],
        )
        t.launch(
            "cudaLaunchKernel",
            start + 600,
            10,
            [
                (
                    "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevComm*, unsigned long)",
                    start + 700,
                    800,
                    20,
                )
            ],
        )
    t.write("graphs-and-comm.json")


def combined_optimizer() -> None:
    """Two CPU steps, each running a combined optimizer (TorchRec's CombinedOptimizer) whose
    label holds an inner optimizer's label: 24 single-tensor fp32 updates inside both."""
    t = Trace(gpu=False)
    for i, start in enumerate((1000.0, 2000.0)):
        t.cpu("user_annotation", f"ProfilerStep#{i}", start, 900)
        t.cpu("user_annotation", "Optimizer.step#CombinedOptimizer.step", start + 100, 600)
        t.cpu("user_annotation", "Optimizer.step#Adam.step", start + 110, 580)
        for k in range(24):
            t.cpu(
                "cpu_op",
                "aten::add_",
                start + 120 + 20 * k,
                15,
                **{
                    "Input Dims": [[256, 256], [256, 256], []],
                    "Input type": ["float", "float", "Scalar"],
                },
            )
    t.write("combined-optimizer.json")


def graph_capture() -> None:
    """Three steps that capture a CUDA graph and never replay it: the launches inside the
    capture queue nothing on the GPU (as a capture records them), one warm-up kernel ran before
    it. Only the capture calls' names and their order are the point."""
    t = Trace(gpu=True)
    t.launch("cudaLaunchKernel", 500, 10, [("void warmup_kernel(float*)", 520, 5, 7)])
    for i, start in enumerate((1000.0, 2000.0, 3000.0)):
        t.cpu("user_annotation", f"ProfilerStep#{i}", start, 900)
        t.cpu("cuda_runtime", "cudaStreamBeginCapture", start + 10, 5)
        for k in range(20):
            t.cpu("cuda_runtime", "cudaLaunchKernel", start + 20 + 30 * k, 25)
        t.cpu("cuda_runtime", "cudaStreamEndCapture", start + 700, 10)
        t.cpu("cuda_runtime", "cudaGraphInstantiate", start + 720, 150)
    t.write("graph-capture.json")


def hostile_names() -> None:
    """A GPU step whose names carry markup, Markdown and terminal escapes: reports must show
    them as text. The fp32 GEMM name fires fp32-gemm, the pageable copy host-device-copies."""
    t = Trace(gpu=True)
    t.cpu("user_annotation", "ProfilerStep#0", 1000, 2000)
    t.cpu("cpu_op", "aten::mm<script>alert('op')</script>", 1010, 500)
    t.launch(
        "cudaLaunchKernel",
        1020,
        10,
        [
            (
                "volta_sgemm_128x64_nn<script>alert('kernel')</script>|`pipe`**bold**\u001b[31mred",
                1100,
                600,
                7,
            )
        ],
    )
    t.launch(
        "cudaMemcpyAsync",
        1600,
        10,
        [("Memcpy HtoD (Pageable -> Device)", 1700, 200, 7)],
        cat="gpu_memcpy",
    )
    t.write("hostile-names.json")


#: The process group of the job's all-reduces: a name with markup, a pipe and Markdown, which
#: every report must show as text.
HOSTILE_GROUP = "0<script>alert('pg')</script>|*x*"


def rank_of_job(rank: int) -> None:
    """One rank of a two-rank job (its distributedInfo says so): two 10 ms steps, each a 4 ms
    compute kernel, then 24 small all-reduces (1,000 floats each: 4,000 bytes, unbucketed) 200 µs
    apart on a stream of their own; the first six run under the compute kernel, the other 18
    alone. Rank 1 reaches every all-reduce 20 µs after rank 0, and both finish together, so rank
    0 waits 20 µs at each (its kernels run 70 µs, rank 1's 50 µs). Rank r runs on GPU r."""
    t = Trace(gpu=True)
    t.device = rank
    t.distributed = {"backend": "nccl", "rank": rank, "world_size": 2}
    late = 20.0 * rank
    for i in range(2):
        start = 1000.0 + 10_000 * i
        t.cpu("user_annotation", f"ProfilerStep#{i}", start, 10_000)
        t.cpu("cpu_op", "aten::mm", start + 10, 60)
        t.launch(
            "cudaLaunchKernel",
            start + 20,
            10,
            [("void compute_kernel(float*)", start + 100, 4000, 7)],
        )
        for k in range(24):
            t.launch(
                "cudaLaunchKernel",
                start + 2000 + 200 * k,
                10,
                [
                    (
                        "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevComm*, unsigned long)",
                        start + 3000 + 200 * k + late,
                        70 - late,
                        20,
                    )
                ],
                args={
                    "Collective name": "allreduce",
                    "In msg nelems": 1000,
                    "Out msg nelems": 1000,
                    "dtype": "Float",
                    "Group size": 2,
                    "Process Group Name": HOSTILE_GROUP,
                },
            )
    t.write(f"job-rank-{rank}.json")


if __name__ == "__main__":
    recompiled()
    graphs_and_comm()
    combined_optimizer()
    graph_capture()
    hostile_names()
    rank_of_job(0)
    rank_of_job(1)
