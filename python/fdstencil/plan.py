"""fdstencil.Plan: an operator prepared once for one size and applied in place to NumPy arrays on the
host or to PyTorch and CuPy arrays on their GPU."""
import contextlib

import numpy as np

from . import _core

OPS = ("laplacian7", "d2x", "d2y", "d2z", "d2xy", "d2xyz")


class Plan:
    """Plan(op, radius, shape, dtype=np.float32, spacing=1.0, backend="auto")

    An operator (one of OPS: d2x, d2y, d2z second derivatives of order 2R, d2xy and d2xyz their
    fused sums, laplacian7 the 2nd-order 7-point Laplacian at R = 1) on an interior of `shape` =
    (nz, ny, nx) points at `spacing` (one h, or (hz, hy, hx)). Called as plan(u, out=None,
    stream=None): u and out hold the interior and a halo of `radius` points on every side, shape
    (nz + 2R, ny + 2R, nx + 2R), x (the last axis) contiguous; out's interior becomes op(u), its
    halo is left as it was. Returns out, an array of u's kind.

    NumPy arrays run on the host. Writable GPU arrays of a framework that speaks DLPack (CuPy,
    PyTorch) run on their GPU: the first GPU array's under "auto", the current GPU at construction
    under "cuda" (arrays on another GPU are then refused), enqueued on
    `stream` (a CUDA stream handle as an integer, or an object with .cuda_stream or .ptr, as
    PyTorch's and CuPy's streams have), by default the framework's current stream (PyTorch, CuPy;
    else the legacy default stream); the call returns once the work is enqueued. Both arrays are
    used in place, without a copy, when they share a layout (a slice of a larger array is taken as
    a view of it). Otherwise u, which is only read, is copied once into a dense array when out is
    dense (as out=None makes it: a zeroed array), and refused when out is not.

    backend: "cuda" (GPU arrays), "cpu" (OpenMP, vectorized) or "reference" (plain loops in double)
    for NumPy arrays, or "auto": cuda for GPU arrays, cpu for NumPy ones."""

    def __init__(self, op, radius, shape, dtype=np.float32, spacing=1.0, backend="auto"):
        if op not in OPS:
            raise ValueError(f"op {op!r}: expected one of {', '.join(OPS)}")
        if len(shape) != 3:
            raise ValueError(f"shape: expected the interior (nz, ny, nx), got {shape}")
        self.dtype = np.dtype(dtype)
        if self.dtype not in (np.float32, np.float64):
            raise TypeError(f"dtype: expected float32 or float64, got {self.dtype}")
        h = (spacing,) * 3 if np.ndim(spacing) == 0 else tuple(spacing)
        if len(h) != 3:
            raise ValueError(f"spacing: one value or (hz, hy, hx), got {spacing}")
        if backend not in ("auto", "cuda", "cpu", "reference"):
            raise ValueError(f"backend {backend!r}: expected 'auto', 'cuda', 'cpu' or 'reference'")
        self.op, self.radius, self.shape = op, int(radius), tuple(int(n) for n in shape)
        self.backend = backend
        self._spacing = tuple(float(x) for x in h)
        self._plans = {}  # "host" / "gpu": the C++ plan of that memory
        self._last = None
        # Made now, so that a bad radius, size or backend (cuda without a GPU) is refused here; the
        # other memory's plan ("auto": the GPU's) at its first call.
        self._plan("gpu" if backend == "cuda" else "host")
        self._last = None

    @property
    def padded_shape(self):
        """The arrays' shape: the interior and the halo, (nz + 2R, ny + 2R, nx + 2R)."""
        return tuple(n + 2 * self.radius for n in self.shape)

    def _plan(self, memory, device=-1):
        if memory not in self._plans:
            if memory == "gpu" and self.backend not in ("auto", "cuda"):
                raise ValueError(f"the plan's backend is {self.backend!r}: GPU arrays run on 'cuda'")
            if memory == "host" and self.backend == "cuda":
                raise ValueError("the plan's backend is 'cuda': give it GPU arrays (CuPy, PyTorch)")
            backend = "cuda" if memory == "gpu" else ("cpu" if self.backend == "auto" else self.backend)
            self._plans[memory] = _core.ArrayPlan(self.op, self.radius, *self.shape, *self._spacing,
                                                  self.dtype.name, backend, device)
        self._last = self._plans[memory]
        return self._last

    def __call__(self, u, out=None, stream=None):
        if isinstance(u, np.ndarray):
            if stream is not None:
                raise ValueError("stream: NumPy arrays run on the host, with no stream")
            return self._host(u, out)
        if _gpu_array(u):
            return self._gpu(u, out, stream)
        raise TypeError(f"u: expected a NumPy array or a GPU array that speaks DLPack, got {type(u).__name__}")

    def _host(self, u, out):
        if u.dtype != self.dtype:
            raise TypeError(f"u: the plan is for {self.dtype}, got {u.dtype}")
        if out is None:
            out = np.zeros(self.padded_shape, self.dtype)
        if not isinstance(out, np.ndarray) or out.dtype != self.dtype:
            raise TypeError(f"out: expected a NumPy array of {self.dtype}")
        if not out.flags.writeable:
            raise ValueError("out: the array is read-only")
        if u.strides != out.strides:
            # A plan's layout is fixed: u copied into out's (dense) layout, the one copy made.
            if not out.flags.c_contiguous:
                raise ValueError("u and out have different strides, and out is not contiguous: give arrays of "
                                 "one layout (a plan applies to arrays of one layout)")
            u = np.ascontiguousarray(u)
        plan = self._plan("host")
        (plan.apply_f32 if self.dtype == np.float32 else plan.apply_f64)(u, out)
        return out

    def _gpu(self, u, out, stream):
        if _dtype_name(u) != self.dtype.name:
            raise TypeError(f"u: the plan is for {self.dtype}, got {_dtype_name(u)}")
        device = u.__dlpack_device__()[1]  # u's GPU, before any copy of it
        with _on_device(u):  # the framework's current GPU is u's while it makes arrays and names streams
            handle = _stream_of(u, stream)
            # A zeroed out and a dense copy of u are made on the stream the work goes on (the
            # current one unless `stream` names another), so that they are ready before it reads
            # them and their memory is reused only after it.
            with _on_stream(u, handle) if stream is not None else contextlib.nullcontext():
                if out is None:
                    out = _zeros_like(u)
                if not _gpu_array(out) or _dtype_name(out) != self.dtype.name:
                    raise TypeError(f"out: expected a GPU array of {self.dtype}")
                if tuple(_strides(u)) != tuple(_strides(out)):
                    if not _dense(out):
                        raise ValueError("u and out have different strides, and out is not contiguous: give "
                                         "arrays of one layout (a plan applies to arrays of one layout)")
                    u = _dense_copy(u)  # the one copy made, in out's (dense) layout
                plan = self._plan("gpu", device)
                (plan.apply_gpu_f32 if self.dtype == np.float32 else plan.apply_gpu_f64)(u, out, handle)
        return out

    def describe(self):
        """The plan the last call used, as JSON text: its variant, parameters and how they were chosen
        ("" before the first call)."""
        return self._last.describe() if self._last is not None else ""


