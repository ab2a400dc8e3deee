// d2y, vectorized with shared memory (seismic part 3's LDS kernel): a block stages its tile of
// blockDim.y lines plus R halo lines above and below, blockDim.x * V points wide, in shared
// memory with one V-wide load per thread and line, then every thread reads its 2R + 1 y
// neighbours from the tile. Global memory sees each line once per block instead of 2R + 1 times.
// Acc adds the result to the output (a later pass of the multi-pass d2xyz).
#pragma once

#include "cuda/common/vec.cuh"
#include "cuda/seismic/common.cuh"

namespace fdstencil::cuda::seismic {

// Dynamic shared memory: (blockDim.y + 2R) rows of blockDim.x 16-byte vectors.
inline size_t y_smem_bytes(int bx, int by, int radius) { return size_t(by + 2 * radius) * size_t(bx) * 16; }

template <class T, int R, int V, bool Acc = false>
__global__ void y_smem(Args<T> a) {
  extern __shared__ __align__(16) unsigned char smem_raw[];
  T* tile = reinterpret_cast<T*>(smem_raw);
  const int pitch = blockDim.x * V;
  const int i0 = V * int(threadIdx.x + blockIdx.x * blockDim.x);
  const int j0 = blockIdx.y * blockDim.y;
  const int k = blockIdx.z;
  const T* u = a.u + i0 + a.slice * k;
  // Rows j0 - R .. j0 + blockDim.y + R - 1; nothing past the halo (outside the allocation).
  for (int row = threadIdx.y; row < int(blockDim.y) + 2 * R; row += blockDim.y) {
    const int j = j0 + row - R;
    if (j < a.ny + R && i0 < a.nx + R)
      store_vec(tile + row * pitch + V * threadIdx.x, load_vec<T, V>(u + int64_t(j) * a.line));
  }
  __syncthreads();
  const int j = j0 + threadIdx.y;
  if (i0 >= a.nx || j >= a.ny) return;
  Vec<T, V> o{};
#pragma unroll
  for (int r = 0; r <= 2 * R; ++r) {
    const Vec<T, V> q = load_vec<T, V>(tile + (threadIdx.y + r) * pitch + V * threadIdx.x);
#pragma unroll
    for (int e = 0; e < V; ++e) o.v[e] += a.wy[r] * q.v[e];
  }
  T* f = a.f + i0 + a.line * j + a.slice * k;
  if constexpr (Acc) add_loaded(o, f);
  store_streaming(f, o, a.nx - i0);
}

}  // namespace fdstencil::cuda::seismic
