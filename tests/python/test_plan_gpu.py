"""fdstencil.Plan on GPU arrays (PyTorch, CuPy): results against NumPy's stencil, in place in the
caller's memory, on the caller's stream. Skipped where fdstencil has no GPU to run on or neither
framework has one."""
import numpy as np
import pytest

import fdstencil
from test_plan import numpy_stencil


def _cuda_plan_or_none():
    try:
        return fdstencil.Plan("d2x", 1, (2, 2, 2), backend="cuda")
    except ValueError:  # no CUDA backend in this build, or no GPU
        return None


needs_gpu = pytest.mark.skipif(_cuda_plan_or_none() is None, reason="fdstencil has no GPU here")
try:
    import torch
    HAVE_TORCH = torch.cuda.is_available()
except ImportError:
    HAVE_TORCH = False
try:
    import cupy
    HAVE_CUPY = cupy.cuda.runtime.getDeviceCount() > 0
except Exception:  # not installed, or no driver or device
    HAVE_CUPY = False


def _reference(op, radius, host, h=(1.0, 1.0, 1.0)):
    return numpy_stencil(op, radius, host, h)


@needs_gpu
@pytest.mark.skipif(not HAVE_TORCH, reason="PyTorch with CUDA is not here")
@pytest.mark.parametrize("op,radius,dtype", [("d2xyz", 4, "float32"), ("d2x", 2, "float64"), ("d2xy", 8, "float32"),
                                             ("laplacian7", 1, "float64")])
def test_torch_arrays_in_place_on_the_current_stream(op, radius, dtype):
    plan = fdstencil.Plan(op, radius, (9, 10, 37), getattr(np, dtype))
    tdt = getattr(torch, dtype)
    u = torch.randn(plan.padded_shape, dtype=tdt, device="cuda")
    out = torch.full(plan.padded_shape, float("nan"), dtype=tdt, device="cuda")  # poisoned
    where = out.data_ptr()
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())  # u and out were made on the default stream
    with torch.cuda.stream(side):  # the framework's current stream is the one used
        got = plan(u, out)
    side.synchronize()
    assert got is out and out.data_ptr() == where, "the result must land in the caller's tensor"
    R = radius
    inner = out[R:-R, R:-R, R:-R].cpu().numpy()
    want = _reference(op, radius, u.cpu().numpy())
    tol = 1e-4 if dtype == "float32" else 1e-10
    assert np.all(np.isfinite(inner))
    assert np.allclose(inner, want, rtol=tol, atol=tol * np.max(np.abs(want)))
    assert torch.isnan(out[:R]).all(), "the halo is left as it was"
    assert "cuda" in plan.describe()


@needs_gpu
@pytest.mark.skipif(not HAVE_TORCH, reason="PyTorch with CUDA is not here")
def test_torch_out_none_a_given_stream_and_a_slice():
    plan = fdstencil.Plan("d2xyz", 2, (6, 7, 8))
    big = torch.randn((20, 21, 40), device="cuda")
    u = big[3:13, 4:15, 5:17]  # a slice: copied once into out's dense layout
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())  # big was made on the default stream
    out = plan(u, stream=s)  # out and u's dense copy made on s
    s.synchronize()
    assert isinstance(out, torch.Tensor) and out.is_cuda and out.is_contiguous()
    want = _reference("d2xyz", 2, u.cpu().numpy())
    assert np.allclose(out[2:-2, 2:-2, 2:-2].cpu().numpy(), want, atol=1e-4 * np.max(np.abs(want)))
    assert torch.count_nonzero(out[:2]) == 0  # out=None: zeros in the halo


@needs_gpu
@pytest.mark.skipif(not HAVE_CUPY, reason="CuPy with a GPU is not here")
def test_cupy_arrays_in_place():
    plan = fdstencil.Plan("d2xyz", 4, (8, 9, 33), np.float64)
    u = cupy.random.standard_normal(plan.padded_shape)
    out = cupy.full(plan.padded_shape, cupy.nan)
    where = out.data.ptr
    assert plan(u, out) is out and out.data.ptr == where
    cupy.cuda.get_current_stream().synchronize()
    want = _reference("d2xyz", 4, cupy.asnumpy(u))
    assert np.allclose(cupy.asnumpy(out[4:-4, 4:-4, 4:-4]), want, rtol=1e-10, atol=1e-10 * np.max(np.abs(want)))