# GPU arrays, whatever their framework: DLPack names the device (2 is CUDA), the rest is read the
# framework's way (PyTorch's tensors, CuPy's and others' NumPy-like attributes).
_DLPACK_CUDA = 2


def _gpu_array(a):
    try:
        return hasattr(a, "__dlpack__") and a.__dlpack_device__()[0] == _DLPACK_CUDA
    except Exception:
        return False


def _torch(a):
    return type(a).__module__.startswith("torch")


def _dtype_name(a):
    return str(a.dtype).replace("torch.", "")


def _strides(a):
    return a.stride() if _torch(a) else tuple(s // a.dtype.itemsize for s in a.strides)


def _dense(a):
    return a.is_contiguous() if _torch(a) else a.flags.c_contiguous


def _dense_copy(a):
    return a.contiguous() if _torch(a) else a.copy(order="C")


def _zeros_like(a):
    if _torch(a):
        import torch
        return torch.zeros(a.shape, dtype=a.dtype, device=a.device)
    if type(a).__module__.startswith("cupy"):
        import cupy
        with cupy.cuda.Device(a.device.id):
            return cupy.zeros(a.shape, dtype=a.dtype)
    raise TypeError(f"out: give an output array for {type(a).__name__} (made here for PyTorch and CuPy only)")


def _on_device(a):
    """A context in which a's framework takes a's GPU as the current one."""
    if _torch(a):
        import torch
        return torch.cuda.device(a.device)
    if type(a).__module__.startswith("cupy"):
        import cupy
        return cupy.cuda.Device(a.device.id)
    return contextlib.nullcontext()


# CUDA's handles of the legacy default stream: 0 and cudaStreamLegacy.
_LEGACY_STREAMS = (0, 1)


def _on_stream(a, handle):
    """A context in which a's framework makes its arrays on stream `handle`."""
    if _torch(a):
        import torch
        if handle in _LEGACY_STREAMS:  # PyTorch's default stream is the legacy one; it reserves odd ids
            return torch.cuda.stream(torch.cuda.default_stream(a.device))
        return torch.cuda.stream(torch.cuda.ExternalStream(handle, device=a.device))
    if type(a).__module__.startswith("cupy"):
        import cupy
        return cupy.cuda.ExternalStream(handle)
    return contextlib.nullcontext()


def _stream_of(a, stream):
    """The CUDA stream handle to enqueue on: the caller's, else the framework's current one."""
    if stream is None:
        if _torch(a):
            import torch
            return int(torch.cuda.current_stream(a.device).cuda_stream)
        if type(a).__module__.startswith("cupy"):
            import cupy
            return int(cupy.cuda.get_current_stream().ptr)
        return 0
    for attr in ("cuda_stream", "ptr"):
        if hasattr(stream, attr):
            return int(getattr(stream, attr))
    return int(stream)
