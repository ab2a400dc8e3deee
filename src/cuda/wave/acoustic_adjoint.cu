// The adjoint step's kernels and state on the GPU: acoustic_adjoint.hpp describes the two sweeps,
// cpu/acoustic_adjoint.hpp derives them. One thread a point, a block a run of x on one line: the
// sweeps are as plain as the cpu's, and the forward step's tiles and marches are not used here yet.
// (A one-sweep variant that formed l from ubar and m inside the gather measured slower on an H200:
// docs/imaging.md.)
#include "cuda/wave/acoustic_adjoint.hpp"

#include <algorithm>
#include <numeric>

#include "cuda/common/check.hpp"
#include "cuda/wave/device_array.hpp"
#include "fdstencil/device.hpp"

namespace fdstencil::cuda::wave {

namespace {

constexpr int kThreads = 128;  // x points a block: any multiple of 32 serves

struct AdjointArgs {
  int nx, ny, nz, dim, radius;
  int64_t line, slice, origin;
  bool free_surface;
  float w2[kMaxTaps], w1[kMaxTaps];
  acoustic::PmlAxis axis[3];
  const acoustic::PmlCoef<float>* coef[3];
  float* pml[3][3];  // psibar, chibar, phibar per axis
  const float* m;    // storage layout
  float *P, *Q, *next, *L;
  float *E2[3], *G1[3];                  // per axis, in its layer only: g2 - l and g1
  const float *u_next, *u_cur, *u_prev;  // compact
  float* grad;                           // compact, or null
};

struct Point {
  int i, j, k;
  int64_t p, c;  // storage index, compact index
};

__device__ bool point_of(const AdjointArgs& a, Point& pt) {
  pt.i = int(blockIdx.x * blockDim.x + threadIdx.x);
  pt.j = int(blockIdx.y);
  pt.k = int(blockIdx.z);
  if (pt.i >= a.nx) return false;
  pt.p = a.origin + pt.i + pt.j * a.line + pt.k * a.slice;
  pt.c = pt.i + int64_t(a.nx) * (pt.j + int64_t(a.ny) * pt.k);
  return true;
}

__global__ void __launch_bounds__(kThreads) acoustic_adjoint_derivatives(AdjointArgs a) {
  Point pt;
  if (!point_of(a, pt)) return;
  const bool surface = a.free_surface && pt.k == 0;
  float P = a.P[pt.p];
  if (a.grad) {  // du^{n+1}/dm: wave/imaging.cpp's dudm
    const float du = surface ? a.u_next[pt.c] : a.u_next[pt.c] - 2.f * a.u_cur[pt.c] + a.u_prev[pt.c];
    a.grad[pt.c] += P * (du / a.m[pt.p]);
  }
  if (surface) {
    P = 0.f;
    a.P[pt.p] = 0.f;
  }
  const float l = a.m[pt.p] * P;
  a.L[pt.p] = l;
  const int coord[3] = {pt.i, pt.j, pt.k};
  for (int ax = 0; ax < 3; ++ax) {
    if (ax == 1 && a.dim == 2) continue;
    const int slot = a.axis[ax].slot(coord[ax]);
    if (slot < 0) continue;
    const acoustic::PmlCoef<float> cf = a.coef[ax][slot];
    const int64_t q = acoustic::pml_index(ax, slot, pt.i, pt.j, pt.k, a.nx, a.ny, a.axis[ax].slots());
    const float psi = a.pml[ax][0][q], chi = a.pml[ax][1][q], phi = a.pml[ax][2][q];
    const float phi_t = l + phi;
    const float chi_t = l + chi + cf.a * phi_t;
    a.E2[ax][pt.p] = cf.a * (chi_t + phi_t);
    a.G1[ax][pt.p] = cf.da * chi_t + cf.a * psi;
    a.pml[ax][0][q] = cf.db * chi_t + cf.b * psi;
    a.pml[ax][1][q] = cf.b * chi_t;
    a.pml[ax][2][q] = cf.b * phi_t;
  }
}

// Whether axis ax's stencil at coordinate c reads a point of its layer.
__device__ bool reaches_layer(const acoustic::PmlAxis& ax, int c, int radius) {
  const int64_t g = c + ax.offset;
  return g - radius < ax.lo || g + radius >= ax.n - ax.hi;
}

__global__ void __launch_bounds__(kThreads) acoustic_adjoint_gather(AdjointArgs a) {
  Point pt;
  if (!point_of(a, pt)) return;
  const int R = a.radius;
  const int64_t q = pt.p;
  const int64_t stride[3] = {1, a.line, a.slice};
  const int coord[3] = {pt.i, pt.j, pt.k};
  const float P = a.P[q];
  float sum = a.Q[q] + 2.f * P;
  for (int ax = 0; ax < 3; ++ax) {
    if (ax == 1 && a.dim == 2) continue;
    for (int r = 0; r <= 2 * R; ++r) sum += a.w2[r] * a.L[q - (r - R) * stride[ax]];
    if (!reaches_layer(a.axis[ax], coord[ax], R)) continue;
    for (int r = 0; r <= 2 * R; ++r) {
      const int64_t p = q - (r - R) * stride[ax];
      sum += a.w2[r] * a.E2[ax][p] + a.w1[r] * a.G1[ax][p];
    }
  }
  if (a.free_surface && pt.k >= 1 && pt.k <= R)  // the odd mirror's taps, transposed
    for (int r = 0; r < R; ++r) {
      const int kp = -pt.k - (r - R);
      if (kp < 0 || kp >= R) continue;
      const int64_t p = q + int64_t(kp - pt.k) * a.slice;
      sum -= a.w2[r] * (a.L[p] + a.E2[2][p]) + a.w1[r] * a.G1[2][p];
    }
  a.next[q] = sum;
  a.Q[q] = -P;
}

// The receivers' residual at step n added to ubar^n, one thread a distinct point, its taps in the
// Setup's order (a fixed sum: the same bits on every run).
__global__ void acoustic_adjoint_inject(float* next, const int* start, const int64_t* point, const int* id,
                                        const float* weight, const float* residual, int points, int64_t nt,
                                        int64_t n) {
  const int t = int(blockIdx.x * blockDim.x + threadIdx.x);
  if (t >= points) return;
  float v = next[point[t]];
  for (int e = start[t]; e < start[t + 1]; ++e) v += weight[e] * residual[int64_t(id[e]) * nt + n];
  next[point[t]] = v;
}

// The wavelets' adjoint of step n: each source's taps' weight times P (ubar^{n+1}, before the
// surface's zero), summed in the Setup's order of its taps; one thread a source.
__global__ void acoustic_adjoint_sources(const float* P, const int* start, const int64_t* point,
                                         const float* weight, float* out, int nsrc, int64_t nt, int64_t n) {
  const int src = int(blockIdx.x * blockDim.x + threadIdx.x);
  if (src >= nsrc) return;
  float sum = 0.f;
  for (int t = start[src]; t < start[src + 1]; ++t) sum += weight[t] * P[point[t]];
  out[src * nt + n] = sum;
}

// The zero-lag cross-correlation and the illumination after step n: u^n ubar^n and (u^n)^2.
__global__ void __launch_bounds__(kThreads)
    acoustic_adjoint_correlate(AdjointArgs a, float* cross, float* light) {
  Point pt;
  if (!point_of(a, pt)) return;
  const float u = a.u_cur[pt.c];
  cross[pt.c] += u * a.next[pt.p];
  light[pt.c] += u * u;
}

__global__ void __launch_bounds__(kThreads) compact_kernel(const float* field, float* out, int nx, int ny,
                                                           int64_t line, int64_t slice, int64_t origin) {
  const int i = int(blockIdx.x * blockDim.x + threadIdx.x);
  if (i >= nx) return;
  out[i + int64_t(nx) * (blockIdx.y + int64_t(ny) * blockIdx.z)] =
      field[origin + i + blockIdx.y * line + blockIdx.z * slice];
}

dim3 grid_of(const acoustic::SetupFrame<float>& s) {
  return dim3(unsigned((s.nx + kThreads - 1) / kThreads), unsigned(s.ny), unsigned(s.nz));
}

int64_t compact_points(const acoustic::SetupFrame<float>& s) { return s.nx * s.ny * s.nz; }

}  // namespace

struct AcousticAdjointGpu::Impl {
  acoustic::SetupFrame<float> s;
  cudaStream_t stream;
  DeviceArray<float> m, P, Q, next, L, E2[3], G1[3];
  DeviceArray<acoustic::PmlCoef<float>> coef[3];
  DeviceArray<float> pml[3][3];
  DeviceArray<float> residual, grad, cross, light;
  // The receivers' taps grouped by point: point t's taps are [start[t], start[t + 1]).
  DeviceArray<int> start, id;
  DeviceArray<int64_t> point;
  DeviceArray<float> weight;
  int points = 0;
  // The wavelets' adjoint (nsrc, nt), and the sources' taps by source in the Setup's order: source
  // s's are [src_start[s], src_start[s + 1]).
  DeviceArray<float> wavelets, src_weight;
  DeviceArray<int> src_start;
  DeviceArray<int64_t> src_point;
  AdjointArgs args{};
  void group_receivers();
  void group_sources();
};

void AcousticAdjointGpu::Impl::group_sources() {
  std::vector<size_t> order(s.sources.size());
  std::iota(order.begin(), order.end(), size_t(0));
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t x, size_t y) { return s.sources[x].id < s.sources[y].id; });
  std::vector<int> first(size_t(s.nsrc) + 1, 0);
  std::vector<int64_t> where;
  std::vector<float> w;
  for (size_t t : order) {
    const acoustic::Tap& src = s.sources[t];
    ++first[size_t(src.id) + 1];
    where.push_back(s.origin + src.i + src.j * s.line + src.k * s.slice);
    w.push_back(src.w);
  }
  std::partial_sum(first.begin(), first.end(), first.begin());
  src_start = DeviceArray<int>(first.data(), int64_t(first.size()));
  src_point = DeviceArray<int64_t>(where.data(), int64_t(where.size()));
  src_weight = DeviceArray<float>(w.data(), int64_t(w.size()));
  wavelets = DeviceArray<float>(s.nsrc * s.nt);
}

