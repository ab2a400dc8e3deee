"""fdstencil.Plan on NumPy arrays: every operator against the same stencil written in NumPy (in
double, from fdstencil.coeffs), on NaN-poisoned outputs whose halo must be left as it was; the
arrays taken in place (the pointer passed is the one written, a slice of a larger array too); the
bad inputs refused."""
import numpy as np
import pytest

import fdstencil


def numpy_stencil(op, radius, u, h):
    """op(u) on the interior of u (a halo of `radius` around it), in float64."""
    R = radius
    u = u.astype(np.float64)
    nz, ny, nx = (n - 2 * R for n in u.shape)
    inner = (slice(R, R + nz), slice(R, R + ny), slice(R, R + nx))
    out = np.zeros((nz, ny, nx))
    axes = {"d2x": [2], "d2y": [1], "d2z": [0], "d2xy": [1, 2], "d2xyz": [0, 1, 2], "laplacian7": [0, 1, 2]}[op]
    for a in axes:
        w = fdstencil.coeffs(R, 2, h[a])
        for k in range(-R, R + 1):
            s = list(inner)
            s[a] = slice(R + k, R + k + u.shape[a] - 2 * R)
            out += w[k + R] * u[tuple(s)]
    return out


@pytest.mark.parametrize("backend", ["cpu", "reference"])
@pytest.mark.parametrize("op,radius", [("d2x", 2), ("d2y", 3), ("d2z", 1), ("d2xy", 4), ("d2xyz", 4),
                                       ("d2xyz", 8), ("laplacian7", 1)])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_every_operator_matches_numpy(op, radius, dtype, backend):
    rng = np.random.default_rng(1234)
    shape, h = (9, 11, 13), (0.7, 1.3, 0.9)
    plan = fdstencil.Plan(op, radius, shape, dtype, spacing=h, backend=backend)
    u = rng.standard_normal(plan.padded_shape).astype(dtype)
    out = np.full(plan.padded_shape, np.nan, dtype)
    halo_mark = dtype(12345.0)
    R = radius
    out[:R] = halo_mark
    got = plan(u, out)
    assert got is out
    interior = out[R:-R, R:-R, R:-R]
    assert np.all(np.isfinite(interior)), "an interior point was not written"
    assert np.all(out[:R] == halo_mark), "the halo was written"
    want = numpy_stencil(op, radius, u, h)
    tol = (2e-5 if dtype == np.float32 else 1e-12) * np.max(np.abs(want))
    assert np.max(np.abs(interior - want)) <= tol


def test_arrays_are_taken_in_place_without_a_copy():
    plan = fdstencil.Plan("d2xyz", 2, (6, 7, 8), np.float32)
    big = np.random.default_rng(7).standard_normal((20, 20, 30)).astype(np.float32)
    u = big[1:1 + 10, 2:2 + 11, 3:3 + 12]  # a view: strides of the larger array
    assert not u.flags.c_contiguous
    out_big = np.zeros((20, 20, 30), np.float32)  # one layout for both: a plan's layout is fixed
    out = out_big[5:15, 0:11, 10:22]
    pointer = out.__array_interface__["data"][0]
    assert plan(u, out) is out and out.__array_interface__["data"][0] == pointer
    assert np.any(out_big != 0), "the result did not land in the caller's memory"
    assert np.allclose(out[2:-2, 2:-2, 2:-2], numpy_stencil("d2xyz", 2, u, (1, 1, 1)), atol=1e-4)


def test_a_slice_or_a_strided_x_axis_is_copied_once_into_outs_layout():
    plan = fdstencil.Plan("d2xy", 1, (5, 6, 7), np.float64)
    big = np.random.default_rng(3).standard_normal((12, 14, 30))
    for u in (big[1:8, 2:10, 3:12], big[1:8, 2:10, 0:18:2]):  # a slice; x every other point
        want = numpy_stencil("d2xy", 1, u, (1, 1, 1))
        out = plan(u)  # out=None: a dense array, u copied into its layout
        assert out.flags.c_contiguous
        assert np.allclose(out[1:-1, 1:-1, 1:-1], want, rtol=0, atol=1e-12)
    strided_out = np.zeros((12, 14, 30))[1:8, 2:10, 3:12]
    with pytest.raises(ValueError, match="different strides"):
        plan(np.zeros(plan.padded_shape), strided_out)


def test_bad_input_is_refused_with_the_reason():
    plan = fdstencil.Plan("d2x", 2, (4, 5, 6))
    with pytest.raises(ValueError, match="expected shape"):
        plan(np.zeros((4, 5, 6), np.float32))
    with pytest.raises(TypeError, match="float32"):
        plan(np.zeros(plan.padded_shape, np.float64))
    with pytest.raises(ValueError, match="radius"):
        fdstencil.Plan("d2x", 9, (4, 5, 6))
    with pytest.raises(ValueError, match="op"):
        fdstencil.Plan("d3x", 2, (4, 5, 6))
    with pytest.raises(ValueError, match="backend"):
        fdstencil.Plan("d2x", 2, (4, 5, 6), backend="gpu")
    ro = np.zeros(plan.padded_shape, np.float32)
    ro.flags.writeable = False
    with pytest.raises(ValueError, match="read-only"):
        plan(np.zeros(plan.padded_shape, np.float32), ro)
