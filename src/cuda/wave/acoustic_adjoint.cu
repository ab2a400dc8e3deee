// The adjoint step's kernels and state on the GPU: acoustic_adjoint.hpp describes the step,
// cpu/acoustic_adjoint.hpp derives it. The state is W = m ubar (the forward's u, scaled pointwise),
// so that outside the layers the backward step is the forward's own stencil over one array:
// W^n = 2 W^{n+1} - W^{n+2} + m (sum of w2 W^{n+1} over the star + the layers' terms). A thread
// marches two neighbouring columns of z planes (one where the pairs' loads would not be aligned)
// with W^{n+1}'s z taps in a register queue; x and y taps come through L1 from the neighbouring
// threads' loads. The gradient's correlation joins the march:
// summed by parts in time it needs u^n alone (acoustic_adjoint.hpp).
#include "cuda/wave/acoustic_adjoint.hpp"

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <numeric>
#include <string>

#include "cuda/common/check.hpp"
#include "cuda/wave/acoustic.hpp"
#include "cuda/wave/device_array.hpp"
#include "cuda/wave/layer_point.cuh"
#include "fdstencil/device.hpp"
#include "fdstencil/error.hpp"

namespace fdstencil::cuda::wave {

namespace {

constexpr int kThreads = 128;  // the pointwise kernels' blocks: any multiple of 32 serves
// The march's blocks: a warp along x (its rows' loads coalesce, its x taps hit L1) and, in 3D, four
// lines of y, whose y taps then mostly hit L1 too; in 2D (one line) four warps along x.
constexpr int kMarchX3 = 32, kMarchY3 = 4, kMarchX2 = 128, kMarchThreads = 128;
// z planes a thread marches. Short chunks keep enough threads in flight to hide the loads'
// latency (a 2D grid has one line of threads a plane, so 4 planes; 3D, 8), at the price of the
// queue's first 2R loads of W^{n+1} once a chunk, mostly L2 hits from the chunk below.
constexpr int kChunk2 = 4, kChunk3 = 8;

struct AdjointArgs {
  int nx, ny, nz, dim;
  int chunk;  // z planes a thread marches
  int64_t line, slice, origin;
  bool free_surface;
  float w2[kMaxTaps], w1[kMaxTaps];
  acoustic::PmlAxis axis[3];
  const acoustic::PmlCoef<float>* coef[3];
  float* pml[3][3];             // psibar, chibar, phibar per axis
  const float* m;               // storage layout
  const float* W1;              // W^{n+1}, zero on a free surface
  float* W;                     // W^{n+2} in, W^n out, zero on a free surface
  float* top;                   // the surface plane's W^n before its zero (nx ny, x fastest)
  float *E2[3], *G1[3];         // per axis, in its layer only: g2 - l and g1 (l = W^{n+1})
  const float* u;               // u^n, compact, or null
  float *grad, *cross, *light;  // compact, or null
};

// Whether axis ax's stencil at coordinate c reads a point of its layer.
__device__ bool reaches_layer(const acoustic::PmlAxis& ax, int c, int radius) {
  const int64_t g = c + ax.offset;
  return g - radius < ax.lo || g + radius >= ax.n - ax.hi;
}

// The memory variables' adjoints at the layers' points (layer_boxes' order, one thread a point):
// from l = W^{n+1}, each axis whose layer holds the point stores g2 - l and g1 there and advances
// psibar, chibar, phibar (cpu/acoustic_adjoint.hpp's recursions).
__global__ void __launch_bounds__(kThreads) acoustic_adjoint_layers(AdjointArgs a, LayerBoxes b) {
  int coord[3];
  if (!layer_point(b, int64_t(blockIdx.x) * blockDim.x + threadIdx.x, coord)) return;
  const int64_t p = a.origin + coord[0] + coord[1] * a.line + coord[2] * a.slice;
  const float l = a.W1[p];
  for (int ax = 0; ax < 3; ++ax) {
    if (ax == 1 && a.dim == 2) continue;
    const int slot = a.axis[ax].slot(coord[ax]);
    if (slot < 0) continue;
    const acoustic::PmlCoef<float> cf = a.coef[ax][slot];
    const int64_t q =
        acoustic::pml_index(ax, slot, coord[0], coord[1], coord[2], a.nx, a.ny, a.axis[ax].slots());
    const float psi = a.pml[ax][0][q], chi = a.pml[ax][1][q], phi = a.pml[ax][2][q];
    const float phi_t = l + phi;
    const float chi_t = l + chi + cf.a * phi_t;
    a.E2[ax][p] = cf.a * (chi_t + phi_t);
    a.G1[ax][p] = cf.da * chi_t + cf.a * psi;
    a.pml[ax][0][q] = cf.db * chi_t + cf.b * psi;
    a.pml[ax][1][q] = cf.b * chi_t;
    a.pml[ax][2][q] = cf.b * phi_t;
  }
}

// Axis ax's layer terms at p: the transposed stencils of g2 - l and g1 along `stride`.
template <int R>
__device__ float layer_taps(const AdjointArgs& a, int ax, int64_t p, int64_t stride) {
  float sum = 0.f;
#pragma unroll
  for (int r = 0; r <= 2 * R; ++r) {
    const int64_t q = p - (r - R) * stride;
    sum += a.w2[r] * a.E2[ax][q] + a.w1[r] * a.G1[ax][q];
  }
  return sum;
}

// Axis `stride`'s taps of W^{n+1} centred on c, in the cpu's order (r = 0..2R).
template <int R>
__device__ float line_taps(const float* __restrict__ c, const float (&w2)[kMaxTaps], int stride) {
  float sum = 0.f;
#pragma unroll
  for (int r = 0; r <= 2 * R; ++r) sum += w2[r] * c[(R - r) * stride];
  return sum;
}

// The odd mirror's taps at plane k (1..R), transposed: the planes kp < R that read k through it.
template <int R>
__device__ float mirror_taps(const AdjointArgs& a, int k, int64_t p) {
  float sum = 0.f;
  for (int r = 0; r < R; ++r) {
    const int kp = -k - (r - R);
    if (kp < 0 || kp >= R) continue;
    const int64_t q = p + int64_t(kp - k) * a.slice;
    sum += a.w2[r] * (a.W1[q] + a.E2[2][q]) + a.w1[r] * a.G1[2][q];
  }
  return sum;
}

// The planes [lo, hi) whose z stencils reach no point of the z layers.
struct Clear {
  int lo, hi;
};

template <int R>
__device__ Clear clear_of(const acoustic::PmlAxis& ax) {
  return {int(ax.lo - ax.offset) + R, int(ax.n - ax.hi - ax.offset) - R};
}

// V consecutive floats at p (a multiple of V: the storage's lines and origin are aligned, and a
// compact array's rows are where nx is a multiple of V) in one load, or stored in one.
template <int V>
__device__ __forceinline__ void load(const float* __restrict__ from, int64_t p, float* v) {
  if constexpr (V == 2) {
    const float2 t = *reinterpret_cast<const float2*>(from + p);
    v[0] = t.x;
    v[1] = t.y;
  } else {
    v[0] = from[p];
  }
}

template <int V>
__device__ __forceinline__ void store(float* __restrict__ to, int64_t p, const float* v) {
  if constexpr (V == 2)
    *reinterpret_cast<float2*>(to + p) = make_float2(v[0], v[1]);
  else
    to[p] = v[0];
}

// One backward step over a column of a.chunk planes, V points of x a thread: W^n, the gradient's
// and RTM's sums, and the surface's zero (its value first kept in `top` for the receivers' and
// sources' taps). Each point adds the same products in the same order whatever V, so V = 1 and 2
// give the same bits; V = 2 loads pairs, half the load instructions a point.
template <int R, int V>
__global__ void __launch_bounds__(kMarchThreads) acoustic_adjoint_march(AdjointArgs a) {
  const int i = V * int(blockIdx.x * blockDim.x + threadIdx.x),
            j = int(blockIdx.y * blockDim.y + threadIdx.y);
  if (i >= a.nx || j >= a.ny) return;
  const int k0 = int(blockIdx.z) * a.chunk, k1 = min(a.nz, k0 + a.chunk);
  const float* __restrict__ W1 = a.W1;
  const float* __restrict__ m_of = a.m;
  const float* __restrict__ u = a.u;
  float* __restrict__ W = a.W;
  float* __restrict__ grad = a.grad;
  const int line = int(a.line);  // its taps' offsets fit 32 bits: AcousticAdjointGpu's constructor checks
  int64_t p = a.origin + i + int64_t(j) * a.line + int64_t(k0) * a.slice;
  int64_t c = i + int64_t(a.nx) * (j + int64_t(a.ny) * k0);
  const int64_t plane = int64_t(a.nx) * a.ny;
  // The x taps' window: H = R rounded up to a multiple of V points on each side, so that its loads
  // stay aligned.
  constexpr int H = (R + V - 1) / V * V;
  float z[2 * R + 1][V];  // W^{n+1} at planes k - R .. k + R
#pragma unroll
  for (int r = 0; r < 2 * R; ++r) load<V>(W1, p + int64_t(r - R) * a.slice, z[r]);
  bool near_x[V];
#pragma unroll
  for (int e = 0; e < V; ++e) near_x[e] = reaches_layer(a.axis[0], i + e, R);
  const bool near_y = a.dim == 3 && reaches_layer(a.axis[1], j, R);
  const Clear clear = clear_of<R>(a.axis[2]);
  for (int k = k0; k < k1; ++k, p += a.slice, c += plane) {
    load<V>(W1, p + int64_t(R) * a.slice, z[2 * R]);
    float x[V + 2 * H];
#pragma unroll
    for (int t = 0; t < V + 2 * H; t += V) load<V>(W1, p - H + t, x + t);
    float sum[V];
#pragma unroll
    for (int e = 0; e < V; ++e) {
      sum[e] = 0.f;
#pragma unroll
      for (int r = 0; r <= 2 * R; ++r) sum[e] += a.w2[r] * x[H + e + R - r];
      if (near_x[e]) sum[e] += layer_taps<R>(a, 0, p + e, 1);
    }
    if (a.dim == 3) {
      float y[2 * R + 1][V];
#pragma unroll
      for (int r = 0; r <= 2 * R; ++r) load<V>(W1, p + (r - R) * line, y[r]);
#pragma unroll
      for (int e = 0; e < V; ++e) {
        float ly = 0.f;
#pragma unroll
        for (int r = 0; r <= 2 * R; ++r) ly += a.w2[r] * y[2 * R - r][e];
        sum[e] += ly;
        if (near_y) sum[e] += layer_taps<R>(a, 1, p + e, a.line);
      }
    }
    float m[V], w2[V], w[V];
    load<V>(m_of, p, m);
    load<V>(W, p, w2);
#pragma unroll
    for (int e = 0; e < V; ++e) {
#pragma unroll
      for (int r = 0; r <= 2 * R; ++r) sum[e] += a.w2[r] * z[2 * R - r][e];
      if (k < clear.lo || k >= clear.hi) sum[e] += layer_taps<R>(a, 2, p + e, a.slice);
      if (a.free_surface && k >= 1 && k <= R) sum[e] -= mirror_taps<R>(a, k, p + e);
      w[e] = 2.f * z[R][e] - w2[e] + m[e] * sum[e];
    }
    if (grad || a.cross) {
      float un[V];
      load<V>(u, c, un);
      if (grad) {
        float g[V];
        load<V>(grad, c, g);
#pragma unroll
        for (int e = 0; e < V; ++e) {
          const float inv = 1.f / m[e];
          g[e] += un[e] * ((w[e] - 2.f * z[R][e] + w2[e]) * inv * inv);
        }
        store<V>(grad, c, g);
      }
      if (a.cross) {
        float cr[V], li[V];
        load<V>(a.cross, c, cr);
        load<V>(a.light, c, li);
#pragma unroll
        for (int e = 0; e < V; ++e) {
          cr[e] += un[e] * (w[e] * (1.f / m[e]));
          li[e] += un[e] * un[e];
        }
        store<V>(a.cross, c, cr);
        store<V>(a.light, c, li);
      }
    }
    const bool surface = a.free_surface && k == 0;
    if (surface) {
#pragma unroll
      for (int e = 0; e < V; ++e) a.top[i + e + int64_t(a.nx) * j] = w[e];
#pragma unroll
      for (int e = 0; e < V; ++e) w[e] = 0.f;
    }
    store<V>(W, p, w);
#pragma unroll
    for (int r = 0; r < 2 * R; ++r)
#pragma unroll
      for (int e = 0; e < V; ++e) z[r][e] = z[r + 1][e];
  }
}

// The receivers' residual at step n added to ubar^n (m times it to W^n, or to `top` on a free
// surface, which keeps W^n zero there), one thread a distinct point, its taps in the Setup's
// order (a fixed sum: the same bits on every run); and what it adds to the gradient's and RTM's
// sums, whose march read W^n before it.
struct Receivers {
  const int* start;
  const int64_t* point;  // storage index
  const int64_t* compact;
  const int64_t* top;  // index into the surface plane, or -1 off it
  const int* id;
  const float* weight;
  const float* residual;
  int points;
  int64_t nt;
};

__global__ void acoustic_adjoint_inject(AdjointArgs a, Receivers rc, int64_t n) {
  const int t = int(blockIdx.x * blockDim.x + threadIdx.x);
  if (t >= rc.points) return;
  float v = 0.f;
  for (int e = rc.start[t]; e < rc.start[t + 1]; ++e)
    v += rc.weight[e] * rc.residual[int64_t(rc.id[e]) * rc.nt + n];
  const int64_t p = rc.point[t], c = rc.compact[t];
  const float m = a.m[p];
  if (rc.top[t] >= 0)
    a.top[rc.top[t]] += m * v;
  else
    a.W[p] += m * v;
  if (a.grad) a.grad[c] += a.u[c] * (v / m);
  if (a.cross) a.cross[c] += a.u[c] * v;
}

// The wavelets' adjoint of step n: each source's taps' weight times ubar^{n+1} (W^{n+1} / m, its
// surface plane's value before the zero from `top`), summed in the Setup's order of its taps; one
// thread a source.
struct Sources {
  const int* start;
  const int64_t* point;
  const int64_t* top;
  const float* weight;
  float* out;
  int count;
  int64_t nt;
};

__global__ void acoustic_adjoint_sources(AdjointArgs a, Sources sr, int64_t n) {
  const int src = int(blockIdx.x * blockDim.x + threadIdx.x);
  if (src >= sr.count) return;
  float sum = 0.f;
  for (int t = sr.start[src]; t < sr.start[src + 1]; ++t) {
    const int64_t p = sr.point[t];
    sum += sr.weight[t] * ((sr.top[t] >= 0 ? a.top[sr.top[t]] : a.W1[p]) / a.m[p]);
  }
  sr.out[src * sr.nt + n] = sum;
}

// kCompactUnroll elements a thread, a block's threads kThreads apart: one load each would leave
// too few bytes in flight to keep the copy near the memory's bandwidth.
constexpr int kCompactUnroll = 4;

__global__ void __launch_bounds__(kThreads)
    compact_kernel(const float* __restrict__ field, float* __restrict__ out, int nx, int ny, int64_t line,
                   int64_t slice, int64_t origin) {
  const int i0 = int(blockIdx.x) * kThreads * kCompactUnroll + int(threadIdx.x);
  const float* from = field + origin + blockIdx.y * line + blockIdx.z * slice;
  float* to = out + int64_t(nx) * (blockIdx.y + int64_t(ny) * blockIdx.z);
  float v[kCompactUnroll];
#pragma unroll
  for (int e = 0; e < kCompactUnroll; ++e) {
    const int i = i0 + e * kThreads;
    if (i < nx) v[e] = from[i];
  }
#pragma unroll
  for (int e = 0; e < kCompactUnroll; ++e) {
    const int i = i0 + e * kThreads;
    if (i < nx) to[i] = v[e];
  }
}

int64_t compact_points(const acoustic::SetupFrame<float>& s) { return s.nx * s.ny * s.nz; }

// Whether the march takes its points in pairs: where every pair it loads is aligned to 8 bytes.
// The storage's origin, lines and planes are (the domain aligns them), and the compact arrays' rows
// where nx is even; the pointers are checked too, as a guard (with nx even every slot of the store
// starts aligned).
std::atomic<bool> pairs_allowed{true};

bool pairs_serve(const AdjointArgs& a) {
  const auto aligned = [](const void* q) {
    return reinterpret_cast<uintptr_t>(q) % (2 * sizeof(float)) == 0;
  };
  return pairs_allowed.load(std::memory_order_relaxed) && a.nx % 2 == 0 && a.origin % 2 == 0 &&
         a.line % 2 == 0 && a.slice % 2 == 0 && aligned(a.u) && aligned(a.grad) && aligned(a.cross) &&
         aligned(a.light) && aligned(a.W) && aligned(a.W1) && aligned(a.m);
}

int64_t compact_index(const acoustic::SetupFrame<float>& s, const acoustic::Tap& t) {
  return t.i + s.nx * (t.j + s.ny * t.k);
}

// A tap's index into the surface plane, or -1 where no free surface zeroes its plane.
int64_t top_index(const acoustic::SetupFrame<float>& s, const acoustic::Tap& t) {
  return s.free_surface && t.k == 0 ? t.i + s.nx * t.j : -1;
}

template <int R>
void launch_march(const AdjointArgs& a, cudaStream_t on) {
  const dim3 block = a.dim == 3 ? dim3(kMarchX3, kMarchY3) : dim3(kMarchX2, 1);
  const bool pairs = pairs_serve(a);
  const int columns = pairs ? (a.nx + 1) / 2 : a.nx;
  const dim3 grid(unsigned((columns + int(block.x) - 1) / int(block.x)),
                  unsigned((a.ny + block.y - 1) / block.y), unsigned((a.nz + a.chunk - 1) / a.chunk));
  if (pairs)
    acoustic_adjoint_march<R, 2><<<grid, block, 0, on>>>(a);
  else
    acoustic_adjoint_march<R, 1><<<grid, block, 0, on>>>(a);
}

void march(const AdjointArgs& a, int radius, cudaStream_t on) {
  switch (radius) {
    case 1: return launch_march<1>(a, on);
    case 2: return launch_march<2>(a, on);
    case 3: return launch_march<3>(a, on);
    case 4: return launch_march<4>(a, on);
    case 5: return launch_march<5>(a, on);
    case 6: return launch_march<6>(a, on);
    case 7: return launch_march<7>(a, on);
    case 8: return launch_march<8>(a, on);
    default:
      throw Error(ErrorKind::invalid_argument, "the adjoint step: radius " + std::to_string(radius) +
                                                   " is outside 1.." + std::to_string(kMaxRadius));
  }
}

}  // namespace

struct AcousticAdjointGpu::Impl {
  acoustic::SetupFrame<float> s;
  cudaStream_t stream;
  DeviceArray<float> m, W1, W, top, E2[3], G1[3];
  DeviceArray<acoustic::PmlCoef<float>> coef[3];
  DeviceArray<float> pml[3][3];
  DeviceArray<float> residual, grad, cross, light;
  LayerBoxes boxes;
  // The receivers' taps grouped by point: point t's taps are [start[t], start[t + 1]).
  DeviceArray<int> start, id;
  DeviceArray<int64_t> point, point_compact, point_top;
  DeviceArray<float> weight;
  int points = 0;
  // The wavelets' adjoint (nsrc, nt), and the sources' taps by source in the Setup's order: source
  // s's are [src_start[s], src_start[s + 1]).
  DeviceArray<float> wavelets, src_weight;
  DeviceArray<int> src_start;
  DeviceArray<int64_t> src_point, src_top;
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
  std::vector<int64_t> where, plane;
  std::vector<float> w;
  for (size_t t : order) {
    const acoustic::Tap& src = s.sources[t];
    ++first[size_t(src.id) + 1];
    where.push_back(s.origin + src.i + src.j * s.line + src.k * s.slice);
    plane.push_back(top_index(s, src));
    w.push_back(src.w);
  }
  std::partial_sum(first.begin(), first.end(), first.begin());
  src_start = DeviceArray<int>(first.data(), int64_t(first.size()));
  src_point = DeviceArray<int64_t>(where.data(), int64_t(where.size()));
  src_top = DeviceArray<int64_t>(plane.data(), int64_t(plane.size()));
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
  std::vector<int64_t> where, packed, plane;
  std::vector<float> w;
  for (size_t e = 0; e < order.size(); ++e) {
    const size_t t = order[e];
    if (where.empty() || where.back() != at[t]) {
      where.push_back(at[t]);
      packed.push_back(compact_index(s, s.receivers[t]));
      plane.push_back(top_index(s, s.receivers[t]));
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
  point_compact = DeviceArray<int64_t>(packed.data(), int64_t(packed.size()));
  point_top = DeviceArray<int64_t>(plane.data(), int64_t(plane.size()));
  weight = DeviceArray<float>(w.data(), int64_t(w.size()));
}

int64_t AcousticAdjointGpu::bytes(const acoustic::SetupFrame<float>& s, bool gradient, bool correlate,
                                  bool wavelets) {
  const int axes = s.dim == 3 ? 3 : 2;
  int64_t b = (3 + 2 * axes) * s.alloc + s.nx * s.ny;  // m, W^{n+1}, W, E2 and G1 per axis; top
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
  if (s.line * (2 * kMaxRadius + 1) >= (int64_t(1) << 31))  // the march's 32-bit y taps
    throw Error(ErrorKind::invalid_argument, "the adjoint step: lines of " + std::to_string(s.line) +
                                                 " elements are past its 32-bit tap offsets");
  ensure_device_memory(bytes(s, gradient, correlate, wavelets), "the adjoint's state");
  d.m = DeviceArray<float>(setup.m.data(), s.alloc);
  d.W1 = DeviceArray<float>(s.alloc);
  d.W = DeviceArray<float>(s.alloc);
  d.top = DeviceArray<float>(s.nx * s.ny);
  for (int a = 0; a < 3; ++a) {
    if (a == 1 && s.dim == 2) continue;
    d.E2[a] = DeviceArray<float>(s.alloc);
    d.G1[a] = DeviceArray<float>(s.alloc);
    d.coef[a] = DeviceArray<acoustic::PmlCoef<float>>(s.coef[a].data(), int64_t(s.coef[a].size()));
    for (auto& v : d.pml[a]) v = DeviceArray<float>(s.points_per_slot(a) * s.axis[a].slots());
  }
  d.boxes = layer_boxes(s, 0, s.nz);
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
  a.chunk = s.dim == 3 ? kChunk3 : kChunk2;
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
  a.top = d.top.p;
  a.grad = d.grad.p;
  a.cross = d.cross.p;
  a.light = d.light.p;
  // The zeroed arrays (on the legacy stream) before the run's stream reads them.
  FDS_CUDA_CHECK(cudaStreamSynchronize(cudaStreamLegacy));
}

AcousticAdjointGpu::~AcousticAdjointGpu() = default;

void AcousticAdjointGpu::step(int64_t n, const float* cur) {
  Impl& d = *impl_;
  AdjointArgs& a = d.args;
  a.W1 = d.W1.p;
  a.W = d.W.p;
  a.u = cur;
  if (d.wavelets.p) {  // W^{n+1} before this step's march overwrites `top`
    const Sources sr{d.src_start.p, d.src_point.p, d.src_top.p, d.src_weight.p,
                     d.wavelets.p,  int(d.s.nsrc), d.s.nt};
    acoustic_adjoint_sources<<<unsigned((sr.count + kThreads - 1) / kThreads), kThreads, 0, d.stream>>>(a, sr,
                                                                                                        n);
    FDS_CUDA_CHECK_LAUNCH();
  }
  const int64_t layer_points = d.boxes.first[d.boxes.count];
  if (layer_points > 0) {
    acoustic_adjoint_layers<<<unsigned((layer_points + kThreads - 1) / kThreads), kThreads, 0, d.stream>>>(
        a, d.boxes);
    FDS_CUDA_CHECK_LAUNCH();
  }
  march(a, d.s.radius, d.stream);
  FDS_CUDA_CHECK_LAUNCH();
  if (d.points > 0) {
    const Receivers rc{d.start.p,  d.point.p,    d.point_compact.p, d.point_top.p, d.id.p,
                       d.weight.p, d.residual.p, d.points,          d.s.nt};
    acoustic_adjoint_inject<<<(d.points + kThreads - 1) / kThreads, kThreads, 0, d.stream>>>(a, rc, n);
    FDS_CUDA_CHECK_LAUNCH();
  }
  std::swap(d.W1, d.W);  // W^n becomes the next step's W^{n+1}, W^{n+1} its W^{n+2}
}

namespace {

template <class V = std::vector<float>>
V download(const DeviceArray<float>& a, cudaStream_t stream) {
  V h(size_t(a.n));
  a.download(h.data(), stream);
  return h;
}

}  // namespace

HostSums AcousticAdjointGpu::gradient() { return download<HostSums>(impl_->grad, impl_->stream); }
HostSums AcousticAdjointGpu::cross() { return download<HostSums>(impl_->cross, impl_->stream); }
HostSums AcousticAdjointGpu::illumination() { return download<HostSums>(impl_->light, impl_->stream); }
std::vector<float> AcousticAdjointGpu::wavelets() { return download(impl_->wavelets, impl_->stream); }

void allow_adjoint_pairs(bool allowed) { pairs_allowed.store(allowed, std::memory_order_relaxed); }

void compact(const acoustic::SetupFrame<float>& s, const float* field, float* out, void* stream) {
  const dim3 grid(unsigned((s.nx + kThreads * kCompactUnroll - 1) / (kThreads * kCompactUnroll)),
                  unsigned(s.ny), unsigned(s.nz));
  compact_kernel<<<grid, kThreads, 0, static_cast<cudaStream_t>(stream)>>>(field, out, int(s.nx), int(s.ny),
                                                                           s.line, s.slice, s.origin);
  FDS_CUDA_CHECK_LAUNCH();
}

}  // namespace fdstencil::cuda::wave
