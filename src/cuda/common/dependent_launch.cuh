// Programmatic dependent launch (sm_90+): a kernel launched with it may be scheduled while the
// kernel before it in its stream, or its predecessors in a CUDA graph, still run, so that a chain
// of short kernels does not pay a launch's latency between each pair. Such a kernel must call
// wait_for_prior_grids before it touches any memory: the wait returns once every predecessor grid
// has finished and its writes are visible. In a kernel launched without it the wait returns at once.
#pragma once

#include <cuda_runtime.h>

namespace fdstencil::cuda {

__device__ __forceinline__ void wait_for_prior_grids() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
}

// Lets the next dependent grid be scheduled once every block of this one has called it (or ended):
// its blocks then take the multiprocessors this grid's last blocks leave, and wait there.
__device__ __forceinline__ void allow_dependent_grids() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
#endif
}

// Both, at the top of a kernel of a dependent chain.
__device__ __forceinline__ void join_dependent_chain() {
  wait_for_prior_grids();
  allow_dependent_grids();
}

// cudaLaunchKernel, with `dependent` the launch programmatic on its stream's previous kernel.
inline cudaError_t launch_kernel(const void* kernel, dim3 grid, dim3 block, void** params, size_t smem,
                                 cudaStream_t stream, bool dependent) {
  if (!dependent) return cudaLaunchKernel(kernel, grid, block, params, smem, stream);
  cudaLaunchAttribute attribute{};
  attribute.id = cudaLaunchAttributeProgrammaticStreamSerialization;
  attribute.val.programmaticStreamSerializationAllowed = 1;
  cudaLaunchConfig_t config{};
  config.gridDim = grid;
  config.blockDim = block;
  config.dynamicSmemBytes = smem;
  config.stream = stream;
  config.attrs = &attribute;
  config.numAttrs = 1;
  return cudaLaunchKernelExC(&config, kernel, params);
}

}  // namespace fdstencil::cuda
