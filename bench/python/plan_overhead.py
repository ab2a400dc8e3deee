#!/usr/bin/env python3
"""The host cost of fdstencil.Plan's call on GPU arrays (issue 36's overhead target), d2xyz on
PyTorch tensors:
  loop       N calls back to back on one stream: the host's time to enqueue them and the GPU's
             (CUDA events around them). With N above the launch queue's depth the host waits for
             the GPU once the queue is full, so the two agree whichever side bounds the calls.
  burst      the host's time per call over B calls enqueued on an idle GPU (B below the queue's
             depth): the call's host cost alone, Python's and the C++ plan's together.
  kernel     the GPU's time per call with the host out of the way: the stream is held by a spin
             kernel (torch.cuda._sleep) while a burst is enqueued behind it, so that the events
             around the burst time its calls back to back (the median of several bursts).
The calls are host-bound where burst exceeds kernel.

Usage: python3 bench/python/plan_overhead.py [--size 64] [--radius 4] [--calls 2000] [--output FILE.json]
Exit status: 0, or 2 without PyTorch, a GPU or fdstencil's cuda backend (it says which).
"""
import json
import statistics
import sys
import time

import torch_plan

# Calls in a burst: well below the CUDA launch queue's depth (about 1000), so none waits for the GPU.
BURST = 100
# The spin that holds the stream while a burst is queued: ~25 ms at the H100's ~2 GHz, well above
# a burst's host time (100 calls of well under 100 us).
SPIN_CYCLES = 50_000_000


def main():
    a = torch_plan.parse(__doc__, [("--calls", int, 2000, "calls in the long loop (default 2000)")])
    torch, fdstencil, plan, u, out = torch_plan.warm_plan(a)
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
    kernel = []  # GPU microseconds a call, the burst queued behind a spin so the host never lags
    for _ in range(20):
        torch.cuda.synchronize()
        torch.cuda._sleep(SPIN_CYCLES)
        start.record()
        for _ in range(BURST):
            plan(u, out)
        end.record()
        end.synchronize()
        kernel.append(start.elapsed_time(end) * 1e3 / BURST)
    doc = {"op": "d2xyz", "radius": a.radius, "interior": [a.size] * 3, "dtype": "float32", "calls": a.calls,
           "host_us_per_call": host_s / a.calls * 1e6, "gpu_us_per_call": loop_gpu_us,
           "burst_calls": BURST, "burst_host_us_per_call": statistics.median(burst),
           "kernel_gpu_us_median": statistics.median(kernel),
           "device": torch.cuda.get_device_name(), "plan": json.loads(plan.describe())}
    torch_plan.emit(doc, a.output)
    return 0


if __name__ == "__main__":
    sys.exit(main())
