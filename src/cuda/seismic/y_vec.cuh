// d2y, vectorized (seismic part 3): a thread owns V consecutive x points and loads the 2R + 1
// vectors above and below them straight from global memory; the lines a block shares are reused
// through L1. Acc adds the result to the output instead of overwriting it (a later pass of the
// multi-pass d2xyz).
#pragma once

#include "cuda/common/vec.cuh"
#include "cuda/seismic/common.cuh"

namespace fdstencil::cuda::seismic {

template <class T, int R, int V, bool Acc = false>
__global__ void y_vec(Args<T> a) {
  const int i0 = V * int(threadIdx.x + blockIdx.x * blockDim.x);
  const int j = threadIdx.y + blockIdx.y * blockDim.y;
  const int k = threadIdx.z + blockIdx.z * blockDim.z;
  if (i0 >= a.nx || j >= a.ny || k >= a.nz) return;
  const int64_t pos = i0 + a.line * j + a.slice * k;
  Vec<T, V> o{};
#pragma unroll
  for (int r = 0; r <= 2 * R; ++r) {
    const Vec<T, V> q = load_vec<T, V>(a.u + pos + (r - R) * a.line);
#pragma unroll
    for (int e = 0; e < V; ++e) o.v[e] += a.wy[r] * q.v[e];
  }
  if constexpr (Acc) add_loaded(o, a.f + pos);
  store_streaming(a.f + pos, o, a.nx - i0);
}

}  // namespace fdstencil::cuda::seismic