@needs_gpu
@pytest.mark.skipif(not HAVE_TORCH, reason="PyTorch with CUDA is not here")
def test_wrong_kinds_of_array_are_refused():
    gpu = fdstencil.Plan("d2x", 2, (4, 5, 6), backend="cuda")
    with pytest.raises(ValueError, match="GPU arrays"):
        gpu(np.zeros(gpu.padded_shape, np.float32))
    with pytest.raises(TypeError, match="DLPack"):
        gpu(torch.zeros(gpu.padded_shape))  # a CPU tensor
    with pytest.raises(TypeError, match="float32"):
        gpu(torch.zeros(gpu.padded_shape, dtype=torch.float64, device="cuda"))
    with pytest.raises(ValueError, match="expected shape"):
        gpu(torch.zeros((4, 5, 6), device="cuda"))
    host = fdstencil.Plan("d2x", 2, (4, 5, 6), backend="cpu")
    with pytest.raises(ValueError, match="'cuda'"):
        host(torch.zeros(host.padded_shape, device="cuda"))


@pytest.mark.skipif(_cuda_plan_or_none() is not None, reason="this machine has a GPU for fdstencil")
def test_without_a_gpu_the_cuda_backend_says_why():
    with pytest.raises(ValueError, match="backend 'cuda': "):
        fdstencil.Plan("d2x", 2, (4, 5, 6), backend="cuda")


@needs_gpu
@pytest.mark.skipif(not HAVE_TORCH, reason="PyTorch with CUDA is not here")
def test_the_direct_path_gives_the_general_paths_bits():
    # out given with u's layout takes the direct path (pointers, no DLPack); out=None the general one.
    plan = fdstencil.Plan("d2xyz", 4, (12, 13, 40))
    u = torch.randn(plan.padded_shape, device="cuda")
    direct = torch.full_like(u, float("nan"))
    assert plan._direct(u, direct, None) is True  # the path this test is about takes the call
    assert plan(u, direct) is direct
    general = plan(u)
    s = torch.cuda.Stream()
    on_handle = torch.full_like(u, float("nan"))
    s.wait_stream(torch.cuda.current_stream())
    plan(u, on_handle, stream=s.cuda_stream)  # a raw handle, as an integer
    s.synchronize()
    torch.cuda.synchronize()
    inner = (slice(4, -4),) * 3
    assert torch.isfinite(direct[inner]).all()
    assert torch.equal(direct[inner], general[inner]) and torch.equal(direct[inner], on_handle[inner])
    with pytest.raises(TypeError, match="requires grad"):  # a plan is not differentiable: no silent detach
        plan(u.clone().requires_grad_(), direct)
    with pytest.raises(TypeError, match="out: the tensor requires grad"):
        plan(u, torch.zeros_like(u).requires_grad_())


@needs_gpu
@pytest.mark.skipif(not HAVE_TORCH or torch.cuda.device_count() < 2, reason="needs PyTorch with two GPUs")
def test_a_plan_runs_on_its_gpu_and_refuses_another():
    plan = fdstencil.Plan("d2x", 2, (6, 7, 40))
    u1 = torch.randn(plan.padded_shape, device="cuda:1")
    out1 = torch.full_like(u1, float("nan"))
    plan(u1, out1)  # the first GPU array's GPU: 1, with the current one 0
    torch.cuda.synchronize(1)
    want = _reference("d2x", 2, u1.cpu().numpy())
    assert np.allclose(out1[2:-2, 2:-2, 2:-2].cpu().numpy(), want, atol=1e-4 * np.max(np.abs(want)))
    u0 = u1.to("cuda:0")
    with pytest.raises(ValueError, match="GPU 0.*GPU 1"):
        plan(u0, torch.zeros_like(u0))
