// fdstencil._core: the C++ half of the Python package (nanobind), over the same library the tool
// uses: the coefficients, the tool's `info`, wave::run on NumPy arrays, and plans (plan.cpp). The Python half
// (python/fdstencil/) checks and shapes the arguments; errors come back as Python's own:
// ValueError for bad input, MemoryError for memory, OSError for files, RuntimeError otherwise.
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <algorithm>
#include <chrono>
#include <exception>
#include <stdexcept>
#include <utility>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "bindings.hpp"
#include "commands.hpp"
#include "fdstencil/coefficients.hpp"
#include "fdstencil/device.hpp"
#include "fdstencil/device_field.hpp"
#include "fdstencil/error.hpp"
#include "fdstencil/field.hpp"
#include "fdstencil/version.hpp"
#include "fdstencil/wave.hpp"
#include "core/unwritten_allocator.hpp"
#include "shots_progress.hpp"
#include "device_pool.hpp"
#include "tune_wave.hpp"

namespace nb = nanobind;
using namespace fdstencil;

using fdstencil::python::HostDoubles;
using fdstencil::python::HostFloats;
using fdstencil::python::kSignalPoll;
using fdstencil::python::model_of;
using fdstencil::python::python_interrupted;
using fdstencil::python::RunSettings;
using fdstencil::python::shot_options;
using fdstencil::python::ShotsProgress;

