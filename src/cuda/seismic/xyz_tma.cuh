// d2xyz in one pass, ours (4): the plane tiles come by the tensor memory accelerator (TMA). One
// thread of the block asks the copy engine for whole tiles (the interior and its x/y halo, one
// box each) into a ring of D tile buffers in shared memory, `ahead` planes beyond the newest one
// a thread reads; each buffer has an mbarrier that completes when its bytes have landed (full)
// and one that completes when every warp is done with it (empty). The threads only compute:
// x and y from the tile of plane k, the z queue in registers fed with the centre of the newest
// tile (plane k + R) read from shared memory.
//
// What it changes against `pipelined` (xyz_pipelined.cuh), whose threads load the queue's next
// plane into a register and copy the halo with per-thread cp.async: the bytes in flight no
// longer take registers or threads (a copy per tile, any number of tiles ahead), no thread
// computes halo addresses, and no block-wide barrier remains in the march. See docs/seismic.md,
// "The TMA tile ring" (a version that read the R planes below the centre from the ring's older
// tiles, as `pipelined`'s zq, was measured there and removed: the R more tiles of shared memory
// cost more occupancy than the registers it freed).
#pragma once

#include "cuda/seismic/tma_ring.cuh"

namespace fdstencil::cuda::seismic {

// The march, for the two kernels below (the same body; they differ in how registers are bounded).
// `map` describes the field from point (-P, -R, -R), the box one tile: bx V + 2P by by + 2R by 1
// (tma_ring.cuh). The launcher encodes it (launch.hpp, TensorBox).
template <class T, int R, int V>
__device__ __forceinline__ void tma_march(const Args<T>& a, const CUtensorMap* map) {
  static_assert(V * sizeof(T) == 16, "16-byte vectors");
  extern __shared__ __align__(kTmaTileAlign) unsigned char smem_raw[];
  const TileShape<R, V> s{int(blockDim.x), int(blockDim.y)};
  const auto [x0, j0, i0, j, k0, k1, rank, threads] = MarchBlock<V>(a);
  const int n = k1 - k0;
  const bool loads = i0 < a.nx + R && j < a.ny + R;  // see xyz_onepass.cuh
  const bool stores = i0 < a.nx && j < a.ny;
  const int64_t column = i0 + a.line * j;
  const int centre = (threadIdx.y + R) * s.pitch() + s.P + V * threadIdx.x;
  const bool producer = rank == 0;
  // Tile t holds plane k0 + t; there are n + R of them (through plane k0 + n + R - 1).
  TmaTileRing<T> ring(smem_raw, s.elems(), tma_ring_tiles(R, a.ahead), R, map, x0, j0, k0, n + R);
  ring.start(producer, threads);

  // The queue q[r] holds plane k - R + r. Before the first step: the R planes below the chunk
  // from global memory, the R from k0 up from the first tiles, which are all in flight (R < D).
  Vec<T, V> q[2 * R + 1] = {};
#pragma unroll
  for (int r = 0; r < R; ++r)
    if (loads) q[r] = load_vec<T, V>(a.u + column + a.slice * (k0 - R + r));
  ring.wait_first(R);
#pragma unroll
  for (int r = R; r < 2 * R; ++r) q[r] = load_vec<T, V>(ring.first(r - R) + centre);

  for (int step = 0; step < n; ++step) {
    if (producer) ring.refill(step);
    q[2 * R] = load_vec<T, V>(ring.newest() + centre);
    if (stores) {
      Vec<T, V> o = xy_from_tile(ring.oldest(), s, threadIdx.x, threadIdx.y, a);
#pragma unroll
      for (int r = 0; r <= 2 * R; ++r)
#pragma unroll
        for (int e = 0; e < V; ++e) o.v[e] += a.wz[r] * q[r].v[e];
      store_streaming(a.f + column + a.slice * (k0 + step), o, a.nx - i0);
    }
    ring.release_and_advance(rank);
#pragma unroll
    for (int r = 0; r < 2 * R; ++r) q[r] = q[r + 1];
  }
}

// The compiler's choice within the 128 registers a 512-thread block allows.
template <class T, int R, int V>
__global__ void __launch_bounds__(kMarchThreads) xyz_tma(Args<T> a, const __grid_constant__ CUtensorMap map) {
  tma_march<T, R, V>(a, &map);
}

// At most Regs registers (the `regs` parameter), so that more blocks share an SM where the
// compiler's choice sits just above an occupancy step (float R = 6: 98 registers, 4 blocks of
// 128 threads; under 96, 5). __maxnreg__ rather than __launch_bounds__' minimum blocks: it names
// the count itself (a minimum of blocks of 512 threads can only say 128 or 64).
template <class T, int R, int V, int Regs>
__global__ void __maxnreg__(Regs) xyz_tma_capped(Args<T> a, const __grid_constant__ CUtensorMap map) {
  tma_march<T, R, V>(a, &map);
}

}  // namespace fdstencil::cuda::seismic
