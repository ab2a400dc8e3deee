// fdstencil._core: the C++ half of the Python package (nanobind), over the same library the tool
// uses: the coefficients, the tool's `info`, wave::run on NumPy arrays, and plans (plan.cpp). The Python half
// (python/fdstencil/) checks and shapes the arguments; errors come back as Python's own:
// ValueError for bad input, MemoryError for memory, OSError for files, RuntimeError otherwise.
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "bindings.hpp"
#include "commands.hpp"
#include "fdstencil/coefficients.hpp"
#include "fdstencil/error.hpp"
#include "fdstencil/version.hpp"
#include "fdstencil/wave.hpp"

namespace nb = nanobind;
using namespace fdstencil;

namespace {

// A C-ordered float32 array on the host (NumPy): the velocity model, the traces.
using HostFloats = nb::ndarray<const float, nb::numpy, nb::c_contig, nb::device::cpu>;
using HostDoubles = nb::ndarray<const double, nb::numpy, nb::c_contig, nb::device::cpu>;

void translate(const std::exception_ptr& p, void*) {
  try {
    std::rethrow_exception(p);
  } catch (const Error& e) {
    PyObject* type = e.kind() == ErrorKind::out_of_memory ? PyExc_MemoryError
                     : e.kind() == ErrorKind::io          ? PyExc_OSError
                     : is_input_error(e.kind())           ? PyExc_ValueError
                                                          : PyExc_RuntimeError;
    PyErr_SetString(type, e.what());
  }
}

// `python -m fdstencil info [--json]`: the tool's own command, printed on the process's stdout.
int info(const std::vector<std::string>& args) {
  CLI::App app{"fdstencil"};
  const cli::Action run = cli::add_info(app);
  std::vector<std::string> argv = {"fdstencil", "info"};
  argv.insert(argv.end(), args.begin(), args.end());
  std::vector<char*> ptrs;
  for (std::string& a : argv) ptrs.push_back(a.data());
  try {
    app.parse(int(ptrs.size()), ptrs.data());
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  }
  const int code = run();
  std::fflush(stdout);
  return code;
}

wave::Model model_of(const HostFloats& v, double spacing) {
  wave::Model m;
  m.dim = int(v.ndim());
  if (m.dim != 2 && m.dim != 3)
    throw Error(ErrorKind::invalid_argument, "the velocity model must be 2D or 3D");
  m.nz = int64_t(v.shape(0));
  m.ny = m.dim == 3 ? int64_t(v.shape(1)) : 1;
  m.nx = int64_t(v.shape(m.dim - 1));
  m.h = spacing;
  m.v.assign(v.data(), v.data() + v.size());  // wave::Model owns its values (a vector)
  m.validate();
  return m;
}

// Points (n, dim) in metres, z first, as wave::Point.
std::vector<wave::Point> points_of(const HostDoubles& p, int dim) {
  std::vector<wave::Point> out(p.shape(0));
  const double* d = p.data();
  for (size_t i = 0; i < out.size(); ++i, d += dim)
    out[i] = dim == 3 ? wave::Point{d[0], d[1], d[2]} : wave::Point{d[0], 0.0, d[1]};
  return out;
}

// A GPU state one run leaves for the next of the same medium (wave::Options::kept_state): the
// several shots of one forward_many call share one.
struct KeptHandle {
  std::shared_ptr<wave::KeptState> state = wave::make_kept_state();
};

// How often a run asks Python whether Ctrl-C was pressed: often enough to stop within a second.
constexpr auto kSignalPoll = std::chrono::milliseconds(100);

// wave::run on host arrays, the GIL released while it steps; returns (traces (nrec, nt) float32,
// dt, the final field or None, the summary of the run's timing). Ctrl-C stops the run at a step
// boundary and raises KeyboardInterrupt.
nb::tuple run_wave(const HostFloats& velocity, double spacing, double dt, int64_t nt,
                   const HostDoubles& sources, const HostDoubles& wavelets, const HostDoubles& receivers,
                   int radius, int cpml, bool free_surface, const std::string& backend, bool final_field,
                   const KeptHandle* kept) {
  const wave::Model model = model_of(velocity, spacing);
  wave::Options o;
  o.radius = radius;
  o.dt = dt;
  o.nt = nt;
  o.boundary.cpml_width = cpml;
  o.boundary.free_surface = free_surface;
  o.backend = backend;
  o.final_field = final_field;
  if (kept) o.kept_state = kept->state;
  const std::vector<wave::Point> at = points_of(sources, model.dim);
  for (size_t s = 0; s < at.size(); ++s) {
    const double* w = wavelets.data() + s * wavelets.shape(1);
    o.sources.push_back({at[s], std::vector<double>(w, w + wavelets.shape(1))});
  }
  o.receivers = points_of(receivers, model.dim);
  std::atomic<bool> stop{false};
  auto last = std::chrono::steady_clock::now();
  o.stop_requested = [&] {
    if (std::chrono::steady_clock::now() - last < kSignalPoll) return stop.load();
    last = std::chrono::steady_clock::now();
    nb::gil_scoped_acquire gil;
    if (PyErr_CheckSignals() != 0) stop = true;  // the KeyboardInterrupt stays set for below
    return stop.load();
  };
  wave::Result r;
  {
    nb::gil_scoped_release nogil;
    r = wave::run(model, o);
  }
  if (r.interrupted) throw nb::python_error();  // the pending KeyboardInterrupt
  const size_t nrec = o.receivers.size();
  auto* traces = new std::vector<float>(std::move(r.traces));
  nb::capsule owner_t(traces, [](void* p) noexcept { delete static_cast<std::vector<float>*>(p); });
  nb::object tr = nb::cast(nb::ndarray<nb::numpy, float>(traces->data(), {nrec, size_t(nt)}, owner_t));
  nb::object field = nb::none();
  if (final_field && !r.final_field.empty()) {
    auto* f = new std::vector<float>(std::move(r.final_field));
    nb::capsule owner_f(f, [](void* p) noexcept { delete static_cast<std::vector<float>*>(p); });
    std::vector<size_t> shape;
    for (size_t a = 0; a < velocity.ndim(); ++a) shape.push_back(velocity.shape(a));
    field = nb::cast(nb::ndarray<nb::numpy, float>(f->data(), shape.size(), shape.data(), owner_f));
  }
  nb::dict timing;
  timing["loop_s"] = r.timing.loop_s;
  timing["total_s"] = r.timing.total_s;
  timing["gpts"] = r.timing.gpts;
  timing["backend"] = r.backend;
  timing["kernel"] = r.kernel;
  timing["state_kept"] = r.timing.state_kept;
  return nb::make_tuple(tr, r.dt, field, timing);
}

}  // namespace

