// Hopper's tensor memory accelerator (TMA, sm_90): one thread asks the copy engine for a whole
// box of a tensor, described by a tensor map (cuda/common/tensor_map.hpp), to land in shared
// memory; the bytes count against an mbarrier's expect_tx (cuda/common/bulk_copy.cuh). No
// register holds the data in flight, so how far ahead a kernel loads is bounded by its shared
// memory, not by its threads. Box elements outside the tensor's extents land as zeros.
#pragma once

#include <cuda.h>

#include <cstdint>

#include "cuda/common/bulk_copy.cuh"

namespace fdstencil::cuda::ptx {

// The box of `map` whose first element has tensor coordinates (x, y, z) into `dst` (128-byte
// aligned), completing on `bar`. `map` must be a __grid_constant__ kernel parameter (or in global
// memory): the copy engine reads it by its generic address.
__device__ __forceinline__ void tensor_copy_3d_to_shared(void* dst, const CUtensorMap* map, int x, int y,
                                                         int z, uint64_t* bar) {
  asm volatile(
      "cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3, "
      "%4}], [%5];" ::"r"(smem_addr(dst)),
      "l"(reinterpret_cast<uint64_t>(map)), "r"(x), "r"(y), "r"(z), "r"(smem_addr(bar))
      : "memory");
}

}  // namespace fdstencil::cuda::ptx
