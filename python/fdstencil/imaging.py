"""Born modelling, its exact adjoint, RTM images and the FWI gradient from Python (issue 37;
docs/imaging.md), and a PyTorch autograd function over the forward modelling, so that an FWI
loop's `loss.backward()` gives the velocity's gradient.

All use fdstencil's own discretisation (fdstencil.wave.forward's: order 2R, leapfrog, CPML, free
surface, the same taps), in double by default (`double=False`: float). `backend="auto"` takes the
GPU for every one of them in float when one is present (as forward does), else the cpu. The step
`dt` must be given: it is held fixed, as is the CPML's profile (built from the model's largest
velocity), so that the linearisation belongs to one operator. The model and vectors may be NumPy
arrays, PyTorch tensors or CuPy arrays; those on a GPU are copied to the host once per call (after
the framework's current stream's work), where the solvers build their medium, taps and dm/dv.
Results are float64 arrays of the model's kind on its device (NumPy for a NumPy model; for an
array known only by __cuda_array_interface__, CuPy arrays, else PyTorch tensors, as forward's).

The backward pass keeps the forward field of every step where it fits `memory_budget` bytes (0:
the memory free, the GPU's or the host's), else binomial checkpoints of the whole state within it,
running the steps between them again (docs/imaging.md). `boundary_saving=True` keeps instead only the
strips of R points around the points clear of the absorbing layers and steps the field there back
in time: far less memory, and the layers' points beyond the strips left out of the sums, which
changes the gradient (and born_adjoint, which is then not Born's exact transpose) on the model's
outer faces beside a layer wider than R."""
import numpy as np

from . import _core
from .wave import _devices, _host, _like, _shot_arrays, _velocity


# Each solver's vector, by the name its message gives it.
_VECTOR_NAME = {"born": "dv", "born_adjoint": "dd", "rtm": "recorded", "gradient": "observed"}


def _vector(op, vec, model_shape, nrec, nt):
    """op's vector as float64 in C order, checked by its shape, not only its size: dv the model's
    shape, traces (receivers, steps), so that a transposed record is refused, not read as another."""
    name = _VECTOR_NAME[op]
    x = np.asarray(_host(vec, name))
    want, what = ((tuple(model_shape), "the model's") if op == "born"
                  else ((nrec, nt), f"({nrec} receivers, {nt} steps)"))
    if x.shape != want:
        raise ValueError(f"{name}: expected shape {want}, {what}, got {x.shape}")
    return np.ascontiguousarray(x, dtype=np.float64).ravel()


def _call(op, velocity, vec, spacing, nt, sources, wavelets, receivers, dt, radius, cpml, free_surface, double,
          backend="auto", memory_budget=0, boundary_saving=False, progress=None, **rtm):
    v = _velocity(velocity)
    if dt is None or not np.isfinite(dt) or dt <= 0:
        raise ValueError(f"dt: give the time step in seconds (the linearisation holds it fixed), got {dt!r}")
    src, w, rec = _shot_arrays({"sources": sources, "wavelets": wavelets, "receivers": receivers}, v.ndim, "")
    s = _core.RunSettings()
    s.dt, s.nt, s.radius, s.cpml, s.free_surface, s.backend = float(dt), int(nt), int(radius), int(cpml), \
        bool(free_surface), str(backend)
    x = np.zeros(0) if vec is None else _vector(op, vec, v.shape, rec.shape[0], int(nt))
    if progress is not None and not callable(progress):
        raise ValueError(f"progress: a callable progress(done, total), or None; got {progress!r}")
    out, misfit, traces, kept = _core.linearised(op, v, float(spacing), s, bool(double), src, w, rec, x,
                                                 memory_budget=int(memory_budget),
                                                 boundary_saving=bool(boundary_saving), progress=progress, **rtm)
    back = _like(velocity)  # the model's kind of array, on its device
    return back(out), misfit, back(traces), kept


