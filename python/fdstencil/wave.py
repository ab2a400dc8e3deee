"""Acoustic wave propagation: `forward` runs one shot through a velocity model and returns the
receivers' traces, with the same solver (and the same bits) as `fdstencil wave`."""
import contextlib
import json
import math
import time
import warnings
from dataclasses import dataclass, field

import numpy as np

from . import _core
from ._cai import CudaArray, speaks_cai
from .plan import _LEGACY_STREAMS, _on_device, _on_stream, _stream_of
from .plan import _stream_handle as _stream_handle_of  # checked: plan.py

# As the tool's: a Ricker's delay is 1.5 periods (its start ~1e-8 of its peak), and a wavelet is
# sampled whole, at least nt samples and at most 2^20 (apps/fdstencil/wave_inputs.cpp).
RICKER_DELAY_PERIODS = 1.5
MAX_WAVELET_SAMPLES = 1 << 20


def ricker(f0, dt, nt, delay=None):
    """A Ricker wavelet of peak frequency f0 (Hz) sampled every dt seconds, as `fdstencil wave
    --ricker F0 [--delay T]` builds it: delayed by 1.5 / f0 unless `delay` says, and sampled until
    the pulse has passed (at least nt samples). float64."""
    f0, dt = float(f0), float(dt)
    if not (f0 > 0 and math.isfinite(f0)):
        raise ValueError(f"ricker: the peak frequency must be positive, got {f0}")
    if not (dt > 0 and math.isfinite(dt)):
        raise ValueError(f"ricker: dt must be positive, got {dt}")
    delay = RICKER_DELAY_PERIODS / f0 if delay is None else float(delay)
    if delay < 0:
        raise ValueError(f"ricker: the delay must be at least 0 s, got {delay}")
    whole = math.ceil((delay + RICKER_DELAY_PERIODS / f0) / dt) + 1
    n = max(int(nt), int(min(whole, MAX_WAVELET_SAMPLES)))
    return np.asarray(_core.ricker(f0, delay, dt, n), dtype=np.float64)


def max_stable_dt(dim, radius, spacing, vmax):
    """The leapfrog's largest stable step for this order, spacing and top velocity, seconds."""
    return _core.max_stable_dt(int(dim), int(radius), float(spacing), float(vmax))


@dataclass
class Shot:
    traces: object  # (receivers, nt) float32, the model's kind of array: receiver r at t = n dt is traces[r, n]
    dt: float  # the time step the run took, seconds
    final_field: object  # u after nt steps on the model's points (float32, the model's shape), or None
    # loop_s, setup_s, setup_phases_s, total_s, gpts, backend, kernel, state_kept, device (the GPU's
    # index, or None on the cpu); model_s, prepare_s and call_s (the call's, shared by its shots);
    # with measure_bound, also copy_gbps, bound_gpts and percent_of_bound; launch_from (the wave
    # tuning cache the GPU launch came from, or None)
    timing: dict
    # what the run warned of (the tool's warnings: sampling, an untuned card, a refused tuned
    # launch); each is also issued once as a FdstencilWarning
    warnings: list = field(default_factory=list)
    # u after each step count of snapshot_steps on the model's points, in rising step order
    # (count, *model shape), float32, the model's kind of array; None when none was asked
    snapshots: object = None
    snapshot_steps: list = field(default_factory=list)  # the steps of `snapshots`, rising, each once


class FdstencilWarning(UserWarning):
    """A run's warning: it ran, but something about it deserves a look (the tool prints the same)."""


def _points(name, value, dim):
    a = np.ascontiguousarray(value, dtype=np.float64)
    if a.ndim == 1 and a.size == dim:
        a = a.reshape(1, dim)
    if a.ndim != 2 or a.shape[1] != dim:
        raise ValueError(f"{name}: expected positions of shape (n, {dim}) in metres, z first; got shape "
                         f"{np.shape(value)}")
    if not np.all(np.isfinite(a)):
        raise ValueError(f"{name}: positions must be finite")
    return a


