"""fdstencil.wave's linearised solvers (python/fdstencil/imaging.py) on a small 2D layered model:
the Born pair's dot-product test, Born modelling and the gradient against central differences of
the modelling, the refusals, Ctrl-C inside a call, and with PyTorch the autograd function (its
gradient the C++ gradient's, and torch.autograd.gradcheck in double)."""
import textwrap

import numpy as np
import pytest

import fdstencil.wave as fw
from interrupted import interrupt

H, NT = 10.0, 90
try:
    import torch
    HAVE_TORCH = True
except ImportError:
    HAVE_TORCH = False


def model():
    v = np.full((30, 40), 1500, np.float32)
    v[14:] = 1750
    v[8:12, 22:27] = 1625  # a body: reflections beside the direct wave
    return v


def shot(v, **extra):
    dt = 0.5 * fw.max_stable_dt(2, 4, H, 1750.0)
    return dict(spacing=H, nt=NT, sources=[[62.3, 151.7]], wavelets=fw.ricker(30.0, dt, NT)[:NT],
                receivers=[[25.1, x] for x in (31.0, 118.4, 207.9, 333.3)], dt=dt, cpml=5,
                free_surface=True) | extra


def perturbation(v, seed):
    """Random, zero at the largest velocity (so the CPML's profile stays) and near the source (whose
    taps hold their m rounded to float), in steps of 1/16 m/s: v +- eps dv is exact in float32."""
    dv = np.random.default_rng(seed).integers(-8, 9, v.shape).astype(np.float64) / 16
    dv[v >= 1750] = 0
    dv[2:11, 10:20] = 0
    return dv


def test_the_born_pair_meets_in_the_dot_product():
    v = model()
    s = shot(v)
    dv, dd = perturbation(v, 1), np.random.default_rng(2).standard_normal((4, NT))
    lhs, rhs = np.vdot(fw.born(v, dv, **s), dd), np.vdot(dv, fw.born_adjoint(v, dd, **s))
    assert lhs != 0 and abs(lhs - rhs) <= 1e-12 * abs(lhs)


def test_born_and_the_gradient_agree_with_central_differences():
    v = model()
    s = shot(v)
    dv = perturbation(v, 3)
    eps = 4.0  # dv's steps of 1/16 times 4: every v +- eps dv exact in float32
    plus, minus = fw.modelled(v + eps * dv, **s), fw.modelled(v - eps * dv, **s)
    born = fw.born(v, dv, **s)
    assert np.linalg.norm((plus - minus) / (2 * eps) - born) <= 1e-4 * np.linalg.norm(born)
    observed = fw.modelled(model() * np.float32(1.02), **s)
    misfit, g, traces = fw.gradient(v, observed, **s)
    assert misfit == pytest.approx(0.5 * np.sum((traces - observed) ** 2), rel=1e-12)
    j = [0.5 * np.sum((fw.modelled(v + sign * eps * dv, **s) - observed) ** 2) for sign in (1, -1)]
    assert (j[0] - j[1]) / (2 * eps) == pytest.approx(np.vdot(g, dv), rel=1e-4)


def test_bad_input_is_refused_by_name():
    v = model()
    s = shot(v)
    with pytest.raises(ValueError, match="dt: give the time step"):
        fw.born(v, np.zeros(v.shape), **(s | {"dt": None}))
    with pytest.raises(ValueError, match=r"dd: expected shape \(4, 90\), \(4 receivers, 90 steps\), got \(359,\)"):
        fw.born_adjoint(v, np.zeros(359), **s)
    with pytest.raises(ValueError, match=r"dv: expected shape \(30, 40\), the model's, got \(2, 2\)"):
        fw.born(v, np.zeros((2, 2)), **s)
    # The right number of values in the wrong shape: a transposed record, a flattened model.
    for solver, name in ((fw.born_adjoint, "dd"), (fw.rtm, "recorded"), (fw.gradient, "observed")):
        with pytest.raises(ValueError, match=rf"{name}: expected shape \(4, 90\).*got \(90, 4\)"):
            solver(v, np.zeros((90, 4)), **s)
    with pytest.raises(ValueError, match=r"dv: expected shape \(30, 40\), the model's, got \(1200,\)"):
        fw.born(v, np.zeros(v.size), **s)


