// The TMA tile ring: the z march's plane tiles (seismic/tile.cuh's shape, interior and x/y halo)
// brought into shared memory by the tensor memory accelerator, one box a tile, `depth` tiles in
// turn. Shared by d2xyz `tma` (xyz_tma.cuh) and the wave step's tma design
// (wave/acoustic_step.cuh), whose marches differ only in what they do with a tile.
//
// The protocol, for a march over tiles 0 .. total - 1 (tile t: plane k0 + t) whose step s reads
// tile s (the oldest it needs) through tile s + R (the newest):
//   - per buffer a `full` mbarrier (one arrival, the producer's expect_tx; complete when the box's
//     bytes have landed) and an `empty` one (one arrival a warp; complete when every warp is done
//     with the tile it held);
//   - one producer thread issues the first `depth` tiles, then at step s refills the buffer of
//     tile s - 1 (released at step s - 1) with tile s - 1 + depth, so a buffer is never waited
//     for in the step that releases it;
//   - the threads wait for the newest tile's `full` phase, read, and each warp releases the
//     oldest after its lanes' reads have returned (__syncwarp, then lane 0 arrives).
// No block-wide barrier is left in the march, and no register holds bytes in flight.
#pragma once

#include <cuda.h>

#include <cstdint>

#include "cuda/common/bulk_copy.cuh"
#include "cuda/common/tensor_copy.cuh"
#include "cuda/seismic/tile.cuh"

namespace fdstencil::cuda::seismic {

// The copy engine's largest box edge, in elements (cuTensorMapEncodeTiled's boxDim limit).
inline constexpr int kMaxBoxEdge = 256;

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

// One block's ring over the dynamic shared memory `smem` (tma_smem_bytes' layout). `map`
// describes the field from point (-P, -R, -R) (P = R rounded up to whole vectors), its box one
// tile: then the tile of plane p, the box from (x0 - P, j0 - R), has coordinates (x0, j0, p + R).
template <class T>
class TmaTileRing {
 public:
  // elems: a tile's elements (TileShape::elems); depth: tma_ring_tiles; lead: R, the steps from
  // the oldest tile a step reads to the newest; (x0, j0, k0): the block's first point.
  __device__ __forceinline__ TmaTileRing(unsigned char* smem, int elems, int depth, int lead,
                                         const CUtensorMap* map, int x0, int j0, int k0, int total)
      : depth_(depth), total_(total), x0_(x0), j0_(j0), z0_(k0 + lead), b_new_(lead), map_(map) {
    constexpr int kAlignElems = kTmaTileAlign / int(sizeof(T));
    stride_ = (elems + kAlignElems - 1) / kAlignElems * kAlignElems;  // as tma_tile_stride
    bytes_ = uint32_t(elems) * uint32_t(sizeof(T));
    tiles_ = reinterpret_cast<T*>(smem);
    full_ = reinterpret_cast<uint64_t*>(tiles_ + depth * stride_);
    empty_ = full_ + depth;
  }

  // The producer sets up the barriers and asks for the first `depth` tiles; the block waits for
  // the barriers' setup (the one block barrier).
  __device__ __forceinline__ void start(bool producer, int threads) {
    if (producer) {
      for (int b = 0; b < depth_; ++b) {
        ptx::mbar_init(full_ + b, 1);
        ptx::mbar_init(empty_ + b, (threads + 31) / 32);  // one arrival a warp
      }
      ptx::mbar_init_fence();
    }
    __syncthreads();
    if (producer)
      for (int t = 0; t < min(depth_, total_); ++t) issue(t, t);
  }

  // Before the first step: wait for tiles 0 .. count - 1 (count <= depth) to land; first(t) is
  // then tile t (buffer t), for filling a queue.
  __device__ __forceinline__ void wait_first(int count) const {
    for (int t = 0; t < count; ++t) ptx::mbar_wait(full_ + t, 0);
  }
  __device__ __forceinline__ const T* first(int t) const { return tiles_ + t * stride_; }

  // At the top of step `step`, the producer's part: the buffer of tile step - 1 takes tile
  // step - 1 + depth once every warp has released it.
  __device__ __forceinline__ void refill(int step) {
    if (step == 0) return;
    if (step - 1 + depth_ < total_) {
      ptx::mbar_wait(empty_ + b_free_, free_parity_);
      issue(step - 1 + depth_, b_free_);
    }
    if (++b_free_ == depth_) b_free_ = 0, free_parity_ ^= 1;
  }

  // The step's newest tile (tile step + lead), once landed; and its oldest (tile step).
  __device__ __forceinline__ const T* newest() const {
    ptx::mbar_wait(full_ + b_new_, new_parity_);
    return tiles_ + b_new_ * stride_;
  }
  __device__ __forceinline__ const T* oldest() const { return tiles_ + b_old_ * stride_; }

  // The end of a step: this warp is done with the oldest tile (every lane's reads of it issued
  // and returned, their values in registers, before lane 0's release); the ring moves one tile.
  __device__ __forceinline__ void release_and_advance(int rank) {
    __syncwarp();
    if ((rank & 31) == 0) ptx::mbar_arrive(empty_ + b_old_);
    if (++b_old_ == depth_) b_old_ = 0;
    if (++b_new_ == depth_) b_new_ = 0, new_parity_ ^= 1;
  }

 private:
  __device__ __forceinline__ void issue(int t, int b) {
    ptx::mbar_arrive_expect_tx(full_ + b, bytes_);
    ptx::tensor_copy_3d_to_shared(tiles_ + b * stride_, map_, x0_, j0_, z0_ + t, full_ + b);
  }

  T* tiles_;
  uint64_t* full_;
  uint64_t* empty_;
  int stride_, depth_, total_, x0_, j0_, z0_;
  uint32_t bytes_;
  // Ring positions, advanced by one each step: the buffer of the oldest tile a step reads, of the
  // newest and its phase parity, and the producer's: the buffer it refills next and the parity of
  // that buffer's release.
  int b_old_ = 0, b_new_, b_free_ = 0;
  uint32_t new_parity_ = 0, free_parity_ = 0;
  const CUtensorMap* map_;
};

}  // namespace fdstencil::cuda::seismic
