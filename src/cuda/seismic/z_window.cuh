// d2z with a sliding window (seismic part 2; V > 1 is its vectorized form): a thread owns V
// consecutive x points of one line and walks `nw` planes along z, keeping the 2R + 1 planes of
// its stencil in a register queue. Each step loads one new plane value (one V-wide access,
// kMarchPrefetch planes ahead of its use; see common.cuh for what that does and does not buy),
// writes one output vector and shifts the queue,
// so the 2R + 1 z taps cost one load instead of 2R + 1. The window restarts for every block of nw
// planes: 2R seam planes are re-read per block, the cost that the posts' figure of bandwidth
// against nw shows. Acc adds the result to the output (the last pass of the multi-pass d2xyz).
#pragma once

#include "cuda/common/vec.cuh"
#include "cuda/seismic/common.cuh"

namespace fdstencil::cuda::seismic {

template <class T, int R, int V, bool Acc = false>
__global__ void __launch_bounds__(kMarchThreads) z_window(Args<T> a) {
  constexpr int D = kMarchPrefetch;
  constexpr int Q = 2 * R + 1 + D;  // the stencil's planes and the D planes in flight
  const int tile_x = a.z_first ? blockIdx.y : blockIdx.x;
  const int tile_y = a.z_first ? blockIdx.z : blockIdx.y;
  const int chunk = a.z_first ? blockIdx.x : blockIdx.z;
  const int i0 = V * int(threadIdx.x + tile_x * blockDim.x);
  const int j = threadIdx.y + tile_y * blockDim.y;
  const int k0 = chunk * a.nw;
  const int k1 = min(k0 + a.nw, a.nz);
  if (i0 >= a.nx || j >= a.ny) return;
  const int64_t pos = i0 + a.line * j + a.slice * k0;
  const T* u = a.u + pos;
  T* f = a.f + pos;
  Vec<T, V> q[Q] = {};
  // Only the planes this chunk's outputs use, k0 - R .. k1 - 1 + R: the prefetch must not run
  // past the chunk's end (D wasted planes per chunk, 0.25 x the cube more reads at nw = 8, the
  // counters showed), and k1 <= nz keeps it inside the allocation. (This form of the first guard costs no
  // register over the old one at R = 8; k0 + r - R < k1 + R, the same test, cost three.)
#pragma unroll
  for (int r = 0; r < Q - 1; ++r)
    if (r < k1 - k0 + 2 * R) q[r] = load_vec<T, V>(u + (r - R) * a.slice);
  for (int k = k0; k < k1; ++k) {
    if (k + D < k1) q[Q - 1] = load_vec<T, V>(u + (R + D) * a.slice);  // plane k + R + D
    Vec<T, V> o{};
#pragma unroll
    for (int r = 0; r <= 2 * R; ++r)
#pragma unroll
      for (int e = 0; e < V; ++e) o.v[e] += a.wz[r] * q[r].v[e];
    if constexpr (Acc) add_loaded(o, f);
    store_streaming(f, o, a.nx - i0);
#pragma unroll
    for (int r = 0; r < Q - 1; ++r) q[r] = q[r + 1];
    u += a.slice;
    f += a.slice;
  }
}

}  // namespace fdstencil::cuda::seismic