def _on_gpu(a):
    """Whether a is a GPU array this module reads: PyTorch's on CUDA, CuPy's, or one known by
    __cuda_array_interface__."""
    module = type(a).__module__
    return speaks_cai(a) or module.startswith("cupy") or (module.startswith("torch") and a.is_cuda)


def _wait_for_producer(a, stream, name="velocity"):
    """Waits on the host for the work queued so far on `stream` (None: a's framework's current
    stream on a's GPU), and for an array known only by __cuda_array_interface__ also on the stream
    its interface names, so that a's values are complete whichever stream reads them next. Nothing
    for a host array."""
    if not _on_gpu(a):
        return
    if speaks_cai(a):
        c = CudaArray(a, name)
        c.wait()
        if stream is not None:
            _core.synchronize_stream(_stream_handle_of(stream), c.device)
        return
    if stream is not None:
        handle = _stream_handle_of(stream)
    else:
        with _on_device(a):  # CuPy's current stream is the current device's: a's, here
            handle = _stream_of(a, None)
    _core.synchronize_stream(handle, a.device.index if type(a).__module__.startswith("torch") else a.device.id)


def _host(a, name="velocity", stream=None):
    """A framework's array (PyTorch, CuPy) as NumPy on the host, copied there once where it lives on
    the GPU, after the work on `stream` (_wait_for_producer's), as is an array known only by
    __cuda_array_interface__; anything else as np.asarray takes it."""
    _wait_for_producer(a, stream, name)
    if speaks_cai(a):
        return CudaArray(a, name).to_host()
    module = type(a).__module__
    if module.startswith("torch"):
        fast = _gpu_float32_to_host(a, lambda: a.is_cuda and a.is_contiguous(), lambda: (a.data_ptr(), a.numel()))
        return fast if fast is not None else a.detach().cpu().numpy()
    if module.startswith("cupy"):
        fast = _gpu_float32_to_host(a, lambda: a.flags.c_contiguous, lambda: (a.data.ptr, a.size))
        return fast if fast is not None else a.get()
    return np.asarray(a)


def _gpu_float32_to_host(a, dense, memory):
    """A dense float32 GPU array's copy on the host through the module's own copy (its pages touched
    by the threads first; a framework's copy faults them in on one thread), or None for any other.
    Its producer's work is done (_host waited for it): the copy runs on the legacy stream."""
    if str(a.dtype) not in ("float32", "torch.float32") or _core.gpu_count() == 0 or not dense():
        return None
    ptr, count = memory()
    return _core.host_copy_of_gpu(ptr, int(count) * 4).view(np.float32).reshape(tuple(a.shape))


def _in_place_on_gpu(a, backend, gpus, stream):
    """(pointer, shape, GPU) of a dense 2D or 3D float32 GPU array whose shots all run on its own
    GPU, its producer's work on `stream` waited for (_wait_for_producer's): the solver then reads it
    where it is (the model's checks, summary and m built on that GPU; docs/python.md). None for any
    other model, which goes through the host."""
    if backend == "cpu" or _core.gpu_count() == 0 or len(gpus) != 1:
        return None
    if speaks_cai(a):
        c = CudaArray(a, "velocity")
        dense = c.element_strides() == tuple(int(np.prod(c.shape[i + 1:], dtype=np.int64))
                                             for i in range(len(c.shape)))
        if (c.dtype != np.float32 or not dense or c.size == 0 or c.device != gpus[0] or len(c.shape) not in (2, 3)
                or c.ptr % 4):
            return None
        _wait_for_producer(a, stream)
        return c.ptr, c.shape, c.device
    module = type(a).__module__
    if module.startswith("torch"):
        if not (a.is_cuda and a.dtype == __import__("torch").float32 and a.is_contiguous() and a.numel() > 0):
            return None
        place = (a.data_ptr(), tuple(a.shape), a.device.index)
    elif module.startswith("cupy"):
        if not (a.dtype == np.float32 and a.flags.c_contiguous and a.size > 0):
            return None
        place = (a.data.ptr, tuple(a.shape), a.device.id)
    else:
        return None
    if len(place[1]) not in (2, 3) or place[2] != gpus[0] or place[0] % 4:  # (the kernels load whole floats)
        return None
    _wait_for_producer(a, stream)  # the solver reads it on its own streams
    return place


