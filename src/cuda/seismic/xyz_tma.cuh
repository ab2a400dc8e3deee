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

#include "cuda/common/bulk_copy.cuh"
#include "cuda/common/tensor_copy.cuh"
#include "cuda/seismic/tile.cuh"

namespace fdstencil::cuda::seismic {

// Each tile buffer starts on 128 bytes, the bulk tensor copy's shared-memory alignment.
inline constexpr int kTmaTileAlign = 128;

// Tiles in the ring: the planes a step reads (the centre and the R above it) and the `ahead`
// planes in flight beyond them.
__host__ __device__ inline int tma_ring_tiles(int radius, int ahead) { return radius + 1 + ahead; }

// Bytes from one tile buffer to the next: a tile_bytes() tile rounded up to kTmaTileAlign.
inline size_t tma_tile_stride(int bx, int by, int radius, int elem_bytes) {
  return (tile_bytes(bx, by, radius, elem_bytes) + kTmaTileAlign - 1) / kTmaTileAlign * kTmaTileAlign;
}

// The launch's shared memory: the ring's tiles, then a full and an empty mbarrier per tile.
inline size_t tma_smem_bytes(int bx, int by, int radius, int elem_bytes, int ahead) {
  const size_t tiles = size_t(tma_ring_tiles(radius, ahead));
  return tiles * tma_tile_stride(bx, by, radius, elem_bytes) + 2 * tiles * sizeof(uint64_t);
}

// The march, for the two kernels below (the same body; they differ in how registers are bounded).
// `map` describes the field from point (-P, -R, -R) (P = R rounded up to whole vectors), the box
// one tile: bx V + 2P by by + 2R by 1. The launcher encodes it (launch.hpp, TensorBox).
template <class T, int R, int V>
__device__ __forceinline__ void tma_march(const Args<T>& a, const CUtensorMap* map) {
  static_assert(V * sizeof(T) == 16, "16-byte vectors");
  extern __shared__ __align__(kTmaTileAlign) unsigned char smem_raw[];
  const TileShape<R, V> s{int(blockDim.x), int(blockDim.y)};
  // Elements from one buffer to the next, as tma_tile_stride.
  constexpr int kAlignElems = kTmaTileAlign / int(sizeof(T));
  const int stride = (s.elems() + kAlignElems - 1) / kAlignElems * kAlignElems;
  const int D = tma_ring_tiles(R, a.ahead);
  T* const tiles = reinterpret_cast<T*>(smem_raw);
  uint64_t* const full = reinterpret_cast<uint64_t*>(tiles + D * stride);
  uint64_t* const empty = full + D;

  const auto [x0, j0, i0, j, k0, k1, rank, threads] = MarchBlock<V>(a);
  const int n = k1 - k0;
  const bool loads = i0 < a.nx + R && j < a.ny + R;  // see xyz_onepass.cuh
  const bool stores = i0 < a.nx && j < a.ny;
  const int64_t column = i0 + a.line * j;
  const int centre = (threadIdx.y + R) * s.pitch() + s.P + V * threadIdx.x;
  // Tile t holds plane k0 + t; there are n + R of them (through plane k0 + n + R - 1).
  const int total = n + R;
  const bool producer = rank == 0;

  if (producer) {
    for (int b = 0; b < D; ++b) {
      ptx::mbar_init(full + b, 1);
      ptx::mbar_init(empty + b, (threads + 31) / 32);  // one arrival a warp
    }
    ptx::mbar_init_fence();
  }
  __syncthreads();
  // The map's origin is point (-P, -R, -R), so the tile of plane p, the box from (x0 - P, j0 - R),
  // has coordinates (x0, j0, p + R).
  const uint32_t box_bytes = uint32_t(s.elems()) * uint32_t(sizeof(T));
  auto issue = [&](int t, int b) {
    ptx::mbar_arrive_expect_tx(full + b, box_bytes);
    ptx::tensor_copy_3d_to_shared(tiles + b * stride, map, x0, j0, k0 + t + R, full + b);
  };
  if (producer)
    for (int t = 0; t < min(D, total); ++t) issue(t, t);

  // The queue q[r] holds plane k - R + r. Before the first step: the R planes below the chunk
  // from global memory, the R from k0 up from the first tiles, which are all in flight (R < D).
  Vec<T, V> q[2 * R + 1] = {};
#pragma unroll
  for (int r = 0; r < R; ++r)
    if (loads) q[r] = load_vec<T, V>(a.u + column + a.slice * (k0 - R + r));
  for (int t = 0; t < R; ++t) ptx::mbar_wait(full + t, 0);
#pragma unroll
  for (int r = R; r < 2 * R; ++r) q[r] = load_vec<T, V>(tiles + (r - R) * stride + centre);

  // Ring positions, advanced by one each step: the buffer of tile s (plane k, the oldest the step
  // reads), of tile s + R (the newest) and its phase parity, and the producer's: the buffer of
  // tile s - 1, which it refills with tile s - 1 + D, and the parity of that buffer's release.
  int b_old = 0, b_new = R, b_free = 0;
  uint32_t new_parity = 0, free_parity = 0;
  for (int step = 0; step < n; ++step) {
    if (producer && step > 0) {
      if (step - 1 + D < total) {
        ptx::mbar_wait(empty + b_free, free_parity);
        issue(step - 1 + D, b_free);
      }
      if (++b_free == D) b_free = 0, free_parity ^= 1;
    }
    ptx::mbar_wait(full + b_new, new_parity);
    q[2 * R] = load_vec<T, V>(tiles + b_new * stride + centre);
    if (stores) {
      Vec<T, V> o = xy_from_tile(tiles + b_old * stride, s, threadIdx.x, threadIdx.y, a);
#pragma unroll
      for (int r = 0; r <= 2 * R; ++r)
#pragma unroll
        for (int e = 0; e < V; ++e) o.v[e] += a.wz[r] * q[r].v[e];
      store_streaming(a.f + column + a.slice * (k0 + step), o, a.nx - i0);
    }
    // Tile `step` is done with in this warp: every lane's reads of it are issued and returned
    // (their values are in registers) before lane 0's release.
    __syncwarp();
    if ((rank & 31) == 0) ptx::mbar_arrive(empty + b_old);
#pragma unroll
    for (int r = 0; r < 2 * R; ++r) q[r] = q[r + 1];
    if (++b_old == D) b_old = 0;
    if (++b_new == D) b_new = 0, new_parity ^= 1;
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
