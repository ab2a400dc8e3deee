"""fdstencil.wave on the GPUs: shots spread over every visible GPU give each shot's own bits, a
model on a GPU runs there by default. Skipped without a GPU (and the spread without two)."""
import numpy as np
import pytest

import fdstencil

GPUS = fdstencil._core.gpu_count()
needs_gpu = pytest.mark.skipif(GPUS == 0, reason="fdstencil has no GPU here")


def survey(n):
    v = np.full((120, 160), 1800, np.float32)
    v[60:] = 2600  # a reflector
    dt, nt = 0.001, 400
    shots = [{"sources": [[25.0, 100.0 + 90.0 * i]], "wavelets": fdstencil.wave.ricker(12 + i, dt, nt),
              "receivers": [[15.0, 40.0 + 60.0 * j] for j in range(24 - i)]} for i in range(n)]
    return v, dt, nt, shots


@needs_gpu
def test_shots_spread_over_the_gpus_are_each_the_bits_they_give_alone():
    v, dt, nt, shots = survey(6)
    together = fdstencil.wave.forward_many(v, 10.0, nt, shots, dt=dt, backend="cuda")
    used = {s.timing["device"] for s in together}
    assert used <= set(range(GPUS)) and used  # (a worker may take every shot before another starts)
    for s, got in zip(shots, together):
        assert got.timing["backend"] == "cuda"
        alone = fdstencil.wave.forward(v, 10.0, nt, s["sources"], s["wavelets"], s["receivers"], dt=dt,
                                       backend="cuda", device=got.timing["device"])
        assert got.traces.shape == (len(s["receivers"]), nt)
        assert np.max(np.abs(got.traces)) > 0 and got.traces.tobytes() == alone.traces.tobytes()
    # Each worker's later shots keep its state: as many fresh states as GPUs that ran shots.
    assert sum(not s.timing["state_kept"] for s in together) == len(used)


@needs_gpu
def test_one_gpu_named_takes_every_shot():
    v, dt, nt, shots = survey(3)
    last = GPUS - 1
    got = fdstencil.wave.forward_many(v, 10.0, nt, shots, dt=dt, devices=[last])
    assert [s.timing["device"] for s in got] == [last] * 3
    assert [s.timing["state_kept"] for s in got] == [False, True, True]


@needs_gpu
def test_a_torch_model_on_a_gpu_runs_on_that_gpu():
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("PyTorch sees no GPU")
    v, dt, nt, shots = survey(1)
    last = min(GPUS, torch.cuda.device_count()) - 1
    s = shots[0]
    shot = fdstencil.wave.forward(torch.from_numpy(v).to(f"cuda:{last}"), 10.0, nt, s["sources"], s["wavelets"],
                                  s["receivers"], dt=dt)
    assert shot.timing["device"] == last
    assert shot.traces.device == torch.device(f"cuda:{last}")
    ref = fdstencil.wave.forward(v, 10.0, nt, s["sources"], s["wavelets"], s["receivers"], dt=dt, device=last)
    assert shot.traces.cpu().numpy().tobytes() == ref.traces.tobytes()


@needs_gpu
def test_a_shot_on_a_named_gpu_leaves_the_current_one_as_it_was():
    v, dt, nt, shots = survey(1)
    s = shots[0]
    before = fdstencil._core.current_gpu()
    other = GPUS - 1 - before if GPUS > 1 else before
    shot = fdstencil.wave.forward(v, 10.0, nt, s["sources"], s["wavelets"], s["receivers"], dt=dt, device=other)
    assert shot.timing["device"] == other and fdstencil._core.current_gpu() == before