def test_a_surveys_gradient_and_image_are_the_sums_of_its_shots():
    v = model()
    s = shot(v)
    common = {k: s[k] for k in ("spacing", "nt", "dt", "cpml", "free_surface")}
    survey = []
    for x, scale in ((62.3, 1.02), (201.1, 0.97), (333.7, 1.05)):
        one = dict(s, sources=[[62.3, x]])
        survey.append({"sources": one["sources"], "wavelets": one["wavelets"], "receivers": one["receivers"],
                       "observed": fw.modelled(v * np.float32(scale), **one)})
    alone = [fw.gradient(v, t["observed"], **dict(s, sources=t["sources"])) for t in survey]
    misfit, g, traces = fw.gradient_many(v, shots=survey, **common)
    assert misfit == alone[0][0] + alone[1][0] + alone[2][0]
    assert g.tobytes() == (alone[0][1] + alone[1][1] + alone[2][1]).tobytes()
    assert all(t.tobytes() == a[2].tobytes() for t, a in zip(traces, alone))
    recorded = [dict(t, recorded=t["observed"] - fw.modelled(v, **dict(s, sources=t["sources"]))) for t in survey]
    images = [fw.rtm(v, r["recorded"], **dict(s, sources=r["sources"])) for r in recorded]
    assert fw.rtm_many(v, shots=recorded, **common).tobytes() == (images[0] + images[1] + images[2]).tobytes()
    with pytest.raises(ValueError, match="shot 1: a shot is a dict with the keys sources, wavelets, receivers and "
                                         "observed"):
        fw.gradient_many(v, shots=[survey[0], {"sources": survey[1]["sources"]}], **common)
    with pytest.raises(ValueError, match=r"shot 2: observed: expected shape \(4, 90\)"):
        fw.gradient_many(v, shots=survey[:2] + [dict(survey[2], observed=survey[2]["observed"].T)], **common)
    with pytest.raises(ValueError, match="shots: give at least one shot"):
        fw.gradient_many(v, shots=[], **common)


def test_a_surveys_born_records_are_each_shots():
    v = model()
    s = shot(v)
    common = {k: s[k] for k in ("spacing", "nt", "dt", "cpml", "free_surface")}
    survey = [{k: t[k] for k in ("sources", "wavelets", "receivers")} for t in small_survey(v, s)]
    dv = perturbation(v, 4)
    records = fw.born_many(v, dv, shots=survey, **common)
    assert len(records) == 3 and all(r.shape == (4, NT) and np.any(r) for r in records)
    for r, t in zip(records, survey):
        assert r.tobytes() == fw.born(v, dv, **dict(s, sources=t["sources"])).tobytes()
    with pytest.raises(ValueError, match=r"dv: expected shape \(30, 40\), the model's"):
        fw.born_many(v, dv.T, shots=survey, **common)
    with pytest.raises(ValueError, match="shot 1: a shot is a dict with the keys sources, wavelets, receivers"):
        fw.born_many(v, dv, shots=[survey[0], {"sources": survey[1]["sources"]}], **common)
    with pytest.raises(ValueError, match="devices: double precision runs on the cpu"):
        fw.born_many(v, dv, shots=survey, **common, devices=[0])


def small_survey(v, s, n=3):
    """n shots of s's geometry, their sources along the model's top, each with its observed record."""
    out = []
    for i in range(n):
        one = dict(s, sources=[[62.3, 62.3 + 271.4 * i / max(1, n - 1)]])
        out.append({"sources": one["sources"], "wavelets": one["wavelets"], "receivers": one["receivers"],
                    "observed": fw.modelled(v * np.float32(1.0 + 0.02 * (i % 3 - 1)), **one)})
    return out


