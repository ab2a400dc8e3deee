"""fdstencil.tune: the operators' autotuner from Python, into the tuning cache the tool and every
plan read."""
import json

import numpy as np

from . import _core
from .plan import OPS


def tune(op, radius, shape, dtype=np.float32, budget=60.0, cache_file=None, store=True, progress=None):
    """Searches the CUDA variants of `op` at `radius` on an interior of `shape` = (nz, ny, nx)
    points in `dtype` on the current GPU, as `fdstencil tune` does: each candidate verified against
    the reference before it is timed, the search bounded by `budget` seconds. Stores the winner in
    the tuning cache (`cache_file`, by default the tool's: $FDSTENCIL_TUNING_CACHE, else
    ~/.cache/fdstencil/tuning.json) unless store=False; plans built after it take it. `progress`, a
    callable, receives each line of the search (else they go to stderr).

    Returns a dict, the record `fdstencil tune --json` gives a case less its size: the cache entry
    (the device, the winner's variant and params, median_ms, effective_gbps, the copy bandwidth
    measured in the same run (copy_gbps), pct_of_copy, tuned_at), the candidates timed, failed and
    unsupported, whether the budget was reached, seconds, the cache file written ("" when
    store=False), and every candidate with its status. ValueError without a GPU (with the reason)
    and for a bad case; the GIL is released while it searches."""
    if op not in OPS:
        raise ValueError(f"op {op!r}: expected one of {', '.join(OPS)}")
    if len(shape) != 3:
        raise ValueError(f"shape: expected the interior (nz, ny, nx), got {shape}")
    dt = np.dtype(dtype)
    if dt not in (np.float32, np.float64):
        raise TypeError(f"dtype: expected float32 or float64, got {dt}")
    if progress is not None and not callable(progress):
        raise TypeError("progress: expected a callable taking one line of text")
    return json.loads(_core.tune(op, int(radius), dt.name, *(int(n) for n in shape), float(budget),
                                 cache_file or "", bool(store), progress))