def modelled(velocity, spacing, nt, sources, wavelets, receivers, dt, radius=4, cpml=10, free_surface=False,
             double=True, backend="auto"):
    """The traces (nrec, nt) of the shot, in the precision the linearised operators use."""
    return _call("modelled", velocity, None, spacing, nt, sources, wavelets, receivers, dt, radius, cpml,
                 free_surface, double, backend)[0]


def born(velocity, dv, spacing, nt, sources, wavelets, receivers, dt, radius=4, cpml=10, free_surface=False,
         double=True, backend="auto"):
    """J dv: the traces' first-order change (nrec, nt) for a velocity change dv (the model's shape)."""
    return _call("born", velocity, dv, spacing, nt, sources, wavelets, receivers, dt, radius, cpml, free_surface,
                 double, backend)[0]


def born_adjoint(velocity, dd, spacing, nt, sources, wavelets, receivers, dt, radius=4, cpml=10,
                 free_surface=False, double=True, backend="auto", memory_budget=0, boundary_saving=False,
                 progress=None):
    """J^T dd for traces dd (nrec, nt): the model-shaped result with <J dv, dd> = <dv, J^T dd>.
    progress: as gradient's."""
    return _call("born_adjoint", velocity, dd, spacing, nt, sources, wavelets, receivers, dt, radius, cpml,
                 free_surface, double, backend, memory_budget, boundary_saving, progress)[0]


def rtm(velocity, recorded, spacing, nt, sources, wavelets, receivers, dt, radius=4, cpml=10, free_surface=False,
        double=True, condition="adjoint", illumination=False, laplacian=False, backend="auto", memory_budget=0,
        boundary_saving=False, info=False, progress=None):
    """One shot's reverse-time migration image over the model's points: condition "adjoint" (J^T d
    over m) or "crosscorrelation" (the zero-lag sum of u ubar), optionally divided by the source's
    illumination and filtered by -Laplacian. Images of several shots add into the stack. With
    info=True, (image, storage): storage says how the forward run was kept (backend, stored_bytes,
    checkpoints, recomputed_steps, boundary_saving, reversed_steps, forward_s, backward_s).
    progress: as gradient's."""
    out = _call("rtm", velocity, recorded, spacing, nt, sources, wavelets, receivers, dt, radius, cpml,
                free_surface, double, backend, memory_budget, boundary_saving, progress, condition=str(condition),
                illumination=bool(illumination), laplacian=bool(laplacian))
    return (out[0], out[3]) if info else out[0]


def gradient(velocity, observed, spacing, nt, sources, wavelets, receivers, dt, radius=4, cpml=10,
             free_surface=False, double=True, backend="auto", memory_budget=0, boundary_saving=False, info=False,
             progress=None):
    """(misfit, gradient, traces): misfit = 1/2 ||d(v) - observed||^2, its gradient with respect
    to the velocity (the model's shape) and the modelled traces d(v) (nrec, nt). With info=True a
    fourth item says how the forward run was kept (as rtm's).

    progress: None, or a callable progress(done, total) over the steps of both sweeps (the total
    counts the steps checkpoints run again, known before they run), called about 200 times from
    the calling thread, the last with done == total: a tqdm bar's update, for instance. What it
    raises ends the call, as Ctrl-C does."""
    g, misfit, traces, kept = _call("gradient", velocity, observed, spacing, nt, sources, wavelets, receivers, dt,
                                    radius, cpml, free_surface, double, backend, memory_budget, boundary_saving,
                                    progress)
    return (misfit, g, traces, kept) if info else (misfit, g, traces)


def _survey_devices(devices, backend, double, velocity, shots):
    """The GPUs a survey's shots spread over (wave._devices's rule), or [-1] where they run on the
    cpu: backend "cpu", or double precision under "auto" (the GPU steps in float)."""
    if devices is not None and backend == "auto" and double:
        raise ValueError("devices: double precision runs on the cpu; double=False runs the shots on the GPUs")
    return _devices(devices, "cpu" if backend == "auto" and double else backend, velocity, shots)