def test_a_gradients_progress_rises_to_every_step_of_both_sweeps():
    v = model()
    s = shot(v)
    observed = fw.modelled(v * np.float32(1.02), **s)
    seen = []
    want = fw.gradient(v, observed, **s)
    got = fw.gradient(v, observed, **s, progress=lambda done, total: seen.append((done, total)))
    assert got[1].tobytes() == want[1].tobytes()
    assert seen[-1] == (2 * NT, 2 * NT) and all(t == 2 * NT for _, t in seen)
    assert all(b[0] > a[0] for a, b in zip(seen, seen[1:]))
    # Under a budget the total counts the steps the checkpoints run again, known before they run.
    seen.clear()
    kept = fw.gradient(v, observed, **s, memory_budget=350000, info=True,
                       progress=lambda done, total: seen.append((done, total)))[3]
    assert kept["checkpoints"] > 0 and seen[-1][1] == 2 * NT + kept["recomputed_steps"] > 2 * NT
    with pytest.raises(ValueError, match="progress: a callable"):
        fw.rtm(v, observed, **s, progress=3)

    def stop(done, total):
        if done > 10:
            raise RuntimeError("enough")
    with pytest.raises(RuntimeError, match="enough"):  # what the callable raises ends the call
        fw.born_adjoint(v, observed, **s, progress=stop)


def test_a_surveys_progress_counts_the_steps_of_every_shot():
    v = model()
    s = shot(v)
    common = {k: s[k] for k in ("spacing", "nt", "dt", "cpml", "free_surface")}
    survey = small_survey(v, s)
    seen = []
    got = fw.gradient_many(v, shots=survey, **common, progress=lambda done, total: seen.append((done, total)))
    assert got[1].tobytes() == fw.gradient_many(v, shots=survey, **common)[1].tobytes()
    assert seen[-1] == (3 * 2 * NT, 3 * 2 * NT) and all(t == 3 * 2 * NT for _, t in seen)
    assert all(b[0] > a[0] for a, b in zip(seen, seen[1:]))
    seen.clear()
    plain = [{k: t[k] for k in ("sources", "wavelets", "receivers")} for t in survey]
    fw.born_many(v, perturbation(v, 4), shots=plain, **common, progress=lambda done, total: seen.append((done, total)))
    assert seen[-1] == (3 * NT, 3 * NT)
    with pytest.raises(ValueError, match="progress: a callable"):
        fw.rtm_many(v, shots=[dict(t, recorded=t["observed"]) for t in survey], **common, progress="bar")

    def stop(done, total):
        if done > NT:  # inside the first shot's backward sweep
            raise RuntimeError("enough")
    with pytest.raises(RuntimeError, match="enough"):  # what the callable raises ends the call
        fw.gradient_many(v, shots=survey, **common, progress=stop)


def test_a_surveys_devices_and_shots_are_checked_by_name():
    v = model()
    s = shot(v)
    common = {k: s[k] for k in ("spacing", "nt", "dt", "cpml", "free_surface")}
    survey = small_survey(v, s)
    with pytest.raises(ValueError, match="devices: double precision runs on the cpu"):
        fw.gradient_many(v, shots=survey, **common, devices=[0])
    with pytest.raises(ValueError, match="the cpu backend runs on the host"):
        fw.rtm_many(v, shots=[dict(t, recorded=t["observed"]) for t in survey], **common, double=False,
                    backend="cpu", devices=[0])
    with pytest.raises(ValueError, match="backend: expected 'auto', 'cuda' or 'cpu', got 'gpu'"):
        fw.gradient_many(v, shots=survey, **common, backend="gpu")
    outside = dict(survey[2], receivers=[[25.0, 31.0], [25.0, 9000.0]], observed=np.zeros((2, NT)))
    with pytest.raises(ValueError, match=r"shot 2: .*receiver"):  # the solver's own check, named by its shot
        fw.gradient_many(v, shots=survey[:2] + [outside], **common)
    with pytest.raises(ValueError, match=r"^(?!shot 0).*receiver"):  # one shot: named as the single calls
        fw.gradient_many(v, shots=[outside], **common)
    misfit, g, traces, kept = fw.gradient_many(v, shots=survey, **common, backend="cpu", info=True)
    assert [k["backend"] for k in kept] == ["cpu"] * 3 and [k["device"] for k in kept] == [None] * 3
    assert misfit > 0 and np.all(np.isfinite(g)) and np.any(g)