void AcousticAdjointGpu::Impl::group_receivers() {
  std::vector<int64_t> at(s.receivers.size());
  for (size_t t = 0; t < at.size(); ++t) {
    const acoustic::Tap& r = s.receivers[t];
    at[t] = s.origin + r.i + r.j * s.line + r.k * s.slice;
  }
  std::vector<size_t> order(at.size());
  std::iota(order.begin(), order.end(), size_t(0));
  std::stable_sort(order.begin(), order.end(), [&](size_t x, size_t y) { return at[x] < at[y]; });
  std::vector<int> first, ids;
  std::vector<int64_t> where;
  std::vector<float> w;
  for (size_t e = 0; e < order.size(); ++e) {
    const size_t t = order[e];
    if (where.empty() || where.back() != at[t]) {
      where.push_back(at[t]);
      first.push_back(int(e));
    }
    ids.push_back(s.receivers[t].id);
    w.push_back(s.receivers[t].w);
  }
  first.push_back(int(order.size()));
  points = int(where.size());
  start = DeviceArray<int>(first.data(), int64_t(first.size()));
  id = DeviceArray<int>(ids.data(), int64_t(ids.size()));
  point = DeviceArray<int64_t>(where.data(), int64_t(where.size()));
  weight = DeviceArray<float>(w.data(), int64_t(w.size()));
}

