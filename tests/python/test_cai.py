"""Arrays known only by CUDA's array interface (__cuda_array_interface__, as Numba's device arrays
are): a plan uses them in place, the wave solver copies a model once. The GPU cases wrap PyTorch
tensors in an object that offers the interface alone, and are skipped without a GPU; the
refusals run everywhere."""
import numpy as np
import pytest

import fdstencil
import fdstencil.wave as fw
from test_plan import numpy_stencil

try:
    import torch
    HAVE_TORCH = torch.cuda.is_available() and fdstencil._core.gpu_count() > 0
except ImportError:
    HAVE_TORCH = False
needs_torch_gpu = pytest.mark.skipif(not HAVE_TORCH, reason="needs PyTorch and fdstencil with a GPU")


class CaiOnly:
    """An array that speaks CUDA's array interface and nothing else (no DLPack, no len)."""

    def __init__(self, interface, keep=None):
        self.__cuda_array_interface__ = interface
        self._keep = keep  # the memory's owner, alive as long as this view

    @classmethod
    def of(cls, t, stream=None):
        cai = dict(t.__cuda_array_interface__)
        if stream is not None:
            cai["version"], cai["stream"] = 3, int(stream)
        return cls(cai, t)


def _host_interface(a, **changes):
    """An interface over host memory (a NumPy array's): not a GPU array."""
    cai = {"shape": a.shape, "typestr": a.dtype.str, "data": (a.ctypes.data, False), "version": 3,
           "strides": None, "stream": None}
    return CaiOnly(cai | changes, a)


def test_a_malformed_interface_is_refused_by_name():
    host = np.zeros((5, 6, 7), np.float32)
    plan = fdstencil.Plan("d2x", 1, (3, 4, 5), backend="cpu")
    with pytest.raises(TypeError, match="out: give an output array"):
        plan(_host_interface(host))
    with pytest.raises(TypeError, match="u: __cuda_array_interface__ is not a dict with shape"):
        plan(CaiOnly({"shape": (5, 6, 7)}), _host_interface(host))
    with pytest.raises(TypeError, match="u: masked arrays are not taken"):
        plan(_host_interface(host, mask=object()), _host_interface(host))
    with pytest.raises(TypeError, match="velocity: masked arrays are not taken"):
        fw.forward(_host_interface(np.full((20, 20), 1500, np.float32), mask=object()), 10.0, 5, [[50.0, 50.0]],
                   fw.ricker(10.0, 1e-3, 5))


def test_host_memory_offered_as_gpu_memory_is_refused():
    host = np.zeros((5, 6, 7), np.float32)
    plan = fdstencil.Plan("d2x", 1, (3, 4, 5))
    # Without a GPU the build or machine says so; with one, the address is found to be the host's.
    with pytest.raises(TypeError, match="u: (a GPU array, and this build or machine has no GPU|.*not GPU memory)"):
        plan(_host_interface(host), _host_interface(host))
    with pytest.raises(TypeError, match="velocity: (a GPU array, and this build or machine has no GPU|.*not GPU "
                                        "memory)"):
        fw.forward(_host_interface(np.full((20, 20), 1500, np.float32)), 10.0, 5, [[50.0, 50.0]],
                   fw.ricker(10.0, 1e-3, 5))


@needs_torch_gpu
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_a_plan_writes_in_place_into_interface_arrays(dtype):
    tdt = getattr(torch, dtype)
    plan = fdstencil.Plan("d2xyz", 4, (9, 10, 37), getattr(np, dtype))
    big_u = torch.randn((30, 31, 70), dtype=tdt, device="cuda")
    big_out = torch.full((30, 31, 70), float("nan"), dtype=tdt, device="cuda")  # poisoned
    u, out = big_u[2:19, 3:21, 4:49], big_out[2:19, 3:21, 4:49]  # slices of one layout: no copy
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())  # the producer's stream, named by the interface
    o = CaiOnly.of(out, side.cuda_stream)
    assert plan(CaiOnly.of(u, side.cuda_stream), o) is o
    side.synchronize()
    inner = out[4:-4, 4:-4, 4:-4].cpu().numpy()
    want = numpy_stencil("d2xyz", 4, u.cpu().numpy(), (1.0, 1.0, 1.0))
    tol = 1e-4 if dtype == "float32" else 1e-10
    assert np.all(np.isfinite(inner)), "every interior point written, in the caller's memory"
    assert np.allclose(inner, want, rtol=tol, atol=tol * np.max(np.abs(want)))
    assert torch.isnan(out[:4]).all() and torch.isnan(big_out[:2]).all(), "nothing outside the interior is written"


@needs_torch_gpu
def test_a_plan_refuses_interface_arrays_it_cannot_take_as_they_are():
    plan = fdstencil.Plan("d2x", 2, (4, 5, 6))
    u = torch.zeros(plan.padded_shape, device="cuda")
    with pytest.raises(TypeError, match="out: give an output array"):
        plan(CaiOnly.of(u))
    with pytest.raises(TypeError, match="out: expected an array of u's kind"):
        plan(CaiOnly.of(u), torch.zeros_like(u))
    with pytest.raises(TypeError, match="u: the plan is for float32, got float64"):
        plan(CaiOnly.of(u.double()), CaiOnly.of(u))
    with pytest.raises(ValueError, match="u: expected shape"):
        plan(CaiOnly.of(u[1:]), CaiOnly.of(u))
    wide = torch.zeros((8, 9, 40), device="cuda")
    with pytest.raises(ValueError, match="one layout with x"):  # strides unlike out's
        plan(CaiOnly.of(wide[:, :, :10]), CaiOnly.of(u))
    x_across = u.transpose(0, 2).contiguous().transpose(0, 2)  # u's shape, x the slowest axis
    with pytest.raises(ValueError, match="one layout with x"):
        plan(CaiOnly.of(x_across), CaiOnly.of(x_across))
    readonly = CaiOnly.of(u)
    readonly.__cuda_array_interface__["data"] = (u.data_ptr(), True)
    with pytest.raises(ValueError, match="out: the array is read-only"):
        plan(CaiOnly.of(u), readonly)


@needs_torch_gpu
def test_an_interface_model_gives_the_numpy_models_traces():
    torch.manual_seed(3)
    v = 2000 + 500 * torch.rand((60, 50, 80), device="cuda")
    view = v[5:55, :, ::2]  # strided along x: gathered on the host
    dt = 0.8 * fw.max_stable_dt(3, 4, 10.0, 2500.0)
    src, rec = [[250.0, 250.0, 200.0]], [[30.0, 250.0, 10.0 * x] for x in range(0, 40, 3)]  # x spans 0..390 m
    args = (10.0, 80, src, fw.ricker(12.0, dt, 80), rec)
    want = fw.forward(view.cpu().numpy(), *args, dt=dt, final_field=True)
    got = fw.forward(CaiOnly.of(view), *args, dt=dt, final_field=True)
    try:
        import cupy
        assert isinstance(got.traces, cupy.ndarray) and got.traces.device.id == v.device.index
        traces, final = cupy.asnumpy(got.traces), cupy.asnumpy(got.final_field)
    except ImportError:
        assert isinstance(got.traces, torch.Tensor) and got.traces.device == v.device
        traces, final = got.traces.cpu().numpy(), got.final_field.cpu().numpy()
    assert np.all(np.isfinite(traces)) and np.any(traces != 0)
    assert np.array_equal(traces, want.traces), "the same bits as the model's values given on the host"
    assert np.array_equal(final, want.final_field)