@pytest.mark.skipif(not HAVE_TORCH, reason="PyTorch is not installed for this Python")
def test_results_come_back_as_the_models_kind_on_its_device():
    v = model()
    s = shot(v)
    observed = fw.modelled(v * np.float32(1.02), **s)
    want = fw.gradient(v, observed, **s)
    for device in ["cpu"] + (["cuda"] if torch.cuda.is_available() and fw._core.gpu_count() > 0 else []):
        vt = torch.from_numpy(v).to(device)
        misfit, g, traces = fw.gradient(vt, torch.from_numpy(observed).to(device), **s)
        for got, wanted in ((g, want[1]), (traces, want[2]), (fw.modelled(vt, **s), want[2])):
            assert isinstance(got, torch.Tensor) and got.device == vt.device and got.dtype == torch.float64, device
            assert got.cpu().numpy().tobytes() == wanted.tobytes(), device
        assert misfit == want[0]


@pytest.mark.skipif(not HAVE_TORCH, reason="PyTorch is not installed for this Python")
def test_loss_backward_gives_the_gradient():
    v = model()
    s = shot(v)
    observed = fw.modelled(v * np.float32(1.02), **s)
    vt = torch.tensor(v, dtype=torch.float64, requires_grad=True)
    loss = 0.5 * ((fw.forward_torch(vt, **s) - torch.from_numpy(observed)) ** 2).sum()
    loss.backward()
    misfit, g, _ = fw.gradient(v, observed, **s)
    assert loss.item() == pytest.approx(misfit, rel=1e-12)
    assert np.allclose(vt.grad.numpy(), g, rtol=1e-10, atol=1e-10 * np.abs(g).max())


@pytest.mark.skipif(not HAVE_TORCH, reason="PyTorch is not installed for this Python")
def test_a_batch_of_shots_through_autograd_gives_the_surveys_gradient():
    v = model()
    s = shot(v)
    common = {k: s[k] for k in ("spacing", "nt", "dt", "cpml", "free_surface")}
    survey = small_survey(v, s)
    plain = [{k: t[k] for k in ("sources", "wavelets", "receivers")} for t in survey]
    vt = torch.tensor(v, dtype=torch.float64, requires_grad=True)
    out = fw.forward_torch_many(vt, shots=plain, **common)
    assert len(out) == 3
    for o, t in zip(out, survey):  # each shot's traces: the single call's bits
        assert o.shape == (4, NT) and o.dtype == torch.float64
        assert o.detach().numpy().tobytes() == fw.modelled(v, **dict(s, sources=t["sources"])).tobytes()
    loss = sum(0.5 * ((o - torch.from_numpy(t["observed"])) ** 2).sum() for o, t in zip(out, survey))
    loss.backward()
    misfit, g, _ = fw.gradient_many(v, shots=survey, **common)
    assert loss.item() == pytest.approx(misfit, rel=1e-12)
    assert np.allclose(vt.grad.numpy(), g, rtol=1e-10, atol=1e-10 * np.abs(g).max())
    # A shot the loss leaves out adds nothing to the gradient.
    vt.grad = None
    out = fw.forward_torch_many(vt, shots=plain, **common)
    (0.5 * ((out[1] - torch.from_numpy(survey[1]["observed"])) ** 2).sum()).backward()
    g1 = fw.gradient(v, survey[1]["observed"], **dict(s, sources=survey[1]["sources"]))[1]
    assert np.allclose(vt.grad.numpy(), g1, rtol=1e-10, atol=1e-10 * np.abs(g1).max())
    # A shot without receivers gives (0, nt), and no gradient.
    vt.grad = None
    out = fw.forward_torch_many(vt, shots=[dict(plain[0], receivers=np.zeros((0, 2))), plain[1]], **common)
    assert out[0].shape == (0, NT)
    (out[0].sum() + 0.5 * ((out[1] - torch.from_numpy(survey[1]["observed"])) ** 2).sum()).backward()
    assert np.allclose(vt.grad.numpy(), g1, rtol=1e-10, atol=1e-10 * np.abs(g1).max())
    with pytest.raises(ValueError, match="shot 1: a shot is a dict with the keys sources, wavelets and receivers"):
        fw.forward_torch_many(vt, shots=[plain[0], {"sources": plain[1]["sources"]}], **common)
    with pytest.raises(ValueError, match="^dt: give the time step"):  # one shot: named as the single calls
        fw.forward_torch(vt, **(s | {"dt": None}))


