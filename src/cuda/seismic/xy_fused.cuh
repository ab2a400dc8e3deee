// d2xy fused (seismic part 3): one block per bx*V x by tile of one plane. The block stages the
// tile with its x and y halos in shared memory (V-wide loads), then each thread forms d2x from a
// register window of its tile row and d2y from its tile column, and writes d2x + d2y with one
// streaming store. One pass instead of two: the input is read once and the output written once.
#pragma once

#include "cuda/seismic/tile.cuh"

namespace fdstencil::cuda::seismic {

template <class T, int R, int V>
__global__ void xy_fused(Args<T> a) {
  extern __shared__ __align__(16) unsigned char smem_raw[];
  T* tile = reinterpret_cast<T*>(smem_raw);
  const TileShape<R, V> s{int(blockDim.x), int(blockDim.y)};
  const int x0 = blockIdx.x * blockDim.x * V;
  const int j0 = blockIdx.y * blockDim.y;
  const int k = blockIdx.z;
  const T* plane = a.u + a.slice * k;
  for_each_tile_vector(
      s, threadIdx.x + blockDim.x * threadIdx.y, blockDim.x * blockDim.y, [&](int row, int col) {
        if (tile_vector_exists<T, R, V>(a, x0, j0, row, col))
          store_vec(tile + row * s.pitch() + col,
                    load_vec<T, V>(plane + (x0 - s.P + col) + int64_t(j0 - R + row) * a.line));
      });
  __syncthreads();
  const int i0 = x0 + V * threadIdx.x;
  const int j = j0 + threadIdx.y;
  if (i0 >= a.nx || j >= a.ny) return;
  const Vec<T, V> o = xy_from_tile(tile, s, threadIdx.x, threadIdx.y, a);
  store_streaming(a.f + i0 + a.line * j + a.slice * k, o, a.nx - i0);
}

}  // namespace fdstencil::cuda::seismic
