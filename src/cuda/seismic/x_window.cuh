// d2x, vectorized (seismic part 3's float2 / float4 x kernel): a thread owns V consecutive x
// points, loads them and ceil(R / V) neighbouring vectors on each side as V-wide accesses into a
// register window, and forms its V outputs from the window. Neighbouring threads load each
// other's vectors; those second reads are L1 hits, so DRAM sees each value once.
#pragma once

#include "cuda/common/vec.cuh"
#include "cuda/seismic/common.cuh"

namespace fdstencil::cuda::seismic {

template <class T, int R, int V>
__global__ void x_window(Args<T> a) {
  constexpr int C = (R + V - 1) / V;  // neighbour vectors on each side
  const int i0 = V * int(threadIdx.x + blockIdx.x * blockDim.x);
  const int j = threadIdx.y + blockIdx.y * blockDim.y;
  const int k = threadIdx.z + blockIdx.z * blockDim.z;
  if (i0 >= a.nx || j >= a.ny || k >= a.nz) return;
  const int64_t pos = i0 + a.line * j + a.slice * k;
  T w[(2 * C + 1) * V];
#pragma unroll
  for (int c = 0; c <= 2 * C; ++c) {
    const Vec<T, V> q = load_vec<T, V>(a.u + pos + (c - C) * V);
#pragma unroll
    for (int e = 0; e < V; ++e) w[c * V + e] = q.v[e];
  }
  Vec<T, V> o;
#pragma unroll
  for (int e = 0; e < V; ++e) {
    T s = T(0);
#pragma unroll
    for (int r = 0; r <= 2 * R; ++r) s += a.wx[r] * w[C * V + e + r - R];
    o.v[e] = s;
  }
  store_streaming(a.f + pos, o, a.nx - i0);
}

}  // namespace fdstencil::cuda::seismic
