// The GPU's boundary saving: acoustic_reverse.hpp. The step back runs once a step beside the
// adjoint's march, over the box only; the ring's gathers and scatters one thread an element.
#include "cuda/wave/acoustic_reverse.hpp"

#include <string>
#include <vector>

#include "cuda/common/check.hpp"
#include "cuda/wave/device_array.hpp"
#include "cuda/wave/for_radius.hpp"
#include "fdstencil/error.hpp"

namespace fdstencil::cuda::wave {

namespace {

constexpr int kThreads = 256;     // a block of the 1D kernels
constexpr int kBoxThreads = 128;  // x points a block of the step back; y and z are the grid's
constexpr int kColumn = 16;       // z points a thread of the step back steps: 2R loads of its window
                                  // shared by 16 points, and still thousands of blocks on 2D rows

struct Weights {
  float w[kMaxTaps];
};

__global__ void keep_kernel(const float* __restrict__ field, const int64_t* __restrict__ at,
                            float* __restrict__ to, int64_t count) {
  const int64_t r = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (r < count) to[r] = field[at[r]];
}

__global__ void put_kernel(const float* __restrict__ kept, const int64_t* __restrict__ at,
                           float* __restrict__ out, int64_t count) {
  const int64_t r = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (r < count) out[at[r]] = kept[r];
}

__global__ void forget_kernel(float* field, acoustic::ReversalBox b) {
  const int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x, j = blockIdx.y, k = blockIdx.z;
  if (i >= b.n[0]) return;
  const bool near = i >= b.grown_lo(0) && i < b.grown_hi(0) && j >= b.grown_lo(1) && j < b.grown_hi(1) &&
                    k >= b.grown_lo(2) && k < b.grown_hi(2);
  if (!near) field[(k * b.n[1] + j) * b.n[0] + i] = 0.f;
}

// m in the setup's storage layout, from its first computational point.
struct Medium {
  const float* m;
  int64_t line, slice;
};

// u^{n-1} = 2 u^n - u^{n+1} + m L(u^n) over the box, in place of u^{n+1}: the forward step's
// leapfrog (physics/acoustic.hpp) with the outer levels swapped. A thread steps a column of kColumn
// points along z with u^n's 2R + 1 planes in registers, so that a point loads one new z tap; its x
// and y taps come through L1. The sums are the forward step's, axis by axis, taps in order.
template <int R>
__global__ void step_back_kernel(const float* __restrict__ u, float* __restrict__ out, Medium med,
                                 acoustic::ReversalBox b, bool y, Weights w) {
  const int64_t i = b.lo[0] + int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  const int64_t j = b.lo[1] + blockIdx.y, k0 = b.lo[2] + int64_t(blockIdx.z) * kColumn;
  if (i >= b.hi[0]) return;
  const int64_t k1 = k0 + kColumn < b.hi[2] ? k0 + kColumn : b.hi[2];
  const int64_t line = b.n[0], slice = b.n[0] * b.n[1];
  int64_t p = (k0 * b.n[1] + j) * b.n[0] + i;
  float z[2 * R + 1];
#pragma unroll
  for (int r = 0; r < 2 * R; ++r) z[r + 1] = u[p + (r - R) * slice];
  for (int64_t k = k0; k < k1; ++k, p += slice) {
#pragma unroll
    for (int r = 0; r < 2 * R; ++r) z[r] = z[r + 1];
    z[2 * R] = u[p + R * slice];
    float lap = 0.f, d2 = 0.f;
#pragma unroll
    for (int r = 0; r <= 2 * R; ++r) d2 += w.w[r] * u[p + r - R];
    lap += d2;
    if (y) {
      d2 = 0.f;
#pragma unroll
      for (int r = 0; r <= 2 * R; ++r) d2 += w.w[r] * u[p + (r - R) * line];
      lap += d2;
    }
    d2 = 0.f;
#pragma unroll
    for (int r = 0; r <= 2 * R; ++r) d2 += w.w[r] * z[r];
    lap += d2;
    out[p] = acoustic::leapfrog(z[R], out[p], __ldg(med.m + i + j * med.line + k * med.slice), lap);
  }
}

// The sources' taps in the box, after the leapfrog (several sources' taps may share a point).
__global__ void taps_kernel(float* out, const int64_t* __restrict__ at, const float* __restrict__ weight,
                            const int* __restrict__ id, int count, const float* __restrict__ wavelets,
                            int64_t nt, int64_t n) {
  const int t = blockIdx.x * blockDim.x + threadIdx.x;
  if (t < count) atomicAdd(out + at[t], weight[t] * wavelets[int64_t(id[t]) * nt + n]);
}

unsigned blocks(int64_t count, int threads) { return unsigned((count + threads - 1) / threads); }

}  // namespace

struct ReversalGpu::Impl {
  acoustic::ReversalBox box;
  bool y = false;
  int64_t nt = 0;
  int radius = 1;
  Weights w{};
  const float* m = nullptr;  // the forward state's, its storage layout
  int64_t origin = 0, line = 0, slice = 0;
  DeviceArray<int64_t> ring_field, ring_out;  // the ring's points: storage and compact indices
  DeviceArray<int64_t> tap_at;                // the sources' taps in the box: compact index,
  DeviceArray<float> tap_weight, wavelets;    // weight, source
  DeviceArray<int> tap_id;
  int taps = 0;
};

ReversalGpu::ReversalGpu(const acoustic::Setup<float>& s, const acoustic::ReversalBox& box, const float* m)
    : impl_(std::make_unique<Impl>()) {
  // A launch's grid takes at most 65535 blocks along y and z: forget_kernel's lines and planes,
  // the step back's lines and columns.
  constexpr int64_t kGridLimit = 65535;
  if (s.ny > kGridLimit || s.nz > kGridLimit)
    throw Error(ErrorKind::invalid_argument, "boundary saving on the GPU: at most " +
                                                 std::to_string(kGridLimit) + " points along y and z");
  Impl& d = *impl_;
  d.box = box;
  d.y = s.dim == 3;
  d.nt = s.nt;
  d.radius = s.radius;
  for (int r = 0; r < kMaxTaps; ++r) d.w.w[r] = s.w2[size_t(r)];
  const auto compact_at = [&](int64_t i, int64_t j, int64_t k) { return (k * s.ny + j) * s.nx + i; };
  const auto field_at = [&](int64_t i, int64_t j, int64_t k) {
    return s.origin + i + j * s.line + k * s.slice;
  };
  d.m = m;
  d.origin = s.origin;
  d.line = s.line;
  d.slice = s.slice;
  std::vector<int64_t> field, out;
  acoustic::for_each_ring_run(box, [&](int64_t i0, int64_t i1, int64_t j, int64_t k) {
    for (int64_t i = i0; i < i1; ++i) {
      field.push_back(field_at(i, j, k));
      out.push_back(compact_at(i, j, k));
    }
  });
  d.ring_field = DeviceArray<int64_t>(field.data(), int64_t(field.size()));
  d.ring_out = DeviceArray<int64_t>(out.data(), int64_t(out.size()));
  std::vector<int64_t> at;
  std::vector<float> weight;
  std::vector<int> id;
  for (const acoustic::Tap& t : s.sources)
    if (box.inside(t.i, t.j, t.k)) {
      at.push_back(compact_at(t.i, t.j, t.k));
      weight.push_back(t.w);
      id.push_back(t.id);
    }
  d.taps = int(at.size());
  d.tap_at = DeviceArray<int64_t>(at.data(), int64_t(at.size()));
  d.tap_weight = DeviceArray<float>(weight.data(), int64_t(weight.size()));
  d.tap_id = DeviceArray<int>(id.data(), int64_t(id.size()));
  d.wavelets = DeviceArray<float>(s.wavelets.data(), int64_t(s.wavelets.size()));
  FDS_CUDA_CHECK(cudaStreamSynchronize(cudaStreamLegacy));
}

ReversalGpu::~ReversalGpu() = default;

int64_t ReversalGpu::bytes(const acoustic::SetupFrame<float>& s, const acoustic::ReversalBox& box) {
  return 2 * acoustic::ring_points(box) * int64_t(sizeof(int64_t)) +
         int64_t(s.wavelets.size() * sizeof(float)) + int64_t(s.sources.size()) * 16;
}

int64_t ReversalGpu::ring() const { return impl_->ring_out.n; }

void ReversalGpu::keep(const float* field, float* to, void* stream) const {
  const Impl& d = *impl_;
  if (d.ring_field.n == 0) return;
  keep_kernel<<<blocks(d.ring_field.n, kThreads), kThreads, 0, static_cast<cudaStream_t>(stream)>>>(
      field, d.ring_field.p, to, d.ring_field.n);
  FDS_CUDA_CHECK_LAUNCH();
}

void ReversalGpu::forget_beyond_ring(float* field, void* stream) const {
  const acoustic::ReversalBox& b = impl_->box;
  const dim3 grid(blocks(b.n[0], kThreads), unsigned(b.n[1]), unsigned(b.n[2]));
  forget_kernel<<<grid, kThreads, 0, static_cast<cudaStream_t>(stream)>>>(field, b);
  FDS_CUDA_CHECK_LAUNCH();
}

void ReversalGpu::step_back(const float* u, float* out, const float* kept, int64_t n, void* stream) const {
  const Impl& d = *impl_;
  const acoustic::ReversalBox& b = d.box;
  const cudaStream_t st = static_cast<cudaStream_t>(stream);
  const dim3 grid(blocks(b.hi[0] - b.lo[0], kBoxThreads), unsigned(b.hi[1] - b.lo[1]),
                  blocks(b.hi[2] - b.lo[2], kColumn));
  for_radius(d.radius, [&]<int R>() {
    step_back_kernel<R>
        <<<grid, kBoxThreads, 0, st>>>(u, out, Medium{d.m + d.origin, d.line, d.slice}, b, d.y, d.w);
    return 0;
  });
  FDS_CUDA_CHECK_LAUNCH();
  if (d.taps > 0) {
    taps_kernel<<<blocks(d.taps, kThreads), kThreads, 0, st>>>(out, d.tap_at.p, d.tap_weight.p, d.tap_id.p,
                                                               d.taps, d.wavelets.p, d.nt, n);
    FDS_CUDA_CHECK_LAUNCH();
  }
  if (d.ring_out.n > 0) {
    put_kernel<<<blocks(d.ring_out.n, kThreads), kThreads, 0, st>>>(kept, d.ring_out.p, out, d.ring_out.n);
    FDS_CUDA_CHECK_LAUNCH();
  }
}

}  // namespace fdstencil::cuda::wave