def _gpu_of(a):
    """The GPU index a framework's array lives on, or None (NumPy, or an array on the host)."""
    if speaks_cai(a):
        return CudaArray(a, "velocity").device
    try:
        kind, index = a.__dlpack_device__()
    except (AttributeError, TypeError, ValueError):
        return None
    return int(index) if kind == 2 else None  # DLPack's kDLCUDA


def _like(model, stream=None):
    """How to hand a NumPy result back as the model's kind of array, on the model's device, copied
    there on `stream` where one is given (else the framework's current one; for a model known only
    by __cuda_array_interface__: _cai_like's)."""
    if speaks_cai(model):
        return _cai_like(CudaArray(model, "velocity").device, stream)
    module = type(model).__module__
    if module.startswith("torch"):
        import torch

        def to_tensor(a):
            with _on_stream(model, _stream_handle_of(stream)) if stream is not None else contextlib.nullcontext():
                return torch.from_numpy(a).to(model.device)
        return lambda a: None if a is None else to_tensor(a)
    if module.startswith("cupy"):
        import cupy

        def to_model_device(a):
            with cupy.cuda.Device(model.device.id), _on_stream(model, _stream_handle_of(stream)) \
                    if stream is not None else contextlib.nullcontext():
                return cupy.asarray(a)
        return lambda a: None if a is None else to_model_device(a)
    return lambda a: a


def _cai_like(device, stream=None):
    """Results for a model known only by __cuda_array_interface__, whose own kind cannot be made
    here: CuPy arrays on its GPU where CuPy is installed, else PyTorch tensors, else NumPy; copied
    there on `stream` where one is given."""
    try:
        import cupy

        def to_cupy(a):
            with cupy.cuda.Device(device), cupy.cuda.ExternalStream(_stream_handle_of(stream)) \
                    if stream is not None else contextlib.nullcontext():
                return cupy.asarray(a)
        return lambda a: None if a is None else to_cupy(a)
    except ImportError:
        pass
    try:
        import torch

        def to_tensor(a):
            on = torch.device(f"cuda:{device}")
            with _torch_stream(torch, _stream_handle_of(stream), on) if stream is not None \
                    else contextlib.nullcontext():
                return torch.from_numpy(a).to(on)
        return lambda a: None if a is None else to_tensor(a)
    except ImportError:
        return lambda a: a


def _torch_stream(torch, handle, device):
    """PyTorch's context for stream `handle` on `device` (its default stream for the legacy one's
    handles, which PyTorch does not take as external streams)."""
    if handle in _LEGACY_STREAMS:
        return torch.cuda.stream(torch.cuda.default_stream(device))
    return torch.cuda.stream(torch.cuda.ExternalStream(handle, device=device))


def _velocity(velocity, stream=None):
    v = _host(velocity, stream=stream)
    if v.dtype != np.float32:
        if not np.issubdtype(v.dtype, np.floating) and not np.issubdtype(v.dtype, np.integer):
            raise TypeError(f"velocity: expected a real array, got dtype {v.dtype}")
        v = v.astype(np.float32)
    v = np.ascontiguousarray(v)
    if v.ndim not in (2, 3):
        raise ValueError(f"velocity: expected a 2D (nz, nx) or 3D (nz, ny, nx) model, got shape {v.shape}")
    return v


def _kernel_params(params):
    """kernel_params as the JSON object's text the solver parses ("" for None)."""
    if params is None:
        return ""
    if isinstance(params, dict):
        return json.dumps(params)
    if isinstance(params, str):
        return params
    raise TypeError(f"kernel_params: expected a dict or a JSON object's text, got {type(params).__name__}")


