// wave::run: checks a request whole before allocating anything, builds the state a backend steps
// (core/acoustic.hpp's Setup), runs the time loop on the GPU or the cpu, and gathers the traces,
// snapshots and the timing.
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cmath>
#include <cstdio>
#include <string>

#include "core/acoustic.hpp"
#include "cpu/acoustic.hpp"
#include "fdstencil/coefficients.hpp"
#include "fdstencil/device_field.hpp"
#include "fdstencil/error.hpp"
#include "fdstencil/field.hpp"
#include "fdstencil/wave.hpp"
#include "wave/cpml.hpp"
#include "wave/interpolation.hpp"
#if FDSTENCIL_HAVE_CUDA
#include "cuda/device.hpp"
#include "cuda/wave/acoustic.hpp"
#endif

namespace fdstencil::wave {

namespace {

[[noreturn]] void bad(const std::string& what) { throw Error(ErrorKind::invalid_argument, what); }

// The interior step's DRAM traffic per point: u^n, u^{n-1} and m read, u^{n+1} written.
constexpr double kInteriorBytesPerPoint = 4 * sizeof(float);
// Taps per source or receiver at most: Hicks' 8 per axis.
constexpr int64_t kMaxTapsPerPoint = 8 * 8 * 8;
// Progress reports per run at most: often enough for a smooth bar, rarely enough that the GPU's
// queue (drained at each) never runs dry for long.
constexpr int64_t kProgressReports = 200;

std::string fmt(const char* f, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, f, v);
  return buf;
}

bool use_gpu(const Options& o) {
  if (o.backend == "cpu") return false;
  if (o.backend == "cuda") {
    if (gpu_count() == 0) throw Error(ErrorKind::unsupported, "--backend cuda: no GPU: " + gpu_unavailable_reason());
    if (o.double_precision)
      throw Error(ErrorKind::unsupported, "the cuda backend runs in float; double precision needs the cpu backend");
    return true;
  }
  if (o.backend != "auto") bad("unknown backend '" + o.backend + "' (valid: auto, cuda, cpu)");
  return gpu_count() > 0 && !o.double_precision;
}

// The sources' highest significant frequency, the spectrum computed once per distinct wavelet
// (sources usually share one: 2000 sources once cost 127 s of direct transforms here).
double sources_fmax(const Options& o, double dt) {
  double f = 0;
  const std::vector<double>* last = nullptr;
  for (const Source& s : o.sources) {
    if (last && *last == s.wavelet) continue;
    f = std::max(f, highest_significant_frequency(s.wavelet, dt));
    last = &s.wavelet;
  }
  return f;
}

double alpha_frequency(const Options& o, double fmax) {
  if (o.boundary.cpml_frequency > 0) return o.boundary.cpml_frequency;
  // A Ricker's highest significant frequency is 2.76 f0 (wave.hpp): this recovers f0 for one,
  // and a comparable centre for other wavelets.
  return fmax / 2.76;
}

template <class T>
acoustic::Setup<T> build_setup(const Model& model, const Options& o, const Domain& d, double dt, double reflection,
                               std::vector<acoustic::Tap>&& src_taps, std::vector<acoustic::Tap>&& rec_taps) {
  acoustic::Setup<T> s;
  s.dim = d.dim;
  s.radius = d.radius;
  s.nx = d.nx;
  s.ny = d.ny;
  s.nz = d.nz;
  s.line = d.line;
  s.slice = d.slice;
  s.origin = d.origin;
  s.alloc = d.alloc;
  s.m.assign(size_t(d.alloc), T(0));
  // The model extended into the absorbing layers by its edge values.
  for (int64_t k = 0; k < d.nz; ++k) {
    const int64_t mk = std::clamp<int64_t>(k - d.lo[2], 0, d.model_nz - 1);
    for (int64_t j = 0; j < d.ny; ++j) {
      const int64_t mj = std::clamp<int64_t>(j - d.lo[1], 0, d.model_ny - 1);
      const float* row = model.v.data() + (mk * d.model_ny + mj) * d.model_nx;
      T* out = s.m.data() + d.index(0, j, k);
      for (int64_t i = 0; i < d.nx; ++i) {
        const double v = row[std::clamp<int64_t>(i - d.lo[0], 0, d.model_nx - 1)];
        out[i] = T(v * v * dt * dt);
      }
    }
  }
  const auto w2 = central_weights(2, d.radius, model.h), w1 = central_weights(1, d.radius, model.h);
  for (size_t r = 0; r < w2.size(); ++r) {
    s.w2[r] = T(w2[r]);
    s.w1[r] = T(w1[r]);
  }
  const int64_t n[3] = {d.nx, d.ny, d.nz};
  const double alpha0 = M_PI * alpha_frequency(o, sources_fmax(o, dt));
  for (int a = 0; a < 3; ++a) {
    s.axis[a] = {d.lo[a], d.hi[a], n[a]};
    s.coef[a] = detail::cpml_coefficients<T>(s.axis[a], model.h, dt, model.vmax(), reflection, alpha0);
  }
  s.free_surface = o.boundary.free_surface;
  // The source scaling s = v^2 f delta(x - x_s): a tap of weight w adds dt^2 v^2 f w / h^dim.
  const double cell = std::pow(model.h, d.dim);
  for (acoustic::Tap& t : src_taps) t.w = float(double(t.w) * double(s.m[size_t(d.index(t.i, t.j, t.k))]) / cell);
  s.sources = std::move(src_taps);
  s.receivers = std::move(rec_taps);
  s.nsrc = int(o.sources.size());
  s.nrec = int(o.receivers.size());
  s.nt = o.nt;
  s.wavelets.assign(size_t(s.nsrc) * size_t(o.nt), T(0));
  for (int i = 0; i < s.nsrc; ++i) {
    const auto& w = o.sources[size_t(i)].wavelet;
    for (int64_t t = 0; t < std::min<int64_t>(o.nt, int64_t(w.size())); ++t)
      s.wavelets[size_t(i) * size_t(o.nt) + size_t(t)] = T(w[size_t(t)]);
  }
  return s;
}

// The model's points of a field on the domain's storage.
template <class T>
std::vector<float> model_points(const T* field, const Domain& d) {
  std::vector<float> out(size_t(d.model_nz * d.model_ny * d.model_nx));
  for (int64_t k = 0; k < d.model_nz; ++k)
    for (int64_t j = 0; j < d.model_ny; ++j) {
      const T* row = field + d.index(d.lo[0], j + d.lo[1], k + d.lo[2]);
      float* o = out.data() + (k * d.model_ny + j) * d.model_nx;
      for (int64_t i = 0; i < d.model_nx; ++i) o[i] = float(row[i]);
    }
  return out;
}

// The time loop, shared by the backends through `stepper`: step(n), current() (synchronous,
// the whole storage) and sync().
template <class Stepper, class T>
void time_loop(Stepper& st, const Options& o, const Domain& d, std::vector<T>& scratch, double& loop_s) {
  std::vector<int64_t> snaps = o.snapshot_steps;
  std::sort(snaps.begin(), snaps.end());
  snaps.erase(std::unique(snaps.begin(), snaps.end()), snaps.end());
  size_t next_snap = 0;
  const int64_t every = std::max<int64_t>(1, o.nt / kProgressReports);
  double outside = 0;  // seconds spent on snapshots and progress, not stepping
  const auto t0 = std::chrono::steady_clock::now();
  const auto take = [&](int64_t n) {
    while (next_snap < snaps.size() && snaps[next_snap] == n) {
      const auto a = std::chrono::steady_clock::now();
      st.current(scratch.data());
      if (o.on_snapshot) o.on_snapshot(Snapshot{n, model_points(scratch.data(), d)});
      ++next_snap;
      outside += std::chrono::duration<double>(std::chrono::steady_clock::now() - a).count();
    }
  };
  for (int64_t n = 0; n < o.nt; ++n) {
    take(n);
    st.step(n);
    if (o.progress && ((n + 1) % every == 0 || n + 1 == o.nt)) {
      st.sync();  // the bar reports steps done, not steps queued
      const auto a = std::chrono::steady_clock::now();
      o.progress(n + 1, o.nt);
      outside += std::chrono::duration<double>(std::chrono::steady_clock::now() - a).count();
    }
  }
  st.sync();
  loop_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() - outside;
  take(o.nt);
}

template <class T>
struct CpuStepper {
  cpu::AcousticCpu<T>& s;
  int64_t alloc;
  void step(int64_t n) { s.step(n); }
  void current(T* out) { std::copy_n(s.current(), alloc, out); }
  void sync() {}
};

#if FDSTENCIL_HAVE_CUDA
struct GpuStepper {
  cuda::wave::AcousticGpu& s;
  void step(int64_t n) { s.step(n); }
  void current(float* out) { s.download_current(out); }
  void sync() { s.synchronize(); }
};
#endif

void check_options(const Model& model, const Options& o) {
  model.validate();
  if (o.radius < 1 || o.radius > 8) bad("radius " + std::to_string(o.radius) + " is outside 1..8");
  if (o.nt < 1) bad("a run needs at least 1 time step, got " + std::to_string(o.nt));
  if (o.sources.empty()) bad("a run needs at least one source");
  if (!(o.cfl_safety > 0 && o.cfl_safety <= 1)) bad("the CFL safety factor must be in (0, 1], got " + fmt("%g", o.cfl_safety));
  if (!std::isfinite(o.dt) || o.dt < 0) bad("dt must be positive (or 0 for the default), got " + fmt("%g", o.dt));
  if (o.boundary.reflection < 0 || o.boundary.reflection >= 1)
    bad("the CPML reflection must be in (0, 1) (or 0 for the default), got " + fmt("%g", o.boundary.reflection));
  for (int64_t s : o.snapshot_steps)
    if (s < 0 || s > o.nt) bad("snapshot step " + std::to_string(s) + " is outside 0.." + std::to_string(o.nt));
  for (size_t i = 0; i < o.sources.size(); ++i)
    for (double v : o.sources[i].wavelet)
      if (!std::isfinite(v)) bad("source " + std::to_string(i) + "'s wavelet has a non-finite sample");
}

}  // namespace

