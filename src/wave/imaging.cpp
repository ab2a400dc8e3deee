// Born modelling, its adjoint and the FWI gradient (fdstencil/imaging.hpp): the forward step is
// the backend's (cpu::AcousticCpu, cuda::wave::AcousticGpu), its transpose
// cpu::AcousticAdjointCpu or cuda::wave::AcousticAdjointGpu.
//
// Everything that depends on m in u^{n+1} = 2 u^n - u^{n-1} + m L(u^n) + m w f^n / h^dim is
// proportional to it, so du^{n+1}/dm = (u^{n+1} - 2 u^n + u^{n-1}) / m pointwise, the sources'
// scaling included; on a free surface, where the step sets u^{n+1} to zero before the sources
// are added, it is u^{n+1} / m (the sources' part alone). Born's source term and the gradient's
// correlation both read this dudm, so the pair is exact whatever its round-off.
#include "fdstencil/imaging.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <optional>
#include <string>
#include <utility>

#include <unistd.h>

#include "core/revolve.hpp"
#include "core/stop.hpp"
#include "core/unwritten_allocator.hpp"
#include "cpu/acoustic.hpp"
#include "cpu/acoustic_adjoint.hpp"
#include "cpu/acoustic_reverse.hpp"
#include "fdstencil/error.hpp"
#include "physics/reversal.hpp"
#include "wave/setup.hpp"
#if FDSTENCIL_HAVE_CUDA
#include "cuda/wave/acoustic_backward.hpp"
#include "cuda/wave/acoustic_born.hpp"
#endif

