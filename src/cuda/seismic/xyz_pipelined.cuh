// d2xyz in one pass, ours: the seed-style one-pass kernel (xyz_onepass.cuh) with its plane loop
// software-pipelined for Hopper. The tile is double-buffered, and while a block computes plane k
// from one buffer, the x/y halo of plane k + 1 is already on its way into the other with
// per-thread asynchronous copies (cp.async, no registers held), and the queue's next plane
// (k + 1 + R) is already loading into a register. One barrier per plane instead of two, and no
// load has to return before the plane that needs it is reached.
#pragma once

#include "cuda/common/async_copy.cuh"
#include "cuda/common/thread_ring.cuh"
#include "cuda/seismic/tile.cuh"

namespace fdstencil::cuda::seismic {

// `ZQ` > 0 keeps the queue's ZQ oldest planes (k - R .. k - R + ZQ - 1) in shared memory instead of
// registers (the `zq` parameter): each thread owns one 16-byte slot per plane, in a ring of ZQ
// planes behind the two tiles (cuda/common/thread_ring.cuh), and reads and writes only its own
// slots, so no barrier guards them.
// It costs ZQ shared loads (ZQ + 1 where ZQ > R: the centre, for the tile, comes from the ring
// too) and one store per plane and frees ZQ 16-byte vectors of registers; see
// docs/seismic.md, "The z queue in shared memory".
// `Blocks` > 0 caps the registers (the `regs` parameter of d2xyz `pipelined` at R = 3, and with
// `zq` at any R): that many
// blocks of kMarchThreads threads must fit an SM's 65536, so nvcc keeps to 65536 / (512 * Blocks),
// 64 at 2. 0 states no minimum, and nvcc is free up to 128. (Not 1: ptxas reads an explicit
// minimum as leave to spend registers; the R = 1 instances grew from 46 and 40 registers to 60
// and 59.)
template <class T, int R, int V, int Blocks = 0, int ZQ = 0>
__global__ void __launch_bounds__(kMarchThreads, Blocks) xyz_pipelined(Args<T> a) {
  static_assert(V * sizeof(T) == 16, "cp.async moves 16-byte vectors");
  extern __shared__ __align__(16) unsigned char smem_raw[];
  const TileShape<R, V> s{int(blockDim.x), int(blockDim.y)};
  // Buffer b at tiles + b * s.elems(), by arithmetic: an array of the two pointers, indexed at
  // run time, would live in local memory.
  T* const tiles = reinterpret_cast<T*>(smem_raw);
  const auto [x0, j0, i0, j, k0, k1, rank, threads] = MarchBlock<V>(a);
  const bool loads = i0 < a.nx + R && j < a.ny + R;  // see xyz_onepass.cuh
  const bool stores = i0 < a.nx && j < a.ny;
  const int64_t column = i0 + a.line * j;
  const T* u = a.u + column + a.slice * k0;
  const int centre = (threadIdx.y + R) * s.pitch() + s.P + V * threadIdx.x;

  auto start_halo = [&](int k, T* tile) { start_halo_copies(a, s, x0, j0, rank, threads, k, tile); };

  static_assert(ZQ >= 0 && ZQ <= 2 * R, "the newest plane stays in a register");
  constexpr int QR = 2 * R + 1 - ZQ;  // queue planes in registers: k - R + ZQ .. k + R
  ThreadRing<T, V, ZQ> ring(tiles + 2 * s.elems(), rank, threads);  // entry 0: plane k - R
  Vec<T, V> q[QR] = {};
  // Queue entry r (plane k - R + r), from the ring or a register; r is a constant after unrolling.
  auto plane = [&](int r) { return r < ZQ ? ring[r] : q[r < ZQ ? 0 : r - ZQ]; };

#pragma unroll
  for (int r = 0; r <= 2 * R; ++r) {
    Vec<T, V> v = {};
    if (loads) v = load_vec<T, V>(u + (r - R) * a.slice);
    if (r < ZQ)
      ring.fill(r, v);
    else
      q[r - ZQ] = v;
  }
  if (k0 < k1) start_halo(k0, tiles);
  for (int k = k0; k < k1; ++k) {
    T* tile = tiles + ((k - k0) & 1) * s.elems();
    store_vec(tile + centre, plane(R));
    ptx::copy_async_wait_all();
    // Everyone's halo copies and centres of plane k have landed, and everyone has finished
    // reading the other buffer (plane k - 1), which may now be refilled.
    __syncthreads();
    Vec<T, V> next = {};
    if (k + 1 < k1) {
      start_halo(k + 1, tiles + ((k + 1 - k0) & 1) * s.elems());
      if (loads) next = load_vec<T, V>(u + (R + 1) * a.slice);
    }
    if (stores) {
      Vec<T, V> o = xy_from_tile(tile, s, threadIdx.x, threadIdx.y, a);
#pragma unroll
      for (int r = 0; r <= 2 * R; ++r) {
        const Vec<T, V> z = plane(r);
#pragma unroll
        for (int e = 0; e < V; ++e) o.v[e] += a.wz[r] * z.v[e];
      }
      store_streaming(a.f + column + a.slice * k, o, a.nx - i0);
    }
    if constexpr (ZQ > 0) ring.push(q[0]);  // plane k - R + ZQ takes the slot of plane k - R, which is done
#pragma unroll
    for (int r = 0; r < QR - 1; ++r) q[r] = q[r + 1];
    q[QR - 1] = next;
    u += a.slice;
  }
}

}  // namespace fdstencil::cuda::seismic
