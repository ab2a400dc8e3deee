"""fdstencil.wave on the GPUs: shots spread over every visible GPU give each shot's own bits, a
model on a GPU runs there by default. Skipped without a GPU (and the spread without two)."""
import numpy as np
import pytest

import fdstencil

GPUS = fdstencil._core.gpu_count()
needs_gpu = pytest.mark.skipif(GPUS == 0, reason="fdstencil has no GPU here")


def torch_with_a_gpu():
    """PyTorch, or the test skipped where it is missing or sees no GPU."""
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("PyTorch sees no GPU")
    return torch


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
    seen = []
    together = fdstencil.wave.forward_many(v, 10.0, nt, shots, dt=dt, backend="cuda",
                                           progress=lambda done, total: seen.append((done, total)))
    # The GPUs' workers report one at a time, their sums rising to every step of the six shots.
    assert seen[-1] == (6 * nt, 6 * nt) and all(b[0] >= a[0] for a, b in zip(seen, seen[1:]))
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
def test_what_progress_raises_on_a_worker_ends_the_call_and_the_gpus_run_on():
    v, dt, nt, shots = survey(6)

    def stop(done, total):
        if done > nt:
            raise RuntimeError("enough")
    with pytest.raises(RuntimeError, match="enough"):
        fdstencil.wave.forward_many(v, 10.0, nt, shots, dt=dt, backend="cuda", progress=stop)
    again = fdstencil.wave.forward_many(v, 10.0, nt, shots[:2], dt=dt, backend="cuda")
    assert all(np.max(np.abs(s.traces)) > 0 for s in again)


@needs_gpu
def test_one_gpu_named_takes_every_shot():
    v, dt, nt, shots = survey(3)
    last = GPUS - 1
    got = fdstencil.wave.forward_many(v, 10.0, nt, shots, dt=dt, devices=[last])
    assert [s.timing["device"] for s in got] == [last] * 3
    assert [s.timing["state_kept"] for s in got] == [False, True, True]


@needs_gpu
def test_a_torch_model_on_a_gpu_runs_on_that_gpu():
    torch = torch_with_a_gpu()
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
def test_gpu_models_come_to_the_host_whole_by_either_copy():
    # A dense float32 array takes the module's copy, any other the framework's: the same values.
    v, dt, nt, shots = survey(1)
    v = v + np.arange(v.shape[1], dtype=np.float32)  # values that differ along both axes
    got = {}
    torch = pytest.importorskip("torch")
    if torch.cuda.is_available():
        t = torch.from_numpy(np.ascontiguousarray(v.T)).cuda()
        got["torch dense"] = (fdstencil.wave._host(t.T.contiguous()), v)
        got["torch view"] = (fdstencil.wave._host(t.T), v)  # strided: the framework's copy
        got["torch float64"] = (fdstencil.wave._host(torch.from_numpy(v.astype(np.float64)).cuda()), v)
    try:
        import cupy
        got["cupy dense"] = (fdstencil.wave._host(cupy.asarray(v)), v)
        got["cupy view"] = (fdstencil.wave._host(cupy.asarray(v)[:, ::2]), v[:, ::2])
    except ImportError:
        pass
    if not got:
        pytest.skip("neither PyTorch with a GPU nor CuPy")
    for name, (host, want) in got.items():
        assert isinstance(host, np.ndarray) and host.shape == want.shape, name
        np.testing.assert_array_equal(host, want, err_msg=name)


@needs_gpu
def test_a_shot_on_a_named_gpu_leaves_the_current_one_as_it_was():
    v, dt, nt, shots = survey(1)
    s = shots[0]
    before = fdstencil._core.current_gpu()
    other = GPUS - 1 - before if GPUS > 1 else before
    shot = fdstencil.wave.forward(v, 10.0, nt, s["sources"], s["wavelets"], s["receivers"], dt=dt, device=other)
    assert shot.timing["device"] == other and fdstencil._core.current_gpu() == before


