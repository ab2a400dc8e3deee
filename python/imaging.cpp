// fdstencil.wave's linearised solvers over NumPy arrays (fdstencil/imaging.hpp): the model and the
// shot given as forward's, the vectors and results as float64 arrays. The backend the settings
// name (imaging.hpp says which solvers run where), in the precision asked for; the GIL is
// released while they run.
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <chrono>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "bindings.hpp"
#include "device_pool.hpp"
#include "shots_progress.hpp"
#include "fdstencil/device.hpp"
#include "fdstencil/error.hpp"
#include "fdstencil/imaging.hpp"

namespace nb = nanobind;

namespace fdstencil::python {

namespace {

// A vector's values as a float64 NumPy array of `shape`, owning them.
nb::object array_of(std::vector<double> v, std::vector<size_t> shape) {
  auto* owned = new std::vector<double>(std::move(v));
  nb::capsule owner(owned, [](void* p) noexcept { delete static_cast<std::vector<double>*>(p); });
  return nb::cast(nb::ndarray<nb::numpy, double>(owned->data(), shape.size(), shape.data(), owner));
}

// One shot's linearised solve (op: "modelled", "born", "born_adjoint", "source_adjoint", "rtm" or
// "gradient"); vec: dv (the model's points) for born, the traces (nrec, nt) for the adjoints and
// rtm, the observed traces for gradient.
struct Solved {
  std::vector<double> out;                     // the traces, the model-shaped result or the wavelets' adjoint
  bool model_shaped = false;                   // out is over the model's points
  bool source_shaped = false;                  // out is (nsrc, nt)
  double misfit = 0;                           // gradient's, else 0
  std::vector<double> traces;                  // gradient's modelled traces, else empty
  std::optional<wave::StorageReport> storage;  // gradient's and rtm's: how the forward run was kept
};

struct RtmChoice {
  std::string condition;
  bool illumination = false, laplacian = false;
};

wave::ImagingCondition condition_of(const std::string& condition) {
  if (condition != "adjoint" && condition != "crosscorrelation")
    throw Error(ErrorKind::invalid_argument,
                "condition: expected 'adjoint' or 'crosscorrelation', got '" + condition + "'");
  return condition == "adjoint" ? wave::ImagingCondition::adjoint : wave::ImagingCondition::crosscorrelation;
}

Solved solve(const std::string& op, const wave::Model& model, const wave::Options& o,
             std::span<const double> x, const wave::Storage& storage, const RtmChoice& r) {
  Solved s;
  if (op == "modelled") {
    s.out = wave::modelled(model, o);
  } else if (op == "born") {
    s.out = wave::born(model, o, x);
  } else if (op == "born_adjoint") {
    s.out = wave::born_adjoint(model, o, x, storage);
    s.model_shaped = true;
  } else if (op == "source_adjoint") {
    s.out = wave::source_adjoint(model, o, x);
    s.source_shaped = true;
  } else if (op == "rtm") {
    wave::StorageReport report;
    s.out =
        wave::rtm(model, o, x, {condition_of(r.condition), r.illumination, r.laplacian, storage, &report});
    s.storage = report;
    s.model_shaped = true;
  } else if (op == "gradient") {
    wave::Gradient g = wave::gradient(model, o, x, storage);
    s.storage = g.storage;
    s.out = std::move(g.velocity);
    s.traces = std::move(g.traces);
    s.misfit = g.misfit;
    s.model_shaped = true;
  } else {
    throw Error(ErrorKind::invalid_argument, "unknown linearised operator '" + op + "'");
  }
  return s;
}

// How the backward pass kept the forward run, as a dict (None for the solvers that keep nothing).
nb::object storage_dict(const std::optional<wave::StorageReport>& report, int device) {
  if (!report) return nb::none();
  nb::dict d;
  d["backend"] = report->backend;
  d["stored_bytes"] = report->stored_bytes;
  d["checkpoints"] = report->checkpoints;
  d["recomputed_steps"] = report->recomputed_steps;
  d["boundary_saving"] = report->boundary;
  d["reversed_steps"] = report->reversed_steps;
  d["forward_s"] = report->forward_s;
  d["backward_s"] = report->backward_s;
  d["total_s"] = report->total_s;
  d["device"] = report->backend == "cuda" && device >= 0 ? nb::object(nb::int_(device)) : nb::none();
  return d;
}

std::vector<size_t> shape_of(const HostFloats& velocity) {
  std::vector<size_t> shape;
  for (size_t a = 0; a < velocity.ndim(); ++a) shape.push_back(velocity.shape(a));
  return shape;
}

wave::Storage storage_of(int64_t memory_budget, bool boundary_saving) {
  if (memory_budget < 0)
    throw Error(ErrorKind::invalid_argument, "memory_budget: bytes, >= 0 (0: what is free)");
  return {memory_budget, boundary_saving};
}

// Returns (array, misfit, traces, storage): solve's result in its shape ((nrec, nt), the model's or
// (nsrc, nt)), the misfit, gradient's modelled traces (else None), and for gradient and rtm how the
// backward pass kept the forward run (a dict, else None). memory_budget, boundary_saving:
// Storage's budget_bytes and boundary; progress: None or a callable (done, total) over the steps
// of every sweep (wave::Options::progress).
nb::tuple linearised(const std::string& op, const HostFloats& velocity, double spacing, const RunSettings& s,
                     bool double_precision, const HostDoubles& sources, const HostDoubles& wavelets,
                     const HostDoubles& receivers, const HostDoubles& vec, const std::string& condition,
                     bool illumination, bool laplacian, int64_t memory_budget, bool boundary_saving,
                     const nb::object& progress) {
  const wave::Model model = model_of(velocity, spacing);
  wave::Options o = shot_options(model, s, sources, wavelets, receivers);
  o.double_precision = double_precision;
  // The caller's progress(done, total), under the GIL; what it raises ends the call as Ctrl-C does.
  if (!progress.is_none())
    o.progress = [&progress](int64_t done, int64_t total) {
      nb::gil_scoped_acquire gil;
      progress(done, total);
    };
  // Ctrl-C between two steps: Python's KeyboardInterrupt, thrown from here through the solver,
  // which frees its memory as it unwinds (core/stop.hpp).
  auto last = std::chrono::steady_clock::now();
  o.stop_requested = [&last] {
    if (std::chrono::steady_clock::now() - last < kSignalPoll) return false;
    last = std::chrono::steady_clock::now();
    if (python_interrupted()) {
      nb::gil_scoped_acquire gil;  // the pending KeyboardInterrupt is taken under the GIL
      throw nb::python_error();
    }
    return false;
  };
  const wave::Storage storage = storage_of(memory_budget, boundary_saving);
  Solved r;
  {
    nb::gil_scoped_release nogil;
    r = solve(op, model, o, std::span<const double>(vec.data(), vec.size()), storage,
              {condition, illumination, laplacian});
  }
  const std::vector<size_t> traces_shape = {o.receivers.size(), size_t(o.nt)};
  const std::vector<size_t> shape = r.model_shaped    ? shape_of(velocity)
                                    : r.source_shaped ? std::vector<size_t>{o.sources.size(), size_t(o.nt)}
                                                      : traces_shape;
  nb::object t = r.traces.empty() ? nb::none() : array_of(std::move(r.traces), traces_shape);
  const int device = r.storage && r.storage->backend == "cuda" ? cuda::current_device() : -1;
  return nb::make_tuple(array_of(std::move(r.out), shape), r.misfit, t, storage_dict(r.storage, device));
}

// "modelled", "born", "born_adjoint", "gradient" or "rtm" for several shots through one model,
// spread over `devices` (GPU indices, one worker each; {-1}: the calling thread, for the cpu) as
// run_wave_many's shots are; vecs: each shot's traces (nrec, nt), empty for "modelled", dv over the
// model's points for "born". Returns (the model-shaped results summed in the shots' order, or None
// for "modelled" and "born"; the misfits' sum; each shot's traces: "modelled"'s, "born"'s (J dv)
// and "gradient"'s, else None; each shot's storage dict with the GPU it ran on, or None). A failing shot stops the others and its error is raised, named by its
// index; Ctrl-C stops them all and raises KeyboardInterrupt. progress: None or a callable
// (done, total) over the steps of every shot (ShotsProgress); what it raises ends the call.
nb::tuple linearised_many(const std::string& op, const HostFloats& velocity, double spacing,
                          const RunSettings& s, bool double_precision,
                          const std::vector<HostDoubles>& sources, const std::vector<HostDoubles>& wavelets,
                          const std::vector<HostDoubles>& receivers, const std::vector<HostDoubles>& vecs,
                          const std::vector<int>& devices, const std::string& condition, bool illumination,
                          bool laplacian, int64_t memory_budget, bool boundary_saving,
                          const nb::object& progress) {
  const bool summed = op != "modelled" && op != "born";
  if (summed && op != "born_adjoint" && op != "gradient" && op != "rtm")
    throw Error(ErrorKind::invalid_argument,
                "linearised_many: 'modelled', 'born', 'born_adjoint', 'gradient' or 'rtm', got '" + op + "'");
  const size_t n = sources.size();
  if (n == 0 || wavelets.size() != n || receivers.size() != n || vecs.size() != n || devices.empty())
    throw Error(ErrorKind::invalid_argument,
                "linearised_many: one sources, wavelets, receivers and record per "
                "shot, and a device");
  const wave::Model model = model_of(velocity, spacing);
  const wave::Storage storage = storage_of(memory_budget, boundary_saving);
  const RtmChoice r{condition, illumination, laplacian};
  if (op == "rtm") condition_of(condition);  // refused before any shot runs
  // A shot's errors are named by its index where there are several (as run_wave_many's).
  const auto label = [n](size_t i) { return n > 1 ? "shot " + std::to_string(i) + ": " : std::string(); };
  cli::DevicePool pool(n, python_interrupted, kSignalPoll);
  ShotsProgress bar(n, progress);
  std::vector<wave::Options> shots;
  for (size_t i = 0; i < n; ++i) {
    try {
      shots.push_back(shot_options(model, s, sources[i], wavelets[i], receivers[i]));
    } catch (const Error& e) {
      throw Error(e.kind(), label(i) + e.what());
    }
    shots.back().double_precision = double_precision;
    shots.back().stop_requested = [&pool] { return pool.stop_requested(); };
    shots.back().progress = bar.shot(i);
  }
  // The sums in the shots' order (cli::InOrder), a worker at most two shots a GPU ahead of the
  // oldest unsummed one: fewer model-sized results than that wait in host memory.
  cli::InOrder<std::vector<double>> in_order(2 * devices.size());
  std::vector<double> total;
  double misfit = 0;
  std::vector<Solved> solved(n);
  const auto add = [&](size_t i, std::vector<double>& out) {
    if (total.empty())
      total = std::move(out);
    else
      for (size_t k = 0; k < total.size(); ++k) total[k] += out[k];
    misfit += solved[i].misfit;
  };
  // A worker's kept state: on the GPU each shot's backward pass takes the stored fields' buffer the
  // worker's last shot left (wave::Options::kept_state), freed with the worker.
  const auto worker = [&](int) {
    return [&, kept = wave::make_kept_state()](size_t i) {
      if (summed && !in_order.wait_turn(i, [&pool] { return pool.stop_requested(); })) return;
      shots[i].kept_state = kept;
      struct Release {  // no shot's options hold the worker's state once it has run
        wave::Options& o;
        ~Release() { o.kept_state.reset(); }
      } release{shots[i]};
      try {
        solved[i] =
            solve(op, model, shots[i], std::span<const double>(vecs[i].data(), vecs[i].size()), storage, r);
      } catch (const Error& e) {
        // A shot stopped because another failed, or by Ctrl-C: the call says why, not this shot.
        if (e.kind() == ErrorKind::interrupted && pool.stop_requested()) return;
        throw Error(e.kind(), label(i) + e.what());
      }
      if (summed)
        in_order.put(i, std::move(solved[i].out), add);
      else
        solved[i].traces = std::move(solved[i].out);
    };
  };
  bool whole = false;
  {
    nb::gil_scoped_release nogil;
    whole = pool.run(devices, worker);
  }
  if (!whole) throw nb::python_error();  // the pending KeyboardInterrupt
  nb::list traces, kept;
  for (size_t i = 0; i < n; ++i) {
    const std::vector<size_t> shape = {shots[i].receivers.size(), size_t(shots[i].nt)};
    traces.append(solved[i].traces.empty() ? nb::none() : array_of(std::move(solved[i].traces), shape));
    kept.append(storage_dict(solved[i].storage, pool.device(i)));
  }
  nb::object sum = summed ? array_of(std::move(total), shape_of(velocity)) : nb::none();
  return nb::make_tuple(sum, misfit, traces, kept);
}

}  // namespace

void bind_imaging(nb::module_& m) {
  m.def("linearised", &linearised, nb::arg("op"), nb::arg("velocity"), nb::arg("spacing"),
        nb::arg("settings"), nb::arg("double_precision"), nb::arg("sources"), nb::arg("wavelets"),
        nb::arg("receivers"), nb::arg("vec"), nb::arg("condition") = "adjoint",
        nb::arg("illumination") = false, nb::arg("laplacian") = false, nb::arg("memory_budget") = 0,
        nb::arg("boundary_saving") = false, nb::arg("progress") = nb::none());
  m.def("linearised_many", &linearised_many, nb::arg("op"), nb::arg("velocity"), nb::arg("spacing"),
        nb::arg("settings"), nb::arg("double_precision"), nb::arg("sources"), nb::arg("wavelets"),
        nb::arg("receivers"), nb::arg("vecs"), nb::arg("devices"), nb::arg("condition") = "adjoint",
        nb::arg("illumination") = false, nb::arg("laplacian") = false, nb::arg("memory_budget") = 0,
        nb::arg("boundary_saving") = false, nb::arg("progress") = nb::none());
}

}  // namespace fdstencil::python
