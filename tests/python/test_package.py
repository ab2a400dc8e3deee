"""The Python package (python/fdstencil) against the tool it shares its C++ with: the version and
`info`, the coefficients against exact derivatives, a shot through fdstencil.wave.forward against
the same shot through `fdstencil wave` (the same bits), bad input raising Python's errors with the
tool's messages, Ctrl-C, and memory over many calls. On the cpu backend (the GPU's are a device
run's); FDSTENCIL_CLI names the tool."""
import os
import subprocess
import sys
import tempfile
import textwrap

import numpy as np
import pytest

import fdstencil
from interrupted import interrupt

CLI = os.environ.get("FDSTENCIL_CLI", "")
needs_cli = pytest.mark.skipif(not os.path.exists(CLI), reason="FDSTENCIL_CLI does not name the built tool")


@needs_cli
def test_version_and_info_are_the_tools():
    assert subprocess.run([CLI, "--version"], capture_output=True, text=True).stdout.strip() == fdstencil.__version__
    tool = subprocess.run([CLI, "info"], capture_output=True, text=True)
    here = subprocess.run([sys.executable, "-m", "fdstencil", "info"], capture_output=True, text=True)
    assert here.returncode == 0, here.stderr
    assert here.stdout == tool.stdout
    assert subprocess.run([sys.executable, "-m", "fdstencil", "nonsense"], capture_output=True).returncode == 2


def test_coefficients_differentiate_polynomials_exactly():
    h = 0.5
    for radius in (1, 2, 4, 8):
        w2 = fdstencil.coeffs(radius, derivative=2, spacing=h)
        w1 = fdstencil.coeffs(radius, derivative=1, spacing=h)
        assert w2.shape == (2 * radius + 1,) and w2.dtype == np.float64
        x = np.arange(-radius, radius + 1) * h  # the offsets, around a point at 0
        for p in range(2 * radius + 1):  # exact up to degree 2R
            assert abs(np.dot(w2, x**p) - (2.0 if p == 2 else 0.0)) < 1e-7 * max(1.0, np.dot(np.abs(w2), np.abs(x)**p))
            assert abs(np.dot(w1, x**p) - (1.0 if p == 1 else 0.0)) < 1e-7 * max(1.0, np.dot(np.abs(w1), np.abs(x)**p))
    assert np.allclose(fdstencil.coeffs(1), [1, -2, 1])
    with pytest.raises(ValueError):
        fdstencil.coeffs(9)
    with pytest.raises(ValueError):
        fdstencil.coeffs(2, derivative=3)


def shot_inputs():
    v = np.full((60, 90), 1800, np.float32)
    v[30:] = 2500  # a reflector
    dt, nt = 0.001, 300
    return v, dt, nt, [[105.0, 333.0]], [[20.0, 50.0 + 70 * i] for i in range(10)]


@needs_cli
def test_a_shot_is_the_same_bits_as_the_tools():
    v, dt, nt, sources, receivers = shot_inputs()
    shot = fdstencil.wave.forward(v, spacing=10.0, nt=nt, dt=dt, sources=sources,
                                  wavelets=fdstencil.wave.ricker(15, dt, nt), receivers=receivers,
                                  cpml=10, backend="cpu")
    assert shot.traces.shape == (10, nt) and shot.traces.dtype == np.float32
    assert np.all(np.isfinite(shot.traces)) and np.max(np.abs(shot.traces)) > 0
    with tempfile.TemporaryDirectory() as tmp:
        np.save(os.path.join(tmp, "v.npy"), v)
        np.save(os.path.join(tmp, "r.npy"), np.array(receivers))
        r = subprocess.run([CLI, "wave", "--quiet", "--backend", "cpu", "--model", os.path.join(tmp, "v.npy"),
                            "--spacing", "10", "--dt", "0.001", "--steps", str(nt), "--cpml", "10",
                            "--source", "105,333", "--ricker", "15", "--receivers", os.path.join(tmp, "r.npy"),
                            "--no-final", "-o", os.path.join(tmp, "o")], capture_output=True, text=True)
        assert r.returncode == 0, r.stderr
        record = np.load(os.path.join(tmp, "o", "shot.npy"))
    assert record.shape == shot.traces.shape
    assert record.tobytes() == shot.traces.tobytes()


