// wave::run: checks a request whole before allocating anything, builds the state a backend steps
// (physics/acoustic.hpp's Setup), runs the time loop on the GPU or the cpu, and gathers the traces,
// snapshots and the timing.
#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>

#include <omp.h>
#include <sys/resource.h>
#include <unistd.h>

#include "physics/acoustic.hpp"
#include "cpu/acoustic.hpp"
#include "cpu/copy_bandwidth.hpp"
#include "fdstencil/coefficients.hpp"
#include "fdstencil/device_field.hpp"
#include "fdstencil/error.hpp"
#include "fdstencil/field.hpp"
#include "fdstencil/version.hpp"
#include "fdstencil/wave.hpp"
#include "fdstencil/wave_comm.hpp"
#include "wave/cpml.hpp"
#include "wave/interpolation.hpp"
#include "wave/setup.hpp"
#include "wave/overlap_probe.hpp"
#include "wave/slab.hpp"
#include "wave/slab_state.hpp"
#include "wave/split_checkpoint.hpp"
#include "wave/split_field.hpp"
#if FDSTENCIL_HAVE_CUDA
#include "fdstencil/device.hpp"
#include "cuda/wave/acoustic.hpp"
#include "cuda/wave/acoustic_backward.hpp"
#include "cuda/wave/gpu_model.hpp"
#endif