Interpolation parse_interpolation(const std::string& name) {
  if (name == "hicks") return Interpolation::hicks;
  if (name == "trilinear") return Interpolation::trilinear;
  bad("unknown interpolation '" + name + "' (valid: hicks, trilinear)");
}

double run_dt(const Model& model, const Options& o) {
  return o.dt > 0 ? o.dt : o.cfl_safety * max_stable_dt(model.dim, o.radius, model.h, model.vmax());
}

int64_t state_bytes(const Domain& d, const Options& o, bool on_device) {
  const int64_t e = on_device || !o.double_precision ? 4 : 8;
  const int64_t slots[3] = {d.lo[0] + d.hi[0], d.lo[1] + d.hi[1], d.lo[2] + d.hi[2]};
  const int64_t per_slot[3] = {d.nz * d.ny, d.nz * d.nx, d.ny * d.nx};
  int64_t b = 3 * d.alloc * e;
  for (int a = 0; a < 3; ++a) b += 3 * slots[a] * per_slot[a] * e;
  b += (int64_t(o.sources.size()) + int64_t(o.receivers.size())) * o.nt * e;
  b += (int64_t(o.sources.size()) + int64_t(o.receivers.size())) * kMaxTapsPerPoint * 24;
  return b;
}

std::string sampling_warning(const Model& model, const Options& o, double dt) {
  const double fmax = sources_fmax(o, dt);
  if (fmax <= 0) return "";
  const double ppw = model.vmin() / fmax / model.h, needed = points_per_wavelength_needed(o.radius);
  if (ppw >= needed) return "";
  char buf[400];
  std::snprintf(buf, sizeof buf,
                "the model is under-sampled for the source: %.2f points per shortest wavelength (vmin %.0f m/s at "
                "%.1f Hz, the wavelet's highest significant frequency, h = %g m) where order %d needs %.2f for a "
                "phase-velocity error within 1 %%",
                ppw, double(model.vmin()), fmax, model.h, 2 * o.radius, needed);
  return buf;
}

