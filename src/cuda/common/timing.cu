// L2 flushing and event timing (see timing.hpp).
#include "cuda/common/timing.hpp"

#include <nvtx3/nvToolsExt.h>

#include "cuda/common/check.hpp"

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

// Destroys the events however the timing loop ends.
struct EventPair {
  cudaEvent_t e0 = nullptr, e1 = nullptr;
  EventPair() {
    FDS_CUDA_CHECK(cudaEventCreate(&e0));
    FDS_CUDA_CHECK(cudaEventCreate(&e1));
  }
  ~EventPair() {
    cudaEventDestroy(e0);
    cudaEventDestroy(e1);
  }
};

}  // namespace

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

std::vector<double> time_ms(const std::function<void(Stream)>& work, int warmup, int reps, const char* nvtx_range) {
  for (int r = 0; r < warmup; ++r) work(nullptr);
  FDS_CUDA_CHECK(cudaDeviceSynchronize());
  EventPair ev;
  std::vector<double> ms;
  for (int r = 0; r < reps; ++r) {
    flush_l2();
    FDS_CUDA_CHECK(cudaEventRecord(ev.e0));
    if (nvtx_range != nullptr) nvtxRangePushA(nvtx_range);
    work(nullptr);
    if (nvtx_range != nullptr) nvtxRangePop();
    FDS_CUDA_CHECK(cudaEventRecord(ev.e1));
    FDS_CUDA_CHECK(cudaEventSynchronize(ev.e1));
    float t = 0;
    FDS_CUDA_CHECK(cudaEventElapsedTime(&t, ev.e0, ev.e1));
    ms.push_back(t);
  }
  return ms;
}

}  // namespace fdstencil::cuda
