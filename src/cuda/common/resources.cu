// The resource report of one kernel (see resources.hpp).
#include "cuda/common/check.hpp"
#include "cuda/common/resources.hpp"

namespace fdstencil::cuda {

nlohmann::json kernel_resources(const void* kernel, int block_threads, size_t dynamic_smem) {
  if (kernel == nullptr) return nlohmann::json::object();
  cudaFuncAttributes a{};
  FDS_CUDA_CHECK(cudaFuncGetAttributes(&a, kernel));
  int blocks = 0;
  FDS_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, kernel, block_threads, dynamic_smem));
  int device = 0, max_threads = 0;
  FDS_CUDA_CHECK(cudaGetDevice(&device));
  FDS_CUDA_CHECK(cudaDeviceGetAttribute(&max_threads, cudaDevAttrMaxThreadsPerMultiProcessor, device));
  return {{"regs", a.numRegs},
          {"spill_bytes", a.localSizeBytes},  // local memory per thread: spills and stack arrays
          {"smem_bytes", a.sharedSizeBytes + dynamic_smem},
          {"static_smem_bytes", a.sharedSizeBytes},
          {"dynamic_smem_bytes", dynamic_smem},
          {"block_threads", block_threads},
          {"blocks_per_sm", blocks},
          {"occupancy", double(blocks * block_threads) / max_threads}};
}

}  // namespace fdstencil::cuda