@pytest.mark.skipif(not HAVE_TORCH, reason="PyTorch is not installed for this Python")
def test_gradcheck_in_double():
    v = model()
    s = shot(v, nt=40, wavelets=fw.ricker(30.0, shot(v)["dt"], 40)[:40])
    base = torch.tensor(v, dtype=torch.float64)
    # Fifteen points above the deeper layer (which holds the largest velocity: it, and so the CPML,
    # stay fixed) and away from the source's taps.
    free = torch.zeros(v.shape, dtype=torch.float64)
    free[11:14, 30:33] = 1
    free[4:6, 3:6] = 1
    x = torch.zeros(int(free.sum()), dtype=torch.float64, requires_grad=True)

    def traces(x):
        dv = torch.zeros(v.shape, dtype=torch.float64).masked_scatter(free.bool(), x)
        return fw.forward_torch(base + dv, **s)

    # eps = 1/16 m/s: 1500 + x +- eps stays exact in float32, the model's precision
    assert torch.autograd.gradcheck(traces, (x,), eps=1 / 16, atol=1e-7, rtol=1e-4)


def test_the_gradient_of_a_point_scatterer_peaks_there():
    """A homogeneous start, the truth 15 % faster at one point, four sources around it and a ring
    of receivers: the summed gradient is largest, and negative (faster lowers the misfit), at the
    scatterer."""
    n, h = 41, 10.0
    v = np.full((n, n), 2000, np.float32)
    truth = v.copy()
    truth[20, 26] = 2300
    dt, nt = 0.5 * fw.max_stable_dt(2, 4, h, 2300.0), 300
    ring = [(3, i) for i in range(3, 38, 3)] + [(37, i) for i in range(3, 38, 3)] + \
        [(i, 3) for i in range(6, 36, 3)] + [(i, 37) for i in range(6, 36, 3)]
    rec = [[z * h + 0.3, x * h + 0.3] for z, x in ring]
    total = np.zeros((n, n))
    for src in ([52.0, 201.0], [353.0, 197.0], [204.0, 48.0], [196.0, 351.0]):
        s = dict(spacing=h, nt=nt, sources=[src], wavelets=fw.ricker(15.0, dt, nt)[:nt], receivers=rec, dt=dt,
                 cpml=10, double=False)
        total += fw.gradient(v, fw.modelled(truth, **s), **s)[1]
    peak = np.unravel_index(np.argmax(np.abs(total)), total.shape)
    assert peak == (20, 26) and total[peak] < 0