Result run(const Model& model, const Options& o) {
  const auto start = std::chrono::steady_clock::now();
  check_options(model, o);
  Result res;
  res.dt_limit = max_stable_dt(model.dim, o.radius, model.h, model.vmax());
  if (o.dt > res.dt_limit)
    bad("dt = " + fmt("%.6g", o.dt) + " s exceeds the stability limit " + fmt("%.6g", res.dt_limit) +
        " s of order " + std::to_string(2 * o.radius) + " in " + std::to_string(model.dim) + "D at vmax " +
        fmt("%.0f", model.vmax()) + " m/s and h = " + fmt("%g", model.h) + " m");
  res.dt = run_dt(model, o);
  res.nt = o.nt;
  const Domain d = Domain::make(model.dim, o.radius, model.nz, model.ny, model.nx, o.boundary);
  res.domain = d;
  const bool gpu = use_gpu(o);
  res.backend = gpu ? "cuda" : "cpu";
  // Positions and their taps (cheap) before any large allocation.
  // Ids and tap counts are 32-bit in the taps and the GPU's per-block lists.
  if (o.sources.size() + o.receivers.size() > size_t(INT32_MAX) / size_t(kMaxTapsPerPoint))
    bad(std::to_string(o.sources.size()) + " sources and " + std::to_string(o.receivers.size()) +
        " receivers: at most " + std::to_string(INT32_MAX / kMaxTapsPerPoint) + " together");
  std::vector<acoustic::Tap> src_taps, rec_taps;
  std::vector<size_t> on_surface;  // receivers on a free surface: no taps, a zero trace
  for (size_t i = 0; i < o.sources.size(); ++i) {
    auto t = detail::taps_of(o.sources[i].at, int(i), "source " + std::to_string(i), d, model.h, o.interpolation,
                             o.boundary.free_surface);
    if (t.empty())
      bad("source " + std::to_string(i) + " lies on the free surface, where u = 0: it would inject nothing "
          "(place it below z = 0)");
    src_taps.insert(src_taps.end(), t.begin(), t.end());
  }
  for (size_t i = 0; i < o.receivers.size(); ++i) {
    auto t = detail::taps_of(o.receivers[i], int(i), "receiver " + std::to_string(i), d, model.h, o.interpolation,
                             o.boundary.free_surface);
    if (t.empty()) on_surface.push_back(i);
    rec_taps.insert(rec_taps.end(), t.begin(), t.end());
  }
  // Memory, before anything the size of the domain is allocated: the backend's state, and on the
  // host the setup's m, one field for snapshots and the final field.
  const int64_t state = state_bytes(d, o, gpu);
  const int64_t host_elem = o.double_precision ? 8 : 4;
  const int64_t host = gpu ? 2 * d.alloc * host_elem : state + d.alloc * host_elem;
  ensure_host_memory(host, "the wave solver's host state");
#if FDSTENCIL_HAVE_CUDA
  if (gpu) cuda::ensure_device_memory(state, "the wave solver's state");
#endif
  if (const std::string w = sampling_warning(model, o, res.dt); !w.empty()) res.warnings.push_back(w);
  if (!on_surface.empty())
    res.warnings.push_back(std::to_string(on_surface.size()) + " receiver(s), the first receiver " +
                           std::to_string(on_surface.front()) +
                           ", lie on the free surface, where u = 0: their traces are zero (place them below z = 0)");
  res.reflection = o.boundary.reflection > 0 ? o.boundary.reflection : detail::default_reflection(o.boundary.cpml_width);
  res.timing.bytes_per_point = kInteriorBytesPerPoint;

  if (gpu) {
#if FDSTENCIL_HAVE_CUDA
    const auto config = cuda::wave::parse_config(o.kernel_params, d.dim, d.radius);
    // The copy bandwidth of this run, before the state takes the memory: 1 GiB buffers, 20x the L2.
    res.timing.copy_gbps = cuda::measure_copy_bandwidth(int64_t(1) << 30, 10).memcpy_gbps;
    auto setup = build_setup<float>(model, o, d, res.dt, res.reflection, std::move(src_taps), std::move(rec_taps));
    cuda::wave::AcousticGpu gpu_state(setup, config);
    setup.m.clear();
    setup.m.shrink_to_fit();
    res.kernel = gpu_state.describe();
    res.timing.device_bytes = gpu_state.bytes();
    std::vector<float> scratch(size_t(d.alloc));
    GpuStepper st{gpu_state};
    time_loop(st, o, d, scratch, res.timing.loop_s);
    res.traces = gpu_state.traces();
    st.current(scratch.data());
    res.final_field = model_points(scratch.data(), d);
#endif
  } else {
    // Kernel parameters name a GPU launch shape: refused when the cpu was asked for, noted when
    // "auto" found no GPU (so one command line serves machines with and without one).
    if (!o.kernel_params.empty()) {
      if (o.backend == "cpu") bad("kernel parameters apply to the cuda backend only");
      res.warnings.push_back("no GPU: the kernel parameters were ignored on the cpu backend");
    }
    const auto cpu_run = [&](auto zero) {
      using T = decltype(zero);
      cpu::AcousticCpu<T> cpu_state(
          build_setup<T>(model, o, d, res.dt, res.reflection, std::move(src_taps), std::move(rec_taps)));
      res.timing.device_bytes = cpu_state.bytes();
      std::vector<T> scratch(size_t(d.alloc));
      CpuStepper<T> st{cpu_state, d.alloc};
      time_loop(st, o, d, scratch, res.timing.loop_s);
      res.traces.assign(cpu_state.traces().begin(), cpu_state.traces().end());
      res.final_field = model_points(cpu_state.current(), d);
    };
    res.kernel = o.double_precision ? "cpu double" : "cpu float";
    if (o.double_precision)
      cpu_run(double(0));
    else
      cpu_run(float(0));
  }
  res.timing.gpts = double(d.points()) * double(o.nt) / std::max(res.timing.loop_s, 1e-12) / 1e9;
  if (res.timing.copy_gbps > 0) {
    res.timing.bound_gpts = res.timing.copy_gbps / res.timing.bytes_per_point;
    res.timing.percent_of_bound = 100.0 * res.timing.gpts / res.timing.bound_gpts;
  }
  res.timing.total_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return res;
}

}  // namespace fdstencil::wave
