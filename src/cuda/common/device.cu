// Device queries, error reporting and the copy-bandwidth reference (bytes read + written).
#include <algorithm>
#include <atomic>
#include <cstdio>
#include <string>
#include <vector>

#include "core/summary.hpp"
#include "cuda/common/check.hpp"
#include "cuda/common/held_bytes.hpp"
#include "fdstencil/device.hpp"

namespace fdstencil::cuda {

void throw_cuda_error(cudaError_t err, const char* call, const char* file, int line) {
  const std::string msg = std::string("CUDA error '") + cudaGetErrorString(err) + "' (" +
                          cudaGetErrorName(err) + ") in " + call + " at " + file + ":" + std::to_string(line);
  cudaGetLastError();  // clear a sticky launch error so the next query reports its own
  throw Error(err == cudaErrorMemoryAllocation ? ErrorKind::out_of_memory : ErrorKind::device, msg);
}

int device_count() noexcept {
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess) {
    cudaGetLastError();
    return 0;
  }
  return n;
}

std::string no_device_reason() {
  int n = 0;
  const cudaError_t err = cudaGetDeviceCount(&n);
  cudaGetLastError();
  if (err != cudaSuccess) return std::string("no usable GPU: ") + cudaGetErrorString(err);
  if (n == 0) return "no GPU found";
  return "";
}

int runtime_version() {
  int v = 0;
  cudaRuntimeGetVersion(&v);
  return v;
}

int driver_version() {
  int v = 0;
  cudaDriverGetVersion(&v);
  return v;
}

int current_device() {
  int d = 0;
  FDS_CUDA_CHECK(cudaGetDevice(&d));
  return d;
}

void synchronize() { FDS_CUDA_CHECK(cudaDeviceSynchronize()); }

void copy_to_host(const void* device_src, void* host_dst, int64_t bytes) {
  if (bytes <= 0) return;
  // From the source's own device, made current for the copy: the calling thread's current one
  // would otherwise get a context of its own for it (memory taken on a GPU the caller never named).
  cudaPointerAttributes a{};
  FDS_CUDA_CHECK(cudaPointerGetAttributes(&a, device_src));
  int before = 0;
  FDS_CUDA_CHECK(cudaGetDevice(&before));
  if (a.type == cudaMemoryTypeDevice && a.device != before) FDS_CUDA_CHECK(cudaSetDevice(a.device));
  const cudaError_t copied = cudaMemcpy(host_dst, device_src, size_t(bytes), cudaMemcpyDefault);
  if (a.type == cudaMemoryTypeDevice && a.device != before) FDS_CUDA_CHECK(cudaSetDevice(before));
  FDS_CUDA_CHECK(copied);
}

int device_of(const void* p) {
  cudaPointerAttributes a{};
  if (cudaPointerGetAttributes(&a, p) != cudaSuccess) {
    cudaGetLastError();  // an address CUDA does not know: not device memory
    return -1;
  }
  return a.type == cudaMemoryTypeDevice || a.type == cudaMemoryTypeManaged ? a.device : -1;
}

void synchronize_stream(std::uintptr_t handle, int device) {
  int before = 0;
  FDS_CUDA_CHECK(cudaGetDevice(&before));
  if (device != before) FDS_CUDA_CHECK(cudaSetDevice(device));
  const cudaError_t waited = cudaStreamSynchronize(reinterpret_cast<cudaStream_t>(handle));
  if (device != before) FDS_CUDA_CHECK(cudaSetDevice(before));
  FDS_CUDA_CHECK(waited);
}

nlohmann::json device_info(int device) {
  cudaDeviceProp p{};
  FDS_CUDA_CHECK(cudaGetDeviceProperties(&p, device));
  int mem_clock_khz = 0, bus_width = 0;
  cudaDeviceGetAttribute(&mem_clock_khz, cudaDevAttrMemoryClockRate, device);
  cudaDeviceGetAttribute(&bus_width, cudaDevAttrGlobalMemoryBusWidth, device);
  cudaGetLastError();
  return {{"kind", "gpu"},
          {"index", device},
          {"name", std::string(p.name)},
          {"compute_capability", std::to_string(p.major) + "." + std::to_string(p.minor)},
          {"memory_bytes", double(p.totalGlobalMem)},
          {"sms", p.multiProcessorCount},
          {"l2_bytes", p.l2CacheSize},
          {"smem_per_block_optin", double(p.sharedMemPerBlockOptin)},
          {"smem_per_sm", double(p.sharedMemPerMultiprocessor)},
          {"regs_per_sm", p.regsPerMultiprocessor},
          {"max_threads_per_sm", p.maxThreadsPerMultiProcessor},
          {"memory_clock_khz", mem_clock_khz},
          {"memory_bus_bits", bus_width},
          // DDR: two transfers per clock.
          {"theoretical_gbps", 2.0 * mem_clock_khz * 1e3 * (bus_width / 8) / 1e9},
          {"runtime_version", runtime_version()},
          {"driver_version", driver_version()}};
}

