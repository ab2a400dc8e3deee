// d2xyz in one pass (seismic part 3's one-pass kernel): a block owns a bx*V x by column of the
// grid and walks `nw` planes along z. Per thread, the 2R + 1 z taps of its V points live in a
// register queue (one new V-wide load per plane, as in the z sliding window). Per plane, the
// block stages the plane's tile in shared memory: the centre comes from the queues (no second
// global load), the x and y halos from global memory. d2x and d2y then come from the tile
// (xy_from_tile), d2z from the queue, and the sum leaves with one streaming store.
// Two barriers per plane: one before the tile is overwritten, one before it is read.
#pragma once

#include "cuda/seismic/tile.cuh"

namespace fdstencil::cuda::seismic {

template <class T, int R, int V>
__global__ void __launch_bounds__(kMarchThreads) xyz_onepass(Args<T> a) {
  extern __shared__ __align__(16) unsigned char smem_raw[];
  T* tile = reinterpret_cast<T*>(smem_raw);
  const TileShape<R, V> s{int(blockDim.x), int(blockDim.y)};
  const int x0 = blockIdx.x * blockDim.x * V;
  const int j0 = blockIdx.y * blockDim.y;
  const int i0 = x0 + V * threadIdx.x;
  const int j = j0 + threadIdx.y;
  const int k0 = blockIdx.z * a.nw;
  const int k1 = min(k0 + a.nw, a.nz);
  const int rank = threadIdx.x + blockDim.x * threadIdx.y;
  const int threads = blockDim.x * blockDim.y;
  // A thread on the halo ring beyond the interior still loads its column: its values are the
  // tile's halo for the interior threads. Beyond the halo there is nothing to load.
  const bool loads = i0 < a.nx + R && j < a.ny + R;
  const bool stores = i0 < a.nx && j < a.ny;
  const int64_t column = i0 + a.line * j;
  const T* u = a.u + column + a.slice * k0;
  T* centre = tile + (threadIdx.y + R) * s.pitch() + s.P + V * threadIdx.x;

  Vec<T, V> q[2 * R + 1] = {};
  if (loads) {
#pragma unroll
    for (int r = 0; r < 2 * R; ++r) q[r] = load_vec<T, V>(u + (r - R) * a.slice);
  }
  for (int k = k0; k < k1; ++k) {
    if (loads) q[2 * R] = load_vec<T, V>(u + R * a.slice);
    __syncthreads();  // the previous plane's tile has been read by everyone
    store_vec(centre, q[R]);
    const T* plane = a.u + a.slice * k;
    for_each_halo_vector(s, rank, threads, [&](int row, int col) {
      if (tile_vector_exists<T, R, V>(a, x0, j0, row, col))
        store_vec(tile + row * s.pitch() + col,
                  load_vec<T, V>(plane + (x0 - s.P + col) + int64_t(j0 - R + row) * a.line));
    });
    __syncthreads();
    if (stores) {
      Vec<T, V> o = xy_from_tile(tile, s, threadIdx.x, threadIdx.y, a);
#pragma unroll
      for (int r = 0; r <= 2 * R; ++r)
#pragma unroll
        for (int e = 0; e < V; ++e) o.v[e] += a.wz[r] * q[r].v[e];
      store_streaming(a.f + column + a.slice * k, o, a.nx - i0);
    }
#pragma unroll
    for (int r = 0; r < 2 * R; ++r) q[r] = q[r + 1];
    u += a.slice;
  }
}

}  // namespace fdstencil::cuda::seismic