def _count(a):
    """len(a), also for an array known only by __cuda_array_interface__ (which may have no len)."""
    return CudaArray(a, "receivers").shape[0] if speaks_cai(a) else len(a)


def _shot_arrays(shot, dim, label, stream=None):
    """A shot's sources, wavelets (one row per source) and receivers as C-ordered float64 arrays
    (GPU arrays after the work on `stream`: _wait_for_producer's)."""
    if not isinstance(shot, dict) or "sources" not in shot or "wavelets" not in shot:
        raise ValueError(f"{label}a shot is a dict with the keys sources, wavelets and (optionally) receivers")
    try:
        src = _points("sources", _host(shot["sources"], "sources", stream), dim)
        receivers = shot.get("receivers", ())
        rec = (_points("receivers", _host(receivers, "receivers", stream), dim) if _count(receivers)
               else np.zeros((0, dim)))
        w = np.ascontiguousarray(_host(shot["wavelets"], "wavelets", stream), dtype=np.float64)
        if w.ndim == 1:
            w = np.ascontiguousarray(np.broadcast_to(w, (src.shape[0], w.size)))
        if w.ndim != 2 or w.shape[0] != src.shape[0]:
            raise ValueError(f"wavelets: expected one (samples,) or one per source ({src.shape[0]}, samples), got "
                             f"shape {np.shape(shot['wavelets'])}")
    except ValueError as e:
        raise ValueError(f"{label}{e}") from None
    return src, w, rec


def _devices(devices, backend, model, shots):
    """The GPUs the shots' workers take: the caller's list, checked; by default every visible GPU for
    several shots, and for one the model's GPU (a GPU array's) or the current one. [-1] (a worker
    that picks none) on the cpu, or where there is no GPU (the run then says why for "cuda")."""
    count = _core.gpu_count()
    if devices is None:
        if backend == "cpu" or count == 0:
            return [-1]
        if shots > 1:
            return list(range(min(count, shots)))
        gpu = _gpu_of(model)
        return [gpu if gpu is not None else _core.current_gpu()]
    if backend == "cpu":
        raise ValueError("device(s): the cpu backend runs on the host; leave them out")
    if np.ndim(devices) != 1:
        raise ValueError(f"devices: a list of GPU indices, got {devices!r}")
    devices = [int(d) for d in devices]
    if not devices:
        raise ValueError("devices: give at least one GPU index")
    bad = [d for d in devices if not 0 <= d < count]
    if bad:
        raise ValueError(f"devices: GPU {bad[0]} does not exist (this machine has {count} visible)")
    if len(set(devices)) != len(devices):
        raise ValueError(f"devices: each GPU at most once, got {devices}")
    return devices[:max(1, shots)]


def _snapshot_steps(steps, nt):
    """snapshot_steps as a list of whole step counts (the solver refuses those outside 0..nt)."""
    if steps is None:
        return []
    a = np.asarray(steps)
    whole = a.ndim == 1 and a.dtype != bool and (a.size == 0 or np.issubdtype(a.dtype, np.number))
    if whole and a.size:
        whole = bool(np.all(np.isfinite(a)) and np.all(np.mod(a, 1) == 0) and np.all(np.abs(a) < 2**62))
    if not whole:
        raise ValueError(f"snapshot_steps: a sequence of whole step counts in 0..{nt}, got {steps!r}")
    return [int(n) for n in a]


