"""fdstencil.Plan: an operator prepared once for one size and applied to NumPy arrays in place."""
import numpy as np

from . import _core

OPS = ("laplacian7", "d2x", "d2y", "d2z", "d2xy", "d2xyz")


class Plan:
    """Plan(op, radius, shape, dtype=np.float32, spacing=1.0, backend="auto")

    An operator (one of OPS: d2x, d2y, d2z second derivatives of order 2R, d2xy and d2xyz their
    fused sums, laplacian7 the 2nd-order 7-point Laplacian at R = 1) on an interior of `shape` =
    (nz, ny, nx) points at `spacing` (one h, or (hz, hy, hx)). Called as plan(u, out=None): u and
    out hold the interior and a halo of `radius` points on every side, shape (nz + 2R, ny + 2R,
    nx + 2R), x (the last axis) contiguous; out's interior becomes op(u), its halo is left as it
    was. Both are used in place, without a copy, when they share a layout (a slice of a larger
    array is taken as a view of it). Otherwise u, which is only read, is copied once into a dense
    array when out is dense (as out=None makes it: a zeroed array), and refused when out is not.
    out's x axis must be contiguous. Returns out.

    backend: "cpu" (OpenMP, vectorized), "reference" (plain loops in double), or "auto", which
    is "cpu" for NumPy arrays (GPU arrays are not taken yet: docs/python.md)."""

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
        if backend not in ("auto", "cpu", "reference"):
            raise ValueError(f"backend {backend!r}: NumPy arrays run on 'cpu' or 'reference' ('auto': cpu)")
        self.op, self.radius, self.shape = op, int(radius), tuple(int(n) for n in shape)
        self.backend = "cpu" if backend == "auto" else backend
        self._plan = _core.HostPlan(op, self.radius, *self.shape, float(h[0]), float(h[1]), float(h[2]),
                                    self.dtype.name, self.backend)
        self._apply = self._plan.apply_f32 if self.dtype == np.float32 else self._plan.apply_f64

    @property
    def padded_shape(self):
        """The arrays' shape: the interior and the halo, (nz + 2R, ny + 2R, nx + 2R)."""
        return tuple(n + 2 * self.radius for n in self.shape)

    def __call__(self, u, out=None):
        if not isinstance(u, np.ndarray):
            raise TypeError(f"u: expected a NumPy array, got {type(u).__name__} (GPU arrays: not yet, docs/python.md)")
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
        self._apply(u, out)
        return out

    def describe(self):
        """The plan the last call used, as JSON text: its variant, parameters and how they were chosen
        ("" before the first call)."""
        return self._plan.describe()