def test_rtm_by_either_condition_and_its_refusals():
    v = model()
    s = shot(v)
    dd = np.random.default_rng(4).standard_normal((4, NT))
    adjoint = fw.rtm(v, dd, **s)
    assert adjoint.shape == v.shape
    # Without filters the adjoint image is J^T dd over m: born_adjoint's before its dm/dv = 2 v dt^2,
    # away from the edges, where born_adjoint also sums the layers that take the edge's velocity.
    g = fw.born_adjoint(v, dd, **s)
    inner = (slice(0, -1), slice(1, -1))  # the free surface's top row has no layer above it
    dmdv = 2 * v.astype(np.float64) * s["dt"] ** 2
    assert np.allclose((adjoint * dmdv)[inner], g[inner], rtol=1e-12, atol=1e-12 * np.abs(g).max())
    cross = fw.rtm(v, dd, **s, condition="crosscorrelation", illumination=True, laplacian=True)
    assert cross.shape == v.shape and np.all(np.isfinite(cross)) and np.any(cross != 0)
    with pytest.raises(ValueError, match="condition: expected 'adjoint' or 'crosscorrelation'"):
        fw.rtm(v, dd, **s, condition="deconvolution")


def test_a_memory_budget_gives_the_bits_of_every_field_kept():
    """Under a budget of an eighth of the kept fields the backward pass keeps binomial checkpoints
    and runs steps again, and the gradient is the same bits; a budget below one checkpoint is a
    MemoryError before any work."""
    v = model()
    s = shot(v, backend="cpu")
    observed = fw.modelled(v * np.float32(1.02), **s)
    misfit, g, traces, kept = fw.gradient(v, observed, **s, info=True)
    assert kept["backend"] == "cpu" and kept["checkpoints"] == 0 and kept["stored_bytes"] > 0
    budget = kept["stored_bytes"] // 8
    misfit_b, g_b, traces_b, kept_b = fw.gradient(v, observed, **s, memory_budget=budget, info=True)
    assert kept_b["checkpoints"] > 0 and kept_b["recomputed_steps"] > 0 and kept_b["stored_bytes"] <= budget
    assert misfit_b == misfit and np.array_equal(g_b, g) and np.array_equal(traces_b, traces)
    with pytest.raises(MemoryError, match="holds not even one checkpoint"):
        fw.gradient(v, observed, **s, memory_budget=1000)
    with pytest.raises(ValueError, match="no GPU|the cuda backend runs in float"):  # as forward refuses them
        fw.born(v, np.zeros(v.shape), **(s | {"backend": "cuda", "double": True}))


def test_boundary_saving_gives_the_gradient_of_every_field_kept_off_the_outer_faces():
    """boundary_saving=True keeps the strips around the layers and steps the field back: the same
    traces and misfit, the gradient within double's round-off off the model's outer faces, a report
    that says so, and a budget below the strips a MemoryError."""
    v = model()
    s = shot(v, backend="cpu")
    observed = fw.modelled(v * np.float32(1.02), **s)
    misfit, g, traces, kept = fw.gradient(v, observed, **s, info=True)
    misfit_b, g_b, traces_b, kept_b = fw.gradient(v, observed, **s, boundary_saving=True, info=True)
    assert kept_b["boundary_saving"] and kept_b["reversed_steps"] == NT - 1 and not kept["boundary_saving"]
    assert kept_b["stored_bytes"] < kept["stored_bytes"]
    assert misfit_b == misfit and np.array_equal(traces_b, traces)
    inner = (slice(1, -1), slice(1, -1))
    assert np.abs(g_b[inner] - g[inner]).max() <= 1e-10 * np.abs(g[inner]).max()
    with pytest.raises(MemoryError, match="does not hold the boundary strips"):
        fw.gradient(v, observed, **s, boundary_saving=True, memory_budget=1000)


