"""fdstencil.tune: the refusals everywhere; on a GPU a short search into a scratch cache that a plan
made afterwards reads. The GPU part is skipped where fdstencil has no GPU to run on."""
import json
import os
import signal
import subprocess
import sys
import textwrap
import time

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


@pytest.mark.skipif(not has_gpu(), reason="fdstencil has no GPU here")
def test_ctrl_c_ends_a_search_within_a_second_and_writes_no_cache(tmp_path):
    cache = tmp_path / "tuning.json"
    # The child says "searching" at the search's fifth line (past the header, the copy bandwidth and
    # the reference: candidates are being timed), then the parent interrupts it.
    code = textwrap.dedent(f"""
        import sys, fdstencil
        lines = []
        def progress(line):
            lines.append(line)
            if len(lines) == 5:
                print("searching", flush=True)
        try:
            fdstencil.tune("d2xyz", 4, (256, 256, 256), budget=120.0, cache_file={str(cache)!r},
                           progress=progress)
        except KeyboardInterrupt:
            print("interrupted", flush=True)
            sys.exit(3)
        print("finished", flush=True)
    """)
    p = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    assert p.stdout.readline().strip() == "searching"
    sent = time.monotonic()
    p.send_signal(signal.SIGINT)
    assert p.stdout.readline().strip() == "interrupted"
    took = time.monotonic() - sent
    p.communicate(timeout=30)
    assert p.returncode == 3
    assert took < 1.0, f"KeyboardInterrupt {took:.2f} s after SIGINT"
    assert not cache.exists(), "a stopped search stores nothing"
