"""GPU arrays known only by CUDA's array interface (`__cuda_array_interface__`, versions 2 and 3:
Numba's device arrays, for one), read without their framework: the address, shape, strides, dtype
and the stream their producer used. Arrays that also speak DLPack take the DLPack paths instead.
https://numba.readthedocs.io/en/stable/cuda/cuda_array_interface.html"""
import numpy as np

from . import _core

def speaks_cai(a):
    """True for an array that offers the CUDA array interface and not DLPack."""
    return hasattr(a, "__cuda_array_interface__") and not hasattr(a, "__dlpack__")


class CudaArray:
    """One array's interface, checked. name: the argument's name in messages."""

    def __init__(self, a, name):
        try:
            cai = a.__cuda_array_interface__
        except Exception as e:  # a producer may refuse to export (a masked or host array)
            raise TypeError(f"{name}: its __cuda_array_interface__ could not be read: {e}") from None
        if not isinstance(cai, dict) or not {"shape", "typestr", "data", "version"} <= cai.keys():
            raise TypeError(f"{name}: __cuda_array_interface__ is not a dict with shape, typestr, data and version")
        if cai.get("mask") is not None:
            raise TypeError(f"{name}: masked arrays are not taken")
        self.shape = tuple(int(n) for n in cai["shape"])
        self.dtype = np.dtype(cai["typestr"])
        if self.dtype.byteorder == ">":
            raise TypeError(f"{name}: big-endian {cai['typestr']} is not taken")
        self.ptr, self.readonly = int(cai["data"][0]), bool(cai["data"][1])
        item = self.dtype.itemsize
        dense = tuple(int(np.prod(self.shape[i + 1:], dtype=np.int64)) * item for i in range(len(self.shape)))
        self.strides = dense if cai.get("strides") is None else tuple(int(s) for s in cai["strides"])
        self.stream = cai.get("stream") if cai["version"] >= 3 else None
        size = int(np.prod(self.shape, dtype=np.int64))
        if size and _core.gpu_count() == 0:
            raise TypeError(f"{name}: a GPU array, and this build or machine has no GPU")
        self.device = _core.device_of(self.ptr) if size else _core.current_gpu()
        if size and self.device < 0:
            raise TypeError(f"{name}: __cuda_array_interface__ gives an address that is not GPU memory")
        self.size = size

    def element_strides(self):
        """The strides in elements, or None where one is not a whole number of elements."""
        item = self.dtype.itemsize
        return None if any(s % item for s in self.strides) else tuple(s // item for s in self.strides)

    def queue(self):
        """The stream to enqueue on after this array's producer: its own (1 and 2 are CUDA's handles
        of the legacy and per-thread default streams too), or the legacy one when it names none."""
        return 0 if self.stream is None else int(self.stream)

    def wait(self):
        """Waits on the host for the producer's stream (nothing when it names none)."""
        if self.stream is not None:
            _core.synchronize_stream(int(self.stream), self.device)

    def to_host(self):
        """The values, as a NumPy array on the host: the span the strides reach, copied once."""
        if self.size == 0:
            return np.zeros(self.shape, self.dtype)
        if any(s < 0 for s in self.strides):
            raise ValueError("a __cuda_array_interface__ array with negative strides is not taken")
        self.wait()
        span = sum((n - 1) * s for n, s in zip(self.shape, self.strides)) + self.dtype.itemsize
        raw = _core.host_copy_of_gpu(self.ptr, span)
        # A dense array is the copy itself; a strided one is gathered once more, into C order.
        return np.ascontiguousarray(np.ndarray(self.shape, self.dtype, buffer=raw, strides=self.strides))
