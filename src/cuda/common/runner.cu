// L2 flushing and the kernel resource report of the CUDA runner.
#include "cuda/common/runner.hpp"

#include <nvtx3/nvToolsExt.h>

#include "bench/counters.hpp"

namespace fdstencil::cuda {

namespace {

__global__ void read_all(const float4* __restrict__ p, int64_t n, float* sink) {
  float acc = 0.f;
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n;
       i += int64_t(gridDim.x) * blockDim.x) {
    const float4 v = p[i];
    acc += v.x + v.y + v.z + v.w;
  }
  if (acc == 1.2345f) *sink = acc;  // keeps the loads alive; never true for the zero buffer
}

}  // namespace

namespace {
bool g_timed_range = false;
}  // namespace

void set_timed_range(bool on) { g_timed_range = on; }
bool timed_range() { return g_timed_range; }
void push_timed_range() { nvtxRangePushA(bench::kTimedRange); }
void pop_timed_range() { nvtxRangePop(); }

void flush_l2() {
  static float4* buffer = nullptr;
  static float* sink = nullptr;
  static int64_t n = 0;
  static int sms = 0;
  if (buffer == nullptr) {
    int l2 = 0;
    FDS_CUDA_CHECK(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, 0));
    FDS_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
    n = 2 * int64_t(l2) / 16;
    FDS_CUDA_CHECK(cudaMalloc(&buffer, size_t(n) * 16));
    FDS_CUDA_CHECK(cudaMalloc(&sink, sizeof(float)));
    FDS_CUDA_CHECK(cudaMemset(buffer, 0, size_t(n) * 16));
    FDS_CUDA_CHECK(cudaDeviceSynchronize());
  }
  read_all<<<sms * 4, 256>>>(buffer, n, sink);
  FDS_CUDA_CHECK_LAUNCH();
}

nlohmann::json kernel_resources(const void* kernel, int block_threads, size_t dynamic_smem) {
  if (kernel == nullptr) return nlohmann::json::object();
  cudaFuncAttributes a{};
  FDS_CUDA_CHECK(cudaFuncGetAttributes(&a, kernel));
  int blocks = 0;
  FDS_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, kernel, block_threads, dynamic_smem));
  int max_threads = 0;
  FDS_CUDA_CHECK(cudaDeviceGetAttribute(&max_threads, cudaDevAttrMaxThreadsPerMultiProcessor, 0));
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