@pytest.mark.skipif(fw._core.gpu_count() == 0, reason="no GPU")
def test_the_gpu_gradient_and_image_match_the_cpu():
    v = model()
    s = shot(v, double=False)
    observed = fw.modelled(v * np.float32(1.02), **s, backend="cpu")
    on = {b: fw.gradient(v, observed, **s, backend=b, info=True) for b in ("cuda", "cpu")}
    assert on["cuda"][3]["backend"] == "cuda"
    for i in (1, 2):  # the gradient and the traces
        assert np.linalg.norm(on["cuda"][i] - on["cpu"][i]) <= 1e-4 * np.linalg.norm(on["cpu"][i])
    images = [fw.rtm(v, observed, **s, backend=b, condition="crosscorrelation") for b in ("cuda", "cpu")]
    assert np.linalg.norm(images[0] - images[1]) <= 1e-4 * np.linalg.norm(images[1])


@pytest.mark.skipif(fw._core.gpu_count() == 0, reason="no GPU")
def test_a_survey_on_the_gpus_has_the_bits_of_its_shots_summed_in_order():
    # Shots of unequal cost (receivers 2-8), so that on several GPUs they may end out of order: the
    # sums are still those of one shot after another, bit for bit, on whichever GPU ran each (a
    # worker may take every shot before another starts, so the spread itself is not asserted).
    v = model()
    s = shot(v, double=False)
    common = {k: s[k] for k in ("spacing", "nt", "dt", "cpml", "free_surface", "double")}
    survey = small_survey(v, s, n=7)
    for i, t in enumerate(survey):
        t["receivers"] = [[25.1, 31.0 + 33.0 * j] for j in range(2 + i)]
        t["observed"] = fw.modelled(v * np.float32(1.02), **dict(s, sources=t["sources"], receivers=t["receivers"]))
    gpus = fw._core.gpu_count()
    alone = [fw.gradient(v, t["observed"], **dict(s, sources=t["sources"], receivers=t["receivers"]), info=True)
             for t in survey]
    seen = []
    misfit, g, traces, kept = fw.gradient_many(v, shots=survey, **common, info=True,
                                               progress=lambda done, total: seen.append((done, total)))
    assert {k["device"] for k in kept} <= set(range(gpus)) and all(k["backend"] == "cuda" for k in kept)
    # The workers' reports, one call at a time: their sums rise to every step of the seven shots.
    assert seen[-1] == (7 * 2 * NT, 7 * 2 * NT) and all(t == 7 * 2 * NT for _, t in seen)
    assert all(b[0] > a[0] for a, b in zip(seen, seen[1:]))
    assert misfit == sum(a[0] for a in alone)
    summed = alone[0][1].copy()
    for a in alone[1:]:
        summed += a[1]
    assert g.tobytes() == summed.tobytes()
    assert all(t.tobytes() == a[2].tobytes() for t, a in zip(traces, alone))
    one = fw.gradient_many(v, shots=survey, **common, devices=[gpus - 1], info=True)
    assert {k["device"] for k in one[3]} == {gpus - 1} and one[1].tobytes() == g.tobytes()
    image = fw.rtm_many(v, shots=[dict(t, recorded=t["observed"]) for t in survey], **common)
    want = fw.rtm(v, survey[0]["observed"], **dict(s, sources=survey[0]["sources"],
                                                    receivers=survey[0]["receivers"]))
    for t in survey[1:]:
        want += fw.rtm(v, t["observed"], **dict(s, sources=t["sources"], receivers=t["receivers"]))
    assert image.tobytes() == want.tobytes()
    dv = perturbation(v, 5)
    records = fw.born_many(v, dv, shots=survey, **common)
    assert all(r.tobytes() == fw.born(v, dv, **dict(s, sources=t["sources"], receivers=t["receivers"])).tobytes()
               for r, t in zip(records, survey))


