// d2xy in one pass, ours: xyz_l1march's barrier-free thread without its z queue. xy_fused stages
// a plane tile in shared memory and waits for it, so within a block its loads and its arithmetic
// never overlap; here no tile and no barrier. A thread owns V x points on MY consecutive lines and
// walks `nw` planes along z (each plane on its own: the walk only spreads a thread's setup):
//   y  the 2R lines above and below, straight from global (hits in L1: the block's neighbouring
//      threads load the same lines); with MY > 1 one load serves up to MY outputs;
//   x  ceil(R / V) vectors on each side, as in x_window (L1 hits), the centre from the y loads.
#pragma once

#include "cuda/common/vec.cuh"
#include "cuda/seismic/common.cuh"

namespace fdstencil::cuda::seismic {

template <class T, int R, int V, int MY>
__global__ void __launch_bounds__(kMarchThreads) xy_l1(Args<T> a) {
  constexpr int C = (R + V - 1) / V;  // x neighbour vectors on each side
  const int i0 = V * int(threadIdx.x + blockIdx.x * blockDim.x);
  const int j0 = MY * int(threadIdx.y + blockIdx.y * blockDim.y);
  const int k0 = blockIdx.z * a.nw;
  const int k1 = min(k0 + a.nw, a.nz);
  if (i0 >= a.nx || j0 >= a.ny) return;  // no barrier below: an idle thread may simply leave
  const T* u = a.u + i0 + a.line * j0 + a.slice * k0;
  T* f = a.f + i0 + a.line * j0 + a.slice * k0;
  for (int k = k0; k < k1; ++k) {
    Vec<T, V> o[MY] = {}, centre[MY] = {};
    // y: lines j0 - R .. j0 + MY - 1 + R; past ny + R - 1 (the halo's end) a line is only the
    // halo of lines that are never written, so it is not read.
#pragma unroll
    for (int l = 0; l < MY + 2 * R; ++l) {
      if (MY > 1 && j0 + l - R >= a.ny + R) continue;
      const Vec<T, V> v = load_vec<T, V>(u + (l - R) * a.line);
      if (l >= R && l < R + MY) centre[l - R] = v;
#pragma unroll
      for (int m = 0; m < MY; ++m)
        if (l - m >= 0 && l - m <= 2 * R) {
#pragma unroll
          for (int e = 0; e < V; ++e) o[m].v[e] += a.wy[l - m] * v.v[e];
        }
    }
#pragma unroll
    for (int m = 0; m < MY; ++m) {
      if (j0 + m >= a.ny) continue;
      // x: the window of line j0 + m, its centre vector from the y loads.
      T w[(2 * C + 1) * V];
#pragma unroll
      for (int c = 0; c <= 2 * C; ++c) {
        const Vec<T, V> v = c == C ? centre[m] : load_vec<T, V>(u + m * a.line + (c - C) * V);
#pragma unroll
        for (int e = 0; e < V; ++e) w[c * V + e] = v.v[e];
      }
#pragma unroll
      for (int e = 0; e < V; ++e) {
        T s = T(0);
#pragma unroll
        for (int r = 0; r <= 2 * R; ++r) s += a.wx[r] * w[C * V + e + r - R];
        o[m].v[e] += s;
      }
      store_streaming(f + m * a.line, o[m], a.nx - i0);
    }
    u += a.slice;
    f += a.slice;
  }
}

}  // namespace fdstencil::cuda::seismic