def test_a_run_without_receivers_returns_an_empty_record():
    v, dt, nt, sources, _ = shot_inputs()
    shot = fdstencil.wave.forward(v, 10.0, 20, sources, fdstencil.wave.ricker(15, dt, 20), dt=dt, backend="cpu")
    assert shot.traces.shape == (0, 20) and shot.traces.dtype == np.float32


def test_the_final_field_and_the_default_step():
    v, dt, nt, sources, receivers = shot_inputs()
    shot = fdstencil.wave.forward(v, 10.0, 50, sources, fdstencil.wave.ricker(15, dt, 50), receivers,
                                  backend="cpu", final_field=True)
    assert shot.final_field.shape == v.shape and shot.final_field.dtype == np.float32
    assert shot.dt == 0.8 * fdstencil.wave.max_stable_dt(2, 4, 10.0, float(np.max(v)))  # the tool's, exactly


def test_snapshots_are_the_wavefield_after_their_steps():
    # A snapshot after n steps is the final field of the same shot run n steps: the same bits.
    v, dt, nt, sources, receivers = shot_inputs()
    w = fdstencil.wave.ricker(15, dt, 60)
    run = lambda n, **k: fdstencil.wave.forward(v, 10.0, n, sources, w, receivers, dt=dt, backend="cpu", **k)
    shot = run(60, snapshot_steps=[40, 0, 25, 40, 60], final_field=True)
    assert shot.snapshot_steps == [0, 25, 40, 60]  # rising, each once
    assert shot.snapshots.shape == (4,) + v.shape and shot.snapshots.dtype == np.float32
    assert not np.any(shot.snapshots[0]) and np.any(shot.snapshots[1])
    assert shot.snapshots[3].tobytes() == shot.final_field.tobytes()
    for i, n in ((1, 25), (2, 40)):
        assert shot.snapshots[i].tobytes() == run(n, final_field=True).final_field.tobytes(), n
    assert run(10).snapshots is None and run(10).snapshot_steps == []
    with pytest.raises(ValueError, match="snapshot step 61 is outside 0..60"):
        run(60, snapshot_steps=[61])
    for bad in ([2.5], True, 7, [[1, 2]], [float("nan")], ["3"]):
        with pytest.raises(ValueError, match="snapshot_steps: a sequence of whole step counts"):
            run(60, snapshot_steps=bad)
    assert run(60, snapshot_steps=np.array([30.0, 5])).snapshot_steps == [5, 30]
    big = np.full((2000, 2000), 2000, np.float32)  # 16 MB a snapshot: 10^6 of them cannot be kept
    with pytest.raises(MemoryError, match="snapshots"):
        fdstencil.wave.forward(big, 10.0, 10**6, [[100.0, 100.0]], w, dt=dt, backend="cpu",
                               snapshot_steps=range(10**6))


