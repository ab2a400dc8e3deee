"""fdstencil.Plan: an operator prepared once for one size and applied in place to NumPy arrays on the
host or to PyTorch and CuPy arrays on their GPU."""
import contextlib
import operator

import numpy as np

from . import _core
from ._cai import CudaArray, speaks_cai

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
    PyTorch) or only CUDA's array interface (Numba) run on their GPU: the first GPU array's under
    "auto", the current GPU at construction under "cuda" (arrays on another GPU are then refused),
    enqueued on `stream` (a CUDA stream handle as an integer, or an object with .cuda_stream or
    .ptr, as PyTorch's and CuPy's streams have), by default the framework's current stream (PyTorch, CuPy;
    else the legacy default stream); the call returns once the work is enqueued. Both arrays are
    used in place, without a copy, when they share a layout (a slice of a larger array is taken as
    a view of it). Otherwise u, which is only read, is copied once into a dense array when out is
    dense (as out=None makes it: a zeroed array), and refused when out is not. Arrays known only by
    __cuda_array_interface__ are taken as they are, with out given (a plan cannot make one), one
    layout and x contiguous, on `stream` or else on the stream u's interface names.

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
        self._padded = tuple(n + 2 * self.radius for n in self.shape)
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
        if out is not None and self._direct(u, out, stream):
            return out
        if isinstance(u, np.ndarray):
            if stream is not None:
                raise ValueError("stream: NumPy arrays run on the host, with no stream")
            return self._host(u, out)
        if _gpu_array(u):
            return self._gpu(u, out, stream)
        if speaks_cai(u):
            return self._cai(u, out, stream)
        raise TypeError(f"u: expected a NumPy array or a GPU array that speaks DLPack or __cuda_array_interface__, "
                        f"got {type(u).__name__}")

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

    def _direct(self, u, out, stream):
        """The common call on the GPU, taken without DLPack: PyTorch tensors or CuPy arrays of the
        plan's dtype and padded shape, u and out of one layout on one GPU. Their pointers and strides
        are read the framework's way and go straight to the C++ plan, on the framework's current
        stream read as a raw handle, so that the call costs little more than the plan's launch
        (docs/python.md). False where the general path must take the call (which also names what
        is wrong)."""
        read = _direct_reader(type(u))
        if read is None or type(out) is not type(u):
            return False
        got = read(u, out, self.dtype, self._padded)
        if got is None:
            return False
        u_ptr, out_ptr, line, plane, device, current_stream = got
        handle = current_stream() if stream is None else _stream_handle(stream)
        if handle is None:
            return False
        plan = self._plans.get("gpu") or self._plan("gpu", device)
        self._last = plan
        (plan.apply_gpu_ptr_f32 if self.dtype.itemsize == 4 else plan.apply_gpu_ptr_f64)(
            u_ptr, out_ptr, line, plane, line, plane, device, handle)
        return True

    def _gpu(self, u, out, stream):
        for name, a in (("u", u), ("out", out)):
            if getattr(a, "requires_grad", False):
                raise TypeError(f"{name}: the tensor requires grad, and a plan is not differentiable: pass "
                                f"{name}.detach()")
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

    def _cai(self, u, out, stream):
        """GPU arrays known only by CUDA's array interface: used in place as they are (no copy can be
        made without their framework), on `stream`, else on u's producer's stream."""
        if out is None:
            raise TypeError("out: give an output array (u speaks only __cuda_array_interface__, and a plan makes "
                            "arrays for PyTorch and CuPy only)")
        if not speaks_cai(out):
            raise TypeError(f"out: expected an array of u's kind (__cuda_array_interface__), got {type(out).__name__}")
        cu, co = CudaArray(u, "u"), CudaArray(out, "out")
        for name, c in (("u", cu), ("out", co)):
            if c.dtype != self.dtype:
                raise TypeError(f"{name}: the plan is for {self.dtype}, got {c.dtype}")
            if c.shape != self._padded:
                raise ValueError(f"{name}: expected shape {self._padded} (the interior and a halo of "
                                 f"{self.radius}), got {c.shape}")
        if co.readonly:
            raise ValueError("out: the array is read-only")
        s = cu.element_strides()
        if s is None or s != co.element_strides() or s[2] != 1 or min(s) <= 0:
            raise ValueError("u and out: expected one layout with x (the last axis) contiguous and positive strides; "
                             "arrays known only by __cuda_array_interface__ are not copied into one")
        if cu.device != co.device:
            raise ValueError(f"u is on GPU {cu.device} and out on GPU {co.device}: give arrays on one GPU")
        if stream is not None:
            handle = _stream_handle(stream)
            cu.wait()  # the producers' work done before ours starts on another stream
            co.wait()
        else:
            handle = cu.queue()
            if co.queue() != handle:
                co.wait()
        plan = self._plans.get("gpu") or self._plan("gpu", cu.device)
        self._last = plan
        (plan.apply_gpu_ptr_f32 if self.dtype.itemsize == 4 else plan.apply_gpu_ptr_f64)(
            cu.ptr, co.ptr, s[1], s[0], s[1], s[0], cu.device, handle)
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