@needs_gpu
def test_a_launch_tuned_for_the_card_and_grid_is_taken_and_named(tmp_path, monkeypatch):
    import json
    v, dt, nt, shots = survey(1)
    s = shots[0]
    monkeypatch.setenv("FDSTENCIL_TUNING_CACHE", str(tmp_path / "tuning.json"))
    default = fdstencil.wave.forward(v, 10.0, nt, s["sources"], s["wavelets"], s["receivers"], dt=dt, backend="cuda")
    assert default.timing["launch_from"] is None
    # An entry as `fdstencil tune --wave` stores it, for this card and this grid only.
    entry = {"device": fdstencil._core.gpu_name(fdstencil._core.current_gpu()), "dim": 2, "radius": 4,
             "shape": [v.shape[0], 1, v.shape[1]], "cpml": 10, "free_surface": False,
             "kernel_params": {"cpml": "beside", "block": "32x1", "vec": 4, "nw": 8}}
    cache = tmp_path / "wave-tuning.json"
    cache.write_text(json.dumps({"format": "fdstencil-wave-tuning", "format_version": 1, "entries": [entry]}))
    tuned = fdstencil.wave.forward(v, 10.0, nt, s["sources"], s["wavelets"], s["receivers"], dt=dt, backend="cuda")
    assert tuned.timing["launch_from"] == str(cache)
    assert "block=32x1 vec=4 nw=8" in tuned.timing["kernel"], tuned.timing["kernel"]
    # The entry places the CPML as 2D's default does (apart, its layers beside the march): every
    # launch of one placement does the same arithmetic, so gives the same bits.
    assert tuned.traces.tobytes() == default.traces.tobytes()
    # Another grid, or a launch given by hand, does not take it.
    other = fdstencil.wave.forward(v[:, :150], 10.0, nt, s["sources"], s["wavelets"], s["receivers"], dt=dt,
                                   backend="cuda")
    assert other.timing["launch_from"] is None
    by_hand = fdstencil.wave.forward(v, 10.0, nt, s["sources"], s["wavelets"], s["receivers"], dt=dt,
                                     backend="cuda", kernel_params={"block": "128x1"})
    assert by_hand.timing["launch_from"] is None and "block=128x1" in by_hand.timing["kernel"]
    # An entry this build refuses gives the defaults and says so.
    entry["kernel_params"] = {"block": "7x1"}
    cache.write_text(json.dumps({"format": "fdstencil-wave-tuning", "format_version": 1, "entries": [entry]}))
    with pytest.warns(fdstencil.wave.FdstencilWarning, match="is refused"):
        refused = fdstencil.wave.forward(v, 10.0, nt, s["sources"], s["wavelets"], s["receivers"], dt=dt,
                                         backend="cuda")
    assert refused.timing["launch_from"] is None and refused.traces.tobytes() == default.traces.tobytes()


def _gpu_models(v):
    """v as each kind of dense float32 GPU array this machine can make: PyTorch, CuPy, and one known
    only by __cuda_array_interface__."""
    out = {}
    try:
        import torch
        if torch.cuda.is_available():
            out["torch"] = torch.from_numpy(v).cuda()
    except ImportError:
        pass
    try:
        import cupy
        out["cupy"] = cupy.asarray(v)
    except ImportError:
        pass
    if "torch" in out:
        from test_cai import CaiOnly
        out["interface"] = CaiOnly.of(out["torch"])
    return out


@needs_gpu
def test_a_dense_gpu_model_is_read_where_it_is_and_gives_the_host_models_bits(monkeypatch):
    v, dt, nt, shots = survey(1)
    v = v * (1 + 0.05 * np.sin(np.arange(v.size, dtype=np.float32)).reshape(v.shape))  # every m its own
    s = shots[0]
    want = fdstencil.wave.forward(v, 10.0, nt, s["sources"], s["wavelets"], s["receivers"], final_field=True)
    models = _gpu_models(v)
    if not models:
        pytest.skip("neither PyTorch with a GPU nor CuPy")

    def no_host_copy(*args, **kwargs):
        raise AssertionError("a dense float32 GPU model came to the host")
    monkeypatch.setattr(fdstencil.wave, "_velocity", no_host_copy)  # the model's way to the host
    for name, model in models.items():
        got = fdstencil.wave.forward(model, 10.0, nt, s["sources"], s["wavelets"], s["receivers"],
                                     final_field=True)  # dt: the default, from the vmax found on the GPU
        traces = np.asarray(got.traces.cpu() if hasattr(got.traces, "cpu") else got.traces.get())
        final = np.asarray(got.final_field.cpu() if hasattr(got.final_field, "cpu") else got.final_field.get())
        assert got.dt == want.dt, name
        assert np.any(traces != 0) and traces.tobytes() == want.traces.tobytes(), name
        assert final.tobytes() == want.final_field.tobytes(), name