def _summed(op, velocity, shots, record, spacing, nt, dt, settings, devices, shared=None, progress=None):
    """op's result summed over `shots` (dicts with sources, wavelets, receivers and the record under
    the key `record`; None for "modelled" and "born", which sum nothing, born taking the model-shaped
    `shared` dv for every shot), in the shots' order whatever GPU ran each: the model taken to the
    host once, each shot's error named by its index; progress: None or a callable (done, total) over
    the steps of every shot. Returns (sum of the model-shaped results or
    None, sum of misfits, each shot's traces or None, each shot's storage dict or None)."""
    shots = list(shots)
    if not shots:
        raise ValueError("shots: give at least one shot")
    if dt is None or not np.isfinite(dt) or dt <= 0:
        raise ValueError(f"dt: give the time step in seconds (the linearisation holds it fixed), got {dt!r}")
    if settings["backend"] not in ("auto", "cuda", "cpu"):
        raise ValueError(f"backend: expected 'auto', 'cuda' or 'cpu', got {settings['backend']!r}")
    if progress is not None and not callable(progress):
        raise ValueError(f"progress: a callable progress(done, total), or None; got {progress!r}")
    gpus = _survey_devices(devices, settings["backend"], settings["double"], velocity, len(shots))
    v = _velocity(velocity)  # once for every shot
    dv = None if shared is None else _vector(op, shared, v.shape, 0, int(nt))  # one array, every shot's
    per_shot = ([], [], [], [])
    for i, shot in enumerate(shots):
        label = f"shot {i}: " if len(shots) > 1 else ""  # as forward_many's
        keys = {"sources", "wavelets", "receivers"} | ({record} if record else set())
        if not isinstance(shot, dict) or not keys <= shot.keys():
            raise ValueError(f"{label}a shot is a dict with the keys sources, wavelets, receivers"
                             + (f" and {record}" if record else ""))
        try:
            src, w, rec = _shot_arrays(shot, v.ndim, "")
            x = dv if dv is not None else (_vector(op, shot[record], v.shape, rec.shape[0], int(nt)) if record
                                           else np.zeros(0))
        except ValueError as e:
            raise ValueError(f"{label}{e}") from None
        for part, a in zip(per_shot, (src, w, rec, x)):
            part.append(a)
    s = _core.RunSettings()
    s.dt, s.nt, s.radius, s.cpml, s.free_surface, s.backend = float(dt), int(nt), int(settings["radius"]), \
        int(settings["cpml"]), bool(settings["free_surface"]), str(settings["backend"])
    rtm = {k: settings[k] for k in ("condition", "illumination", "laplacian") if k in settings}
    total, misfit, traces, kept = _core.linearised_many(
        op, v, float(spacing), s, bool(settings["double"]), *per_shot, gpus,
        memory_budget=int(settings["memory_budget"]), boundary_saving=bool(settings["boundary_saving"]),
        progress=progress, **rtm)
    back = _like(velocity)
    return (None if total is None else back(total)), misfit, [None if t is None else back(t) for t in traces], \
        list(kept)


