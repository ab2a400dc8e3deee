// Kernels 3-7: one body (tile_reordered.cuh), five launch configurations. Each kernel is the
// previous one plus a single change, as in the posts:
//   k3  kernel 2 with the loads reordered to ascending addresses (part 2)
//   k4  k3 with __launch_bounds__ equal to the block (part 3)
//   k5  k4 with streaming stores for the output (part 3)
//   k6  k5 with the grid index permuted: blockIdx.x walks y, .y walks z, .z walks x, so the L2
//       holds narrow sub-planes of several xy-planes instead of whole planes (part 4, option 1)
//   k7  k5 restricted to rows [y_begin, y_end): the host launches one y-subdomain after another
//       so three sub-planes fit in the L2 (part 4, option 2)
#pragma once

#include "cuda/laplacian/tile_reordered.cuh"

namespace fdstencil::cuda::laplacian {

template <class T, int M>
__global__ void k3_reordered(Args<T> a) {
  tile_reordered<T, M, false>(a, threadIdx.x + blockIdx.x * blockDim.x,
                              M * (threadIdx.y + blockIdx.y * blockDim.y),
                              threadIdx.z + blockIdx.z * blockDim.z);
}

template <class T, int M, int LB>
__global__ void __launch_bounds__(LB) k4_launch_bounds(Args<T> a) {
  tile_reordered<T, M, false>(a, threadIdx.x + blockIdx.x * blockDim.x,
                              M * (threadIdx.y + blockIdx.y * blockDim.y),
                              threadIdx.z + blockIdx.z * blockDim.z);
}

template <class T, int M, int LB>
__global__ void __launch_bounds__(LB) k5_streaming(Args<T> a) {
  tile_reordered<T, M, true>(a, threadIdx.x + blockIdx.x * blockDim.x,
                             M * (threadIdx.y + blockIdx.y * blockDim.y),
                             threadIdx.z + blockIdx.z * blockDim.z);
}

template <class T, int M, int LB>
__global__ void __launch_bounds__(LB) k6_grid_order(Args<T> a) {
  tile_reordered<T, M, true>(a, threadIdx.x + blockIdx.z * blockDim.x,
                             M * (threadIdx.y + blockIdx.x * blockDim.y),
                             threadIdx.z + blockIdx.y * blockDim.z);
}

template <class T, int M, int LB>
__global__ void __launch_bounds__(LB) k7_subdomain(Args<T> a, int y_begin, int y_end) {
  const int j = y_begin + M * (threadIdx.y + blockIdx.y * blockDim.y);
  if (j >= y_end) return;
  tile_reordered<T, M, true>(a, threadIdx.x + blockIdx.x * blockDim.x, j,
                             threadIdx.z + blockIdx.z * blockDim.z);
}

}  // namespace fdstencil::cuda::laplacian