@needs_gpu
def test_a_bad_value_in_a_gpu_model_is_named_as_on_the_host():
    v, dt, nt, shots = survey(1)
    v[3, 5] = np.nan
    v[7, 1] = -1
    s = shots[0]
    models = _gpu_models(v)
    if not models:
        pytest.skip("neither PyTorch with a GPU nor CuPy")
    for name, model in models.items():
        with pytest.raises(ValueError, match=r"velocity nan at index \(z, x\) = \(3, 5\): velocities must be"):
            fdstencil.wave.forward(model, 10.0, nt, s["sources"], s["wavelets"], s["receivers"], dt=dt)


@needs_gpu
def test_a_gpu_model_off_the_runs_gpu_or_strided_goes_through_the_host():
    torch = torch_with_a_gpu()
    v, dt, nt, shots = survey(1)
    s = shots[0]
    t = torch.from_numpy(np.ascontiguousarray(v.T)).cuda()
    assert fdstencil.wave._in_place_on_gpu(t.T, "auto", [0], None) is None  # strided
    assert fdstencil.wave._in_place_on_gpu(t.T.contiguous().double(), "auto", [0], None) is None
    assert fdstencil.wave._in_place_on_gpu(t.T.contiguous(), "cpu", [-1], None) is None
    assert fdstencil.wave._in_place_on_gpu(t.T.contiguous(), "auto", [0, 1], None) is None
    assert fdstencil.wave._in_place_on_gpu(t.T.contiguous(), "auto", [0], None)[1:] == (v.shape, 0)
    want = fdstencil.wave.forward(v, 10.0, nt, s["sources"], s["wavelets"], s["receivers"], dt=dt, backend="cpu")
    got = fdstencil.wave.forward(t.T, 10.0, nt, s["sources"], s["wavelets"], s["receivers"], dt=dt, backend="cpu")
    assert got.traces.cpu().numpy().tobytes() == want.traces.tobytes()
    if GPUS > 1:
        elsewhere = fdstencil.wave.forward(t.T.contiguous(), 10.0, nt, s["sources"], s["wavelets"], s["receivers"],
                                           dt=dt, device=1)
        assert elsewhere.timing["device"] == 1


@needs_gpu
def test_a_model_made_on_another_stream_is_read_after_that_streams_work():
    torch = torch_with_a_gpu()
    v, dt, nt, shots = survey(1)
    s = shots[0]
    want = fdstencil.wave.forward(v, 10.0, nt, s["sources"], s["wavelets"], s["receivers"], dt=dt)
    made = torch.from_numpy(v).cuda()
    side = torch.cuda.Stream()
    for how in ("stream=", "current"):
        t = torch.full(v.shape, 1000.0, device="cuda")  # another model's values until the copy lands
        torch.cuda.synchronize()
        with torch.cuda.stream(side):
            torch.cuda._sleep(200_000_000)  # the producer still at work when the call starts (~0.1 s)
            t.copy_(made)
            if how == "current":  # the current stream is the producer's: waited for by default
                got = fdstencil.wave.forward(t, 10.0, nt, s["sources"], s["wavelets"], s["receivers"], dt=dt)
        if how == "stream=":  # called from the default stream, the producer's named
            got = fdstencil.wave.forward(t, 10.0, nt, s["sources"], s["wavelets"], s["receivers"], dt=dt,
                                         stream=side)
        torch.cuda.synchronize()
        assert got.traces.cpu().numpy().tobytes() == want.traces.tobytes(), how
    with pytest.raises(TypeError, match="stream: expected a CUDA stream"):
        fdstencil.wave.forward(made, 10.0, nt, s["sources"], s["wavelets"], s["receivers"], dt=dt, stream="side")