def gradient_many(velocity, spacing, nt, shots, dt, radius=4, cpml=10, free_surface=False, double=True,
                  backend="auto", memory_budget=0, boundary_saving=False, devices=None, info=False, progress=None):
    """A survey's FWI gradient: shots is a list of dicts with the keys sources, wavelets, receivers
    and observed (each as gradient's). Returns (misfit, gradient, traces): the misfits and the
    gradients summed over the shots in their order, and each shot's modelled traces; with
    info=True a fourth item, each shot's storage dict (as gradient's, with the GPU it ran on).

    devices: on the GPU (float: double=False, or backend="cuda"), the GPUs to spread the shots over,
    as forward_many's: None takes every visible GPU (no more than the shots). One worker per GPU
    takes the next shot not yet taken; the sums are made in the shots' order whatever GPU ran each,
    so they have the bits of one GPU running them all. A shot that ends before those ahead of it
    waits in host memory for them; a worker starts a shot at most two a GPU past the oldest one not
    yet summed, which bounds those waiting. memory_budget is each GPU's. On the cpu the shots run one after another. A failing shot stops the others at
    their next step and its error is raised; Ctrl-C stops them all between two steps.

    progress: None, or a callable progress(done, total) over the steps of every shot's sweeps, called
    from the workers' threads one call at a time, the sums in order: a shot not yet begun counts
    the steps of the first total any shot reported (under checkpoints planned from each GPU's free
    memory the shots' totals can differ, and the total moves as they begin), and the last call has
    done == total. What it raises before a shot's last report ends the call."""
    settings = dict(radius=radius, cpml=cpml, free_surface=free_surface, double=double, backend=backend,
                    memory_budget=memory_budget, boundary_saving=boundary_saving)
    g, misfit, traces, kept = _summed("gradient", velocity, shots, "observed", spacing, nt, dt, settings, devices,
                                      progress=progress)
    return (misfit, g, traces, kept) if info else (misfit, g, traces)


def born_many(velocity, dv, spacing, nt, shots, dt, radius=4, cpml=10, free_surface=False, double=True,
              backend="auto", devices=None, progress=None):
    """A survey's Born records: J dv (nrec, nt) of each shot for one velocity change dv (the model's
    shape), as born's, in the shots' order; shots are dicts with the keys sources, wavelets and
    receivers. devices: as gradient_many's (on the GPU in float, the shots spread over the GPUs;
    each record the bits of its shot alone). progress: as gradient_many's."""
    settings = dict(radius=radius, cpml=cpml, free_surface=free_surface, double=double, backend=backend,
                    memory_budget=0, boundary_saving=False)
    return _summed("born", velocity, shots, None, spacing, nt, dt, settings, devices, shared=dv, progress=progress)[2]


def rtm_many(velocity, spacing, nt, shots, dt, radius=4, cpml=10, free_surface=False, double=True,
             condition="adjoint", illumination=False, laplacian=False, backend="auto", memory_budget=0,
             boundary_saving=False, devices=None, info=False, progress=None):
    """A survey's stacked image: shots is a list of dicts with the keys sources, wavelets, receivers
    and recorded (each as rtm's); the images are summed in the shots' order. devices: as
    gradient_many's, and so is progress. With info=True, (image, each shot's storage dict)."""
    settings = dict(radius=radius, cpml=cpml, free_surface=free_surface, double=double, backend=backend,
                    memory_budget=memory_budget, boundary_saving=boundary_saving, condition=str(condition),
                    illumination=bool(illumination), laplacian=bool(laplacian))
    image, _, _, kept = _summed("rtm", velocity, shots, "recorded", spacing, nt, dt, settings, devices,
                                progress=progress)
    return (image, kept) if info else image


_FUNCTION = None


