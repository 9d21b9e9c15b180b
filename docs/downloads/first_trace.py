"""Your first PyTorch profiler trace: a matrix multiply and a bias add, profiled step by step.

    python first_trace.py     # on a CUDA GPU if there is one, else on the CPU

Prints the profiler's table and writes first_trace.json.gz: open it at https://ui.perfetto.dev.
"""

import torch
from torch.profiler import ProfilerActivity, profile, record_function, schedule

device = "cuda" if torch.cuda.is_available() else "cpu"
size = 64  # the guide's small capture; 4096 makes the GPU the busy side
x = torch.randn(size, size, device=device)
w = torch.randn(size, size, device=device)
b = torch.randn(size, device=device)


def matmul_add(x, w, b):
    return torch.add(torch.matmul(x, w), b)


activities = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if device == "cuda" else [])
# Skip one step, trace one and throw it away (warm-up), then keep three.
with profile(activities=activities, schedule=schedule(wait=1, warmup=1, active=3)) as prof:
    for _ in range(5):
        with record_function("matmul_add"):
            matmul_add(x, w, b)
        prof.step()
    if device == "cuda":
        torch.cuda.synchronize()  # every kernel finishes inside the trace

sort_by = "cuda_time_total" if device == "cuda" else "cpu_time_total"
print(prof.key_averages().table(sort_by=sort_by, row_limit=10))
prof.export_chrome_trace("first_trace.json.gz")
print("Wrote first_trace.json.gz: open it at https://ui.perfetto.dev")
