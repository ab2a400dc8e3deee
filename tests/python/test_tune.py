"""fdstencil.tune: the refusals everywhere; on a GPU a short search into a scratch cache that a plan
made afterwards reads. The GPU part is skipped where fdstencil has no GPU to run on."""
import json
import os
import subprocess
import sys

import numpy as np
import pytest

import fdstencil


def has_gpu():
    try:
        fdstencil.Plan("d2x", 1, (2, 2, 2), backend="cuda")
        return True
    except ValueError:
        return False


def test_bad_cases_are_refused_with_the_reason():
    with pytest.raises(ValueError, match="op 'd3x'"):
        fdstencil.tune("d3x", 4, (8, 8, 8))
    with pytest.raises(ValueError, match="radius 9"):
        fdstencil.tune("d2x", 9, (8, 8, 8))
    with pytest.raises(ValueError, match="shape"):
        fdstencil.tune("d2x", 2, (8, 8))
    with pytest.raises(TypeError, match="dtype"):
        fdstencil.tune("d2x", 2, (8, 8, 8), dtype=np.int32)
    with pytest.raises(TypeError, match="progress"):
        fdstencil.tune("d2x", 2, (8, 8, 8), progress="not callable")


@pytest.mark.skipif(has_gpu(), reason="this machine has a GPU for fdstencil")
def test_without_a_gpu_it_says_why(tmp_path):
    cache = tmp_path / "tuning.json"
    with pytest.raises(ValueError, match="CUDA|GPU"):
        fdstencil.tune("d2xyz", 4, (32, 32, 32), cache_file=str(cache))
    assert not cache.exists()


@pytest.mark.skipif(not has_gpu(), reason="fdstencil has no GPU here")
def test_a_short_search_lands_in_the_cache_that_plans_read(tmp_path):
    cache = tmp_path / "tuning.json"
    lines = []
    r = fdstencil.tune("d2xyz", 4, (64, 64, 64), budget=3.0, cache_file=str(cache), progress=lines.append)
    assert r["timed"] > 0 and r["failed"] == 0
    assert r["median_ms"] > 0 and 0 < r["pct_of_copy"] < 150 and r["copy_gbps"] > 0
    assert isinstance(r["params"], dict) and r["variant"]
    assert r["cache_file"] == str(cache) and lines, "the progress lines come to the callable"
    entries = json.load(open(cache))["entries"]
    assert [e["variant"] for e in entries] == [r["variant"]]
    # A plan made now, in another process reading that cache, takes the tuned choice.
    code = ("import json, fdstencil; p = fdstencil.Plan('d2xyz', 4, (64, 64, 64), backend='cuda'); "
            "import torch; u = torch.zeros(p.padded_shape, device='cuda'); p(u); print(p.describe())")
    pytest.importorskip("torch")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         env={**os.environ, "FDSTENCIL_TUNING_CACHE": str(cache)}, timeout=120)
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["source"].startswith("tuning cache " + str(cache))
