// d2xyz in one pass, ours: a barrier-free z-march that leaves the x and y taps to Hopper's L1.
// The posts stage each plane in LDS because the MI250X's L1 is 16 KB; an H100 SM has up to
// 256 KB of L1 with the bandwidth of shared memory, and the single-axis kernels show that loads
// straight from global memory reach it (y vec beats y vec_smem at every R). So no tile and no
// barrier: a thread owns V x points on MY consecutive lines and walks `nw` planes along z.
//   z  a register queue of 2R + 1 planes per line, the front loaded kMarchPrefetch planes ahead
//      (DRAM; see common.cuh);
//   y  the 2R lines above and below, straight from global (hits in L1: the block's neighbouring
//      threads load the same lines); with MY > 1 one load serves up to MY outputs;
//   x  ceil(R / V) vectors on each side, as in x_window (L1 hits), the centre from the queue.
// Threads never wait for each other, so each warp's loads overlap the others' arithmetic.
#pragma once

#include "cuda/common/vec.cuh"
#include "cuda/seismic/common.cuh"

namespace fdstencil::cuda::seismic {

template <class T, int R, int V, int MY>
__global__ void __launch_bounds__(kMarchThreads) xyz_l1march(Args<T> a) {
  constexpr int C = (R + V - 1) / V;  // x neighbour vectors on each side
  constexpr int D = kMarchPrefetch;
  constexpr int Q = 2 * R + 1 + D;  // queue length
  const int i0 = V * int(threadIdx.x + blockIdx.x * blockDim.x);
  const int j0 = MY * int(threadIdx.y + blockIdx.y * blockDim.y);
  const int k0 = blockIdx.z * a.nw;
  const int k1 = min(k0 + a.nw, a.nz);
  if (i0 >= a.nx || j0 >= a.ny) return;  // no barrier below: an idle thread may simply leave
  const T* u = a.u + i0 + a.line * j0 + a.slice * k0;
  T* f = a.f + i0 + a.line * j0 + a.slice * k0;
  // Lines j0 + m >= ny are never written, but up to ny + R - 1 they are the y halo of the lines
  // that are; beyond that the queue is never read.
  Vec<T, V> q[MY][Q] = {};
#pragma unroll
  for (int m = 0; m < MY; ++m)
    if (j0 + m < a.ny + R) {
#pragma unroll
      for (int r = 0; r < Q - 1; ++r)
        if (k0 + r - R < k1 + R) q[m][r] = load_vec<T, V>(u + m * a.line + (r - R) * a.slice);
    }
  for (int k = k0; k < k1; ++k) {
    // The front: plane k + R + D, if this chunk's outputs use it (k1 <= nz: inside the allocation).
    // Running past the chunk's end cost D / nw more reads (the counters of docs/counters.md).
    if (k + D < k1) {
#pragma unroll
      for (int m = 0; m < MY; ++m)
        if (j0 + m < a.ny + R) q[m][Q - 1] = load_vec<T, V>(u + m * a.line + (R + D) * a.slice);
    }
    Vec<T, V> o[MY] = {};
    // y: lines j0 - R .. j0 + MY - 1 + R of plane k; the thread's own lines come from the queue.
#pragma unroll
    for (int l = 0; l < MY + 2 * R; ++l) {
      Vec<T, V> v;
      if (l >= R && l < R + MY)
        v = q[l - R][R];
      else
        v = load_vec<T, V>(u + (l - R) * a.line);
#pragma unroll
      for (int m = 0; m < MY; ++m)
        if (l - m >= 0 && l - m <= 2 * R) {
#pragma unroll
          for (int e = 0; e < V; ++e) o[m].v[e] += a.wy[l - m] * v.v[e];
        }
    }
#pragma unroll
    for (int m = 0; m < MY; ++m) {
      // x: the window of line j0 + m, its centre vector from the queue.
      T w[(2 * C + 1) * V];
#pragma unroll
      for (int c = 0; c <= 2 * C; ++c) {
        const Vec<T, V> v = c == C ? q[m][R] : load_vec<T, V>(u + m * a.line + (c - C) * V);
#pragma unroll
        for (int e = 0; e < V; ++e) w[c * V + e] = v.v[e];
      }
#pragma unroll
      for (int e = 0; e < V; ++e) {
        T s = T(0);
#pragma unroll
        for (int r = 0; r <= 2 * R; ++r) s += a.wx[r] * w[C * V + e + r - R] + a.wz[r] * q[m][r].v[e];
        o[m].v[e] += s;
      }
      if (j0 + m < a.ny) store_streaming(f + m * a.line, o[m], a.nx - i0);
    }
#pragma unroll
    for (int m = 0; m < MY; ++m)
#pragma unroll
      for (int r = 0; r < Q - 1; ++r) q[m][r] = q[m][r + 1];
    u += a.slice;
    f += a.slice;
  }
}

}  // namespace fdstencil::cuda::seismic