namespace fdstencil::wave {

namespace {

[[noreturn]] void bad(const std::string& what) { throw Error(ErrorKind::invalid_argument, what); }

int64_t model_points(const Model& model) { return model.nz * model.ny * model.nx; }

void check_size(std::span<const double> a, int64_t want, const std::string& name, const std::string& shape) {
  if (int64_t(a.size()) != want)
    bad(name + ": expected " + std::to_string(want) + " values " + shape + ", got " +
        std::to_string(a.size()));
  for (size_t i = 0; i < a.size(); ++i)
    if (!std::isfinite(a[i])) bad(name + ": value " + std::to_string(i) + " is not finite");
}

std::string traces_shape(const Options& o) {
  // Appended piece by piece: GCC 12 warns (-Wrestrict, a false positive) on the one-expression form.
  std::string s = "(";
  s += std::to_string(o.receivers.size());
  s += " receivers x ";
  s += std::to_string(o.nt);
  s += " steps)";
  return s;
}

// f(p, point) for every computational point p and the model point it takes its velocity from
// (the layers take their edge's: the medium's extension, solver.cpp's model_point), the planes of p over
// the threads: f may write p's element, not point's.
template <class F>
void for_each_point(const Domain& d, F&& f) {
#pragma omp parallel for schedule(static)
  for (int64_t k = 0; k < d.nz; ++k) {
    const int64_t mk = std::clamp<int64_t>(k - d.lo[2], 0, d.model_nz - 1);
    for (int64_t j = 0; j < d.ny; ++j) {
      const int64_t mj = std::clamp<int64_t>(j - d.lo[1], 0, d.model_ny - 1);
      for (int64_t i = 0; i < d.nx; ++i) {
        const int64_t mi = std::clamp<int64_t>(i - d.lo[0], 0, d.model_nx - 1);
        f(d.index(i, j, k), (mk * d.model_ny + mj) * d.model_nx + mi);
      }
    }
  }
}

// dm/dv = 2 v dt^2 at model point `point`.
double dm_dv(const Model& model, int64_t point, double dt) {
  const int64_t plane = model.ny * model.nx;
  return 2.0 * double(model.plane(point / plane)[point % plane]) * dt * dt;
}

// The threads copy n elements in chunks: a field a step copied by one thread left the others
// spinning at the next parallel region (a fifth of a cpu gradient's samples), and paged a fresh
// store in alone.
constexpr size_t kCopyChunk = size_t(1) << 16;  // 256 KiB of float: a share of L2, many per thread

template <class T>
void copy_over_threads(const T* from, size_t n, T* to) {
  const int64_t chunks = int64_t((n + kCopyChunk - 1) / kCopyChunk);
#pragma omp parallel for schedule(static)
  for (int64_t c = 0; c < chunks; ++c) {
    const size_t b = size_t(c) * kCopyChunk;
    std::copy_n(from + b, std::min(kCopyChunk, n - b), to + b);
  }
}

template <class T>
void zero_over_threads(T* to, size_t n) {
  const int64_t chunks = int64_t((n + kCopyChunk - 1) / kCopyChunk);
#pragma omp parallel for schedule(static)
  for (int64_t c = 0; c < chunks; ++c) {
    const size_t b = size_t(c) * kCopyChunk;
    std::fill_n(to + b, std::min(kCopyChunk, n - b), T(0));
  }
}

// dudm for step n: (u^{n+1} - 2 u^n + u^{n-1}) / m, and u^{n+1} / m on a free surface.
template <class T>
void dudm(const acoustic::Setup<T>& s, const T* next, const T* cur, const T* prev, T* out) {
#pragma omp parallel for schedule(static)
  for (int64_t k = 0; k < s.nz; ++k)
    for (int64_t j = 0; j < s.ny; ++j) {
      const int64_t row = s.origin + j * s.line + k * s.slice;
      const bool surface = s.free_surface && k == 0;
      for (int64_t i = row; i < row + s.nx; ++i)
        out[i] = (surface ? next[i] : next[i] - T(2) * cur[i] + prev[i]) / s.m[size_t(i)];
    }
}

// The forward run, handing `each(n, dudm)` du^{n+1}/dm of every step n.
template <class T, class Each>
std::vector<T> forward(const acoustic::Setup<T>& s, Each&& each) {
  cpu::AcousticCpu<T> run{acoustic::Setup<T>(s)};
  const size_t n = size_t(s.alloc);
  std::vector<T> prev(n, T(0)), cur(n, T(0)), d(n, T(0));
  for (int64_t step = 0; step < s.nt; ++step) {
    core::poll_stop();
    copy_over_threads(run.current(), n, cur.data());
    run.step(step);
    dudm(s, run.current(), cur.data(), prev.data(), d.data());
    each(step, d.data());
    std::swap(prev, cur);
  }
  return run.traces();
}

// The computational indices [first, last] along one axis that take model index m's velocity: its
// own, and on an edge the layer's points beyond it.
std::pair<int64_t, int64_t> takers(int64_t m, int64_t model_n, int lo, int64_t n) {
  return {m == 0 ? 0 : m + lo, m == model_n - 1 ? n - 1 : m + lo};
}

// A sum the backward pass accumulates over the computational points: the cpu's in double in the
// storage layout, or the GPU's in float and compact (nx ny nz, x fastest), read where it lies
// rather than copied into the storage layout first.
struct Sums {
  std::vector<double> storage;
  std::vector<float, UnwrittenAllocator<float>> compact;
  double at(const Domain& d, int64_t i, int64_t j, int64_t k) const {
    return compact.empty() ? storage[size_t(d.index(i, j, k))]
                           : double(compact[size_t((k * d.ny + j) * d.nx + i)]);
  }
};

// The velocity-space result of a gradient over m (the computational points): dm/dv of each
// point's velocity times the sum over the points that take it (in the order of their storage, so
// that the result does not depend on the threads).
std::vector<double> to_velocity(const Model& model, const Domain& d, double dt, const Sums& grad_m) {
  std::vector<double> g(size_t(model_points(model)));
#pragma omp parallel for collapse(2) schedule(static)
  for (int64_t mk = 0; mk < d.model_nz; ++mk)
    for (int64_t mj = 0; mj < d.model_ny; ++mj) {
      const auto [k0, k1] = takers(mk, d.model_nz, d.lo[2], d.nz);
      const auto [j0, j1] = takers(mj, d.model_ny, d.lo[1], d.ny);
      const int64_t row = (mk * d.model_ny + mj) * d.model_nx;
      for (int64_t mi = 0; mi < d.model_nx; ++mi) {
        const auto [i0, i1] = takers(mi, d.model_nx, d.lo[0], d.nx);
        double sum = 0;
        for (int64_t k = k0; k <= k1; ++k)
          for (int64_t j = j0; j <= j1; ++j)
            for (int64_t i = i0; i <= i1; ++i) sum += grad_m.at(d, i, j, k);
        g[size_t(row + mi)] = sum * dm_dv(model, row + mi, dt);
      }
    }
  return g;
}

// What the backward pass accumulates over the computational points (Sums: where each backend keeps them): sum over
// steps of ubar^{n+1} du^{n+1}/dm (the adjoint's correlation, d misfit / dm), and when asked the
// zero-lag cross-correlation sum of u^n ubar^n and the source's illumination sum of (u^n)^2; and
// the forward run's traces.
struct Backward {
  Sums adjoint, cross, illumination;
  std::vector<double> traces;
  StorageReport report;
};

// The adjoint's input from the forward traces: their residual against `data`, or `data` itself.
struct AdjointInput {
  std::span<const double> data;
  bool residual;
  template <class T>
  std::vector<T> operator()(const std::vector<T>& traces) const {
    std::vector<T> dd(data.begin(), data.end());
    if (residual)
      for (size_t i = 0; i < dd.size(); ++i) dd[i] = traces[i] - dd[i];
    return dd;
  }
};

double seconds_since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

int64_t host_bytes() { return int64_t(sysconf(_SC_PHYS_PAGES)) * int64_t(sysconf(_SC_PAGESIZE)); }

// The cpu's forward state and, once its traces are in, the adjoint, with the adjoint step's work.
template <class T>
struct CpuPass {
  const acoustic::Setup<T>& s;
  AdjointInput input;
  Backward& out;
  bool cross;
  cpu::AcousticCpu<T> run;
  std::optional<cpu::AcousticAdjointCpu<T>> adj;
  std::vector<T> dd, du;
  std::chrono::steady_clock::time_point start = std::chrono::steady_clock::now();