int64_t AcousticAdjointGpu::bytes(const acoustic::SetupFrame<float>& s, bool gradient, bool correlate,
                                  bool wavelets) {
  const int axes = s.dim == 3 ? 3 : 2;
  int64_t b = (5 + 2 * axes) * s.alloc;  // m, P, Q, next, L, E2 and G1 per axis
  for (int a = 0; a < 3; ++a) b += 3 * s.points_per_slot(a) * s.axis[a].slots();
  b += int64_t(s.nrec) * s.nt + (gradient ? 1 : 0) * compact_points(s) +
       (correlate ? 2 : 0) * compact_points(s) + (wavelets ? s.nsrc * s.nt : 0);
  return b * int64_t(sizeof(float));
}

AcousticAdjointGpu::AcousticAdjointGpu(const acoustic::Setup<float>& setup, void* stream,
                                       const std::vector<float>& residual, bool gradient, bool correlate,
                                       bool wavelets)
    : impl_(std::make_unique<Impl>()) {
  Impl& d = *impl_;
  d.s = setup;
  d.stream = static_cast<cudaStream_t>(stream);
  const acoustic::SetupFrame<float>& s = d.s;
  ensure_device_memory(bytes(s, gradient, correlate, wavelets), "the adjoint's state");
  d.m = DeviceArray<float>(setup.m.data(), s.alloc);
  d.P = DeviceArray<float>(s.alloc);
  d.Q = DeviceArray<float>(s.alloc);
  d.next = DeviceArray<float>(s.alloc);
  d.L = DeviceArray<float>(s.alloc);
  for (int a = 0; a < 3; ++a) {
    if (a == 1 && s.dim == 2) continue;
    d.E2[a] = DeviceArray<float>(s.alloc);
    d.G1[a] = DeviceArray<float>(s.alloc);
    d.coef[a] = DeviceArray<acoustic::PmlCoef<float>>(s.coef[a].data(), int64_t(s.coef[a].size()));
    for (auto& v : d.pml[a]) v = DeviceArray<float>(s.points_per_slot(a) * s.axis[a].slots());
  }
  d.residual = DeviceArray<float>(residual.data(), int64_t(residual.size()));
  if (gradient) d.grad = DeviceArray<float>(compact_points(s));
  if (correlate) {
    d.cross = DeviceArray<float>(compact_points(s));
    d.light = DeviceArray<float>(compact_points(s));
  }
  d.group_receivers();
  if (wavelets) d.group_sources();
  AdjointArgs& a = d.args;
  a.nx = int(s.nx);
  a.ny = int(s.ny);
  a.nz = int(s.nz);
  a.dim = s.dim;
  a.radius = s.radius;
  a.line = s.line;
  a.slice = s.slice;
  a.origin = s.origin;
  a.free_surface = s.free_surface;
  for (int r = 0; r < kMaxTaps; ++r) {
    a.w2[r] = s.w2[size_t(r)];
    a.w1[r] = s.w1[size_t(r)];
  }
  for (int ax = 0; ax < 3; ++ax) {
    a.axis[ax] = s.axis[ax];
    a.coef[ax] = d.coef[ax].p;
    for (int v = 0; v < 3; ++v) a.pml[ax][v] = d.pml[ax][v].p;
    a.E2[ax] = d.E2[ax].p;
    a.G1[ax] = d.G1[ax].p;
  }
  a.m = d.m.p;
  a.Q = d.Q.p;
  a.L = d.L.p;
  a.grad = d.grad.p;
  // The zeroed arrays (on the legacy stream) before the run's stream reads them.
  FDS_CUDA_CHECK(cudaStreamSynchronize(cudaStreamLegacy));
}

