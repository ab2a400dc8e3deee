// The device-side field comparison (see compare.hpp): one pass over the halo box, a block-wide
// reduction, one atomic per block and figure.
#include <cuda_runtime.h>

#include "cuda/common/check.hpp"
#include "cuda/common/compare.hpp"

namespace fdstencil::cuda {

namespace {

struct DiffBits {
  // Non-negative doubles order like their bit patterns, so atomicMax on the bits is a max.
  unsigned long long max_abs_diff, max_abs_ref, nonfinite, zeros, halo_written;
};

struct CompareArgs {
  Extents n;
  int R;
  int64_t offset, line, slice;
};

__device__ unsigned long long bits_of(double v) {
  return static_cast<unsigned long long>(__double_as_longlong(v));
}

template <class T>
__global__ void compare_kernel(const T* __restrict__ out, const T* __restrict__ ref, CompareArgs a,
                               DiffBits* r) {
  const int64_t tx = a.n.nx + 2 * a.R, ty = a.n.ny + 2 * a.R, tz = a.n.nz + 2 * a.R;
  const int64_t total = tx * ty * tz;
  double diff = 0, refmax = 0;
  unsigned long long nonfinite = 0, zeros = 0, halo = 0;
  for (int64_t p = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; p < total;
       p += int64_t(gridDim.x) * blockDim.x) {
    const int64_t i = p % tx - a.R, j = (p / tx) % ty - a.R, k = p / (tx * ty) - a.R;
    const int64_t at = a.offset + (i + a.R) + (j + a.R) * a.line + (k + a.R) * a.slice;
    const double o = double(out[at]);
    const bool inside = i >= 0 && i < a.n.nx && j >= 0 && j < a.n.ny && k >= 0 && k < a.n.nz;
    if (!inside) {
      halo += !isnan(o);
      continue;
    }
    const double e = double(ref[at]);
    refmax = fmax(refmax, fabs(e));
    if (!isfinite(o))
      ++nonfinite;
    else
      diff = fmax(diff, fabs(o - e));
    zeros += o == 0.0;
  }
  for (int s = 16; s > 0; s /= 2) {
    diff = fmax(diff, __shfl_down_sync(0xffffffffu, diff, s));
    refmax = fmax(refmax, __shfl_down_sync(0xffffffffu, refmax, s));
    nonfinite += __shfl_down_sync(0xffffffffu, nonfinite, s);
    zeros += __shfl_down_sync(0xffffffffu, zeros, s);
    halo += __shfl_down_sync(0xffffffffu, halo, s);
  }
  if (threadIdx.x % 32 == 0) {
    atomicMax(&r->max_abs_diff, bits_of(diff));
    atomicMax(&r->max_abs_ref, bits_of(refmax));
    atomicAdd(&r->nonfinite, nonfinite);
    atomicAdd(&r->zeros, zeros);
    atomicAdd(&r->halo_written, halo);
  }
}

// The result block on the device, freed however the comparison ends.
struct DeviceResult {
  DiffBits* p = nullptr;
  DeviceResult() { FDS_CUDA_CHECK(cudaMalloc(&p, sizeof(DiffBits))); }
  ~DeviceResult() { cudaFree(p); }
  DeviceResult(const DeviceResult&) = delete;
  DeviceResult& operator=(const DeviceResult&) = delete;
};

}  // namespace

template <class T>
FieldDiff compare_on_device(const T* out, const T* ref, const Layout& l) {
  const DeviceResult d;
  FDS_CUDA_CHECK(cudaMemset(d.p, 0, sizeof(DiffBits)));
  const CompareArgs a{l.interior(), l.radius(), l.offset(), l.line(), l.slice()};
  int device = 0, sms = 0;
  FDS_CUDA_CHECK(cudaGetDevice(&device));
  FDS_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  // 8 resident blocks of 256 threads per SM, grid-stride over the rest (as the copy kernel).
  compare_kernel<T><<<sms * 8, 256>>>(out, ref, a, d.p);
  FDS_CUDA_CHECK_LAUNCH();
  DiffBits h{};
  FDS_CUDA_CHECK(cudaMemcpy(&h, d.p, sizeof h, cudaMemcpyDeviceToHost));
  FieldDiff f;
  f.max_abs_diff = __builtin_bit_cast(double, h.max_abs_diff);
  f.max_abs_ref = __builtin_bit_cast(double, h.max_abs_ref);
  f.nonfinite = int64_t(h.nonfinite);
  f.zeros = int64_t(h.zeros);
  f.halo_written = int64_t(h.halo_written);
  return f;
}

template FieldDiff compare_on_device(const float*, const float*, const Layout&);
template FieldDiff compare_on_device(const double*, const double*, const Layout&);

}  // namespace fdstencil::cuda