namespace {
std::atomic<int64_t> g_held_bytes{0};
}  // namespace

void note_held_bytes(int64_t bytes) noexcept { g_held_bytes.fetch_add(bytes, std::memory_order_relaxed); }

int64_t device_bytes_held() noexcept { return g_held_bytes.load(std::memory_order_relaxed); }

int64_t device_free_bytes() {
  size_t free_b = 0, total_b = 0;
  FDS_CUDA_CHECK(cudaMemGetInfo(&free_b, &total_b));
  return int64_t(free_b);
}

void ensure_device_memory(int64_t bytes, const char* what) {
  size_t free_b = 0, total_b = 0;
  FDS_CUDA_CHECK(cudaMemGetInfo(&free_b, &total_b));
  if (bytes < 0 || uint64_t(bytes) > free_b) {
    char buf[256];
    std::snprintf(buf, sizeof buf, "%s needs %.2f GiB but the GPU has %.2f GiB free of %.2f GiB", what,
                  double(bytes) / (1 << 30), double(free_b) / (1 << 30), double(total_b) / (1 << 30));
    throw Error(ErrorKind::out_of_memory, buf);
  }
}

namespace {

__global__ void copy_vec16(const float4* __restrict__ in, float4* __restrict__ out, int64_t n) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n;
       i += int64_t(gridDim.x) * blockDim.x)
    out[i] = in[i];
}

}  // namespace

CopyBandwidth measure_copy_bandwidth(int64_t bytes, int reps) {
  ensure_device_memory(2 * bytes, "the copy-bandwidth buffers");
  void *a = nullptr, *b = nullptr;
  FDS_CUDA_CHECK(cudaMalloc(&a, size_t(bytes)));
  FDS_CUDA_CHECK(cudaMalloc(&b, size_t(bytes)));
  FDS_CUDA_CHECK(cudaMemset(a, 0x3c, size_t(bytes)));  // finite, non-zero floats
  cudaEvent_t e0, e1;
  FDS_CUDA_CHECK(cudaEventCreate(&e0));
  FDS_CUDA_CHECK(cudaEventCreate(&e1));
  int sms = 0;
  FDS_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, current_device()));
  auto time = [&](auto&& op) {
    op();  // warm-up
    FDS_CUDA_CHECK(cudaDeviceSynchronize());
    std::vector<double> gbps;
    for (int r = 0; r < reps; ++r) {
      FDS_CUDA_CHECK(cudaEventRecord(e0));
      op();
      FDS_CUDA_CHECK(cudaEventRecord(e1));
      FDS_CUDA_CHECK(cudaEventSynchronize(e1));
      float ms = 0;
      FDS_CUDA_CHECK(cudaEventElapsedTime(&ms, e0, e1));
      gbps.push_back(2.0 * double(bytes) / (ms * 1e-3) / 1e9);
    }
    return median_of(gbps);
  };
  CopyBandwidth cb;
  cb.bytes = bytes;
  cb.memcpy_gbps =
      time([&] { FDS_CUDA_CHECK(cudaMemcpyAsync(b, a, size_t(bytes), cudaMemcpyDeviceToDevice)); });
  const int64_t n = bytes / 16;
  cb.kernel_gbps = time([&] {
    // 8 resident blocks of 256 threads per SM, grid-stride over the rest.
    copy_vec16<<<sms * 8, 256>>>(static_cast<const float4*>(a), static_cast<float4*>(b), n);
    FDS_CUDA_CHECK_LAUNCH();
  });
  cudaEventDestroy(e0);
  cudaEventDestroy(e1);
  cudaFree(a);
  cudaFree(b);
  return cb;
}

}  // namespace fdstencil::cuda
