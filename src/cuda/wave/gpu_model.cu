// A model kept on its caller's GPU: its summary, its values under the taps, and m built from it
// (gpu_model.hpp).
#include "cuda/wave/gpu_model.hpp"

#include <algorithm>
#include <climits>
#include <cstring>

#include <cuda_runtime.h>

#include "cuda/common/check.hpp"
#include "cuda/wave/device_array.hpp"
#include "fdstencil/checksum.hpp"

namespace fdstencil::cuda::wave {

namespace {

// Values a thread checksums: 16 KiB, so that a 512^3 model gives a few tens of thousands of
// threads (enough to hide the loads' latency) and as many checksums to combine on the host.
constexpr int64_t kPieceFloats = 4096;
constexpr int kSummaryThreads = 256;
// The reflected Castagnoli polynomial, as fdstencil::crc32c's.
constexpr uint32_t kPolynomial = 0x82F63B78u;

// The current GPU for a scope, given back at its end.
class OnDevice {
 public:
  explicit OnDevice(int device) {
    FDS_CUDA_CHECK(cudaGetDevice(&before_));
    if (device != before_) FDS_CUDA_CHECK(cudaSetDevice(device));
  }
  ~OnDevice() {
    int now = before_;
    cudaGetDevice(&now);
    if (now != before_) cudaSetDevice(before_);
  }
  OnDevice(const OnDevice&) = delete;
  OnDevice& operator=(const OnDevice&) = delete;

 private:
  int before_ = 0;
};

// The bits of a float as an int order positive floats as the floats: the extremes of a model
// whose values are all positive (one with any other is refused, and its extremes unused).
struct Reduced {
  int lo_bits, hi_bits;
  unsigned long long first_bad;
};

// Each thread: one piece's CRC-32C (four bytes a step through four tables, slicing by four), and
// its values' extremes and first bad index, folded into `r` by atomics.
__global__ void __launch_bounds__(kSummaryThreads)
    summarise_pieces(const float* __restrict__ v, int64_t n, uint32_t* __restrict__ crc, Reduced* r) {
  __shared__ uint32_t table[4][256];
  for (int i = int(threadIdx.x); i < 256; i += blockDim.x) {
    uint32_t c = uint32_t(i);
    for (int k = 0; k < 8; ++k) c = (c & 1u) ? (c >> 1) ^ kPolynomial : c >> 1;
    table[0][i] = c;
  }
  __syncthreads();
  for (int i = int(threadIdx.x); i < 256; i += blockDim.x) {
    uint32_t c = table[0][i];
    for (int t = 1; t < 4; ++t) {
      c = (c >> 8) ^ table[0][c & 0xFFu];
      table[t][i] = c;
    }
  }
  __syncthreads();
  const int64_t piece = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  const int64_t first = piece * kPieceFloats;
  if (first >= n) return;
  const int64_t end = n - first < kPieceFloats ? n : first + kPieceFloats;
  constexpr float top = 3.402823466e38f;  // the largest float
  uint32_t c = 0xFFFFFFFFu;
  int lo = INT_MAX, hi = INT_MIN;
  unsigned long long bad = ULLONG_MAX;
  for (int64_t p = first; p < end; ++p) {
    const float x = __ldg(v + p);
    c ^= __float_as_uint(x);  // little-endian: the value's first byte is its lowest
    c = table[3][c & 0xFFu] ^ table[2][(c >> 8) & 0xFFu] ^ table[1][(c >> 16) & 0xFFu] ^ table[0][c >> 24];
    if (!(x > 0.f) || !(x <= top)) bad = min(bad, (unsigned long long)p);
    lo = min(lo, __float_as_int(x));
    hi = max(hi, __float_as_int(x));
  }
  crc[piece] = ~c;
  atomicMin(&r->lo_bits, lo);
  atomicMax(&r->hi_bits, hi);
  if (bad != ULLONG_MAX) atomicMin(&r->first_bad, bad);
}

__global__ void gather(const float* __restrict__ v, const int64_t* __restrict__ at, int64_t n,
                       float* __restrict__ out) {
  const int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) out[i] = v[at[i]];
}

__device__ int64_t clamp_to(int64_t x, int64_t n) { return x < 0 ? 0 : (x >= n ? n - 1 : x); }

__global__ void fill_m_points(float* __restrict__ m, int64_t origin, int64_t line, int64_t slice, int64_t nx,
                              int64_t ny, int64_t nz, MediumOnGpu g) {
  const int64_t points = nx * ny * nz;
  for (int64_t p = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; p < points;
       p += int64_t(gridDim.x) * blockDim.x) {
    const int64_t i = p % nx, j = p / nx % ny, k = p / nx / ny;
    const int64_t mi = clamp_to(i - g.lo[0], g.nx), mj = clamp_to(j - g.lo[1], g.ny),
                  mk = clamp_to(k + g.k0 - g.lo[2], g.nz);
    const double vel = g.v[(mk * g.ny + mj) * g.nx + mi];
    m[origin + i + j * line + k * slice] = float(vel * vel * g.dt * g.dt);  // the host's order: no FMA
  }
}

// Blocks for a grid-stride pass: a few waves of the largest GPU's SMs, not one block per point.
constexpr int kFillBlocks = 1024;
constexpr int kFillThreads = 256;

}  // namespace

