// d2xyz `pipelined` with registers blocked along y (its `my` parameter, 2): xyz_pipelined.cuh's
// march, the tile double-buffered and its halo copied by cp.async one plane ahead, but each
// thread marches MY adjacent columns (rows j .. j + MY - 1 of its x vector), so a block covers
// MY * blockDim.y rows of the plane, and the y taps the columns share are loaded from the tile
// once (tile.cuh xy_rows_from_tile). At R = 4 with `zq` 1, a thread's shared-memory loads fall from
// 3.75 to 2.75 vectors a point (x windows 3 a column, y taps 2R of the 2R + MY rows, ring R a
// column), for twice the queue's registers. Each column has its own queue; with `zq` the ring has
// one lane per column (cuda/common/thread_ring.cuh). `Blocks` and `ZQ` as in xyz_pipelined.cuh.
// A kernel of its own rather than an MY parameter of xyz_pipelined: written that way, MY = 1
// compiled to different register counts (float R = 1: 46 against 40), and xyz_pipelined's
// instances are the measured defaults of d2xyz and the Laplacian's pipelined.
#pragma once

#include "cuda/common/async_copy.cuh"
#include "cuda/common/thread_ring.cuh"
#include "cuda/seismic/tile.cuh"

namespace fdstencil::cuda::seismic {

template <class T, int R, int V, int Blocks, int ZQ, int MY>
__global__ void __launch_bounds__(kMarchThreads, Blocks) xyz_pipelined_rows(Args<T> a) {
  static_assert(V * sizeof(T) == 16, "cp.async moves 16-byte vectors");
  static_assert(MY >= 2, "MY = 1 is xyz_pipelined");
  extern __shared__ __align__(16) unsigned char smem_raw[];
  const TileShape<R, V> s{int(blockDim.x), MY * int(blockDim.y)};
  // Buffer b at tiles + b * s.elems(), by arithmetic: an array of the two pointers, indexed at
  // run time, would live in local memory.
  T* const tiles = reinterpret_cast<T*>(smem_raw);
  const auto [x0, j0, i0, j, k0, k1, rank, threads] = MarchBlock<V, MY>(a);
  const int row0 = MY * threadIdx.y;  // the thread's first row in the tile's interior
  // Column m is row j + m. See xyz_onepass.cuh for which threads load and which store.
  bool loads[MY], stores[MY];
#pragma unroll
  for (int m = 0; m < MY; ++m) {
    loads[m] = i0 < a.nx + R && j + m < a.ny + R;
    stores[m] = i0 < a.nx && j + m < a.ny;
  }
  const int64_t column = i0 + a.line * j;
  const T* u = a.u + column + a.slice * k0;
  const int centre = (MY * threadIdx.y + R) * s.pitch() + s.P + V * threadIdx.x;  // column 0's; m rows below

  auto start_halo = [&](int k, T* tile) { start_halo_copies(a, s, x0, j0, rank, threads, k, tile); };

  static_assert(ZQ >= 0 && ZQ <= 2 * R, "the newest plane stays in a register");
  constexpr int QR = 2 * R + 1 - ZQ;  // queue planes in registers: k - R + ZQ .. k + R
  ThreadRing<T, V, ZQ, MY> ring(tiles + 2 * s.elems(), rank, threads);  // entry 0: plane k - R
  Vec<T, V> q[MY][QR] = {};
  // Column m's queue entry r (plane k - R + r), from the ring or a register; r and m are
  // constants after unrolling.
  auto plane = [&](int m, int r) { return r < ZQ ? ring.get(r, m) : q[m][r < ZQ ? 0 : r - ZQ]; };

#pragma unroll
  for (int m = 0; m < MY; ++m) {
#pragma unroll
    for (int r = 0; r <= 2 * R; ++r) {
      Vec<T, V> v = {};
      if (loads[m]) v = load_vec<T, V>(u + m * a.line + (r - R) * a.slice);
      if (r < ZQ)
        ring.fill(r, v, m);
      else
        q[m][r - ZQ] = v;
    }
  }
  if (k0 < k1) start_halo(k0, tiles);
  for (int k = k0; k < k1; ++k) {
    T* tile = tiles + ((k - k0) & 1) * s.elems();
#pragma unroll
    for (int m = 0; m < MY; ++m) store_vec(tile + centre + m * s.pitch(), plane(m, R));
    ptx::copy_async_wait_all();
    // Everyone's halo copies and centres of plane k have landed, and everyone has finished
    // reading the other buffer (plane k - 1), which may now be refilled.
    __syncthreads();
    Vec<T, V> next[MY] = {};
    if (k + 1 < k1) {
      start_halo(k + 1, tiles + ((k + 1 - k0) & 1) * s.elems());
#pragma unroll
      for (int m = 0; m < MY; ++m)
        if (loads[m]) next[m] = load_vec<T, V>(u + m * a.line + (R + 1) * a.slice);
    }
    if (stores[0]) {
      Vec<T, V> o[MY];
      xy_rows_from_tile<T, R, V, MY>(tile, s, threadIdx.x, row0, a, o);
#pragma unroll
      for (int m = 0; m < MY; ++m) {
#pragma unroll
        for (int r = 0; r <= 2 * R; ++r) {
          const Vec<T, V> z = plane(m, r);
#pragma unroll
          for (int e = 0; e < V; ++e) o[m].v[e] += a.wz[r] * z.v[e];
        }
        if (stores[m]) store_streaming(a.f + column + m * a.line + a.slice * k, o[m], a.nx - i0);
      }
    }
    if constexpr (ZQ > 0) {  // plane k - R + ZQ takes the slot of plane k - R, which is done
#pragma unroll
      for (int m = 0; m < MY; ++m) ring.replace_oldest(q[m][0], m);
      ring.advance();
    }
#pragma unroll
    for (int m = 0; m < MY; ++m) {
#pragma unroll
      for (int r = 0; r < QR - 1; ++r) q[m][r] = q[m][r + 1];
      q[m][QR - 1] = next[m];
    }
    u += a.slice;
  }
}

}  // namespace fdstencil::cuda::seismic