def _forward_function():
    """The torch.autograd.Function over a list of shots, made at first use so that importing
    fdstencil imports no torch. Its forward gives each shot's traces; its backward, born_adjoint of
    each shot's traces' gradient, summed over the shots in their order."""
    global _FUNCTION
    if _FUNCTION is None:
        import torch

        class Forward(torch.autograd.Function):
            @staticmethod
            def forward(ctx, velocity, payload):
                ctx.payload = payload
                ctx.save_for_backward(velocity)
                ctx.set_materialize_grads(False)  # a shot the loss leaves out: None, and no adjoint run
                shots, (spacing, nt, dt), settings, _, devices = payload
                traces = _summed("modelled", velocity.detach().cpu().numpy(), shots, None, spacing, nt, dt,
                                 settings, devices)[2]
                traces = [np.zeros((0, nt)) if t is None else t for t in traces]  # a shot without receivers
                return tuple(torch.from_numpy(t).to(device=velocity.device, dtype=velocity.dtype) for t in traces)

            @staticmethod
            @torch.autograd.function.once_differentiable  # no second derivatives: refused, not zero
            def backward(ctx, *grads):
                (velocity,) = ctx.saved_tensors
                shots, (spacing, nt, dt), settings, budget, devices = ctx.payload
                dd = [dict(shot, dd=g.detach().cpu().double().numpy()) for shot, g in zip(shots, grads)
                      if g is not None and len(shot["receivers"])]
                if not dd:
                    return torch.zeros_like(velocity), None
                g = _summed("born_adjoint", velocity.detach().cpu().numpy(), dd, "dd", spacing, nt, dt,
                            dict(settings, **budget), devices)[0]
                return torch.from_numpy(g).to(device=velocity.device, dtype=velocity.dtype), None

        _FUNCTION = Forward
    return _FUNCTION


def forward_torch_many(velocity, spacing, nt, shots, dt, radius=4, cpml=10, free_surface=False, double=True,
                       backend="auto", memory_budget=0, boundary_saving=False, devices=None):
    """Several shots' traces through one model as a tuple of tensors (nrec, nt), one a shot, of
    velocity's dtype and device, that PyTorch's autograd differentiates (as deepwave.scalar's batch
    of shots): the backward pass is born_adjoint of each shot's traces' gradient, summed over the
    shots in their order. shots: dicts with the keys sources, wavelets and receivers (as
    forward_many's). devices: on the GPU (float), the GPUs the shots spread over in both passes, as
    gradient_many's (None: every visible GPU, no more than the shots); the results are the bits of
    one GPU."""
    shots = [_torch_shot(shot, i) for i, shot in enumerate(list(shots))]
    # The GPUs both passes take, from the tensor's: backward runs on autograd's thread, whose
    # current GPU is the tensor's, not the caller's.
    gpus = _survey_devices(devices, backend, double, velocity, len(shots))
    devices = None if gpus == [-1] else gpus
    settings = dict(radius=radius, cpml=cpml, free_surface=free_surface, double=double, backend=backend,
                    memory_budget=0, boundary_saving=False)  # the forward pass keeps nothing
    budget = dict(memory_budget=memory_budget, boundary_saving=boundary_saving)
    return _forward_function().apply(velocity, (shots, (spacing, nt, dt), settings, budget, devices))


def _torch_shot(shot, i):
    """A shot's positions and wavelets on the host, once for both passes."""
    if not isinstance(shot, dict) or not {"sources", "wavelets", "receivers"} <= shot.keys():
        raise ValueError(f"shot {i}: a shot is a dict with the keys sources, wavelets and receivers")
    return {k: np.array(_host(shot[k], k), copy=True) for k in ("sources", "wavelets", "receivers")}


def forward_torch(velocity, spacing, nt, sources, wavelets, receivers, dt, radius=4, cpml=10, free_surface=False,
                  double=True, backend="auto", memory_budget=0, boundary_saving=False):
    """The shot's traces (nrec, nt) as a tensor of velocity's dtype and device that PyTorch's
    autograd differentiates: its backward is born_adjoint, the exact transpose of the discrete
    modelling (with boundary_saving=True, but for the model's outer faces beside a layer wider than
    R, to round-off). velocity: a tensor (requires_grad for a gradient), (nz, nx) or (nz, ny, nx).
    forward_torch_many takes several shots."""
    shot = {"sources": sources, "wavelets": wavelets, "receivers": receivers}
    return forward_torch_many(velocity, spacing, nt, [shot], dt, radius=radius, cpml=cpml,
                              free_surface=free_surface, double=double, backend=backend,
                              memory_budget=memory_budget, boundary_saving=boundary_saving)[0]