def forward_many(velocity, spacing, nt, shots, dt=None, radius=4, cpml=10, free_surface=False, backend="auto",
                 final_field=False, devices=None, measure_bound=False, kernel_params=None, snapshot_steps=None,
                 stream=None, progress=None, _caller_depth=1):
    """Several shots through one model: `shots` is a list of dicts with the keys sources, wavelets
    and receivers (as forward's). Returns a list of Shot, in the shots' order; each shot's traces
    are the bits it gives alone on the same kind of GPU.

    devices: the GPUs to spread the shots over (indices as CUDA numbers the visible ones); None:
    every visible GPU (fewer when there are fewer shots). One worker per GPU takes the next shot
    not yet taken, so a GPU runs its shots one after another, and each shot after a worker's first
    runs on the state the one before left (the model's m and the allocation kept, the wavefield
    zeroed: wave::Options::kept_state), as a `fdstencil wave --survey --batch` worker does. On the
    cpu the shots run one after another. A failing shot stops the others at their next step and
    its error is raised; Ctrl-C stops them all and raises KeyboardInterrupt.

    measure_bound: each shot first measures its GPU's copy bandwidth (1 GiB buffers, ~10 ms) and
    its timing gives copy_gbps, bound_gpts and percent_of_bound; shots running side by side on
    several GPUs disturb each other's figures little (each GPU copies in its own memory).

    kernel_params: the GPU step's launch, as `fdstencil wave --kernel-params` takes it (a JSON
    object's text or a dict; docs/wave.md). None: the launch `fdstencil tune --wave` stored for this
    card and grid, if any (timing["launch_from"] names the file), else the defaults.

    snapshot_steps: step counts in 0..nt; each shot's Shot.snapshots holds u after each of them on
    the model's points (count, *model shape), in rising order, as the tool's --snapshot-every
    writes them. They are kept on the host until the call returns: count x the model's size x the
    shots.

    progress: None, or a callable progress(done, total) over the steps of every shot (a tqdm bar's
    update, for instance), called from the workers' threads one call at a time, the sums in order:
    a shot not yet begun counts the steps of the first shot to report, the first call may have
    done == 0 and the last has done == total. The time it takes is taken out of the shots' loop_s,
    though on the GPU the steps queued meanwhile run on: a slow callable makes loop_s short and
    gpts high, so time runs without it. What it raises ends the call, as Ctrl-C does.

    stream: for a model on the GPU, the CUDA stream whose work made it and its shots' GPU arrays (a
    handle as an integer, or a PyTorch or CuPy stream); None: the framework's current stream (the
    one an array known only by __cuda_array_interface__ names). The call waits for that stream's
    work before it reads them, and copies its results to the model's device on it. The solver's own
    kernels run on its streams, and the call returns when they are done."""
    called = time.perf_counter()
    if backend not in ("auto", "cuda", "cpu"):
        raise ValueError(f"backend: expected 'auto', 'cuda' or 'cpu', got {backend!r}")
    shots = list(shots)
    if not shots:
        raise ValueError("shots: give at least one shot")
    if progress is not None and not callable(progress):
        raise ValueError(f"progress: a callable progress(done, total), or None; got {progress!r}")
    if stream is not None and not _on_gpu(velocity):
        raise ValueError("stream: the model is not a GPU array; stream= names the stream whose work made a GPU "
                         "model")
    gpus = _devices(devices, backend, velocity, len(shots))
    in_place = _in_place_on_gpu(velocity, backend, gpus, stream)
    v = None if in_place is not None else _velocity(velocity, stream)
    back = _like(velocity, stream)
    dim = len(in_place[1]) if in_place is not None else v.ndim
    if np.ndim(nt) != 0 or int(nt) != nt:
        raise ValueError(f"nt: a whole number of steps, got {nt!r}")
    nt = int(nt)
    if nt < 1:
        raise ValueError(f"nt: at least 1 step, got {nt}")
    arrays = [_shot_arrays(s, dim, f"shot {i}: " if len(shots) > 1 else "", stream) for i, s in enumerate(shots)]
    if dt is None:
        # The solver's default, 0.8 of the stability limit at the vmax of the model's summary (one
        # pass over the threads, or on its GPU): no pass of Python's own, and a bad value is named
        # by its index as with a dt given.
        dt = 0.0
    settings = _core.RunSettings()
    settings.dt, settings.nt, settings.radius, settings.cpml = float(dt), nt, int(radius), int(cpml)
    settings.free_surface, settings.final_field = bool(free_surface), bool(final_field)
    settings.measure_bandwidth, settings.backend = bool(measure_bound), backend
    settings.kernel_params = _kernel_params(kernel_params)
    settings.snapshot_steps = _snapshot_steps(snapshot_steps, nt)
    prepared = time.perf_counter()
    per_shot = ([a[0] for a in arrays], [a[1] for a in arrays], [a[2] for a in arrays])
    if in_place is not None:
        runs = _core.run_wave_many_on_gpu(in_place[0], list(in_place[1]), in_place[2], float(spacing), settings,
                                          *per_shot, progress=progress)
    else:
        runs = _core.run_wave_many(v, float(spacing), settings, *per_shot, gpus, progress=progress)
    out = [Shot(traces=back(tr), dt=run_dt, final_field=back(f), timing=timing, warnings=list(said),
                snapshots=back(snaps), snapshot_steps=list(steps))
           for tr, run_dt, f, timing, said, snaps, steps in runs]
    done = time.perf_counter()
    for shot in out:
        shot.timing["prepare_s"] = prepared - called
        shot.timing["call_s"] = done - called
    for said in dict.fromkeys(w for shot in out for w in shot.warnings):
        warnings.warn(said, FdstencilWarning, stacklevel=1 + _caller_depth)  # at the caller's line
    return out


