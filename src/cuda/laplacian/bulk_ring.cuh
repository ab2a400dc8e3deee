// bulk_ring (ours; k8 before issue 32): a z-march fed by Hopper's bulk copy engine. A block owns a tile of 32 W x TY
// interior points (W = 16 bytes / sizeof(T)) and walks `nzc` planes. Each plane's tile, with a
// one-row ring above and below and one 16-byte vector left and right, arrives in shared memory as
// TY + 2 row copies (cp.async.bulk, 34 vectors each) on one mbarrier. The ring holds S planes:
// z-1, z and z+1 being read and S - 3 more in flight, so the copy engine always has several
// planes of every block outstanding (the memory-level parallelism the plain kernels lack) while
// the threads only read shared memory and issue 16-byte streaming stores. One barrier per plane
// frees the oldest stage for the next copy.
#pragma once

#include <cuda_runtime.h>

#include "cuda/common/bulk_copy.cuh"
#include "cuda/laplacian/shfl_march.cuh"

namespace fdstencil::cuda::laplacian {

template <class T, int TY>
struct BulkTile {
  static constexpr int W = 16 / int(sizeof(T));
  static constexpr int TXP = 32 * W;        // tile width in points
  static constexpr int ROW = TXP + 2 * W;   // staged row: the tile and one vector either side
  static constexpr int ROWS = TY + 2;       // the tile's rows and the ring rows above and below
  static constexpr int STAGE = ROWS * ROW;  // elements per staged plane
  static constexpr int kRowBytes = ROW * int(sizeof(T));
  static size_t smem_bytes(int stages) { return size_t(stages) * (STAGE * sizeof(T) + sizeof(uint64_t)); }
};

template <class T, int TY, int S>
__global__ void __launch_bounds__(32 * TY) bulk_ring(ZmarchArgs<T> a) {
  static_assert(S >= 4, "z-1, z, z+1 and at least one plane in flight");
  using Vec = typename Vec16<T>::type;
  using Tile = BulkTile<T, TY>;
  constexpr int W = Tile::W, ROW = Tile::ROW, STAGE = Tile::STAGE;
  extern __shared__ __align__(128) unsigned char smem[];
  T* stages = reinterpret_cast<T*>(smem);
  uint64_t* bars = reinterpret_cast<uint64_t*>(smem + S * STAGE * sizeof(T));

  // Block order x-tile, then y-tile, then z-chunk (see shfl_march.cuh).
  const int lane = threadIdx.x, ty = threadIdx.y;
  const int x0 = (blockIdx.x % a.tiles_x) * Tile::TXP;
  const int j0 = (blockIdx.x / a.tiles_x % a.tiles_y) * TY;
  const int chunk = blockIdx.x / a.tiles_x / a.tiles_y;
  const int k0 = chunk * a.nzc;
  const int k1 = min(k0 + a.nzc, a.nz);
  const int first = k0 - 1, last = k1;  // planes staged: the chunk and one either side
  // Rows j0-1 .. min(j0+TY, ny): row ny is the halo, nothing beyond it is ever read.
  const int rows = min(Tile::ROWS, a.ny - j0 + 2);

  if (lane == 0 && ty == 0) {
    for (int s = 0; s < S; ++s) ptx::mbar_init(&bars[s], 1);
    ptx::mbar_init_fence();
  }
  __syncthreads();

  auto stage_of = [&](int p) { return (p - first) % S; };
  auto parity_of = [&](int p) { return uint32_t(((p - first) / S) & 1); };
  // Warp 0 stages plane p: lane 0 announces the bytes, then one lane per row starts a copy. The
  // rows start one vector left of the tile, 16-byte aligned because x0 is; reads past the last
  // line land in the layout's tail slack.
  auto issue = [&](int p) {
    const int s = stage_of(p);
    if (lane == 0) ptx::mbar_arrive_expect_tx(&bars[s], uint32_t(rows * Tile::kRowBytes));
    __syncwarp();
    if (lane < rows) {
      const T* src = a.u + (x0 - W) + int64_t(j0 - 1 + lane) * a.line + int64_t(p) * a.slice;
      ptx::bulk_copy_to_shared(stages + s * STAGE + lane * ROW, src, Tile::kRowBytes, &bars[s]);
    }
  };
  if (ty == 0)
    for (int p = first; p <= min(last, first + S - 1); ++p) issue(p);

  const int j = j0 + ty, i0 = x0 + lane * W;
  const bool writes = j < a.ny && i0 < a.nx;
  const int here = (ty + 1) * ROW + W + lane * W;  // this thread's vector within a stage
  for (int k = k0; k < k1; ++k) {
    if (k == k0) {
      ptx::mbar_wait(&bars[stage_of(k - 1)], parity_of(k - 1));
      ptx::mbar_wait(&bars[stage_of(k)], parity_of(k));
    }
    ptx::mbar_wait(&bars[stage_of(k + 1)], parity_of(k + 1));
    const T* below = stages + stage_of(k - 1) * STAGE + here;
    const T* mid = stages + stage_of(k) * STAGE + here;
    const T* above = stages + stage_of(k + 1) * STAGE + here;
    T c[W], l[W], r[W], s[W], n[W], b[W], t[W], o[W];
    unpack(*reinterpret_cast<const Vec*>(mid), c);
    unpack(*reinterpret_cast<const Vec*>(mid - W), l);
    unpack(*reinterpret_cast<const Vec*>(mid + W), r);
    unpack(*reinterpret_cast<const Vec*>(mid - ROW), s);
    unpack(*reinterpret_cast<const Vec*>(mid + ROW), n);
    unpack(*reinterpret_cast<const Vec*>(below), b);
    unpack(*reinterpret_cast<const Vec*>(above), t);
#pragma unroll
    for (int e = 0; e < W; ++e) {
      const T xm = e == 0 ? l[W - 1] : c[e - 1];
      const T xp = e == W - 1 ? r[0] : c[e + 1];
      o[e] = a.cc * c[e] + a.cx * (xm + xp) + a.cy * (s[e] + n[e]) + a.cz * (b[e] + t[e]);
    }
    if (writes)
      store_streaming<T, Vec, W>(a.f + i0 + int64_t(j) * a.line + int64_t(k) * a.slice, o, a.nx - i0);
    __syncthreads();  // every thread is done with plane k-1: its stage takes plane k-1+S
    if (ty == 0 && k - 1 + S <= last) issue(k - 1 + S);
  }
}

}  // namespace fdstencil::cuda::laplacian
