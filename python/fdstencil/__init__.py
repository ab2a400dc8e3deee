"""fdstencil from Python: high-order finite-difference stencils and acoustic wave propagation.

The C++ library does the work (the same code as the `fdstencil` tool); this package takes and
returns NumPy arrays. See docs/python.md.

    import numpy as np, fdstencil
    v = np.full((200, 300), 2000, np.float32)              # (nz, nx), m/s
    dt = 0.001
    shot = fdstencil.wave.forward(v, spacing=10.0, nt=800, dt=dt,
                                  sources=[[50, 1500]], wavelets=fdstencil.wave.ricker(12, dt, 800),
                                  receivers=[[20, x] for x in range(0, 3000, 10)])
    shot.traces  # (300, 800) float32
"""
import numpy as np

from . import _core, wave
from .plan import Plan
from .tune import tune

__version__ = _core.__version__
__all__ = ["Plan", "coeffs", "info", "tune", "wave", "__version__"]


def coeffs(radius, derivative=2, spacing=1.0):
    """The central finite-difference weights of a derivative (1 or 2) of order 2R at spacing h, as
    `fdstencil coeffs` prints them: 2R + 1 float64 values for the offsets -R..R, so that the
    derivative at i is sum_k w[k] u[i + k - R]. ValueError for R outside 1..8 or another derivative."""
    return np.asarray(_core.coeffs(int(derivative), int(radius), float(spacing)), dtype=np.float64)


def info(json=False):
    """Prints what `fdstencil info` prints (version, build, backends, GPUs); 0 on success. It goes
    to the process's C stdout, not sys.stdout (a notebook or redirect_stdout does not catch it)."""
    return _core.info(["--json"] if json else [])