NB_MODULE(_core, m) {
  m.doc() = "fdstencil's C++ core: use the fdstencil package, not this module";
  nb::register_exception_translator(translate);
  m.attr("__version__") = FDSTENCIL_VERSION;
  m.def("coeffs", &central_weights, nb::arg("derivative"), nb::arg("radius"), nb::arg("spacing"));
  m.def("info", &info, nb::arg("args"));
  m.def("max_stable_dt", &wave::max_stable_dt, nb::arg("dim"), nb::arg("radius"), nb::arg("spacing"),
        nb::arg("vmax"));
  m.def("ricker", &wave::ricker, nb::arg("f0"), nb::arg("delay"), nb::arg("dt"), nb::arg("n"));
  fdstencil::python::bind_plan(m);
  fdstencil::python::bind_tune(m);
  nb::class_<KeptHandle>(m, "KeptState").def(nb::init<>());
  m.def("run_wave", &run_wave, nb::arg("velocity"), nb::arg("spacing"), nb::arg("dt"), nb::arg("nt"),
        nb::arg("sources"), nb::arg("wavelets"), nb::arg("receivers"), nb::arg("radius"), nb::arg("cpml"),
        nb::arg("free_surface"), nb::arg("backend"), nb::arg("final_field"),
        nb::arg("kept").none() = nb::none());
}