def _stream_handle(stream):
    """A caller's stream as a CUDA handle: an object's .cuda_stream (PyTorch) or .ptr (CuPy), or an
    integer itself; refused by name where it is none (a float, a bool, a string, an integer outside
    a pointer's range), which int() would have turned into some other stream's handle."""
    try:  # the streams first: a plan's call is on the hot path
        if hasattr(stream, "cuda_stream"):
            handle = int(stream.cuda_stream)
        elif hasattr(stream, "ptr"):
            handle = int(stream.ptr)
        elif isinstance(stream, (bool, np.bool_)):
            raise TypeError
        else:
            handle = operator.index(stream)
    except (TypeError, ValueError):
        raise TypeError(f"stream: expected a CUDA stream (a handle as an integer, or an object with .cuda_stream "
                        f"or .ptr), got {type(stream).__name__}") from None
    if not 0 <= handle < 2**64:
        raise ValueError(f"stream: a CUDA stream handle is a pointer's value, got {handle}")
    return handle


# The direct path's readers, by array type (None: the type has none), made at a type's first call
# so that importing fdstencil imports neither framework.
_READERS = {}


def _direct_reader(kind):
    try:
        return _READERS[kind]
    except KeyError:
        module = kind.__module__
        reader = _torch_reader() if module.startswith("torch") else _cupy_reader(kind) if module.startswith("cupy") \
            else None
        if reader is not None and module.startswith("torch"):
            import torch
            reader = reader if kind is torch.Tensor else None  # subclasses (Parameter) keep their own rules
        _READERS[kind] = reader
        return reader


def _torch_reader():
    import torch
    dtypes = {np.dtype(np.float32): torch.float32, np.dtype(np.float64): torch.float64}
    strided = torch.strided
    raw = getattr(torch._C, "_cuda_getCurrentRawStream", None)
    current = (lambda d: lambda: raw(d)) if raw is not None else \
        (lambda d: lambda: int(torch.cuda.current_stream(d).cuda_stream))

    def read(u, out, dtype, shape):
        want = dtypes[dtype]
        if u.dtype is not want or out.dtype is not want or not u.is_cuda or u.requires_grad or out.requires_grad:
            return None  # the general path refuses tensors that require grad
        if u.layout is not strided or out.layout is not strided or u.is_neg() or out.is_neg():
            return None  # sparse tensors and lazily negated views: the general path's rules
        s = u.stride()
        if s != out.stride() or s[2] != 1 or u.shape != shape or out.shape != shape:
            return None
        d = u.get_device()
        if out.get_device() != d:
            return None
        return u.data_ptr(), out.data_ptr(), s[1], s[0], d, current(d)
    return read


def _cupy_reader(kind):
    import cupy
    if kind is not cupy.ndarray:
        return None

    def current(d):
        def handle():
            try:
                return cupy.cuda.get_current_stream(d).ptr
            except TypeError:  # a CuPy whose current stream takes no device: the general path
                return None
        return handle

    def read(u, out, dtype, shape):
        if u.dtype is not dtype or out.dtype is not dtype:
            return None
        s, size = u.strides, dtype.itemsize
        if s != out.strides or s[2] != size or s[1] % size or s[0] % size or u.shape != shape or out.shape != shape:
            return None
        d = u.device.id
        if out.device.id != d:
            return None
        return u.data.ptr, out.data.ptr, s[1] // size, s[0] // size, d, current(d)
    return read


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
    return _stream_handle(stream)