@pytest.mark.skipif(not HAVE_TORCH or fw._core.gpu_count() < 2, reason="needs PyTorch and two GPUs")
def test_a_batch_of_shots_on_the_gpus_through_autograd_has_the_bits_of_one_gpu():
    v = model()
    s = shot(v, double=False)
    common = {k: s[k] for k in ("spacing", "nt", "dt", "cpml", "free_surface", "double")}
    survey = small_survey(v, s, n=5)
    plain = [{k: t[k] for k in ("sources", "wavelets", "receivers")} for t in survey]
    gpus = fw._core.gpu_count()
    grads = []
    for devices in (None, [gpus - 1]):  # every GPU, then the last alone
        vt = torch.tensor(v, device="cuda", requires_grad=True)
        out = fw.forward_torch_many(vt, shots=plain, devices=devices, **common)
        assert all(o.device == vt.device and o.dtype == torch.float32 for o in out)
        sum(0.5 * ((o - torch.from_numpy(t["observed"]).float().cuda()) ** 2).sum()
            for o, t in zip(out, survey)).backward()
        grads.append(vt.grad.cpu().numpy())
    assert np.any(grads[0]) and grads[0].tobytes() == grads[1].tobytes()


@pytest.mark.parametrize("call", ["gradient", "gradient_many"])
@pytest.mark.parametrize("backend", ["cpu", "auto"])
def test_ctrl_c_inside_a_gradient_raises_keyboard_interrupt_within_a_second(backend, call):
    if backend == "auto" and fw._core.gpu_count() == 0:
        pytest.skip("fdstencil has no GPU here")
    # 10^6 steps: minutes of work, the forward run kept by checkpoints (on a GPU their slots, up to
    # 4096 states of the grid, are allocated before the first step). After the interrupt a second
    # call runs in the same process, and on a GPU the memory fdstencil held is back to what it held
    # before (its own count: the GPU's free memory moves with the tests running beside this one).
    code = textwrap.dedent(f"""
        import numpy as np, sys, fdstencil.wave as fw
        v = np.full((200, 200), 2000, np.float32)
        nt, dt = 10**6, 1e-3
        shot = dict(spacing=10.0, sources=[[1000.0, 1000.0]], receivers=[[1000.0, 1050.0]], dt=dt, double=False,
                    backend="{backend}")
        fw.gradient(v, np.ones((1, 20)), nt=20, wavelets=np.ones(10), **shot)  # the process's own setup first
        small = dict(sources=shot["sources"], receivers=shot["receivers"], wavelets=np.ones(10),
                     observed=np.ones((1, 20)))
        fw.gradient_many(v, shot["spacing"], 20, [small, small], dt, double=False, backend="{backend}")  # every GPU's too
        before = fw._core.device_bytes_held() if "{backend}" == "auto" else None
        print("running", flush=True)
        try:
            if "{call}" == "gradient":
                fw.gradient(v, np.zeros((1, nt)), nt=nt, wavelets=np.ones(10), **shot)
            else:  # two shots: on two GPUs or more, one worker each, this thread waiting
                one = dict(sources=shot["sources"], receivers=shot["receivers"], wavelets=np.ones(10),
                           observed=np.zeros((1, nt)))
                fw.gradient_many(v, shot["spacing"], nt, [one, one], dt, double=False, backend="{backend}")
        except KeyboardInterrupt:
            print("interrupted", flush=True)
            print("freed", "not read" if before is None else fw._core.device_bytes_held() == before,
                  flush=True)
            g = fw.gradient(v, np.ones((1, 20)), nt=20, wavelets=np.ones(10), **shot)[1]
            print("again", g.shape == v.shape and bool(np.all(np.isfinite(g))) and bool(np.any(g)), flush=True)
            sys.exit(3)
    """)
    took, after = interrupt(code, lines_after=2)
    assert after == ["freed " + ("True" if backend == "auto" else "not read"), "again True"]
    assert took < 1.0, f"KeyboardInterrupt {took:.2f} s after SIGINT"