def test_bad_input_raises_pythons_errors_with_the_tools_messages():
    v, dt, nt, sources, receivers = shot_inputs()
    w = fdstencil.wave.ricker(15, dt, nt)
    run = lambda **k: fdstencil.wave.forward(**({"velocity": v, "spacing": 10.0, "nt": nt, "dt": dt,
                                                 "sources": sources, "wavelets": w, "backend": "cpu"} | k))
    with pytest.raises(TypeError, match="dtype"):
        run(velocity=v.astype(np.complex64))
    with pytest.raises(ValueError, match="2D"):
        run(velocity=v[0])
    with pytest.raises(ValueError, match="stream: the model is not a GPU array"):
        run(stream=0)
    # A GPU model's stream= (and a Plan's on a GPU array) is read before any work: handles that are
    # no stream are named, not turned by int() into another stream's handle.
    for read in (fdstencil.wave._stream_handle_of, fdstencil.plan._stream_handle):
        for bad in (1.0, 1.5, True, np.bool_(True), "3", np.float32(2), None):
            with pytest.raises(TypeError, match="stream: expected a CUDA stream"):
                read(bad)
        for bad in (-1, 2**64):
            with pytest.raises(ValueError, match="stream: a CUDA stream handle is a pointer's value"):
                read(bad)
        assert read(np.int64(7)) == 7

        class Torchlike:
            cuda_stream = 94000000000

        assert read(Torchlike()) == 94000000000
    bad = v.copy()
    bad[3, 4] = -1
    with pytest.raises(ValueError, match="index"):
        run(velocity=bad)
    with pytest.raises(ValueError, match=r"velocity -1\.0+ at index \(z, x\) = \(3, 4\)"):
        run(velocity=bad, dt=None)  # the default step's vmax from the same summary
    with pytest.raises(ValueError, match="outside|inside"):
        run(sources=[[105.0, 5000.0]])
    with pytest.raises(ValueError, match="radius"):
        run(radius=0)
    with pytest.raises(ValueError, match="stability limit"):
        run(dt=1.0)
    with pytest.raises(ValueError, match="positions"):
        run(receivers=[[1.0, 2.0, 3.0]])
    with pytest.raises(MemoryError):
        run(nt=10**13, receivers=receivers)  # the traces alone: 10 x 10^13 floats
    with pytest.raises(ValueError, match="backend"):
        run(backend="gpu")


def test_ctrl_c_raises_keyboard_interrupt_within_a_second():
    code = textwrap.dedent("""
        import numpy as np, fdstencil, sys
        v = np.full((300, 300), 2000, np.float32)
        print("running", flush=True)
        try:
            fdstencil.wave.forward(v, 10.0, 10**7, [[1500.0, 1500.0]], np.ones(10), backend="cpu")
        except KeyboardInterrupt:
            print("interrupted", flush=True)
            sys.exit(3)
    """)
    took, _ = interrupt(code)
    assert took < 1.0, f"KeyboardInterrupt {took:.2f} s after SIGINT"


def rss_kib():
    with open("/proc/self/status") as f:
        return next(int(line.split()[1]) for line in f if line.startswith("VmRSS:"))


def test_ten_thousand_calls_do_not_grow_the_memory():
    v = np.full((16, 16), 2000, np.float32)
    w = np.ones(4)
    call = lambda: fdstencil.wave.forward(v, 10.0, 4, [[75.0, 75.0]], w, [[20.0, 20.0]], cpml=2, backend="cpu",
                                          final_field=True)
    plan = fdstencil.Plan("d2xyz", 2, (8, 8, 8))
    u, out = np.ones(plan.padded_shape, np.float32), np.zeros(plan.padded_shape, np.float32)
    for _ in range(200):  # the allocator's pools settle first
        call()
        fdstencil.coeffs(4)
        plan(u, out)
    before = rss_kib()
    for _ in range(10000):
        call()
        fdstencil.coeffs(4)
        plan(u, out)
    grown = rss_kib() - before
    assert grown < 2048, f"the process grew {grown} KiB over 10,000 calls"


