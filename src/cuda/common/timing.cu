// L2 flushing and event timing (see timing.hpp).
#include "cuda/common/timing.hpp"

#include <nvtx3/nvToolsExt.h>

#include <map>

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
  // One buffer per device, made on first use and kept for the process.
  struct Flush {
    float4* buffer = nullptr;
    float* sink = nullptr;
    int64_t n = 0;
    int sms = 0;
  };
  static std::map<int, Flush> flushes;
  int device = 0;
  FDS_CUDA_CHECK(cudaGetDevice(&device));
  Flush& f = flushes[device];
  if (f.buffer == nullptr) {
    int l2 = 0;
    FDS_CUDA_CHECK(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, device));
    FDS_CUDA_CHECK(cudaDeviceGetAttribute(&f.sms, cudaDevAttrMultiProcessorCount, device));
    f.n = 2 * int64_t(l2) / 16;
    FDS_CUDA_CHECK(cudaMalloc(&f.sink, sizeof(float)));
    FDS_CUDA_CHECK(cudaMalloc(&f.buffer, size_t(f.n) * 16));
    FDS_CUDA_CHECK(cudaMemset(f.buffer, 0, size_t(f.n) * 16));
    FDS_CUDA_CHECK(cudaDeviceSynchronize());
  }
  read_all<<<f.sms * 4, 256>>>(f.buffer, f.n, f.sink);
  FDS_CUDA_CHECK_LAUNCH();
}

std::vector<double> time_ms(const std::function<void(Stream)>& work, int warmup, int reps,
                            const char* nvtx_range) {
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
