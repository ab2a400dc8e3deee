// The seismic baselines (seismic part 1): one output point per thread, every tap a separate
// global load, reuse left to the caches. One template serves d2x, d2y, d2z and the fused d2xy and
// d2xyz (the naive one-point-per-thread xyz the seed notes measure); radius and axes are
// compile-time so the tap loop unrolls. Run on the aligned layout (the default) or, with
// --align 1, on the unpadded one, to reproduce part 2's alignment gain.
#pragma once

#include "cuda/seismic/common.cuh"

namespace fdstencil::cuda::seismic {

template <class T, int R, bool X, bool Y, bool Z>
__global__ void baseline(Args<T> a) {
  const int i = threadIdx.x + blockIdx.x * blockDim.x;
  const int j = threadIdx.y + blockIdx.y * blockDim.y;
  const int k = threadIdx.z + blockIdx.z * blockDim.z;
  if (i >= a.nx || j >= a.ny || k >= a.nz) return;
  const int64_t pos = i + a.line * j + a.slice * k;
  const T* u = a.u + pos;
  T out = T(0);
#pragma unroll
  for (int r = 0; r <= 2 * R; ++r) {
    if constexpr (X) out += u[r - R] * a.wx[r];
    if constexpr (Y) out += u[(r - R) * a.line] * a.wy[r];
    if constexpr (Z) out += u[(r - R) * a.slice] * a.wz[r];
  }
  a.f[pos] = out;
}

}  // namespace fdstencil::cuda::seismic
