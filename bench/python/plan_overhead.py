#!/usr/bin/env python3
"""The host cost of fdstencil.Plan's call on GPU arrays (issue 36's overhead target), d2xyz on
PyTorch tensors:
  loop       N calls back to back on one stream: the host's time to enqueue them and the GPU's
             (CUDA events around them). With N above the launch queue's depth the host waits for
             the GPU once the queue is full, so the two agree whichever side bounds the calls.
  burst      the host's time per call over B calls enqueued on an idle GPU (B below the queue's
             depth): the call's host cost alone, Python's and the C++ plan's together.
  kernel     the GPU's time for one call on an idle GPU (events around it, the median of K).
The calls are host-bound where burst exceeds kernel.

Usage: python3 bench/python/plan_overhead.py [--size 64] [--radius 4] [--calls 2000] [--output FILE.json]
Exit status: 0, or 2 without PyTorch, a GPU or fdstencil's cuda backend (it says which).
"""
import argparse
import json
import statistics
import sys
import time

# Calls in a burst: well below the CUDA launch queue's depth (about 1000), so none waits for the GPU.
BURST = 100


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--size", type=int, default=64, help="the interior's edge, points (default 64)")
    p.add_argument("--radius", type=int, default=4, help="the stencil's radius R (default 4)")
    p.add_argument("--calls", type=int, default=2000, help="calls in the long loop (default 2000)")
    p.add_argument("--output", help="write the figures as JSON here (default: print them)")
    a = p.parse_args()
    try:
        import torch
        import fdstencil
    except ImportError as e:
        print(f"plan_overhead.py: error: {e.name} is not installed for {sys.executable}", file=sys.stderr)
        return 2
    if not torch.cuda.is_available():
        print("plan_overhead.py: error: PyTorch sees no GPU", file=sys.stderr)
        return 2
    try:
        plan = fdstencil.Plan("d2xyz", a.radius, (a.size,) * 3, backend="cuda")
    except ValueError as e:
        print(f"plan_overhead.py: error: {e}", file=sys.stderr)
        return 2
    u = torch.randn(plan.padded_shape, device="cuda")
    out = torch.zeros_like(u)
    for _ in range(100):  # the plan built, the kernels loaded, the clocks up
        plan(u, out)
    torch.cuda.synchronize()
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    t0 = time.perf_counter()
    start.record()
    for _ in range(a.calls):
        plan(u, out)
    end.record()
    host_s = time.perf_counter() - t0
    torch.cuda.synchronize()
    loop_gpu_us = start.elapsed_time(end) / a.calls * 1e3
    burst = []  # host microseconds per call, B calls on an idle GPU
    for _ in range(20):
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        for _ in range(BURST):
            plan(u, out)
        burst.append((time.perf_counter() - t0) / BURST * 1e6)
    kernel = []  # GPU microseconds of one call on an idle GPU
    for _ in range(50):
        torch.cuda.synchronize()
        start.record()
        plan(u, out)
        end.record()
        end.synchronize()
        kernel.append(start.elapsed_time(end) * 1e3)
    doc = {"op": "d2xyz", "radius": a.radius, "interior": [a.size] * 3, "dtype": "float32", "calls": a.calls,
           "host_us_per_call": host_s / a.calls * 1e6, "gpu_us_per_call": loop_gpu_us,
           "burst_calls": BURST, "burst_host_us_per_call": statistics.median(burst),
           "kernel_gpu_us_median": statistics.median(kernel),
           "device": torch.cuda.get_device_name(), "plan": json.loads(plan.describe())}
    text = json.dumps(doc, indent=1)
    if a.output:
        with open(a.output, "w") as f:
            f.write(text + "\n")
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
