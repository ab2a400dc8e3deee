// fdstencil.wave's linearised solvers over NumPy arrays (fdstencil/imaging.hpp): the model and the
// shot given as forward's, the vectors and results as float64 arrays. The backend the settings
// name (imaging.hpp says which solvers run where), in the precision asked for; the GIL is
// released while they run.
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/string.h>

#include <chrono>
#include <cstdint>

#include <span>
#include <string>
#include <utility>
#include <vector>

#include "bindings.hpp"
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

// op: "modelled", "born", "born_adjoint", "source_adjoint", "rtm" or "gradient"; vec: dv (the
// model's points) for born, the traces (nrec, nt) for the adjoints and rtm (with its condition and
// filters), the observed traces for gradient.
// Returns (array, misfit, traces, storage): the traces, the model-shaped result or the wavelets'
// adjoint; the misfit for gradient (else 0); gradient's modelled traces (else None); and for
// gradient and rtm how the backward pass kept the forward run (a dict, else None).
// memory_budget, boundary_saving: Storage's budget_bytes and boundary.
nb::tuple linearised(const std::string& op, const HostFloats& velocity, double spacing, const RunSettings& s,
                     bool double_precision, const HostDoubles& sources, const HostDoubles& wavelets,
                     const HostDoubles& receivers, const HostDoubles& vec, const std::string& condition,
                     bool illumination, bool laplacian, int64_t memory_budget, bool boundary_saving) {
  const wave::Model model = model_of(velocity, spacing);
  wave::Options o = shot_options(model, s, sources, wavelets, receivers);
  o.double_precision = double_precision;
  // Ctrl-C between two steps: Python's KeyboardInterrupt, thrown from here through the solver,
  // which frees its memory as it unwinds (core/stop.hpp).
  auto last = std::chrono::steady_clock::now();
  o.stop_requested = [&last] {
    if (std::chrono::steady_clock::now() - last < kSignalPoll) return false;
    last = std::chrono::steady_clock::now();
    nb::gil_scoped_acquire gil;
    if (PyErr_CheckSignals() != 0) throw nb::python_error();
    return false;
  };
  if (memory_budget < 0)
    throw Error(ErrorKind::invalid_argument, "memory_budget: bytes, >= 0 (0: what is free)");
  const wave::Storage storage{memory_budget, boundary_saving};
  wave::StorageReport report;
  bool reported = false;
  const std::span<const double> x(vec.data(), vec.size());
  std::vector<size_t> model_shape;
  for (size_t a = 0; a < velocity.ndim(); ++a) model_shape.push_back(velocity.shape(a));
  const std::vector<size_t> traces_shape = {o.receivers.size(), size_t(o.nt)};
  std::vector<double> out, traces;
  double misfit = 0;
  std::vector<size_t> shape = traces_shape;
  {
    nb::gil_scoped_release nogil;
    if (op == "modelled") {
      out = wave::modelled(model, o);
    } else if (op == "born") {
      out = wave::born(model, o, x);
    } else if (op == "born_adjoint") {
      out = wave::born_adjoint(model, o, x, storage);
      shape = model_shape;
    } else if (op == "source_adjoint") {
      out = wave::source_adjoint(model, o, x);
      shape = {o.sources.size(), size_t(o.nt)};
    } else if (op == "rtm") {
      if (condition != "adjoint" && condition != "crosscorrelation")
        throw Error(ErrorKind::invalid_argument,
                    "condition: expected 'adjoint' or 'crosscorrelation', got '" + condition + "'");
      const wave::ImagingCondition c =
          condition == "adjoint" ? wave::ImagingCondition::adjoint : wave::ImagingCondition::crosscorrelation;
      out = wave::rtm(model, o, x, {c, illumination, laplacian, storage, &report});
      reported = true;
      shape = model_shape;
    } else if (op == "gradient") {
      wave::Gradient g = wave::gradient(model, o, x, storage);
      report = g.storage;
      reported = true;
      out = std::move(g.velocity);
      traces = std::move(g.traces);
      misfit = g.misfit;
      shape = model_shape;
    } else {
      throw Error(ErrorKind::invalid_argument, "unknown linearised operator '" + op + "'");
    }
  }
  nb::object t = traces.empty() ? nb::none() : array_of(std::move(traces), traces_shape);
  nb::object kept = nb::none();
  if (reported) {
    nb::dict d;
    d["backend"] = report.backend;
    d["stored_bytes"] = report.stored_bytes;
    d["checkpoints"] = report.checkpoints;
    d["recomputed_steps"] = report.recomputed_steps;
    d["boundary_saving"] = report.boundary;
    d["reversed_steps"] = report.reversed_steps;
    d["forward_s"] = report.forward_s;
    d["backward_s"] = report.backward_s;
    d["total_s"] = report.total_s;
    kept = d;
  }
  return nb::make_tuple(array_of(std::move(out), shape), misfit, t, kept);
}

}  // namespace

void bind_imaging(nb::module_& m) {
  m.def("linearised", &linearised, nb::arg("op"), nb::arg("velocity"), nb::arg("spacing"),
        nb::arg("settings"), nb::arg("double_precision"), nb::arg("sources"), nb::arg("wavelets"),
        nb::arg("receivers"), nb::arg("vec"), nb::arg("condition") = "adjoint",
        nb::arg("illumination") = false, nb::arg("laplacian") = false, nb::arg("memory_budget") = 0,
        nb::arg("boundary_saving") = false);
}

}  // namespace fdstencil::python