AcousticAdjointGpu::~AcousticAdjointGpu() = default;

void AcousticAdjointGpu::step(int64_t n, const float* next, const float* cur, const float* prev) {
  Impl& d = *impl_;
  AdjointArgs& a = d.args;
  a.P = d.P.p;
  a.next = d.next.p;
  a.u_next = next;
  a.u_cur = cur;
  a.u_prev = prev;
  const dim3 grid = grid_of(d.s);
  if (d.wavelets.p) {  // P before the derivatives' sweep zeroes the surface, as on the cpu
    acoustic_adjoint_sources<<<unsigned((d.s.nsrc + kThreads - 1) / kThreads), kThreads, 0, d.stream>>>(
        d.P.p, d.src_start.p, d.src_point.p, d.src_weight.p, d.wavelets.p, int(d.s.nsrc), d.s.nt, n);
    FDS_CUDA_CHECK_LAUNCH();
  }
  acoustic_adjoint_derivatives<<<grid, kThreads, 0, d.stream>>>(a);
  FDS_CUDA_CHECK_LAUNCH();
  acoustic_adjoint_gather<<<grid, kThreads, 0, d.stream>>>(a);
  FDS_CUDA_CHECK_LAUNCH();
  if (d.points > 0) {
    acoustic_adjoint_inject<<<(d.points + kThreads - 1) / kThreads, kThreads, 0, d.stream>>>(
        d.next.p, d.start.p, d.point.p, d.id.p, d.weight.p, d.residual.p, d.points, d.s.nt, n);
    FDS_CUDA_CHECK_LAUNCH();
  }
  if (d.cross.p) {
    acoustic_adjoint_correlate<<<grid, kThreads, 0, d.stream>>>(a, d.cross.p, d.light.p);
    FDS_CUDA_CHECK_LAUNCH();
  }
  std::swap(d.P, d.next);
}

namespace {

std::vector<float> download(const DeviceArray<float>& a, cudaStream_t stream) {
  std::vector<float> h(size_t(a.n));
  a.download(h.data(), stream);
  return h;
}

}  // namespace

std::vector<float> AcousticAdjointGpu::gradient() { return download(impl_->grad, impl_->stream); }
std::vector<float> AcousticAdjointGpu::cross() { return download(impl_->cross, impl_->stream); }
std::vector<float> AcousticAdjointGpu::illumination() { return download(impl_->light, impl_->stream); }
std::vector<float> AcousticAdjointGpu::wavelets() { return download(impl_->wavelets, impl_->stream); }

void compact(const acoustic::SetupFrame<float>& s, const float* field, float* out, void* stream) {
  compact_kernel<<<grid_of(s), kThreads, 0, static_cast<cudaStream_t>(stream)>>>(
      field, out, int(s.nx), int(s.ny), s.line, s.slice, s.origin);
  FDS_CUDA_CHECK_LAUNCH();
}

}  // namespace fdstencil::cuda::wave