namespace fdstencil::wave {

// What Options::kept_state holds between runs: the GPU state of the last run that kept one, the
// GPU it lives on, and the key of the medium and grid it was built for (kept_key).
class KeptState {
 public:
  uint64_t key = 0;
  int device = -1;
#if FDSTENCIL_HAVE_CUDA
  std::unique_ptr<cuda::wave::AcousticGpu> gpu;
  std::shared_ptr<cuda::wave::KeptBuffer> buffer;  // the linearised solvers' stored fields
#endif
};

std::shared_ptr<KeptState> make_kept_state() { return std::make_shared<KeptState>(); }

#if FDSTENCIL_HAVE_CUDA
cuda::wave::KeptBuffer* detail::kept_buffer(const Options& o) {
  KeptState* k = o.kept_state.get();
  if (!k) return nullptr;
  k->gpu.reset();  // a forward run's state: the linearised solvers make their own
  k->key = 0;
  k->device = -1;
  if (!k->buffer) k->buffer = cuda::wave::make_kept_buffer();
  return k->buffer.get();
}

void detail::free_kept(const Options& o) {
  if (KeptState* k = o.kept_state.get()) {
    k->gpu.reset();
    k->buffer.reset();
    k->key = 0;
    k->device = -1;
  }
}
#endif

namespace {

// Whether the domain has any absorbing layer: the GPU step's defaults depend on it
// (cuda/wave/acoustic.cu). A slab of a split run sees the whole domain's.
// The share of the computational points in absorbing layers (the GPU step's defaults weigh it).
[[maybe_unused]] double layer_share(const Domain& d) {
  const int64_t n[3] = {d.nx, d.ny, d.nz};
  acoustic::PmlAxis axis[3];
  for (int a = 0; a < 3; ++a) axis[a] = {d.lo[a], d.hi[a], n[a], 0};
  return acoustic::layer_share(axis);
}

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

bool split(const Options& o) { return o.comm != nullptr && o.comm->size() > 1; }

// The computational planes this rank steps: all of them, or its slab of a split run.
Domain::Slab planes_of(const Options& o, const Domain& d) {
  return split(o) ? d.split_z(o.comm->size(), slab_layer_cost(o))[size_t(o.comm->rank())]
                  : Domain::Slab{0, d.nz};
}

#if FDSTENCIL_HAVE_CUDA
constexpr bool kBuiltWithCuda = true;
#else
constexpr bool kBuiltWithCuda = false;
#endif

bool use_gpu(const Options& o) {
  if (o.backend == "cpu") return false;
  // A split run takes the GPUs only through a transport of device memory (NCCL); "auto" then
  // takes them as a one-rank run does, and the cpu over a transport of host memory (MPI alone).
  if (split(o) && !o.comm->carries_device_memory()) {
    if (o.backend == "cuda")
      throw Error(ErrorKind::unsupported,
                  "a run split across ranks on the GPUs needs the NCCL transport; this one carries host "
                  "memory only (MPI without NCCL): use the cpu backend");
    if (o.backend != "auto") bad("unknown backend '" + o.backend + "' (valid: auto, cuda, cpu)");
    return false;
  }
  if (o.backend == "cuda") {
    if (gpu_count() == 0)
      throw Error(ErrorKind::unsupported, "--backend cuda: no GPU: " + gpu_unavailable_reason());
    if (o.double_precision)
      throw Error(ErrorKind::unsupported,
                  "the cuda backend runs in float; double precision needs the cpu backend");
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

// The model point whose velocity computational point (i, j, k) takes: the model extended into the
// absorbing layers by its edge values. Its C-order index over the whole model.
int64_t model_point(const Domain& d, int64_t i, int64_t j, int64_t k) {
  const int64_t mk = std::clamp<int64_t>(k - d.lo[2], 0, d.model_nz - 1);
  const int64_t mj = std::clamp<int64_t>(j - d.lo[1], 0, d.model_ny - 1);
  const int64_t mi = std::clamp<int64_t>(i - d.lo[0], 0, d.model_nx - 1);
  return (mk * d.model_ny + mj) * d.model_nx + mi;
}

// m = (v dt)^2 at each tap's point, in double (the arithmetic fill_m and cuda's fill_m round to
// T). A model on a GPU gives the taps' velocities from there.
std::vector<double> taps_m(const Model& model, const Domain& d, double dt,
                           const std::vector<acoustic::Tap>& taps) {
  std::vector<int64_t> at(taps.size());
  for (size_t t = 0; t < taps.size(); ++t) at[t] = model_point(d, taps[t].i, taps[t].j, taps[t].k);
  std::vector<float> v(taps.size());
  if (model.on_gpu()) {
#if FDSTENCIL_HAVE_CUDA
    v = cuda::wave::gather_model(model.gpu.v, at, model.gpu.device);
#endif
  } else {
    const int64_t plane = d.model_ny * d.model_nx;
    for (size_t t = 0; t < taps.size(); ++t) v[t] = model.plane(at[t] / plane)[at[t] % plane];
  }
  std::vector<double> m(taps.size());
  for (size_t t = 0; t < taps.size(); ++t) {
    const double vt = v[t];
    m[t] = vt * vt * dt * dt;
  }
  return m;
}

// Elements a thread zeroes at a time in fill_m: 256 KiB of float, a few pages, so that the chunks
// spread over the threads however small the model.
constexpr int64_t kZeroChunk = int64_t(1) << 16;

// The computational planes [k0, k1) of m, as local planes 0..k1-k0-1 of a slab's storage (the
// whole domain's line and plane strides, R halo planes on each side, zero there).
template <class T>
void fill_m(acoustic::Setup<T>& s, const Model& model, const Domain& d, double dt,
            const Domain::Slab& planes) {
  // The model holds the planes the slab reads (throws here, not inside the parallel loop).
  const Model::Window need = d.model_planes(planes);
  model.plane(need.k0);
  model.plane(need.k1 - 1);
  // Zeroed by the threads (the halo and the lines' padding stay zero), then the points written:
  // not by one thread paging in and zeroing the whole array before the threads' own writes.
  s.m.resize(size_t(s.alloc));
  const int64_t chunks = (s.alloc + kZeroChunk - 1) / kZeroChunk;
#pragma omp parallel for
  for (int64_t c = 0; c < chunks; ++c)
    std::fill(s.m.begin() + c * kZeroChunk, s.m.begin() + std::min(s.alloc, (c + 1) * kZeroChunk), T(0));
#pragma omp parallel for
  for (int64_t k = planes.k0; k < planes.k1; ++k) {
    const int64_t mk = std::clamp<int64_t>(k - d.lo[2], 0, d.model_nz - 1);
    for (int64_t j = 0; j < d.ny; ++j) {
      const int64_t mj = std::clamp<int64_t>(j - d.lo[1], 0, d.model_ny - 1);
      const float* row = model.plane(mk) + mj * d.model_nx;
      T* out = s.m.data() + d.index(0, j, k) - planes.k0 * d.slice;
      // taps_m's arithmetic, the row's lookups hoisted: the layers take their edge's value, and the
      // model's own points run without a clamp, so that they vectorize.
      const int64_t i0 = std::min<int64_t>(d.lo[0], d.nx), i1 = std::min<int64_t>(d.nx, d.lo[0] + d.model_nx);
      const auto layer = [&](int64_t i) {
        const double v = row[std::clamp<int64_t>(i - d.lo[0], 0, d.model_nx - 1)];
        return T(v * v * dt * dt);
      };
      for (int64_t i = 0; i < i0; ++i) out[i] = layer(i);
#pragma omp simd
      for (int64_t i = i0; i < i1; ++i) {
        const double v = row[i - i0];
        out[i] = T(v * v * dt * dt);
      }
      for (int64_t i = std::max(i0, i1); i < d.nx; ++i) out[i] = layer(i);
    }
  }
}

// The setup of the computational planes `planes` ([0, nz) for a run on one rank; a slab of a run
// split along z otherwise, built alone so that no rank holds the whole domain's m): its planes of
// m, its taps, the z CPML seen from its planes (PmlAxis::offset, the slab's first plane), and the
// free surface only where the slab holds z = 0. Without `with_m`, m stays empty: a kept GPU state
// holds it already (Options::kept_state).
template <class T>
acoustic::Setup<T> build_setup(const Model& model, const Options& o, const Domain& d, double dt,
                               double reflection, double vmax, std::vector<acoustic::Tap>&& src_taps,
                               std::vector<acoustic::Tap>&& rec_taps, const Domain::Slab& planes,
                               bool with_m = true) {
  acoustic::Setup<T> s;
  s.dim = d.dim;
  s.radius = d.radius;
  s.nx = d.nx;
  s.ny = d.ny;
  s.nz = planes.k1 - planes.k0;
  s.line = d.line;
  s.slice = d.slice;
  s.origin = d.origin;  // the same head: R halo planes, then plane 0
  s.alloc = d.alloc - d.slice * (d.nz - s.nz);
  // (without: a kept GPU state holds it already, or the state builds it from a model on its GPU,
  // which only run_gpu takes: check_model_place and detail::setup refuse it elsewhere)
  if (with_m && !model.on_gpu()) fill_m(s, model, d, dt, planes);
  const auto w2 = central_weights(2, d.radius, model.h), w1 = central_weights(1, d.radius, model.h);
  for (size_t r = 0; r < w2.size(); ++r) {
    s.w2[r] = T(w2[r]);
    s.w1[r] = T(w1[r]);
  }
  const int64_t n[3] = {d.nx, d.ny, d.nz};
  const double alpha0 = M_PI * alpha_frequency(o, sources_fmax(o, dt));
  for (int a = 0; a < 3; ++a) {
    s.axis[a] = {d.lo[a], d.hi[a], n[a]};
    s.coef[a] = detail::cpml_coefficients<T>(s.axis[a], model.h, dt, vmax, reflection, alpha0);
  }
  s.axis[2].offset = planes.k0;
  s.free_surface = o.boundary.free_surface && planes.k0 == 0;
  // The source scaling s = v^2 f delta(x - x_s): a tap of weight w adds dt^2 v^2 f w / h^dim.
  const double cell = std::pow(model.h, d.dim);
  // (the taps of the slab's planes: the others are dropped below, and their m may lie in planes
  // this rank's model does not hold)
  std::vector<acoustic::Tap> own;
  for (const acoustic::Tap& t : src_taps)
    if (t.k >= planes.k0 && t.k < planes.k1) own.push_back(t);
  const std::vector<double> m_own = taps_m(model, d, dt, own);
  size_t next = 0;
  for (acoustic::Tap& t : src_taps)
    if (t.k >= planes.k0 && t.k < planes.k1) t.w = float(double(t.w) * double(T(m_own[next++])) / cell);
  // A run on one rank keeps every tap as placed; a slab those of its planes, renumbered.
  const bool whole = planes.k0 == 0 && planes.k1 == d.nz;
  s.sources = whole ? std::move(src_taps) : detail::slab_taps(src_taps, planes);
  s.receivers = whole ? std::move(rec_taps) : detail::slab_taps(rec_taps, planes);
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

// A setup's storage geometry, CPML axes and counts without its arrays, for `nz` planes in `alloc`
// elements: the whole domain's, which a checkpoint is checked against and cut from
// (from_checkpoint), or a slab's, for its halo planes' places.
template <class T>
acoustic::Setup<T> geometry_of(const acoustic::Setup<T>& s, int64_t nz, int64_t alloc) {
  acoustic::Setup<T> g;
  g.dim = s.dim;
  g.radius = s.radius;
  g.nx = s.nx;
  g.ny = s.ny;
  g.nz = nz;
  g.line = s.line;
  g.slice = s.slice;
  g.origin = s.origin;
  g.alloc = alloc;
  for (int a = 0; a < 3; ++a) g.axis[a] = s.axis[a];
  g.nsrc = s.nsrc;
  g.nrec = s.nrec;
  g.nt = s.nt;
  return g;
}

// The whole domain's geometry seen from one of its slabs.
template <class T>
acoustic::Setup<T> whole_shape(const acoustic::Setup<T>& slab, const Domain& d) {
  acoustic::Setup<T> w = geometry_of(slab, d.nz, d.alloc);
  w.axis[2].offset = 0;
  return w;
}

// This process's resident memory at its peak so far (Linux counts ru_maxrss in KiB).
int64_t host_peak_bytes() {
  rusage u{};
  return getrusage(RUSAGE_SELF, &u) == 0 ? int64_t(u.ru_maxrss) * 1024 : 0;
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

const char* const kAxisNames[3] = {"x", "y", "z"};
const char* const kPmlNames[3] = {"psi", "chi", "phi"};

std::string state_array_name(int i) {
  if (i == 0) return "u";
  if (i == 1) return "u_prev";
  if (i == acoustic::kStateArrays - 1) return "traces";
  return std::string("pml_") + kAxisNames[(i - 2) / 3] + "_" + kPmlNames[(i - 2) % 3];
}

std::vector<std::string> state_array_names() {
  std::vector<std::string> names;
  for (int i = 0; i < acoustic::kStateArrays; ++i) names.push_back(state_array_name(i));
  return names;
}

// A checkpoint's header and named arrays, still empty, in the caller's recycled buffers when it
// gives some (Options::checkpoint_buffer): fresh memory costs its first touch, which at 512^3
// took longer than the copy itself.
Checkpoint checkpoint_frame(int64_t done, const Options& o, uint64_t fingerprint, const char* backend,
                            int element_bytes) {
  Checkpoint c = o.checkpoint_buffer ? o.checkpoint_buffer() : Checkpoint{};
  c.step = done;
  c.nt = o.nt;
  c.fingerprint = fingerprint;
  c.backend = backend;
  c.element_bytes = element_bytes;
  c.arrays.resize(acoustic::kStateArrays);
  for (int i = 0; i < acoustic::kStateArrays; ++i) c.arrays[size_t(i)].first = state_array_name(i);
  return c;
}

// A backend's state after `done` steps as a checkpoint, its arrays copied straight into the frame.
template <class Backend>
Checkpoint make_checkpoint(Backend& b, int64_t done, const Options& o, uint64_t fingerprint,
                           const char* backend, int element_bytes) {
  Checkpoint c = checkpoint_frame(done, o, fingerprint, backend, element_bytes);
  for (int i = 0; i < acoustic::kStateArrays; ++i) {
    std::vector<char>& v = c.arrays[size_t(i)].second;
    v.resize(size_t(b.state_array_bytes(i)));
    if (!v.empty()) b.copy_state_array(i, v.data());
  }
  return c;
}

// The checkpoint's arrays, checked against the run's own sizes (the fingerprint already matched,
// so a difference here means a damaged or foreign file).
template <class T>
acoustic::State<T> from_checkpoint(const Checkpoint& c, const acoustic::Setup<T>& s) {
  acoustic::State<T> st;
  st.step = c.step;
  size_t next = 0;
  const auto get = [&](const std::string& name, int64_t elements, std::vector<T>& into) {
    if (next >= c.arrays.size() || c.arrays[next].first != name)
      bad("the checkpoint has no array '" + name + "' where this run expects it");
    const std::vector<char>& b = c.arrays[next++].second;
    if (int64_t(b.size()) != elements * int64_t(sizeof(T)))
      bad("the checkpoint's array '" + name + "' holds " + std::to_string(b.size()) + " bytes, this run's " +
          std::to_string(elements * int64_t(sizeof(T))));
    into.resize(size_t(elements));
    if (!b.empty()) std::memcpy(into.data(), b.data(), b.size());
  };
  get(state_array_name(0), s.alloc, st.u);
  get(state_array_name(1), s.alloc, st.u_prev);
  for (int a = 0; a < 3; ++a)
    for (int v = 0; v < 3; ++v)
      get(state_array_name(2 + 3 * a + v), s.points_per_slot(a) * s.axis[a].slots(), st.pml[a][v]);
  get(state_array_name(acoustic::kStateArrays - 1), int64_t(s.nrec) * s.nt, st.traces);
  return st;
}

// A block of steps [n, n + k): as CUDA graphs where the stepper runs them (GpuStepper::steps),
// else one by one.
template <class Stepper>
void run_block(Stepper& st, int64_t n, int64_t k) {
  if constexpr (requires { st.steps(n, k); })
    st.steps(n, k);
  else
    for (int64_t i = 0; i < k; ++i) st.step(n + i);
}

// A stepper that marks its queue (GpuStepper): the loop enqueues blocks of steps and waits only
// for the block before the last, so the host never drains the device, nor runs far ahead of it.
template <class Stepper>
constexpr bool kMarksQueue = requires(Stepper& s) {
  s.mark(0);
  s.wait_mark(0);
  s.graph_steps();
};

// The steps of a block at most, where the stepper marks its queue: kBlockGraphs graphs, or
// kBlockSteps steps where it runs no graphs. With two blocks in flight, a stop or the last report
// waits for at most two blocks of steps.
constexpr int64_t kBlockGraphs = 4, kBlockSteps = 16;

// The time loop, shared by the backends through a stepper `st`:
// - step(n) and sync(); where it has them, steps(n, k) (a block as CUDA graphs of graph_steps()
//   steps) and mark(slot) / wait_mark(slot) (kMarksQueue);
// - stop(): stop_requested, asked of every rank of a split run together;
// - snapshot(step): the model's points of u now, the whole domain's (a split run's gathered on rank
//   0, or written by every rank), handed to on_snapshot where hands_out() (one rank, or rank 0 of
//   a split run that gathers);
// - checkpoint(steps done): the state to on_checkpoint (a split run's gathered on rank 0), or into
//   the file every rank of a split run writes its part of; its bytes.
// `checkpoints`: whether states are taken (a split run's every rank takes part in each gather).
// Runs steps [first, nt) unless a stop ends it early; returns the steps done. `started`: when the
// run began, so that its setup's time is reported. Steps go in blocks that end at the loop's
// events (a snapshot, a progress report, a checkpoint); stop() is still asked at every step
// boundary, each block's before it is enqueued.
template <class Stepper>
int64_t time_loop(Stepper& st, const Options& o, int64_t first, bool checkpoints, Timing& timing,
                  std::chrono::steady_clock::time_point started) {
  std::vector<int64_t> snaps = o.snapshot_steps;
  std::sort(snaps.begin(), snaps.end());
  snaps.erase(std::unique(snaps.begin(), snaps.end()), snaps.end());
  // A resumed run's earlier snapshots were taken by the run that wrote the checkpoint.
  size_t next_snap = size_t(std::lower_bound(snaps.begin(), snaps.end(), first) - snaps.begin());
  int64_t graph = 1, block = 1;
  if constexpr (kMarksQueue<Stepper>) {
    graph = std::max<int64_t>(1, st.graph_steps());
    block = graph > 1 ? kBlockGraphs * graph : kBlockSteps;
  }
  // Progress at whole graphs, so that no report cuts a graph short.
  const int64_t every = (std::max<int64_t>(1, o.nt / kProgressReports) + graph - 1) / graph * graph;
  double outside = 0;  // seconds spent on snapshots, checkpoints and progress, not stepping
  const auto t0 = std::chrono::steady_clock::now();
  const auto since = [](std::chrono::steady_clock::time_point a) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - a).count();
  };
  timing.setup_s = std::chrono::duration<double>(t0 - started).count();
  // Snapshots and checkpoints start from a drained device, so the steps queued before them count
  // as stepping, not as their cost.
  const auto take = [&](int64_t n) {
    while (next_snap < snaps.size() && snaps[next_snap] == n) {
      st.sync();
      const auto a = std::chrono::steady_clock::now();
      std::vector<float> field = st.snapshot(n);
      if (o.on_snapshot && st.hands_out()) o.on_snapshot(Snapshot{n, std::move(field)});
      ++next_snap;
      outside += since(a);
    }
  };
  const auto checkpoint = [&](int64_t done) {
    st.sync();
    const auto a = std::chrono::steady_clock::now();
    timing.checkpoint_bytes = st.checkpoint(done);
    const double s = since(a);
    outside += s;
    timing.checkpoint_s += s;
    ++timing.checkpoints;
  };
  int64_t shown = -1;
  const auto show = [&](int64_t done) {
    const auto a = std::chrono::steady_clock::now();
    o.progress(done, o.nt);
    shown = done;
    outside += since(a);
  };
  // After each block: the bar reports steps done, not steps queued. A stepper that marks its queue
  // waits for the block before this one and reports it where it ended at a report's step; the
  // others wait for the steps queued at each report.
  int64_t marked[2] = {-1, -1};
  int slot = 0;
  const auto block_done = [&](int64_t done) {
    if constexpr (kMarksQueue<Stepper>) {
      st.mark(slot);
      marked[slot] = done;
      slot ^= 1;
      if (marked[slot] < 0) return;
      st.wait_mark(slot);
      const int64_t k = std::exchange(marked[slot], -1);
      if (o.progress && k % every == 0) show(k);
    } else if (o.progress && (done % every == 0 || done == o.nt)) {
      st.sync();
      show(done);
    }
  };
  // The end of the block that starts at step n: the next event's step.
  const auto block_end = [&](int64_t n) {
    int64_t end = std::min(o.nt, n + block);
    if (o.progress) end = std::min(end, (n / every + 1) * every);
    if (next_snap < snaps.size()) end = std::min(end, snaps[next_snap]);
    if (o.checkpoint_every > 0 && checkpoints)
      end = std::min(end, (n / o.checkpoint_every + 1) * o.checkpoint_every);
    return end;
  };
  // The setup is over: a first report, before the steps of the first report interval.
  if (o.progress) show(first);
  int64_t n = first;
  bool stopping = false;
  while (n < o.nt && !(stopping = st.stop())) {
    take(n);
    int64_t end = block_end(n);
    for (int64_t b = n + 1; b < end && !stopping; ++b)
      if (st.stop()) {
        stopping = true;
        end = b;
      }
    run_block(st, n, end - n);
    n = end;
    block_done(n);
    if (stopping) break;
    if (o.checkpoint_every > 0 && checkpoints && n % o.checkpoint_every == 0 && n < o.nt) checkpoint(n);
  }
  st.sync();
  if (stopping && checkpoints) checkpoint(n);
  timing.loop_s = since(t0) - outside;
  // A stepper that marks its queue reports its last block here; the others reported it in the loop
  // (and, as ever, nothing at a stop).
  if constexpr (kMarksQueue<Stepper>)
    if (o.progress && shown != n) show(n);
  if (n == o.nt) take(o.nt);
  return n;
}

// What the steppers of a split run's slabs share: the stop decided by every rank together (any
// rank's request stops all of them at the same step), and snapshots and checkpoints in the one-rank
// formats: gathered on rank 0, which alone hands them on, or written into files by every rank, each
// its own part (Options::split_snapshot_file, split_checkpoint_file).
template <class T>
struct SplitShare {
  Comm& comm;
  const Options& o;
  const detail::SlabShape& g;
  const Domain& part;  // the slab's model points
  uint64_t fingerprint;
  const char* backend;
  bool poll;  // some rank has a stop_requested: every rank asks each step
  const Domain& whole;
  int64_t first_plane;  // the model's plane that is the slab's first
  bool stop() { return poll && !comm.all(!(o.stop_requested && o.stop_requested())); }
  bool hands_out() const { return comm.rank() == 0 && !o.split_snapshot_file; }
  std::vector<float> snapshot_of(const T* u, int64_t step) {
    std::vector<float> mine = part.model_nz > 0 ? model_points(u, part) : std::vector<float>{};
    if (!o.split_snapshot_file && o.split_snapshot_cut)
      return gather_to_root(comm, o.split_snapshot_cut(mine, first_plane));
    if (!o.split_snapshot_file) return gather_to_root(comm, mine);
    detail::write_field_file(comm, o.split_snapshot_file(step), whole, first_plane, mine, "snapshot");
    return {};
  }
  template <class Backend>
  int64_t checkpoint_of(Backend& b, int64_t done) {
    if (!o.split_checkpoint_file.empty()) {
      const detail::CheckpointHeader h{done, o.nt, fingerprint, backend, int(sizeof(T)), {}, 0};
      return detail::write_checkpoint_file<T>(b, comm, g, o.split_checkpoint_file, h, state_array_names());
    }
    const bool root = comm.rank() == 0;
    Checkpoint c = root ? checkpoint_frame(done, o, fingerprint, backend, int(sizeof(T))) : Checkpoint{};
    std::vector<std::vector<char>*> into(size_t(acoustic::kStateArrays), nullptr);
    if (root)
      for (int i = 0; i < acoustic::kStateArrays; ++i) into[size_t(i)] = &c.arrays[size_t(i)].second;
    detail::gather_state<T>(b, comm, g, into);
    const int64_t bytes = c.bytes();
    if (root && o.on_checkpoint) o.on_checkpoint(std::move(c));
    return bytes;
  }
};

// One slab of a run split across ranks on the cpu: each step starts with the halo exchange of u^n.
template <class T>
struct SlabStepper {
  cpu::AcousticCpu<T>& s;
  const acoustic::Setup<T>& setup;  // the slab's storage geometry, for the halo planes' places
  SplitShare<T> share;
  void step(int64_t n) {
    detail::exchange_halo(share.comm, s.current(), setup);
    s.step(n);
  }
  void sync() {}
  bool stop() { return share.stop(); }
  bool hands_out() const { return share.hands_out(); }
  std::vector<float> snapshot(int64_t step) { return share.snapshot_of(s.current(), step); }
  int64_t checkpoint(int64_t done) { return share.checkpoint_of(s, done); }
};

template <class T>
struct CpuStepper {
  cpu::AcousticCpu<T>& s;
  const Domain& d;
  const Options& o;
  uint64_t fingerprint;
  void step(int64_t n) { s.step(n); }
  void sync() {}
  bool stop() { return o.stop_requested && o.stop_requested(); }
  bool hands_out() const { return true; }
  std::vector<float> snapshot(int64_t) { return model_points(s.current(), d); }
  int64_t checkpoint(int64_t done) {
    Checkpoint c = make_checkpoint(s, done, o, fingerprint, "cpu", int(sizeof(T)));
    const int64_t bytes = c.bytes();
    o.on_checkpoint(std::move(c));
    return bytes;
  }
};

#if FDSTENCIL_HAVE_CUDA
// One slab of a run split across GPUs: the chunks that write u^{n+1}'s faces, then its halo
// exchange on its own stream beside the other chunks, or after them when the overlap is off.
// Options::Overlap::automatic times both paths over the run's first steps (OverlapProbe) and
// keeps the faster; rank 0's choice is every rank's.
struct GpuSlabStepper {
  cuda::wave::AcousticGpu& s;
  SplitShare<float> share;
  int64_t first;                 // the loop's first step (a resume's step)
  bool probing, overlap;         // probing: the path still being chosen; overlap: the path chosen
  bool decided = false;          // the probe timed both paths
  double on_ms = 0, off_ms = 0;  // rank 0's fastest block per step of each path, ms
  int64_t alloc;                 // the slab's storage in elements
  std::vector<float> scratch;    // a host copy of it, made at the first snapshot or final field
  detail::OverlapProbe probe{};
  std::chrono::steady_clock::time_point block_start{};

  GpuSlabStepper(cuda::wave::AcousticGpu& state, SplitShare<float> sh, int64_t first_step, int64_t slab_alloc)
      : s(state),
        share(sh),
        first(first_step),
        probing(sh.o.overlap == Options::Overlap::automatic &&
                detail::OverlapProbe::probes(sh.o.nt - first_step)),
        overlap(sh.o.overlap != Options::Overlap::off),
        alloc(slab_alloc) {}

  void step(int64_t n) {
    const int64_t i = n - first;
    if (probing && detail::OverlapProbe::starts_block(i)) {
      sync();
      block_start = std::chrono::steady_clock::now();
    }
    const cuda::wave::AcousticGpu::Halo h = s.step_faces(n);
    share.comm.exchange_device(h.to_lower, h.from_lower, h.to_upper, h.from_upper, h.bytes, h.stream);
    s.step_inside(n, probing ? detail::OverlapProbe::overlap_at(i) : overlap);
    if (probing && detail::OverlapProbe::ends_block(i)) {
      sync();
      probe.record(i, std::chrono::duration<double>(std::chrono::steady_clock::now() - block_start).count());
      if (i + 1 == detail::OverlapProbe::kSteps) decide();
    }
  }
  // Rank 0's measurement decides for every rank; the exchange's sampled timing starts again on
  // the path kept, so the summary's figures are that path's.
  void decide() {
    // Rank 0's choice and figures are every rank's.
    double said[3] = {probe.overlap_wins() ? 1.0 : 0.0, probe.on_ms(), probe.off_ms()};
    share.comm.broadcast(said, int64_t(sizeof said));
    overlap = said[0] != 0;
    on_ms = said[1];
    off_ms = said[2];
    probing = false;
    decided = true;
    s.restart_split_timing();
  }
  void sync() { s.synchronize(); }
  bool stop() { return share.stop(); }
  bool hands_out() const { return share.hands_out(); }
  // u^n on the host (the slab's storage).
  const std::vector<float>& download() {
    scratch.resize(size_t(alloc));
    s.download_current(scratch.data());
    return scratch;
  }
  std::vector<float> snapshot(int64_t step) { return share.snapshot_of(download().data(), step); }
  int64_t checkpoint(int64_t done) { return share.checkpoint_of(s, done); }
  // The path taken, and each path's per-step time where both were timed.
  void report(Timing& t) const {
    t.overlap = probing ? "not chosen: the run stopped while timing both" : (overlap ? "on" : "off");
    if (decided) {
      t.probe_on_ms = on_ms;
      t.probe_off_ms = off_ms;
    }
  }
};

struct GpuStepper {
  cuda::wave::AcousticGpu& s;
  const Domain& d;
  const Options& o;
  uint64_t fingerprint;
  // The storage, for snapshots and the final field: made at the first, since a survey's shots
  // mostly take neither, and each would otherwise fault in pages the size of its state.
  std::vector<float> scratch;
  void step(int64_t n) { s.step(n); }
  void steps(int64_t n, int64_t k) { s.steps(n, k); }
  int graph_steps() const { return s.graph_steps(); }
  void mark(int slot) { s.mark(slot); }
  void wait_mark(int slot) { s.wait_mark(slot); }
  void sync() { s.synchronize(); }
  bool stop() { return o.stop_requested && o.stop_requested(); }
  bool hands_out() const { return true; }
  std::vector<float> snapshot(int64_t) {
    scratch.resize(size_t(d.alloc));
    s.download_current(scratch.data());
    return model_points(scratch.data(), d);
  }
  int64_t checkpoint(int64_t done) {
    Checkpoint c = make_checkpoint(s, done, o, fingerprint, "cuda", int(sizeof(float)));
    const int64_t bytes = c.bytes();
    o.on_checkpoint(std::move(c));
    return bytes;
  }
};
#endif

// A checkpoint to resume from must be this run's, from this backend and precision, and not past
// its end.
// `C`: a Checkpoint, or a checkpoint file's header.
template <class C>
void check_resume(const C& c, uint64_t fingerprint, const std::string& backend, bool double_precision) {
  if (c.fingerprint != fingerprint)
    bad("the checkpoint belongs to a different run: its fingerprint (one hash of the model, the time step "
        "and "
        "steps, the boundary, the sources, their wavelets and the receivers) differs from this run's, so "
        "one of them differs from those that wrote it");
  if (c.backend != backend)
    bad("the checkpoint was written by the " + c.backend + " backend and this run is on " + backend +
        ": a run resumes bit for bit only on the backend that wrote it (pass --backend " + c.backend + ")");
  if (c.element_bytes != (double_precision ? 8 : 4))
    bad(std::string("the checkpoint is in ") + (c.element_bytes == 8 ? "double" : "float") +
        " precision, this run in " + (double_precision ? "double" : "float"));
  if (c.step < 0 || c.step > c.nt)
    bad("the checkpoint's step " + std::to_string(c.step) + " is outside 0..nt");
}

void check_options(const Model& model, const Options& o) {
  model.validate();
  if (o.radius < 1 || o.radius > 8) bad("radius " + std::to_string(o.radius) + " is outside 1..8");
  if (o.nt < 1) bad("a run needs at least 1 time step, got " + std::to_string(o.nt));
  if (o.checkpoint_every < 0)
    bad("checkpoint_every must be 0 (none) or positive, got " + std::to_string(o.checkpoint_every));
  if (!(o.layer_plane_cost == 0 || (std::isfinite(o.layer_plane_cost) && o.layer_plane_cost >= 1)))
    bad("layer_plane_cost must be 0 (the radius's default) or at least 1, got " +
        fmt("%g", o.layer_plane_cost));
  if (o.sources.empty()) bad("a run needs at least one source");
  if (!(o.cfl_safety > 0 && o.cfl_safety <= 1))
    bad("the CFL safety factor must be in (0, 1], got " + fmt("%g", o.cfl_safety));
  if (!std::isfinite(o.dt) || o.dt < 0)
    bad("dt must be positive (or 0 for the default), got " + fmt("%g", o.dt));
  if (o.boundary.reflection < 0 || o.boundary.reflection >= 1)
    bad("the CPML reflection must be in (0, 1) (or 0 for the default), got " +
        fmt("%g", o.boundary.reflection));
  if (!o.split_resume_file.empty() && !split(o))
    bad("split_resume_file resumes a run split across ranks: one rank takes Options::resume");
  if (!o.split_resume_file.empty() && o.resume)
    bad("resume and split_resume_file both name a state to resume from");
  for (int64_t s : o.snapshot_steps)
    if (s < 0 || s > o.nt)
      bad("snapshot step " + std::to_string(s) + " is outside 0.." + std::to_string(o.nt));
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

double slab_layer_cost(const Options& o) {
  return o.layer_plane_cost > 0 ? o.layer_plane_cost : default_layer_plane_cost(o.radius);
}

double run_dt(const Model& model, const Options& o) {
  return o.dt > 0 ? o.dt : o.cfl_safety * max_stable_dt(model.dim, o.radius, model.h, model.vmax());
}

namespace {

// u and u_prev, and the absorbing layers' three memory arrays per axis: what a step reads and
// writes besides the velocity, and what a checkpoint keeps.
int64_t field_bytes(const Domain& d, int64_t element_bytes) {
  const int64_t slots[3] = {d.lo[0] + d.hi[0], d.lo[1] + d.hi[1], d.lo[2] + d.hi[2]};
  const int64_t per_slot[3] = {d.nz * d.ny, d.nz * d.nx, d.ny * d.nx};
  int64_t b = 2 * d.alloc * element_bytes;
  for (int a = 0; a < 3; ++a) b += 3 * slots[a] * per_slot[a] * element_bytes;
  return b;
}

}  // namespace

int64_t state_bytes(const Domain& d, const Options& o, bool on_device) {
  const int64_t e = on_device || !o.double_precision ? 4 : 8;
  int64_t b = field_bytes(d, e) + d.alloc * e;  // and the velocity
  b += (int64_t(o.sources.size()) + int64_t(o.receivers.size())) * o.nt * e;
  // The taps, and the sorted copy the GPU state makes of them.
  const int64_t per_axis = o.interpolation == Interpolation::hicks ? 8 : 2;
  const int64_t per_point = d.dim == 3 ? per_axis * per_axis * per_axis : per_axis * per_axis;
  b += (int64_t(o.sources.size()) + int64_t(o.receivers.size())) * per_point * 2 *
       int64_t(sizeof(acoustic::Tap));
  return b;
}

int64_t checkpoint_bytes(const Domain& d, const Options& o, bool on_device) {
  const int64_t e = on_device || !o.double_precision ? 4 : 8;
  return field_bytes(d, e) + int64_t(o.receivers.size()) * o.nt * e;
}

namespace {

// sampling_warning's, for a model whose smallest velocity is vmin.
std::string sampling_warning_at(double vmin, const Model& model, const Options& o, double dt) {
  const double fmax = sources_fmax(o, dt);
  if (fmax <= 0) return "";
  const double ppw = vmin / fmax / model.h, needed = points_per_wavelength_needed(o.radius);
  if (ppw >= needed) return "";
  char buf[400];
  std::snprintf(buf, sizeof buf,
                "the model is under-sampled for the source: %.2f points per shortest wavelength (vmin %.0f "
                "m/s at %.1f Hz, the wavelet's highest significant frequency, h = %g m) where order %d needs "
                "%.2f for a phase-velocity error within 1 %%",
                ppw, vmin, fmax, model.h, 2 * o.radius, needed);
  return buf;
}

}  // namespace

std::string sampling_warning(const Model& model, const Options& o, double dt) {
  return sampling_warning_at(model.vmin(), model, o, dt);
}

namespace {

// What run() and check() find before anything large is allocated: the step, the domain, and the
// sources' and receivers' taps (which place every position inside the model or refuse it).
struct Checked {
  float vmin = 0, vmax = 0;  // the model's extremes: one pass over it, which a big model makes slow
  double dt = 0, dt_limit = 0;
  Domain d;
  std::vector<acoustic::Tap> src_taps, rec_taps;
  std::vector<size_t> on_surface;  // receivers on a free surface: no taps, a zero trace
};

// Ends the setup's phase `name` (Timing::setup_phases): its seconds are those since the run began
// less the phases before it.
void phase_done(Timing& t, const char* name, std::chrono::steady_clock::time_point start) {
  double before = 0;
  for (const auto& p : t.setup_phases) before += p.second;
  const double since = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  t.setup_phases.emplace_back(name, since - before);
}

Checked checked(const Model& model, const Options& o) {
  check_options(model, o);
  Checked c;
  std::tie(c.vmin, c.vmax) = model.extremes();
  c.dt_limit = max_stable_dt(model.dim, o.radius, model.h, c.vmax);
  if (o.dt > c.dt_limit)
    bad("dt = " + fmt("%.6g", o.dt) + " s exceeds the stability limit " + fmt("%.6g", c.dt_limit) +
        " s of order " + std::to_string(2 * o.radius) + " in " + std::to_string(model.dim) + "D at vmax " +
        fmt("%.0f", c.vmax) + " m/s and h = " + fmt("%g", model.h) + " m");
  c.dt = o.dt > 0 ? o.dt : o.cfl_safety * c.dt_limit;
  c.d = Domain::make(model.dim, o.radius, model.nz, model.ny, model.nx, o.boundary);
  if (split(o)) c.d.split_z(o.comm->size(), slab_layer_cost(o));  // refuses slabs thinner than the radius
  // Ids and tap counts are 32-bit in the taps and the GPU's per-block lists.
  if (o.sources.size() + o.receivers.size() > size_t(INT32_MAX) / size_t(kMaxTapsPerPoint))
    bad(std::to_string(o.sources.size()) + " sources and " + std::to_string(o.receivers.size()) +
        " receivers: at most " + std::to_string(INT32_MAX / kMaxTapsPerPoint) + " together");
  return c;
}

// The sources' and receivers' taps into c: after the memory for them is checked (issue 33: three
// million receivers took 13 s to build before their memory was refused).
void add_taps(Checked& c, const Model& model, const Options& o) {
  for (size_t i = 0; i < o.sources.size(); ++i) {
    auto t = detail::taps_of(o.sources[i].at, int(i), "source " + std::to_string(i), c.d, model.h,
                             o.interpolation, o.boundary.free_surface);
    if (t.empty())
      bad("source " + std::to_string(i) +
          " lies on the free surface, where u = 0: it would inject nothing (place it below z = 0)");
    c.src_taps.insert(c.src_taps.end(), t.begin(), t.end());
  }
  for (size_t i = 0; i < o.receivers.size(); ++i) {
    auto t = detail::taps_of(o.receivers[i], int(i), "receiver " + std::to_string(i), c.d, model.h,
                             o.interpolation, o.boundary.free_surface);
    if (t.empty()) c.on_surface.push_back(i);
    c.rec_taps.insert(c.rec_taps.end(), t.begin(), t.end());
  }
}

}  // namespace

namespace {

// Every rank can write into the folders of the files it writes its part of (Options::split_*),
// checked before the vote: a failure to write after it ends every rank's process.
void check_split_folders(const Options& o, int rank) {
  std::vector<std::filesystem::path> files;
  if (!o.split_checkpoint_file.empty() && (o.checkpoint_every > 0 || o.stop_requested))
    files.push_back(o.split_checkpoint_file);
  if (!o.split_final_file.empty() && o.final_field) files.push_back(o.split_final_file);
  if (o.split_snapshot_file && !o.snapshot_steps.empty())
    files.push_back(o.split_snapshot_file(o.snapshot_steps[0]));
  for (const std::filesystem::path& f : files) {
    const std::filesystem::path dir = f.has_parent_path() ? f.parent_path() : std::filesystem::path(".");
    if (::access(dir.c_str(), W_OK | X_OK) != 0)
      throw Error(ErrorKind::io, "rank " + std::to_string(rank) + " cannot write into " + dir.string() +
                                     " (" + std::strerror(errno) +
                                     "): the ranks of a split run write their parts of " +
                                     f.filename().string() + " there, and must share the folder");
  }
}

// A split run's one vote, after every rank has built its slab and before the first exchange.
struct SplitVote {
  bool cast = false, passed = false;
};

// This rank's slab of a run split across ranks: its setup (built for its planes alone), the time loop
// with a halo exchange each step, then every rank's traces summed and final fields gathered on
// rank 0 (a receiver whose taps all lie in one slab gets exactly its one-rank trace: the other
// ranks add zeros). `split_fingerprint` is this rank's run (model, options, backend, build): the
// ranks compare theirs at the vote. `fingerprint` is the run's own, for checkpoints. Rank 0's
// Options::resume, checked against the whole domain before the vote, is cut into every slab
// after it.
template <class T>
void run_slab(acoustic::Setup<T>& built, const Options& o, const Domain& d, Result& res, SplitVote& vote,
              bool gpu, uint64_t split_fingerprint, uint64_t fingerprint,
              const detail::CheckpointHeader* resume_head, std::chrono::steady_clock::time_point started) {
  Comm& comm = *o.comm;
  const Domain::Slab mine = planes_of(o, d);
  std::optional<acoustic::State<T>> resumed;
  if (comm.rank() == 0 && o.resume) resumed = from_checkpoint(*o.resume, whole_shape(built, d));
  acoustic::Setup<T> setup = std::move(built);
  const detail::SlabShape g = detail::slab_shape(setup, d, mine, comm.rank(), comm.size());
  // Or each rank's own part of a checkpoint file, read before the vote (once the setup is in the
  // state: the two are not held at once) and checked after it.
  std::optional<detail::FileCut<T>> file_cut;
  // The storage geometry alone, for the halo planes' places: the cpu state takes the setup itself.
  const acoustic::Setup<T> shape = geometry_of(setup, setup.nz, setup.alloc);
  // The slab's model planes, model points only: its planes minus the absorbing layers.
  Domain part = d;
  const int64_t lo = std::max<int64_t>(mine.k0, d.lo[2]),
                hi = std::min<int64_t>(mine.k1, d.lo[2] + d.model_nz);
  part.model_nz = std::max<int64_t>(0, hi - lo);
  part.lo[2] = int(lo - mine.k0);
  // Every rank has its slab: the vote (see run()), then the same run on every rank: whether any
  // rank polls a stop, and the state to resume from.
  bool poll = false;
  const auto vote_then_resume = [&](auto& state) {
    check_split_folders(o, comm.rank());
    if (resume_head)
      file_cut = detail::read_checkpoint_cut<T>(o.split_resume_file, *resume_head, g, state_array_names());
    vote.cast = true;
    if (!comm.all(true))
      throw Error(ErrorKind::io, "another rank failed before the run started (its own error says why)");
    if (!comm.same(split_fingerprint))
      bad("the ranks were given different runs: the model, the options or the backend differ between ranks");
    // A damaged file stops every rank together, with the same error.
    if (file_cut) detail::verify_checkpoint_cut(comm, o.split_resume_file, *resume_head, file_cut->parts);
    vote.passed = true;
    poll = !comm.all(!o.stop_requested);
    std::optional<acoustic::State<T>> from =
        file_cut ? std::optional(std::move(file_cut->state))
                 : detail::scatter_state(comm, g, resumed ? &*resumed : nullptr);
    file_cut.reset();
    resumed.reset();
    if (from) state.restore(*from);
    res.first_step = from ? from->step : 0;
  };
  const char* backend = gpu ? "cuda" : "cpu";
  const int64_t first_plane = lo - d.lo[2];
  const auto share = [&] {
    return SplitShare<T>{comm, o, g, part, fingerprint, backend, poll, d, first_plane};
  };
  std::vector<T> traces;
  std::vector<float> field;
  bool ran = false;
#if FDSTENCIL_HAVE_CUDA
  if constexpr (std::is_same_v<T, float>) {
    if (gpu) {
      // (run_on_this_rank measured the copy bandwidth before the setup was built)
      const auto config = cuda::wave::parse_config(o.kernel_params, d.dim, d.radius, d.nx * d.ny,
                                                   layer_share(d), /*slabs=*/true);
      cuda::wave::AcousticGpu state(setup, config);
      setup = acoustic::Setup<T>{};
      res.kernel = state.describe();
      res.timing.device_bytes = state.bytes();
      vote_then_resume(state);
      // One exchange before the timed loop: NCCL connects its peers at their first send.
      const cuda::wave::AcousticGpu::Halo h = state.current_halo();
      comm.exchange_device(h.to_lower, h.from_lower, h.to_upper, h.from_upper, h.bytes, h.stream);
      state.synchronize();
      GpuSlabStepper st(state, share(), res.first_step, shape.alloc);
      res.steps_done = time_loop(st, o, res.first_step, true, res.timing, started);
      st.report(res.timing);
      const auto t = state.split_timing();
      res.timing.exchange_ms = t.exchange_ms;
      res.timing.inside_ms = t.inside_ms;
      if (res.steps_done == o.nt) {
        traces = state.traces();
        if (o.final_field && part.model_nz > 0) field = model_points(st.download().data(), part);
      }
      ran = true;
    }
  }
#endif
  if (!ran) {
    if (gpu) throw Error(ErrorKind::unsupported, "this build has no CUDA backend");
    cpu::AcousticCpu<T> state(std::move(setup));
    res.timing.device_bytes = state.bytes();
    vote_then_resume(state);
    SlabStepper<T> st{state, shape, share()};
    res.steps_done = time_loop(st, o, res.first_step, true, res.timing, started);
    if (res.steps_done == o.nt) {
      traces.assign(state.traces().begin(), state.traces().end());
      if (o.final_field && part.model_nz > 0) field = model_points(state.current(), part);
    }
  }
  // What each rank held: its state on the device (or host), and its host memory at its peak.
  res.rank_device_bytes = gather_to_root(comm, std::vector<int64_t>{res.timing.device_bytes});
  res.rank_host_peak_bytes = gather_to_root(comm, std::vector<int64_t>{host_peak_bytes()});
  // Every rank stopped at the same step (stop() is decided together): an interrupted run, like a
  // one-rank one, returns no traces and no field.
  if (res.steps_done < o.nt) return;
  comm.sum_to_root(traces.data(), int64_t(traces.size()));
  const bool to_file = o.final_field && !o.split_final_file.empty();
  if (to_file) detail::write_field_file(comm, o.split_final_file, d, first_plane, field, "final field");
  std::vector<float> whole_field =
      o.final_field && !to_file ? gather_to_root(comm, field) : std::vector<float>{};
  if (comm.rank() == 0) {
    res.traces.assign(traces.begin(), traces.end());
    res.final_field = std::move(whole_field);
  }
}

}  // namespace

namespace {
void check_memory(const Model& model, const Options& o, const Domain& d, bool gpu, bool device);  // below
}  // namespace

void check(const Model& model, const Options& o) {
  Checked c = checked(model, o);
  const bool gpu = use_gpu(o);
  // What run() refuses before its first step, in its order: the host's memory, the taps, the
  // launch. Not the device's memory: asking for it makes a CUDA context on the thread's current
  // GPU, and a survey's ranks check every shot before each selects its own (GPU 0 in every rank).
  check_memory(model, o, c.d, gpu, false);
  add_taps(c, model, o);
#if FDSTENCIL_HAVE_CUDA
  if (gpu) cuda::wave::parse_config(o.kernel_params, c.d.dim, c.d.radius, c.d.nx * c.d.ny, layer_share(c.d));
#endif
}

namespace {

Result run_on_this_rank(const Model& model, const Options& o, SplitVote* vote);

}  // namespace

// A run split across ranks must not leave ranks waiting for one that failed. Before the vote, a
// rank that fails votes no and throws its own error, and the others throw "another rank failed";
// a failure after the vote (a progress callback, memory for the gather) ends every rank's process.
Result run(const Model& model, const Options& o) {
  if (!split(o)) return run_on_this_rank(model, o, nullptr);
  SplitVote vote;
  try {
    return run_on_this_rank(model, o, &vote);
  } catch (const std::exception& e) {
    if (vote.passed) o.comm->abort(e.what());
    if (!vote.cast) o.comm->all(false);
    throw;
  }
}

namespace {

// The figures of a finished run. A split run's GPts/s counts the whole domain over this rank's
// loop time (every rank steps in lockstep with its neighbours), and its bound is all the ranks'
// copy bandwidth, each rank's taken as this one's.
Result finish(Result& res, const Domain& d, std::chrono::steady_clock::time_point start) {
  res.interrupted = res.steps_done < res.nt;
  res.timing.gpts =
      double(d.points()) * double(res.steps_done - res.first_step) / std::max(res.timing.loop_s, 1e-12) / 1e9;
  if (res.timing.copy_gbps > 0) {
    res.timing.bound_gpts = res.ranks * res.timing.copy_gbps / res.timing.bytes_per_point;
    res.timing.percent_of_bound = 100.0 * res.timing.gpts / res.timing.bound_gpts;
  }
  res.timing.total_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return std::move(res);
}

// The host and device memory a run needs, before anything the size of the domain is allocated:
// the backend's state, and on the host the setup's m, one field for snapshots and the final
// field; a slab of a split run its share (`device`: the GPU's too, on the thread's current GPU). A
// model held in part (a split run's rank) must hold the planes this slab reads.
void check_memory(const Model& model, const Options& o, const Domain& d, bool gpu, bool device) {
  const Domain::Slab planes = planes_of(o, d);
  if (const Model::Window need = d.model_planes(planes);
      need.k0 < model.z0 || need.k1 > model.z0 + model.planes())
    bad("the model holds planes " + std::to_string(model.z0) + ".." +
        std::to_string(model.z0 + model.planes() - 1) + " and this rank's slab reads " +
        std::to_string(need.k0) + ".." + std::to_string(need.k1 - 1));
  const double share = double(planes.k1 - planes.k0) / double(d.nz);
  const int64_t state = int64_t(double(state_bytes(d, o, gpu)) * share);
  const int64_t host_elem = o.double_precision ? 8 : 4;
  const int64_t slab_alloc = d.alloc - d.slice * (d.nz - (planes.k1 - planes.k0));
  const int64_t host = gpu ? 2 * slab_alloc * host_elem : state + slab_alloc * host_elem;
  ensure_host_memory(host, "the wave solver's host state");
#if FDSTENCIL_HAVE_CUDA
  // A split run's slab checks its own share when its state is made (AcousticGpu).
  if (gpu && device && !split(o)) cuda::ensure_device_memory(state, "the wave solver's state");
#else
  (void)device;  // without CUDA there is no device to check
#endif
}

// A model on a GPU runs on that GPU, on one rank: the host never reads its values.
void check_model_place(const Model& model, const Options& o, bool gpu) {
  if (!model.on_gpu()) return;
  const std::string where = "the model's values are on GPU " + std::to_string(model.gpu.device);
  if (!gpu) bad(where + ": it runs on the cuda backend, not the cpu");
  if (split(o)) bad(where + ": a run split across ranks reads its model on the host");
#if FDSTENCIL_HAVE_CUDA
  if (cuda::current_device() != model.gpu.device)
    bad(where + " and this run is on GPU " + std::to_string(cuda::current_device()) + ": run it on GPU " +
        std::to_string(model.gpu.device));
#endif
}

void add_warnings(Result& res, const Model& model, const Options& o, const Checked& c) {
  if (const std::string w = sampling_warning_at(c.vmin, model, o, res.dt); !w.empty())
    res.warnings.push_back(w);
  if (!c.on_surface.empty())
    res.warnings.push_back(
        std::to_string(c.on_surface.size()) + " receiver(s), the first receiver " +
        std::to_string(c.on_surface.front()) +
        ", lie on the free surface, where u = 0: their traces are zero (place them below z = 0)");
}

// What a split run's ranks compare: the checkpoint's fingerprint, the backend, the precision, the
// launch parameters, the steps that gather (snapshots, checkpoints), and their builds (the
// version, whether CUDA is in it, the transport's kind). The overlap's choice (a probe
// broadcasts) and the final field (a gather) are collectives too. 0 for a run on one rank.
uint64_t split_fingerprint_of(const Options& o, const std::string& backend, uint64_t fingerprint) {
  if (!split(o)) return 0;
  std::string gathers = " checkpoint_every ";
  gathers += std::to_string(o.checkpoint_every);
  gathers += " overlap " + std::to_string(int(o.overlap)) + (o.final_field ? " final" : " no-final");
  gathers += " layer-plane-cost " + fmt("%.17g", slab_layer_cost(o));  // the ranks' slabs
  gathers += o.split_checkpoint_file.empty() ? " gathered-checkpoints" : " file-checkpoints";
  gathers += o.split_resume_file.empty() ? "" : " resume-file";
  gathers += o.split_snapshot_file ? " snapshot-files" : o.split_snapshot_cut ? " snapshot-cuts" : "";
  gathers += o.split_final_file.empty() ? "" : " final-file";
  gathers += " snapshots";
  for (int64_t n : o.snapshot_steps) {
    gathers += ' ';
    gathers += std::to_string(n);
  }
  const std::string build = std::string(kVersion) + (kBuiltWithCuda ? " cuda" : " cpu-only") +
                            (o.comm->carries_device_memory() ? " device-transport" : " host-transport");
  return fingerprint ^
         std::hash<std::string>{}(build + " " + backend + (o.double_precision ? " double " : " float ") +
                                  o.kernel_params + gathers);
}

// A run's identity and where it starts: the fingerprints its checkpoints and ranks compare, and
// the checkpoint (in memory or a split run's file) it resumes from, checked.
struct Identity {
  uint64_t fingerprint = 0, split_fingerprint = 0;
  std::optional<detail::CheckpointHeader> resume_head;  // a split run's checkpoint file's header
};

Identity identity_of(const Model& model, const Options& o, Result& res) {
  Identity id;
  // The fingerprint reads the whole model: only a run that checkpoints or resumes pays for it (and
  // a split run, whose ranks compare it).
  if (split(o) || o.resume || (o.on_checkpoint && (o.checkpoint_every > 0 || o.stop_requested)))
    id.fingerprint = run_fingerprint(model, o);
  if (o.resume) check_resume(*o.resume, id.fingerprint, res.backend, o.double_precision);
  // A split run's checkpoint file: every rank reads its header (small) and checks it as resume's.
  if (!o.split_resume_file.empty()) {
    id.resume_head = detail::read_head(o.split_resume_file);
    check_resume(*id.resume_head, id.fingerprint, res.backend, o.double_precision);
  }
  res.first_step = o.resume ? o.resume->step : id.resume_head ? id.resume_head->step : 0;
  id.split_fingerprint = split_fingerprint_of(o, res.backend, id.fingerprint);
  return id;
}

#if FDSTENCIL_HAVE_CUDA
// What a kept GPU state was built for: the medium's values and shape, the radius, dt (m is
// (v dt)^2), the domain's storage and layers, the launch parameters and the GPU. A run with the
// same key takes the kept state's m and allocation (Options::kept_state).
uint64_t kept_key(const Model& model, const Options& o, const Checked& c) {
  const Domain& d = c.d;
  std::string k = fmt("%.17g", model.h) + " " + fmt("%.17g", c.dt) + " " + o.kernel_params;
  for (int64_t v :
       {int64_t(model.dim), model.nz, model.ny, model.nx, int64_t(model.checksum()), int64_t(o.radius), d.nx,
        d.ny, d.nz, d.alloc, d.line, d.slice, d.origin, int64_t(cuda::current_device())})
    k.append(" ").append(std::to_string(v));  // (" " + string: a GCC 12 -Wrestrict false positive)
  for (int a = 0; a < 3; ++a)
    k.append(" ").append(std::to_string(d.lo[a])).append(" ").append(std::to_string(d.hi[a]));
  return std::hash<std::string>{}(k);
}

// The kept state of this run when it takes one (the same key on the same GPU), else nullptr; a
// state kept for another medium or GPU is freed here, before this run's memory is checked.
KeptState* take_kept(const Options& o, bool gpu, uint64_t& key, const Model& model, const Checked& c) {
  KeptState* kept = gpu && !split(o) ? o.kept_state.get() : nullptr;
  if (!kept) return nullptr;
  kept->buffer.reset();  // a linearised pass's stored fields: of no use to a forward run
  key = kept_key(model, o, c);
  if (kept->gpu && kept->key == key && kept->device == cuda::current_device()) return kept;
  kept->gpu.reset();
  return nullptr;
}

void run_gpu(const Model& model, const Options& o, Checked& c, Result& res, const Identity& id,
             SplitVote* vote, std::chrono::steady_clock::time_point start, KeptState* reuse, uint64_t key) {
  const Domain& d = c.d;
  const auto config = cuda::wave::parse_config(o.kernel_params, d.dim, d.radius, d.nx * d.ny, layer_share(d));
  if (o.kernel_params.empty())
    if (std::string notice = cuda::wave::untuned_card_notice(
            cuda::device_info(cuda::current_device())["name"].get<std::string>());
        !notice.empty())
      res.warnings.push_back(std::move(notice));
  // The copy bandwidth of this run, before the state takes the memory: 1 GiB buffers, 20x the L2.
  if (o.measure_bandwidth) {
    res.timing.copy_gbps = cuda::measure_copy_bandwidth(int64_t(1) << 30, 10).memcpy_gbps;
    phase_done(res.timing, "copy_probe", start);
  }
  auto setup = build_setup<float>(model, o, d, res.dt, res.reflection, c.vmax, std::move(c.src_taps),
                                  std::move(c.rec_taps), planes_of(o, d), reuse == nullptr);
  phase_done(res.timing, "medium", start);
  cuda::wave::MediumOnGpu medium;  // a model on this GPU: the state builds m from it
  if (model.on_gpu()) {
    medium.v = model.gpu.v;
    medium.nz = model.nz;
    medium.ny = model.ny;
    medium.nx = model.nx;
    for (int a = 0; a < 3; ++a) medium.lo[a] = d.lo[a];
    medium.dt = res.dt;
  }
  if (split(o))
    return run_slab(setup, o, d, res, *vote, true, id.split_fingerprint, id.fingerprint,
                    id.resume_head ? &*id.resume_head : nullptr, start);
  // The run owns its state while it steps: a failure frees it, and a kept one is not kept then.
  std::unique_ptr<cuda::wave::AcousticGpu> owned;
  if (reuse) {
    owned = std::move(reuse->gpu);
    owned->renew(setup);
    res.timing.state_kept = true;
  } else {
    owned = std::make_unique<cuda::wave::AcousticGpu>(setup, config, model.on_gpu() ? &medium : nullptr);
  }
  phase_done(res.timing, "state", start);
  cuda::wave::AcousticGpu& gpu_state = *owned;
  if (o.resume) {
    gpu_state.restore(from_checkpoint(*o.resume, setup));
    phase_done(res.timing, "resume", start);
  }
  setup.m.clear();
  setup.m.shrink_to_fit();
  res.kernel = gpu_state.describe();
  res.timing.device_bytes = gpu_state.bytes();
  GpuStepper st{gpu_state, d, o, id.fingerprint, {}};
  res.steps_done = time_loop(st, o, res.first_step, o.on_checkpoint != nullptr, res.timing, start);
  if (res.steps_done == o.nt) {
    res.traces = gpu_state.traces();
    if (o.final_field) res.final_field = st.snapshot(o.nt);
  }
  if (KeptState* keep = o.kept_state.get(); keep && !split(o)) {
    keep->gpu = std::move(owned);
    keep->key = key;
    keep->device = cuda::current_device();
  }
}
#endif

// The host copy's buffers and the shortest run that measures it: 512 MiB each, past a server's
// last-level cache (this project's development machine reports 480 MiB of L3), and runs of 10^9
// point-steps or more (a second or more on two cores), beside which the probe's half second of
// allocation and copies is small. Shorter runs (the tests') report no bound. It runs after the
// time loop (run_cpu), outside loop_s and inside total_s.
constexpr int64_t kHostCopyBytes = int64_t(512) << 20;
constexpr double kHostCopyMinPointSteps = 1e9;

template <class T>
void run_cpu_typed(const Model& model, const Options& o, Checked& c, Result& res, const Identity& id,
                   SplitVote* vote, std::chrono::steady_clock::time_point start) {
  const Domain& d = c.d;
  res.timing.threads = omp_get_max_threads();
  res.timing.bytes_per_point = double(kInteriorBytesPerPoint) * double(sizeof(T)) / double(sizeof(float));
  auto setup = build_setup<T>(model, o, d, res.dt, res.reflection, c.vmax, std::move(c.src_taps),
                              std::move(c.rec_taps), planes_of(o, d));
  phase_done(res.timing, "medium", start);
  if (split(o))
    return run_slab(setup, o, d, res, *vote, false, id.split_fingerprint, id.fingerprint,
                    id.resume_head ? &*id.resume_head : nullptr, start);
  std::optional<acoustic::State<T>> resumed;
  if (o.resume) resumed = from_checkpoint(*o.resume, setup);
  cpu::AcousticCpu<T> cpu_state(std::move(setup));
  phase_done(res.timing, "state", start);
  if (resumed) {
    cpu_state.restore(*resumed);
    resumed.reset();
    phase_done(res.timing, "resume", start);
  }
  res.timing.device_bytes = cpu_state.bytes();
  CpuStepper<T> st{cpu_state, d, o, id.fingerprint};
  res.steps_done = time_loop(st, o, res.first_step, o.on_checkpoint != nullptr, res.timing, start);
  if (res.steps_done == o.nt) {
    res.traces.assign(cpu_state.traces().begin(), cpu_state.traces().end());
    if (o.final_field) res.final_field = model_points(cpu_state.current(), d);
  }
}

void run_cpu(const Model& model, const Options& o, Checked& c, Result& res, const Identity& id,
             SplitVote* vote, std::chrono::steady_clock::time_point start) {
  // Kernel parameters name a GPU launch shape: refused when the cpu was asked for, noted when
  // "auto" found no GPU (so one command line serves machines with and without one).
  if (!o.kernel_params.empty()) {
    if (o.backend == "cpu") bad("kernel parameters apply to the cuda backend only");
    res.warnings.push_back("no GPU: the kernel parameters were ignored on the cpu backend");
  }
  res.kernel = o.double_precision ? "cpu double" : "cpu float";
  if (o.double_precision)
    run_cpu_typed<double>(model, o, c, res, id, vote, start);
  else
    run_cpu_typed<float>(model, o, c, res, id, vote, start);
  // The host's copy, once the state is freed and the run has finished: a stop asked for during the
  // probe would wait for it, and a stopped run reports no bound. Not in a split run, whose ranks
  // share the host.
  if (o.measure_bandwidth && !split(o) && res.steps_done == o.nt &&
      double(c.d.points()) * double(res.steps_done - res.first_step) >= kHostCopyMinPointSteps)
    res.timing.copy_gbps = cpu::measure_copy_bandwidth(kHostCopyBytes, 5);
}

// The run() options the linearised solvers do not serve, refused by name: taken and ignored, a
// resume would give the products of a run from rest, and a snapshot, checkpoint or launch asked
// for would silently not be there. (They serve progress: core/stop.hpp's ProgressScope; and a
// kept state, where the GPU's backward pass keeps its stored fields' buffer: kept_buffer.)
void refuse_unserved(const Options& o) {
  const auto refuse = [](const char* what) {
    bad(std::string(what) +
        ": the linearised solvers (modelled, born, the adjoints, rtm, gradient) do not serve it");
  };
  if (o.resume != nullptr || !o.split_resume_file.empty()) refuse("resume");
  if (!o.snapshot_steps.empty() || o.on_snapshot || o.split_snapshot_file || o.split_snapshot_cut)
    refuse("snapshots");
  if (o.checkpoint_every > 0 || o.on_checkpoint || !o.split_checkpoint_file.empty()) refuse("checkpoints");
  if (!o.kernel_params.empty()) refuse("kernel parameters");
  if (!o.split_final_file.empty()) refuse("split_final_file");
}

}  // namespace

template <class T>
acoustic::Setup<T> detail::setup(const Model& model, const Options& o, detail::SetupFrame& frame) {
  if (split(o)) bad("the linearised solvers run on one rank");
  refuse_unserved(o);
  if (model.on_gpu())
    bad("the model's values are on GPU " + std::to_string(model.gpu.device) +
        ": the linearised solvers build their medium on the host; give them the model's values there");
  Checked c = checked(model, o);
  check_memory(model, o, c.d, false, true);
  add_taps(c, model, o);
  const double reflection =
      o.boundary.reflection > 0 ? o.boundary.reflection : detail::default_reflection(o.boundary.cpml_width);
  frame = {c.d, c.dt, c.vmax};
  return build_setup<T>(model, o, c.d, c.dt, reflection, c.vmax, std::move(c.src_taps), std::move(c.rec_taps),
                        Domain::Slab{0, c.d.nz});
}

template acoustic::Setup<float> detail::setup(const Model&, const Options&, detail::SetupFrame&);
template acoustic::Setup<double> detail::setup(const Model&, const Options&, detail::SetupFrame&);

// use_gpu first: "cuda" in a build without CUDA is refused as run() refuses it, not run on the cpu.
bool detail::on_gpu(const Options& o) { return use_gpu(o) && kBuiltWithCuda; }

namespace {

Result run_on_this_rank(const Model& model, const Options& o, SplitVote* vote) {
  const auto start = std::chrono::steady_clock::now();
  Checked c = checked(model, o);
  Result res;
  phase_done(res.timing, "checks", start);
  res.dt_limit = c.dt_limit;
  res.dt = c.dt;
  res.nt = o.nt;
  res.domain = c.d;
  const bool gpu = use_gpu(o);
  check_model_place(model, o, gpu);
  res.backend = gpu ? "cuda" : "cpu";
  KeptState* reuse = nullptr;
  [[maybe_unused]] uint64_t key = 0;  // (a cpu-only build keeps no state)
#if FDSTENCIL_HAVE_CUDA
  reuse = take_kept(o, gpu, key, model, c);
#endif
  // A kept state of this run's size holds the device memory the check would look for.
  check_memory(model, o, c.d, gpu, reuse == nullptr);
  phase_done(res.timing, "memory", start);
  add_taps(c, model, o);
  add_warnings(res, model, o, c);
  phase_done(res.timing, "taps", start);
  res.reflection =
      o.boundary.reflection > 0 ? o.boundary.reflection : detail::default_reflection(o.boundary.cpml_width);
  res.timing.bytes_per_point = kInteriorBytesPerPoint;
  const Identity id = identity_of(model, o, res);
  if (split(o)) res.ranks = o.comm->size();
  phase_done(res.timing, "identity", start);
#if FDSTENCIL_HAVE_CUDA
  if (gpu) run_gpu(model, o, c, res, id, vote, start, reuse, key);
#endif
  if (!gpu) run_cpu(model, o, c, res, id, vote, start);
  return finish(res, c.d, start);
}

}  // namespace

}  // namespace fdstencil::wave