ModelSummary summarise_model(const float* v, int64_t n, int device) {
  OnDevice on(device);
  ModelSummary s;
  if (n == 0) {
    s.crc = crc32c(nullptr, 0);
    return s;
  }
  const int64_t pieces = (n + kPieceFloats - 1) / kPieceFloats;
  auto crc = DeviceArray<uint32_t>::uninitialised(pieces);
  const Reduced start{INT_MAX, INT_MIN, ULLONG_MAX};
  DeviceArray<Reduced> reduced(&start, 1);
  summarise_pieces<<<unsigned((pieces + kSummaryThreads - 1) / kSummaryThreads), kSummaryThreads>>>(
      v, n, crc.p, reduced.p);
  FDS_CUDA_CHECK_LAUNCH();
  std::vector<uint32_t> host(static_cast<size_t>(pieces));
  Reduced r{};
  FDS_CUDA_CHECK(cudaMemcpy(host.data(), crc.p, crc.bytes(), cudaMemcpyDeviceToHost));
  FDS_CUDA_CHECK(cudaMemcpy(&r, reduced.p, sizeof r, cudaMemcpyDeviceToHost));
  const int64_t last = n - (pieces - 1) * kPieceFloats;
  s.crc = crc32c_concat(host.data(), host.size(), uint64_t(kPieceFloats) * sizeof(float),
                        uint64_t(last) * sizeof(float));
  if (r.first_bad != ULLONG_MAX) {
    s.first_bad = int64_t(r.first_bad);
    FDS_CUDA_CHECK(cudaMemcpy(&s.bad_value, v + s.first_bad, sizeof(float), cudaMemcpyDeviceToHost));
    return s;
  }
  // All positive: the bits' order is the values'.
  static_assert(sizeof(float) == sizeof(int));
  std::memcpy(&s.vmin, &r.lo_bits, sizeof(float));
  std::memcpy(&s.vmax, &r.hi_bits, sizeof(float));
  return s;
}

std::vector<float> gather_model(const float* v, const std::vector<int64_t>& at, int device) {
  std::vector<float> out(at.size());
  if (at.empty()) return out;
  OnDevice on(device);
  DeviceArray<int64_t> where(at.data(), int64_t(at.size()));
  auto got = DeviceArray<float>::uninitialised(int64_t(at.size()));
  constexpr int threads = 256;
  gather<<<unsigned((at.size() + threads - 1) / threads), threads>>>(v, where.p, int64_t(at.size()), got.p);
  FDS_CUDA_CHECK_LAUNCH();
  FDS_CUDA_CHECK(cudaMemcpy(out.data(), got.p, got.bytes(), cudaMemcpyDeviceToHost));
  return out;
}

void fill_m(float* m, int64_t origin, int64_t line, int64_t slice, int64_t nx, int64_t ny, int64_t nz,
            const MediumOnGpu& medium) {
  if (nx * ny * nz == 0) return;
  const int64_t blocks = std::min<int64_t>(kFillBlocks, (nx * ny * nz + kFillThreads - 1) / kFillThreads);
  fill_m_points<<<unsigned(blocks), kFillThreads>>>(m, origin, line, slice, nx, ny, nz, medium);
  FDS_CUDA_CHECK_LAUNCH();
}

}  // namespace fdstencil::cuda::wave
