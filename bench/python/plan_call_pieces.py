#!/usr/bin/env python3
"""Where the host time of one fdstencil.Plan call on GPU arrays goes (issue 36's overhead target):
each piece the call runs, timed alone over many repeats on the same 64^3 tensors, then a profile
of whole calls. Pieces that enqueue work (the plan's apply) are timed in bursts below the launch
queue's depth, so that they measure the host and not the GPU.

Pieces, for PyTorch (and CuPy where it is installed):
  dlpack_device   the array's __dlpack_device__ (the call asks it of u and out)
  dlpack          __dlpack__(max_version=(1, 0)): nanobind's import of one array
  current_stream  the framework's current stream object and its handle
  on_device       entering and leaving the framework's device context
  core_apply      fdstencil._core's bound apply on the two arrays: nanobind's imports, the C++
                  plan's checks and its launch
  core_apply_ptr  the bound apply on the arrays' raw pointers and strides, read the framework's
                  way (no DLPack import): the C++ plan's checks and launch, and the binding's call
  plan_call       fdstencil.Plan.__call__, everything above together

Usage: python3 bench/python/plan_call_pieces.py [--size 64] [--radius 4] [--output FILE.json]
Exit status: 0, or 2 without PyTorch, a GPU or fdstencil's cuda backend (it says which).
"""
import cProfile
import io
import pstats
import statistics
import sys
import time

import torch_plan

# Calls in one timed burst: below the CUDA launch queue's depth (about 1000), so that none waits for
# the GPU; bursts repeated ROUNDS times, the median quoted.
BURST = 200
ROUNDS = 25


def burst_us(fn, sync):
    """The median host microseconds per call of fn over ROUNDS bursts, each begun on an idle GPU."""
    times = []
    for _ in range(ROUNDS):
        sync()
        t0 = time.perf_counter()
        for _ in range(BURST):
            fn()
        times.append((time.perf_counter() - t0) / BURST * 1e6)
    sync()
    return statistics.median(times)


def pieces(fdstencil, plan, u, out, sync, framework):
    from fdstencil import plan as plan_module
    ap = plan._plan("gpu", u.__dlpack_device__()[1])
    handle = plan_module._stream_of(u, None)

    def on_device():
        with plan_module._on_device(u):
            pass

    device = u.__dlpack_device__()[1]
    if plan_module._torch(u):
        raw = lambda: ap.apply_gpu_ptr_f32(u.data_ptr(), out.data_ptr(), u.stride(1), u.stride(0),  # noqa: E731
                                           out.stride(1), out.stride(0), device, handle)
    else:
        raw = lambda: ap.apply_gpu_ptr_f32(u.data.ptr, out.data.ptr, u.strides[1] // 4, u.strides[0] // 4,  # noqa: E731
                                           out.strides[1] // 4, out.strides[0] // 4, device, handle)

    return {"framework": framework,
            "dlpack_device_us": burst_us(lambda: u.__dlpack_device__(), sync),
            "dlpack_us": burst_us(lambda: u.__dlpack__(max_version=(1, 0)), sync),
            "current_stream_us": burst_us(lambda: plan_module._stream_of(u, None), sync),
            "on_device_us": burst_us(on_device, sync),
            "core_apply_us": burst_us(lambda: ap.apply_gpu_f32(u, out, handle), sync),
            "core_apply_ptr_us": burst_us(raw, sync),
            "plan_call_us": burst_us(lambda: plan(u, out), sync),
            "plan_call_with_stream_us": burst_us(lambda: plan(u, out, stream=handle), sync)}


def profile(plan, u, out, sync, calls=2000):
    """cProfile's top entries, by their own time, over `calls` whole calls."""
    sync()
    prof = cProfile.Profile()
    prof.enable()
    for _ in range(calls):
        plan(u, out)
    prof.disable()
    sync()
    text = io.StringIO()
    pstats.Stats(prof, stream=text).sort_stats("tottime").print_stats(14)
    return text.getvalue()


def main():
    a = torch_plan.parse(__doc__)
    torch, fdstencil, plan, u, out = torch_plan.warm_plan(a)
    records = [pieces(fdstencil, plan, u, out, torch.cuda.synchronize, "torch " + torch.__version__)]
    report = profile(plan, u, out, torch.cuda.synchronize)
    try:
        import cupy
        cu = cupy.asarray(u)  # the same memory, through __cuda_array_interface__
        co = cupy.zeros_like(cu)
        records.append(pieces(fdstencil, plan, cu, co, cupy.cuda.Device().synchronize, "cupy " + cupy.__version__))
    except ImportError:
        pass
    doc = {"op": "d2xyz", "radius": a.radius, "interior": [a.size] * 3, "dtype": "float32", "burst": BURST,
           "rounds": ROUNDS, "device": torch.cuda.get_device_name(), "python": sys.version.split()[0],
           "pieces": records, "profile_torch": report.splitlines()}
    torch_plan.emit(doc, a.output)
    return 0


if __name__ == "__main__":
    sys.exit(main())
