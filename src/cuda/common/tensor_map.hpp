// Tensor maps for the tensor memory accelerator (cuda/common/tensor_copy.cuh): the host-side
// description of a strided 3D array that a kernel's bulk tensor copies read boxes of. Encoded by
// the driver's cuTensorMapEncodeTiled, reached through the runtime's entry-point query, so the
// library links no libcuda (CI machines without a GPU have none to load).
#pragma once

#include <cuda.h>

#include <array>
#include <cstdint>

namespace fdstencil::cuda {

struct TiledMap3d {
  const void* origin = nullptr;      // element (0, 0, 0): 16-byte aligned
  int elem_bytes = 4;                // 4 (float) or 8 (double)
  std::array<uint64_t, 3> extent{};  // elements along x, y, z; boxes read zeros beyond
  std::array<uint64_t, 2> stride{};  // bytes from one x-line to the next, and one plane to the next
  std::array<uint32_t, 3> box{};     // elements a copy moves along x, y, z (each <= 256)
};

// The encoded map, by value (a kernel takes it as a __grid_constant__ parameter). Throws
// Error(unsupported) with the driver's refusal when the description breaks TMA's rules (16-byte
// aligned origin and strides, box rows a multiple of 16 bytes, boxes of at most 256).
CUtensorMap encode_tiled_map(const TiledMap3d& m);

}  // namespace fdstencil::cuda