  CpuPass(const acoustic::Setup<T>& setup, AdjointInput in, Backward& o, bool c)
      : s(setup), input(in), out(o), cross(c), run(acoustic::Setup<T>(setup)) {}
  void start_adjoint() {
    out.traces.assign(run.traces().begin(), run.traces().end());
    out.report.forward_s = seconds_since(start);
    dd = input(run.traces());
    du.assign(size_t(s.alloc), T(0));
    adj.emplace(s);
    const size_t n = size_t(s.alloc);
    out.adjoint.storage.assign(n, 0.0);
    if (cross) {
      out.cross.storage.assign(n, 0.0);
      out.illumination.storage.assign(n, 0.0);
    }
  }
  // The adjoint of step n from u^{n+1}, u^n and u^{n-1} (storage layout).
  void adjoint(int64_t n, const T* next, const T* cur, const T* prev) {
    dudm(s, next, cur, prev, du.data());
    adj->step(n, dd.data(), du.data(), out.adjoint.storage.data(), nullptr);
    if (!cross) return;
    const T* ubar = adj->current();
#pragma omp parallel for schedule(static)
    for (int64_t i = 0; i < s.alloc; ++i) {  // zero outside the computational points in both fields
      out.cross.storage[size_t(i)] += double(cur[i]) * double(ubar[i]);
      out.illumination.storage[size_t(i)] += double(cur[i]) * double(cur[i]);
    }
  }
};

// Every step's field kept: u^0 .. u^nt (u^0 = 0, the run starting at rest, and u^{-1}'s stand-in).
template <class T>
void cpu_every_field(CpuPass<T>& p) {
  const size_t n = size_t(p.s.alloc);
  // u^1 .. u^nt are written (over the threads) before they are read: only u^0 is zeroed.
  std::vector<T, UnwrittenAllocator<T>> fields((size_t(p.s.nt) + 1) * n);
  p.out.report.stored_bytes = int64_t(fields.size() * sizeof(T));
  zero_over_threads(fields.data(), n);
  for (int64_t step = 0; step < p.s.nt; ++step) {
    core::poll_stop();
    p.run.step(step);
    copy_over_threads(p.run.current(), n, fields.data() + (size_t(step) + 1) * n);
  }
  p.start_adjoint();
  for (int64_t step = p.s.nt - 1; step >= 0; --step) {
    core::poll_stop();
    const T* cur = fields.data() + size_t(step) * n;
    p.adjoint(step, cur + n, cur, step > 0 ? cur - n : cur);
  }
}

// revolve::Schedule's backend on the cpu: checkpoints of the state in host memory.
template <class T>
struct CpuCheckpointed {
  CpuPass<T>& p;
  std::vector<acoustic::State<T>> slot;
  std::vector<T> next, cur, prev;
  CpuCheckpointed(CpuPass<T>& pass, int64_t slots)
      : p(pass), slot(size_t(slots)), next(size_t(pass.s.alloc)), cur(next), prev(next) {}
  void save(int i) { p.run.snapshot(slot[size_t(i)]); }
  void load(int i) { p.run.resume(slot[size_t(i)]); }
  void advance(int64_t n) {
    core::poll_stop();
    p.run.step(n);
  }
  void end_sweep() {
    copy_over_threads(p.run.current(), next.size(), next.data());
    copy_over_threads(p.run.previous(), cur.size(), cur.data());
    p.start_adjoint();
  }
  void prev_from_slot(int i) { copy_over_threads(slot[size_t(i)].u_prev.data(), prev.size(), prev.data()); }
  void prev_from_state() { copy_over_threads(p.run.previous(), prev.size(), prev.data()); }
  void adjoint(int64_t n) {
    core::poll_stop();
    p.adjoint(n, next.data(), cur.data(), prev.data());
    std::swap(next, cur);  // u^n and u^{n-1} become step n - 1's u^{n+1} and u^n
    std::swap(cur, prev);
  }
};

// The storage indices of the reversal box's ring (physics/reversal.hpp), in storage order.
template <class T>
std::vector<int64_t> ring_indices(const acoustic::Setup<T>& s, const acoustic::ReversalBox& box) {
  std::vector<int64_t> ring;
  acoustic::for_each_ring_run(box, [&](int64_t i0, int64_t i1, int64_t j, int64_t k) {
    for (int64_t i = i0; i < i1; ++i) ring.push_back(s.origin + i + j * s.line + k * s.slice);
  });
  return ring;
}

// Zero at the computational points beyond the box's ring: the field boundary saving does not know.
template <class T>
void forget_beyond_ring(const acoustic::Setup<T>& s, const acoustic::ReversalBox& box, T* field) {
#pragma omp parallel for schedule(static)
  for (int64_t k = 0; k < s.nz; ++k)
    for (int64_t j = 0; j < s.ny; ++j) {
      T* row = field + s.origin + j * s.line + k * s.slice;
      const bool near =
          k >= box.grown_lo(2) && k < box.grown_hi(2) && j >= box.grown_lo(1) && j < box.grown_hi(1);
      for (int64_t i = 0; i < s.nx; ++i)
        if (!near || i < box.grown_lo(0) || i >= box.grown_hi(0)) row[i] = T(0);
    }
}

// Boundary saving (Storage::boundary): the ring of u^0 .. u^nt kept, the box's field stepped back
// from the last two fields, the ring taken from what was kept, nothing known beyond it.
template <class T>
void cpu_boundary(CpuPass<T>& p) {
  const acoustic::ReversalBox box = acoustic::checked_reversal_box(p.s);
  const std::vector<int64_t> ring = ring_indices(p.s, box);
  const size_t n = size_t(p.s.alloc), width = ring.size();
  std::vector<T, UnwrittenAllocator<T>> strips((size_t(p.s.nt) + 1) * width);
  const auto keep = [&](const T* field, int64_t step) {
    T* to = strips.data() + size_t(step) * width;
#pragma omp parallel for schedule(static)
    for (size_t r = 0; r < width; ++r) to[r] = field[ring[r]];
  };
  std::fill_n(strips.data(), width, T(0));  // u^0: the run starts at rest
  for (int64_t step = 0; step < p.s.nt; ++step) {
    core::poll_stop();
    p.run.step(step);
    keep(p.run.current(), step + 1);
  }
  std::vector<T> next(p.run.current(), p.run.current() + n), cur(p.run.previous(), p.run.previous() + n),
      prev(n, T(0));
  p.out.report.stored_bytes = int64_t(strips.size() * sizeof(T)) + 3 * int64_t(n * sizeof(T));
  forget_beyond_ring(p.s, box, next.data());
  forget_beyond_ring(p.s, box, cur.data());
  p.start_adjoint();
  for (int64_t step = p.s.nt - 1; step >= 0; --step) {
    core::poll_stop();
    if (step > 0) {  // u^{step-1}; u^{-1} is zero
      // prev is zero beyond the ring (forgotten, or never written), and the ring is taken whole
      // from what was kept: only the box is stepped back, from next's copy of it.
      cpu::step_back(p.s, box, cur.data(), next.data(), prev.data(), step);
      const T* kept = strips.data() + size_t(step - 1) * width;
#pragma omp parallel for schedule(static)
      for (size_t r = 0; r < width; ++r) prev[ring[r]] = kept[r];
      ++p.out.report.reversed_steps;
    } else {
      zero_over_threads(prev.data(), n);
    }
    p.adjoint(step, next.data(), cur.data(), prev.data());
    std::swap(next, cur);  // u^n and u^{n-1} become step n - 1's u^{n+1} and u^n
    std::swap(cur, prev);
  }
}

template <class T>
int64_t cpu_state_bytes(const acoustic::Setup<T>& s) {
  int64_t n = 2 * s.alloc;
  for (int a = 0; a < 3; ++a) n += 3 * s.points_per_slot(a) * s.axis[a].slots();
  return n * int64_t(sizeof(T));
}

template <class T>
Backward cpu_backward(const acoustic::Setup<T>& s, AdjointInput input, bool cross, const Storage& storage) {
  Backward out;
  out.report.backend = "cpu";
  const int64_t field = s.alloc * int64_t(sizeof(T));
  // The kept run may take 80 % of the host's memory, less the pass's own arrays (about ten fields).
  const int64_t available = int64_t(0.8 * double(host_bytes())) - 10 * field;
  if (storage.boundary)
    revolve::check_strips(
        (s.nt + 1) * acoustic::ring_points(acoustic::checked_reversal_box(s)) * int64_t(sizeof(T)) +
            3 * field,
        storage.budget_bytes, available);
  else
    out.report.checkpoints =
        revolve::checkpoint_slots(s.nt, field, cpu_state_bytes(s), storage.budget_bytes, available);
  core::set_progress_total(revolve::sweeps_steps(s.nt, out.report.checkpoints));
  CpuPass<T> p(s, input, out, cross);
  if (storage.boundary) {
    out.report.boundary = true;
    cpu_boundary(p);
  } else if (out.report.checkpoints == 0) {
    cpu_every_field(p);
  } else {
    CpuCheckpointed<T> b(p, out.report.checkpoints);
    revolve::Schedule<CpuCheckpointed<T>> schedule(b, s.nt, int(out.report.checkpoints));
    out.report.recomputed_steps = schedule.run();
    out.report.stored_bytes = out.report.checkpoints * cpu_state_bytes(s) + 3 * field;
  }
  out.report.backward_s = seconds_since(p.start) - out.report.forward_s;
  return out;
}

#if FDSTENCIL_HAVE_CUDA
Backward gpu_backward(const acoustic::Setup<float>& s, AdjointInput input, bool cross, const Storage& storage,
                      cuda::wave::KeptBuffer* kept) {
  cuda::wave::BackwardResult r = cuda::wave::backward(
      s, [&](const std::vector<float>& traces) { return input(traces); }, cross, storage.budget_bytes,
      storage.boundary, kept);
  Backward out;
  out.traces.assign(r.traces.begin(), r.traces.end());
  out.adjoint.compact = std::move(r.adjoint);
  out.cross.compact = std::move(r.cross);
  out.illumination.compact = std::move(r.illumination);
  out.report = {"cuda",
                r.stored_bytes,
                r.checkpoints,
                r.recomputed_steps,
                storage.boundary,
                r.reversed_steps,
                r.forward_s,
                r.backward_s,
                0};
  return out;
}
#endif

// The forward run and its adjoint where run() would put them: the GPU in float, else the cpu in
// the options' precision.
Backward backward(const Model& model, const Options& o, AdjointInput input, bool cross,
                  const Storage& storage, detail::SetupFrame& f) {
  [[maybe_unused]] const bool gpu = detail::on_gpu(o);  // first: refuses what run() refuses, in any build
#if FDSTENCIL_HAVE_CUDA
  if (gpu)
    return gpu_backward(detail::setup<float>(model, o, f), input, cross, storage, detail::kept_buffer(o));
#endif
  if (o.double_precision) return cpu_backward(detail::setup<double>(model, o, f), input, cross, storage);
  return cpu_backward(detail::setup<float>(model, o, f), input, cross, storage);
}

template <class T>
std::vector<T> as_t(std::span<const double> a) {
  return std::vector<T>(a.begin(), a.end());
}

// dm = dm/dv dv over the computational points (the storage layout; the layers' points take their
// edge's, as their velocity does).
template <class T>
std::vector<T> perturbation(const Model& model, const detail::SetupFrame& f, int64_t alloc,
                            std::span<const double> dv) {
  std::vector<T> dm(size_t(alloc), T(0));
  for_each_point(f.d, [&](int64_t p, int64_t point) {
    dm[size_t(p)] = T(dm_dv(model, point, f.dt) * dv[size_t(point)]);
  });
  return dm;
}

template <class T>
std::vector<double> born_typed(const Model& model, const Options& o, std::span<const double> dv) {
  detail::SetupFrame f;
  const acoustic::Setup<T> s = detail::setup<T>(model, o, f);
  const std::vector<T> dm = perturbation<T>(model, f, s.alloc, dv);
  acoustic::Setup<T> quiet(s);  // the scattered field: the same receivers, no sources of its own
  quiet.sources.clear();
  cpu::AcousticCpu<T> scattered(std::move(quiet));
  forward(s, [&](int64_t n, const T* du) {
    scattered.step(n);
    T* u = scattered.current();
    for (int64_t i = 0; i < s.alloc; ++i) u[i] += dm[size_t(i)] * du[i];
  });
  return {scattered.traces().begin(), scattered.traces().end()};
}

// The model's points of a computational-point array.
std::vector<double> on_model(const Domain& d, const Sums& a) {
  std::vector<double> out(size_t(d.model_nz * d.model_ny * d.model_nx));
#pragma omp parallel for schedule(static)
  for (int64_t k = 0; k < d.model_nz; ++k)
    for (int64_t j = 0; j < d.model_ny; ++j)
      for (int64_t i = 0; i < d.model_nx; ++i)
        out[size_t((k * d.model_ny + j) * d.model_nx + i)] = a.at(d, i + d.lo[0], j + d.lo[1], k + d.lo[2]);
  return out;
}

// -(sum over axes of the 3-point second difference), zero outside the model's points.
std::vector<double> minus_laplacian(const Domain& d, const std::vector<double>& a) {
  const int64_t n[3] = {d.model_nx, d.model_ny, d.model_nz},
                stride[3] = {1, d.model_nx, d.model_nx * d.model_ny};
  std::vector<double> out(a.size(), 0.0);
  for (int64_t k = 0; k < n[2]; ++k)
    for (int64_t j = 0; j < n[1]; ++j)
      for (int64_t i = 0; i < n[0]; ++i) {
        const int64_t c[3] = {i, j, k}, p = k * stride[2] + j * stride[1] + i;
        double sum = 0;
        for (int ax = 0; ax < 3; ++ax) {
          if (n[ax] == 1) continue;
          const double lo = c[ax] > 0 ? a[size_t(p - stride[ax])] : 0.0;
          const double hi = c[ax] < n[ax] - 1 ? a[size_t(p + stride[ax])] : 0.0;
          sum += lo - 2 * a[size_t(p)] + hi;
        }
        out[size_t(p)] = -sum;
      }
  return out;
}

std::vector<double> rtm_image(const Model& model, const Options& o, std::span<const double> recorded,
                              const RtmOptions& r) {
  const auto entry = std::chrono::steady_clock::now();
  detail::SetupFrame f;
  const bool cross = r.condition == ImagingCondition::crosscorrelation;
  Backward b = backward(model, o, {recorded, false}, cross || r.illumination, r.storage, f);
  if (r.report) *r.report = b.report;
  std::vector<double> image = on_model(f.d, cross ? b.cross : b.adjoint);
  if (r.illumination) {
    const std::vector<double> light = on_model(f.d, b.illumination);
    const double most = *std::max_element(light.begin(), light.end());
    if (!(most > 0))
      bad("illumination: the source's field is zero at every point and step (no wavelet energy in the run)");
    const double floor = 1e-6 * most;
    for (size_t i = 0; i < image.size(); ++i) image[i] /= light[i] + floor;
  }
  if (r.laplacian) image = minus_laplacian(f.d, image);
  if (r.report) r.report->total_s = seconds_since(entry);
  return image;
}

template <class T>
std::vector<double> source_adjoint_typed(const Model& model, const Options& o, std::span<const double> dd) {
  detail::SetupFrame f;
  const acoustic::Setup<T> s = detail::setup<T>(model, o, f);
  const std::vector<T> r = as_t<T>(dd);
  std::vector<T> out(size_t(s.nsrc) * size_t(s.nt), T(0));
  cpu::AcousticAdjointCpu<T> adj(s);
  for (int64_t n = s.nt - 1; n >= 0; --n) {
    core::poll_stop();
    adj.step(n, r.data(), nullptr, nullptr, out.data());
  }
  return {out.begin(), out.end()};
}

}  // namespace

std::string linearised_backend(const Options& o) { return detail::on_gpu(o) ? "cuda" : "cpu"; }

std::vector<double> modelled(const Model& model, const Options& o) {
  const core::StopScope stop(o.stop_requested);
  const core::ProgressScope progress(o.progress);
  core::set_progress_total(o.nt);  // one sweep, a step each
  detail::SetupFrame f;
  [[maybe_unused]] const bool gpu = detail::on_gpu(o);  // first: refuses what run() refuses, in any build
#if FDSTENCIL_HAVE_CUDA
  if (gpu) {
    detail::free_kept(o);
    const std::vector<float> t = cuda::wave::modelled(detail::setup<float>(model, o, f));
    return {t.begin(), t.end()};
  }
#endif
  const auto run = [&]<class T>() -> std::vector<double> {
    const acoustic::Setup<T> s = detail::setup<T>(model, o, f);
    const std::vector<T> t = forward(s, [](int64_t, const T*) {});
    return {t.begin(), t.end()};
  };
  return o.double_precision ? run.template operator()<double>() : run.template operator()<float>();
}

std::vector<double> born(const Model& model, const Options& o, std::span<const double> dv) {
  const core::StopScope stop(o.stop_requested);
  const core::ProgressScope progress(o.progress);
  core::set_progress_total(o.nt);  // one sweep, a step each
  check_size(dv, model_points(model), "dv", "(the model's points)");
  [[maybe_unused]] const bool gpu = detail::on_gpu(o);  // first: refuses what run() refuses, in any build
#if FDSTENCIL_HAVE_CUDA
  if (gpu) {
    detail::free_kept(o);
    detail::SetupFrame f;
    const acoustic::Setup<float> s = detail::setup<float>(model, o, f);
    const std::vector<float> t = cuda::wave::born(s, perturbation<float>(model, f, s.alloc, dv));
    return {t.begin(), t.end()};
  }
#endif
  return o.double_precision ? born_typed<double>(model, o, dv) : born_typed<float>(model, o, dv);
}

std::vector<double> born_adjoint(const Model& model, const Options& o, std::span<const double> dd,
                                 const Storage& storage) {
  const core::StopScope stop(o.stop_requested);
  const core::ProgressScope progress(o.progress);
  check_size(dd, int64_t(o.receivers.size()) * o.nt, "dd", traces_shape(o));
  detail::SetupFrame f;
  const Backward b = backward(model, o, {dd, false}, false, storage, f);
  return to_velocity(model, f.d, f.dt, b.adjoint);
}

std::vector<double> source_adjoint(const Model& model, const Options& o, std::span<const double> dd) {
  const core::StopScope stop(o.stop_requested);
  const core::ProgressScope progress(o.progress);
  core::set_progress_total(o.nt);  // one sweep, a step each
  check_size(dd, int64_t(o.receivers.size()) * o.nt, "dd", traces_shape(o));
  [[maybe_unused]] const bool gpu = detail::on_gpu(o);  // first: refuses what run() refuses, in any build
#if FDSTENCIL_HAVE_CUDA
  if (gpu) {
    detail::free_kept(o);
    detail::SetupFrame f;
    const std::vector<float> t = cuda::wave::source_adjoint(detail::setup<float>(model, o, f),
                                                            std::vector<float>(dd.begin(), dd.end()));
    return {t.begin(), t.end()};
  }
#endif
  return o.double_precision ? source_adjoint_typed<double>(model, o, dd)
                            : source_adjoint_typed<float>(model, o, dd);
}

std::vector<double> rtm(const Model& model, const Options& o, std::span<const double> recorded,
                        const RtmOptions& r) {
  const core::StopScope stop(o.stop_requested);
  const core::ProgressScope progress(o.progress);
  check_size(recorded, int64_t(o.receivers.size()) * o.nt, "recorded", traces_shape(o));
  return rtm_image(model, o, recorded, r);
}

Gradient gradient(const Model& model, const Options& o, std::span<const double> observed,
                  const Storage& storage) {
  const core::StopScope stop(o.stop_requested);
  const core::ProgressScope progress(o.progress);
  const auto entry = std::chrono::steady_clock::now();
  check_size(observed, int64_t(o.receivers.size()) * o.nt, "observed", traces_shape(o));
  detail::SetupFrame f;
  Backward b = backward(model, o, {observed, true}, false, storage, f);
  Gradient g;
  g.velocity = to_velocity(model, f.d, f.dt, b.adjoint);
  g.traces = std::move(b.traces);
  g.storage = b.report;
  for (size_t i = 0; i < g.traces.size(); ++i) {
    const double r = g.traces[i] - observed[i];
    g.misfit += 0.5 * r * r;
  }
  g.storage.total_s = seconds_since(entry);
  return g;
}

}  // namespace fdstencil::wave