def forward(velocity, spacing, nt, sources, wavelets, receivers=(), dt=None, radius=4, cpml=10,
            free_surface=False, backend="auto", final_field=False, device=None, measure_bound=False,
            kernel_params=None, snapshot_steps=None, stream=None, progress=None):
    """One shot through `velocity` ((nz, nx) or (nz, ny, nx), m/s, float32 or convertible), spacing
    in metres, `nt` steps of `dt` seconds (None: 0.8 of the stability limit, as the tool's).

    sources: (n, dim) positions in metres, z first; wavelets: (n, samples) or one (samples,) shared
    by every source, sampled at dt (ricker() builds one). receivers: (m, dim) positions. radius:
    the stencil's half-width (order 2R). cpml: absorbing points outside every face (0: none).
    backend: "auto" (the GPU when there is one), "cuda" or "cpu". device: the GPU to run on (None:
    the model's, for a GPU array, else the current one). measure_bound, kernel_params,
    snapshot_steps, stream, progress: as forward_many's. Returns
    a Shot. Raises ValueError for bad input (with the tool's message), MemoryError when the state
    does not fit, and KeyboardInterrupt on Ctrl-C (the run stops at a step boundary).

    The model may be a PyTorch tensor or a CuPy array, on the host or a GPU. A dense float32 one on
    the GPU the shot runs on is read where it is: checked, summarised and made into the solver's
    padded medium on that GPU, never copied to the host. Any other (another dtype, strided, or on
    another GPU than the run's) is copied to the host once and the medium built there
    (docs/python.md). The traces and the final field come back as that framework's arrays on the
    model's device. A GPU array known only by __cuda_array_interface__ (Numba's) is taken the
    same two ways; its results come back as CuPy arrays on its GPU, else PyTorch tensors, else NumPy arrays
    (the kind of array it is cannot be made here). Positions and wavelets may be such arrays too."""
    shot = {"sources": sources, "wavelets": wavelets, "receivers": receivers}
    return forward_many(velocity, spacing, nt, [shot], dt=dt, radius=radius, cpml=cpml, free_surface=free_surface,
                        backend=backend, final_field=final_field, devices=None if device is None else [device],
                        measure_bound=measure_bound, kernel_params=kernel_params, snapshot_steps=snapshot_steps,
                        stream=stream, progress=progress, _caller_depth=2)[0]


# The linearised solvers (issue 37), offered as fdstencil.wave's; imaging.py holds them.
from .imaging import (born, born_adjoint, born_many, forward_torch, forward_torch_many,  # noqa: E402,F401
                       gradient, gradient_many, modelled, rtm, rtm_many)