namespace {

void translate(const std::exception_ptr& p, void*) {
  try {
    std::rethrow_exception(p);
  } catch (const Error& e) {
    PyObject* type = e.kind() == ErrorKind::out_of_memory ? PyExc_MemoryError
                     : e.kind() == ErrorKind::io          ? PyExc_OSError
                     : e.kind() == ErrorKind::interrupted ? PyExc_KeyboardInterrupt
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

}  // namespace

bool fdstencil::python::python_interrupted() {
  nb::gil_scoped_acquire gil;
  return PyErr_CheckSignals() != 0;
}

wave::Model fdstencil::python::model_of(const HostFloats& v, double spacing) {
  wave::Model m;
  m.dim = int(v.ndim());
  if (m.dim != 2 && m.dim != 3)
    throw Error(ErrorKind::invalid_argument, "the velocity model must be 2D or 3D");
  m.nz = int64_t(v.shape(0));
  m.ny = m.dim == 3 ? int64_t(v.shape(1)) : 1;
  m.nx = int64_t(v.shape(m.dim - 1));
  m.h = spacing;
  // The caller's array, not a copy: run_wave_many holds it until its shots are done.
  m.borrowed = std::span<const float>(v.data(), v.size());
  // Checked, with its extremes and checksum, in one pass, as the tool's inputs do: the run's
  // checks, default step and sampling warning, and each shot's kept-state match would otherwise
  // each pass over the model.
  nb::gil_scoped_release nogil;
  m.summarise();
  return m;
}

wave::Model fdstencil::python::model_on_gpu(uintptr_t ptr, const std::vector<int64_t>& shape, int device,
                                            double spacing) {
  wave::Model m;
  m.dim = int(shape.size());
  if (m.dim != 2 && m.dim != 3)
    throw Error(ErrorKind::invalid_argument, "the velocity model must be 2D or 3D");
  m.nz = shape[0];
  m.ny = m.dim == 3 ? shape[1] : 1;
  m.nx = shape.back();
  m.h = spacing;
  m.gpu = {reinterpret_cast<const float*>(ptr), device};
  // As model_of's: checked and summarised once, here on its GPU (its values never reach the host).
  nb::gil_scoped_release nogil;
  m.summarise();
  return m;
}

namespace {

// The host copy's first touch writes one byte per page.
constexpr int64_t kPageBytes = 4096;

// `bytes` of a GPU array's memory from `ptr` (its producer's work finished: the caller
// synchronises) as a host NumPy array of bytes, which the caller views as its dtype and strides:
// its pages touched by the OpenMP threads, then one copy. A framework's own copy to the host faults
// a fresh array's pages in on one thread, the copy's slowest part; the solver builds m on the host
// from the model's values (docs/python.md).
nb::ndarray<nb::numpy, uint8_t> host_copy_of_gpu(uintptr_t ptr, size_t bytes) {
  auto* v = new std::vector<uint8_t, UnwrittenAllocator<uint8_t>>(bytes);
  nb::capsule owner(
      v, [](void* p) noexcept { delete static_cast<std::vector<uint8_t, UnwrittenAllocator<uint8_t>>*>(p); });
  {
    nb::gil_scoped_release nogil;
    uint8_t* out = v->data();
    const int64_t n = int64_t(bytes);
#pragma omp parallel for schedule(static)
    for (int64_t p = 0; p < n; p += kPageBytes) out[p] = 0;
    cuda::copy_to_host(reinterpret_cast<const void*>(ptr), out, n);
  }
  return nb::ndarray<nb::numpy, uint8_t>(v->data(), {bytes}, owner);
}

// Points (n, dim) in metres, z first, as wave::Point.
std::vector<wave::Point> points_of(const HostDoubles& p, int dim, const char* name) {
  if (p.ndim() != 2 || int64_t(p.shape(1)) != dim)
    throw Error(ErrorKind::invalid_argument,
                std::string(name) + ": expected positions of shape (n, " + std::to_string(dim) + ")");
  std::vector<wave::Point> out(p.shape(0));
  const double* d = p.data();
  for (size_t i = 0; i < out.size(); ++i, d += dim)
    out[i] = dim == 3 ? wave::Point{d[0], d[1], d[2]} : wave::Point{d[0], 0.0, d[1]};
  return out;
}

}  // namespace

// One shot's options: its sources (n, dim) with their wavelets (n, samples) and its receivers.
wave::Options fdstencil::python::shot_options(const wave::Model& model, const RunSettings& s,
                                              const HostDoubles& sources, const HostDoubles& wavelets,
                                              const HostDoubles& receivers) {
  wave::Options o;
  o.radius = s.radius;
  o.dt = s.dt;
  o.nt = s.nt;
  o.boundary.cpml_width = s.cpml;
  o.boundary.free_surface = s.free_surface;
  o.backend = s.backend;
  o.final_field = s.final_field;
  o.measure_bandwidth = s.measure_bandwidth;
  o.kernel_params = s.kernel_params;
  o.snapshot_steps = s.snapshot_steps;
  const std::vector<wave::Point> at = points_of(sources, model.dim, "sources");
  if (wavelets.ndim() != 2 || wavelets.shape(0) != at.size())
    throw Error(ErrorKind::invalid_argument,
                "wavelets: expected one row per source (" + std::to_string(at.size()) + ", samples)");
  for (size_t i = 0; i < at.size(); ++i) {
    const double* w = wavelets.data() + i * wavelets.shape(1);
    o.sources.push_back({at[i], std::vector<double>(w, w + wavelets.shape(1))});
  }
  o.receivers = points_of(receivers, model.dim, "receivers");
  return o;
}

namespace {

// One shot's snapshots as the run hands them out, in step order (the time loop's), each copied
// into its place in one buffer of room for all that were asked: the array Python gets, with no
// second copy.
struct KeptSnapshots {
  std::unique_ptr<std::vector<float, UnwrittenAllocator<float>>> values;
  std::vector<int64_t> steps;
  int64_t points = 0;
  void take(const wave::Snapshot& snap) {
    if (int64_t(steps.size() + 1) * points > int64_t(values->size()))
      throw std::logic_error("a run handed out more snapshots than its steps asked for");
    std::copy(snap.field.begin(), snap.field.end(), values->begin() + std::ptrdiff_t(steps.size()) * points);
    steps.push_back(snap.step);
  }
};

// The snapshots taken, as one float32 array (count, model shape), and their steps; None and an
// empty list for none.
std::pair<nb::object, nb::list> snapshots_of(KeptSnapshots&& kept, const std::vector<size_t>& shape) {
  nb::list steps;
  for (int64_t step : kept.steps) steps.append(step);
  if (kept.steps.empty()) return {nb::none(), steps};
  using Values = std::vector<float, UnwrittenAllocator<float>>;
  Values* all = kept.values.release();
  nb::capsule owner(all, [](void* p) noexcept { delete static_cast<Values*>(p); });
  std::vector<size_t> stacked{kept.steps.size()};
  stacked.insert(stacked.end(), shape.begin(), shape.end());
  return {nb::cast(nb::ndarray<nb::numpy, float>(all->data(), stacked.size(), stacked.data(), owner)), steps};
}

// A result as Python's (traces (nrec, nt) float32, dt, the final field or None, the timing dict,
// the run's warnings, the snapshots or None, their steps);
// the vectors move into the arrays, which own them.
nb::tuple result_tuple(wave::Result r, KeptSnapshots&& snaps, const std::vector<size_t>& shape, size_t nrec,
                       int64_t nt, int device, double model_s, const std::string& launch_from) {
  auto* traces = new std::vector<float>(std::move(r.traces));
  nb::capsule owner_t(traces, [](void* p) noexcept { delete static_cast<std::vector<float>*>(p); });
  nb::object tr = nb::cast(nb::ndarray<nb::numpy, float>(traces->data(), {nrec, size_t(nt)}, owner_t));
  nb::object field = nb::none();
  if (!r.final_field.empty()) {
    auto* f = new std::vector<float>(std::move(r.final_field));
    nb::capsule owner_f(f, [](void* p) noexcept { delete static_cast<std::vector<float>*>(p); });
    field = nb::cast(nb::ndarray<nb::numpy, float>(f->data(), shape.size(), shape.data(), owner_f));
  }
  nb::dict timing;
  timing["loop_s"] = r.timing.loop_s;
  timing["total_s"] = r.timing.total_s;
  timing["setup_s"] = r.timing.setup_s;
  nb::dict phases;
  for (const auto& [name, seconds] : r.timing.setup_phases) phases[nb::str(name.c_str())] = seconds;
  timing["setup_phases_s"] = phases;
  timing["model_s"] = model_s;  // the call's check and summary of the model (model_of), shared by its shots
  timing["launch_from"] = launch_from.empty() ? nb::none() : nb::object(nb::str(launch_from.c_str()));
  timing["gpts"] = r.timing.gpts;
  timing["backend"] = r.backend;
  timing["kernel"] = r.kernel;
  timing["state_kept"] = r.timing.state_kept;
  timing["device"] = r.backend == "cuda" && device >= 0 ? nb::object(nb::int_(device)) : nb::none();
  if (r.timing.copy_gbps > 0) {  // measured only when asked (RunSettings::measure_bandwidth)
    timing["copy_gbps"] = r.timing.copy_gbps;
    timing["bound_gpts"] = r.timing.bound_gpts;
    timing["percent_of_bound"] = r.timing.percent_of_bound;
  }
  nb::list warnings;
  for (const std::string& w : r.warnings) warnings.append(nb::str(w.c_str()));
  auto [snapshots, snapshot_steps] = snapshots_of(std::move(snaps), shape);
  return nb::make_tuple(tr, r.dt, field, timing, warnings, snapshots, snapshot_steps);
}

// The shots of one call spread over devices (cli::DevicePool): the runner of a GPU keeps its own
// state from shot to shot (wave::Options::kept_state), as a survey's --batch worker does.
class ShotPool {
 public:
  ShotPool(const wave::Model& model, std::vector<wave::Options>& shots)
      : model_(model),
        shots_(shots),
        results_(shots.size()),
        launch_from_(shots.size()),
        pool_(shots.size(), python_interrupted, kSignalPoll) {}

  // Runs every shot on `devices` (-1: no GPU chosen, for the cpu), the GIL released, Ctrl-C
  // polled. Returns false when Ctrl-C stopped the shots (the KeyboardInterrupt is left pending);
  // rethrows the first shot's error otherwise.
  bool run(const std::vector<int>& devices) {
    for (wave::Options& o : shots_) o.stop_requested = [this] { return pool_.stop_requested(); };
    struct Clear {  // the shots' callbacks hold this pool: cleared however the run ends
      std::vector<wave::Options>& shots;
      ~Clear() {
        for (wave::Options& o : shots) o.stop_requested = nullptr;
      }
    } clear{shots_};
    nb::gil_scoped_release nogil;
    return pool_.run(devices, [this](int device) { return worker(device); });
  }

  wave::Result& result(size_t i) { return results_[i]; }
  int device(size_t i) const { return pool_.device(i); }  // the GPU shot i ran on (-1: none chosen)
  const std::string& launch_from(size_t i) const { return launch_from_[i]; }  // "": not a tuned launch

 private:
  // A device's runner: its kept state, freed with it on its own GPU (no shot's options keep a copy
  // once it has run), and the launch looked up for its first shot.
  std::function<void(size_t)> worker(int device) {
    auto kept = std::shared_ptr<wave::KeptState>(wave::make_kept_state());
    auto tuned = std::make_shared<Tuned>();
    return [this, device, kept, tuned](size_t i) {
      shots_[i].kept_state = kept;
      struct Release {
        wave::Options& o;
        ~Release() { o.kept_state.reset(); }
      } release{shots_[i]};
      std::vector<std::string> notes;
      if (device >= 0) launch_from_[i] = take_tuned_launch(shots_[i], notes, *tuned);
      results_[i] = wave::run(model_, shots_[i]);
      results_[i].warnings.insert(results_[i].warnings.begin(), notes.begin(), notes.end());
    };
  }

  // As `fdstencil wave`: a GPU shot without kernel parameters takes the launch `fdstencil tune
  // --wave` stored for this card and grid, if any (apps/fdstencil/tune_wave.hpp); one this build
  // refuses gives way to the defaults, with a warning. Returns the file it came from, or "".
  // Every shot of a call shares the grid, so a worker looks the launch up for its first shot
  // (`tuned`: the parameters, the file, the notes) and gives the later ones the same.
  struct Tuned {
    bool looked = false;
    std::string params, file;
    std::vector<std::string> notes;
  };
  std::string take_tuned_launch(wave::Options& o, std::vector<std::string>& notes, Tuned& tuned) const {
    if (!o.kernel_params.empty() || o.backend == "cpu" || gpu_count() == 0) return "";
    if (!tuned.looked) {
      tuned.looked = true;
      tuned.file = cli::wave_cache_file("").string();
      const std::string name = cuda::device_info(cuda::current_device())["name"].get<std::string>();
      const auto warn = [&](const std::string& w) { tuned.notes.push_back(w); };
      tuned.params = cli::tuned_launch(tuned.file, name, cli::wave_case_of(model_, o), warn);
      if (!tuned.params.empty()) {
        o.kernel_params = tuned.params;
        try {
          wave::check(model_, o);
        } catch (const Error& e) {
          // As the tool's: an error that is the run's own, not the launch's, is the run's to report.
          o.kernel_params.clear();
          wave::check(model_, o);
          tuned.notes.push_back(tuned.file + ": the tuned launch " + tuned.params + " is refused (" +
                                e.what() + "): the default launch is used");
          tuned.params.clear();
        }
      }
    }
    notes.insert(notes.end(), tuned.notes.begin(), tuned.notes.end());
    if (tuned.params.empty()) return "";
    o.kernel_params = tuned.params;
    return tuned.file;
  }

  const wave::Model& model_;
  std::vector<wave::Options>& shots_;
  std::vector<wave::Result> results_;
  std::vector<std::string> launch_from_;  // shot i's tuned launch's file, "" for none
  cli::DevicePool pool_;
};

// wave::run for several shots of one model on host arrays, spread over `devices` (GPU indices, one
// worker each; -1: a worker that chooses none, for the cpu), the GIL released while they step. Returns a list of
// (traces, dt, final field or None, timing, warnings), one per shot in the order given. Ctrl-C stops every
// shot at a step boundary and raises KeyboardInterrupt.
// The shots of run_wave_many and run_wave_many_on_gpu through a model checked and summarised in
// model_s seconds; progress: None or a callable (done, total) over every shot's steps.
nb::list run_shots(const wave::Model& model, double model_s, const RunSettings& s,
                   const std::vector<HostDoubles>& sources, const std::vector<HostDoubles>& wavelets,
                   const std::vector<HostDoubles>& receivers, const std::vector<int>& devices,
                   const nb::object& progress) {
  if (sources.size() != wavelets.size() || sources.size() != receivers.size())
    throw Error(ErrorKind::invalid_argument,
                "run_wave_many: one sources, wavelets and receivers array per shot");
  if (devices.empty()) throw Error(ErrorKind::invalid_argument, "run_wave_many: no device to run on");
  std::vector<size_t> shape{size_t(model.nz)};
  if (model.dim == 3) shape.push_back(size_t(model.ny));
  shape.push_back(size_t(model.nx));
  std::vector<wave::Options> shots;
  // Each shot's snapshots, kept by the thread that runs it as the run hands them out, in room
  // made before any run (steps outside 0..nt are the runs' to refuse): a call whose snapshots the
  // host cannot hold is refused here, not after its shots.
  std::vector<KeptSnapshots> snaps(sources.size());
  if (!s.snapshot_steps.empty()) {
    std::vector<int64_t> steps = s.snapshot_steps;
    std::sort(steps.begin(), steps.end());
    const int64_t count = std::unique(steps.begin(), steps.end()) - steps.begin();
    ensure_host_memory(count * model.points() * int64_t(sizeof(float)) * int64_t(sources.size()),
                       "the snapshots kept for Python");
    for (KeptSnapshots& k : snaps) {
      k.points = model.points();
      k.values =
          std::make_unique<std::vector<float, UnwrittenAllocator<float>>>(size_t(count * model.points()));
    }
  }
  ShotsProgress bar(sources.size(), progress);  // what it raises ends the call
  for (size_t i = 0; i < sources.size(); ++i) {
    shots.push_back(shot_options(model, s, sources[i], wavelets[i], receivers[i]));
    shots.back().progress = bar.shot(i);
    if (!s.snapshot_steps.empty())
      shots.back().on_snapshot = [&kept = snaps[i]](const wave::Snapshot& snap) { kept.take(snap); };
  }
  ShotPool pool(model, shots);
  if (!pool.run(devices)) throw nb::python_error();  // the pending KeyboardInterrupt
  nb::list out;
  for (size_t i = 0; i < shots.size(); ++i)
    out.append(result_tuple(std::move(pool.result(i)), std::move(snaps[i]), shape, shots[i].receivers.size(),
                            s.nt, pool.device(i), model_s, pool.launch_from(i)));
  return out;
}

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

nb::list run_wave_many(const HostFloats& velocity, double spacing, const RunSettings& s,
                       const std::vector<HostDoubles>& sources, const std::vector<HostDoubles>& wavelets,
                       const std::vector<HostDoubles>& receivers, const std::vector<int>& devices,
                       const nb::object& progress) {
  const auto t0 = std::chrono::steady_clock::now();
  const wave::Model model = model_of(velocity, spacing);
  return run_shots(model, seconds_since(t0), s, sources, wavelets, receivers, devices, progress);
}

// The same through a model left on its GPU (model_on_gpu), on that GPU alone: the Python half
// passes a dense float32 CUDA array here when its shots run on the array's own GPU.
nb::list run_wave_many_on_gpu(uintptr_t ptr, const std::vector<int64_t>& shape, int device, double spacing,
                              const RunSettings& s, const std::vector<HostDoubles>& sources,
                              const std::vector<HostDoubles>& wavelets,
                              const std::vector<HostDoubles>& receivers, const nb::object& progress) {
  const auto t0 = std::chrono::steady_clock::now();
  const wave::Model model = fdstencil::python::model_on_gpu(ptr, shape, device, spacing);
  return run_shots(model, seconds_since(t0), s, sources, wavelets, receivers, {device}, progress);
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
  fdstencil::python::bind_imaging(m);
  nb::class_<RunSettings>(m, "RunSettings")
      .def(nb::init<>())
      .def_rw("dt", &RunSettings::dt)
      .def_rw("nt", &RunSettings::nt)
      .def_rw("radius", &RunSettings::radius)
      .def_rw("cpml", &RunSettings::cpml)
      .def_rw("free_surface", &RunSettings::free_surface)
      .def_rw("final_field", &RunSettings::final_field)
      .def_rw("measure_bandwidth", &RunSettings::measure_bandwidth)
      .def_rw("backend", &RunSettings::backend)
      .def_rw("kernel_params", &RunSettings::kernel_params)
      .def_rw("snapshot_steps", &RunSettings::snapshot_steps);
  m.def("gpu_count", &gpu_count);
  // The current GPU's free memory in bytes; raises without a GPU.
  m.def("device_free_bytes", &cuda::device_free_bytes);
  // The device memory this process holds in fdstencil's fields and solver arrays, every GPU (the
  // tests' check that a stopped solver gave its memory back, which other processes do not move).
  m.def("device_bytes_held", &cuda::device_bytes_held);
  m.def("current_gpu", [] { return gpu_count() > 0 ? cuda::current_device() : -1; });
  m.def("host_copy_of_gpu", &host_copy_of_gpu, nb::arg("ptr"), nb::arg("bytes"));
  m.def(
      "device_of", [](uintptr_t ptr) { return cuda::device_of(reinterpret_cast<const void*>(ptr)); },
      nb::arg("ptr"));
  m.def(
      "synchronize_stream",
      [](uintptr_t handle, int device) {
        nb::gil_scoped_release nogil;
        cuda::synchronize_stream(handle, device);
      },
      nb::arg("handle"), nb::arg("device"));
  m.def(
      "gpu_name", [](int device) { return cuda::device_info(device)["name"].get<std::string>(); },
      nb::arg("device"));
  m.def("run_wave_many", &run_wave_many, nb::arg("velocity"), nb::arg("spacing"), nb::arg("settings"),
        nb::arg("sources"), nb::arg("wavelets"), nb::arg("receivers"), nb::arg("devices"),
        nb::arg("progress") = nb::none());
  m.def("run_wave_many_on_gpu", &run_wave_many_on_gpu, nb::arg("ptr"), nb::arg("shape"), nb::arg("device"),
        nb::arg("spacing"), nb::arg("settings"), nb::arg("sources"), nb::arg("wavelets"),
        nb::arg("receivers"), nb::arg("progress") = nb::none());
}