def test_the_readme_example_runs():
    readme = open(os.path.join(os.path.dirname(__file__), "..", "..", "README.md")).read()
    at = readme.index("A shot from NumPy:")
    block = readme[readme.index("```python\n", at) + len("```python\n"):readme.index("```\n", at + 30)]
    out = subprocess.run([sys.executable, "-c", block], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith("(400, 1200) ")


def test_the_shot_gather_example_runs(tmp_path):
    pytest.importorskip("matplotlib")
    example = os.path.join(os.path.dirname(__file__), "..", "..", "examples", "python", "shot_gather.py")
    out = subprocess.run([sys.executable, example, "--quick", "--backend", "cpu", "--output", str(tmp_path / "g.png")],
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    assert (tmp_path / "g.png").stat().st_size > 10000
    # The figure is the user's file now: a second run refuses to replace it unless asked.
    again = subprocess.run([sys.executable, example, "--quick", "--backend", "cpu", "--output", str(tmp_path / "g.png")],
                           capture_output=True, text=True, timeout=300)
    assert again.returncode == 2 and "--overwrite" in again.stderr


def test_a_torch_model_gives_torch_traces_of_the_same_bits():
    torch = pytest.importorskip("torch")
    v, dt, nt, sources, receivers = shot_inputs()
    device = "cuda" if torch.cuda.is_available() else "cpu"
    w = fdstencil.wave.ricker(15, dt, nt)
    ref = fdstencil.wave.forward(v, 10.0, nt, sources, w, receivers, dt=dt, cpml=10, backend="cpu", final_field=True)
    got = fdstencil.wave.forward(torch.from_numpy(v).to(device), 10.0, nt, torch.tensor(sources, device=device),
                                 torch.from_numpy(w), torch.tensor(receivers), dt=dt, cpml=10, backend="cpu",
                                 final_field=True)
    for a, b in ((got.traces, ref.traces), (got.final_field, ref.final_field)):
        assert isinstance(a, torch.Tensor) and a.device.type == device and a.dtype == torch.float32
        assert a.cpu().numpy().tobytes() == b.tobytes()


def test_the_deepwave_example_runs_with_or_without_deepwave(tmp_path):
    pytest.importorskip("matplotlib")
    example = os.path.join(os.path.dirname(__file__), "..", "..", "examples", "python", "versus_deepwave.py")
    png = tmp_path / "v.png"
    out = subprocess.run([sys.executable, example, "--quick", "--backend", "cpu", "--output", str(png)],
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith("fdstencil (cpu): 150 receivers x 1000 steps in ")
    try:
        import deepwave  # noqa: F401
        assert "the records: correlation 0.99" in out.stdout, out.stdout
    except ImportError:
        assert "Deepwave is not here" in out.stdout, out.stdout
    assert png.stat().st_size > 10000
    again = subprocess.run([sys.executable, example, "--quick", "--output", str(png)], capture_output=True, text=True,
                           timeout=300)
    assert again.returncode == 2 and "--overwrite" in again.stderr


def test_several_shots_in_one_call_are_each_shots_own():
    v, dt, nt, sources, receivers = shot_inputs()
    shots = [{"sources": [[105.0, 333.0]], "wavelets": fdstencil.wave.ricker(15, dt, nt), "receivers": receivers},
             {"sources": [[205.0, 633.0], [305.0, 100.0]], "wavelets": fdstencil.wave.ricker(9, dt, nt),
              "receivers": receivers[:4]}]
    together = fdstencil.wave.forward_many(v, 10.0, nt, shots, dt=dt, cpml=10, backend="auto")
    assert len(together) == 2
    for s, got in zip(shots, together):
        alone = fdstencil.wave.forward(v, 10.0, nt, s["sources"], s["wavelets"], s["receivers"], dt=dt, cpml=10,
                                       backend="auto")
        assert got.traces.tobytes() == alone.traces.tobytes()
    # On the GPU a shot after another on the same GPU keeps the state it left (with several GPUs the
    # two shots may run side by side, each fresh); the cpu keeps none.
    first, second = together[0].timing, together[1].timing
    assert second["state_kept"] == (second["backend"] == "cuda" and second["device"] == first["device"])


def test_progress_counts_the_steps_of_every_shot():
    v, dt, nt, sources, receivers = shot_inputs()
    shots = [{"sources": [[105.0 + 50.0 * i, 333.0]], "wavelets": fdstencil.wave.ricker(15, dt, nt),
              "receivers": receivers} for i in range(3)]
    seen = []
    got = fdstencil.wave.forward_many(v, 10.0, nt, shots, dt=dt, backend="auto",
                                      progress=lambda done, total: seen.append((done, total)))
    plain = fdstencil.wave.forward_many(v, 10.0, nt, shots, dt=dt, backend="auto")
    assert all(a.traces.tobytes() == b.traces.tobytes() for a, b in zip(got, plain))
    # The workers' reports, summed and handed on in order, rise to every step of the three shots.
    assert seen[-1] == (3 * nt, 3 * nt) and all(t == 3 * nt for _, t in seen)
    assert all(b[0] >= a[0] for a, b in zip(seen, seen[1:])) and len(seen) > 3
    seen.clear()
    fdstencil.wave.forward(v, 10.0, nt, sources, fdstencil.wave.ricker(15, dt, nt), receivers, dt=dt,
                           progress=lambda done, total: seen.append((done, total)))
    assert seen[0] == (0, nt) and seen[-1] == (nt, nt)
    with pytest.raises(ValueError, match="progress: a callable"):
        fdstencil.wave.forward_many(v, 10.0, nt, shots, dt=dt, progress=1)

    def stop(done, total):
        if done > nt // 2:
            raise RuntimeError("enough")
    with pytest.raises(RuntimeError, match="enough"):  # what the callable raises ends the call
        fdstencil.wave.forward_many(v, 10.0, nt, shots, dt=dt, progress=stop)


def test_bad_shots_and_devices_are_refused_before_any_run():
    v, dt, nt, sources, receivers = shot_inputs()
    w = fdstencil.wave.ricker(15, dt, nt)
    good = {"sources": sources, "wavelets": w, "receivers": receivers}
    many = lambda shots, **k: fdstencil.wave.forward_many(v, 10.0, nt, shots, dt=dt, **({"backend": "cpu"} | k))
    with pytest.raises(ValueError, match="at least one shot"):
        many([])
    with pytest.raises(ValueError, match=r"^shot 1: wavelets: expected one"):
        many([good, good | {"wavelets": np.ones((3, 10))}])
    with pytest.raises(ValueError, match=r"^shot 0: receivers: expected positions"):
        many([good | {"receivers": [[1.0, 2.0, 3.0]]}, good])
    with pytest.raises(ValueError, match=r"device\(s\): the cpu backend"):
        many([good], devices=[0])
    with pytest.raises(ValueError, match="devices: a list of GPU indices"):
        many([good], backend="auto", devices=0)
    with pytest.raises(ValueError, match="nt: a whole number of steps"):
        fdstencil.wave.forward_many(v, 10.0, 20.7, [good], dt=dt, backend="cpu")
    with pytest.raises(ValueError, match=r"^shot 1: a shot is a dict with the keys"):
        many([good, {"sources": sources}])
    count = fdstencil._core.gpu_count()
    with pytest.raises(ValueError, match=f"devices: GPU {count + 3} does not exist"):
        many([good], backend="auto", devices=[count + 3])
    with pytest.raises(ValueError, match="devices: (each GPU at most once|GPU 0 does not exist)"):
        many([good], backend="auto", devices=[0, 0])


def test_a_failing_shot_fails_the_call_with_its_message():
    # The shot's own check (a source outside the model) runs in a worker, after the others began.
    v, dt, nt, sources, receivers = shot_inputs()
    w = fdstencil.wave.ricker(15, dt, nt)
    good = {"sources": sources, "wavelets": w, "receivers": receivers}
    with pytest.raises(ValueError, match="outside|inside"):
        fdstencil.wave.forward_many(v, 10.0, nt, [good, good | {"sources": [[105.0, 5000.0]]}, good], dt=dt,
                                    backend="auto")


def test_a_timing_says_where_the_shot_ran_and_its_bound_when_asked():
    v, dt, nt, sources, receivers = shot_inputs()
    w = fdstencil.wave.ricker(15, dt, nt)
    shot = fdstencil.wave.forward(v, 10.0, nt, sources, w, receivers, dt=dt, backend="auto")
    t = shot.timing
    assert t["device"] == (fdstencil._core.current_gpu() if t["backend"] == "cuda" else None)
    assert t["setup_s"] >= 0 and t["loop_s"] > 0 and t["total_s"] >= t["loop_s"]
    # The setup's phases, in the order they ran, account for it; the call's own costs beside them.
    phases = t["setup_phases_s"]
    assert list(phases) == ["checks", "memory", "taps", "identity", "medium", "state"]
    assert all(s >= 0 for s in phases.values()) and sum(phases.values()) <= t["setup_s"]
    assert 0 <= t["model_s"] and 0 <= t["prepare_s"] and t["call_s"] >= t["prepare_s"] + t["total_s"]
    assert "copy_gbps" not in t  # measured only when asked
    if t["backend"] == "cuda":
        bound = fdstencil.wave.forward(v, 10.0, nt, sources, w, receivers, dt=dt, backend="cuda", measure_bound=True)
        assert bound.timing["copy_gbps"] > 100 and 0 < bound.timing["percent_of_bound"]
        assert bound.traces.tobytes() == shot.traces.tobytes()


def test_the_core_refuses_positions_and_wavelets_of_the_wrong_shape():
    # The Python half checks these first; the C++ half must not read past an array it is handed.
    v = np.full((20, 30), 2000, np.float32)
    settings = fdstencil._core.RunSettings()
    settings.dt, settings.nt, settings.backend = 0.001, 5, "cpu"
    run = lambda src, w, rec: fdstencil._core.run_wave_many(v, 10.0, settings, [src], [w], [rec], [-1])  # noqa: E731
    ok_src, ok_w, ok_rec = np.full((1, 2), 50.0), np.zeros((1, 8)), np.full((2, 2), 40.0)
    assert len(run(ok_src, ok_w, ok_rec)) == 1
    with pytest.raises(ValueError, match=r"sources: expected positions of shape \(n, 2\)"):
        run(np.full((1, 1), 50.0), ok_w, ok_rec)
    with pytest.raises(ValueError, match=r"wavelets: expected one row per source \(1, samples\)"):
        run(ok_src, np.zeros((2, 8)), ok_rec)
    with pytest.raises(ValueError, match=r"receivers: expected positions of shape \(n, 2\)"):
        run(ok_src, ok_w, np.full((2, 3), 40.0))


def test_a_runs_warnings_come_back_and_are_issued():
    v, dt, nt, sources, receivers = shot_inputs()
    # 60 Hz on 1800 m/s at 10 m: a couple of points per wavelength, under-sampled at any order.
    loud = fdstencil.wave.ricker(60, dt, nt)
    with pytest.warns(fdstencil.wave.FdstencilWarning, match="under-sampled") as said:
        shot = fdstencil.wave.forward(v, 10.0, nt, sources, loud, receivers, dt=dt, backend="cpu")
    assert any("under-sampled" in w for w in shot.warnings)
    with pytest.warns(fdstencil.wave.FdstencilWarning, match="under-sampled") as said_many:
        fdstencil.wave.forward_many(v, 10.0, nt, [{"sources": sources, "wavelets": loud}], dt=dt, backend="cpu")
    assert said[0].filename == __file__ and said_many[0].filename == __file__  # the caller's line
    quiet = fdstencil.wave.forward(v, 10.0, nt, sources, fdstencil.wave.ricker(5, dt, nt), receivers, dt=dt,
                                   backend="cpu")
    assert quiet.warnings == [] and quiet.timing["launch_from"] is None


def test_kernel_parameters_are_the_gpus_and_checked_as_the_tools():
    v, dt, nt, sources, receivers = shot_inputs()
    w = fdstencil.wave.ricker(15, dt, nt)
    with pytest.raises(ValueError, match="kernel parameters apply to the cuda backend only"):
        fdstencil.wave.forward(v, 10.0, nt, sources, w, receivers, dt=dt, backend="cpu",
                               kernel_params={"block": "64x1"})
    with pytest.raises(TypeError, match="kernel_params"):
        fdstencil.wave.forward(v, 10.0, nt, sources, w, receivers, dt=dt, kernel_params=["64x1"])
    if fdstencil._core.gpu_count() == 0:  # "auto" without a GPU: noted, not refused, as the tool's
        with pytest.warns(fdstencil.wave.FdstencilWarning, match="kernel parameters were ignored"):
            fdstencil.wave.forward(v, 10.0, nt, sources, w, receivers, dt=dt, kernel_params='{"block": "64x1"}')
    else:
        with pytest.raises(ValueError, match="kernel parameter"):
            fdstencil.wave.forward(v, 10.0, nt, sources, w, receivers, dt=dt, kernel_params={"block": "7x1"})
