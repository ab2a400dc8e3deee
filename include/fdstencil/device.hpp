// The GPU as the rest of the program sees it: plain C++, no CUDA types, so that the tools and a
// library user reach the device through it rather than through the CUDA backend's own headers.
// In a build without CUDA, device_count() is 0, no_device_reason() says why, and the rest throw
// Error(unsupported).
#pragma once

#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

namespace fdstencil::cuda {

int device_count() noexcept;     // 0 when there is no GPU or no driver; never throws
std::string no_device_reason();  // why device_count() is 0, in words
int runtime_version();
int driver_version();         // the CUDA version the driver supports, e.g. 13000
int current_device();         // the device cudaSetDevice chose (0 by default)
void synchronize();           // cudaDeviceSynchronize, checked: a kernel's error surfaces here
int64_t device_free_bytes();  // free memory of the current device; throws Error(device) without one
// Device memory this process holds in fdstencil's fields and solver arrays, over every GPU (0 in a
// build without CUDA): unlike device_free_bytes(), other processes on the GPU do not move it.
int64_t device_bytes_held() noexcept;
// Throws Error(out_of_memory) naming the sizes when `bytes` exceed the device's free memory.
void ensure_device_memory(int64_t bytes, const char* what);
// `bytes` from device memory (any GPU's: unified addressing finds it) to host memory, complete on
// return; the host memory's pages are best touched first (a fresh allocation's are otherwise
// faulted in by the copy, on one thread).
void copy_to_host(const void* device_src, void* host_dst, int64_t bytes);
// The GPU whose memory holds `p`, or -1 for host memory (pageable or pinned) and unknown pointers:
// how an array known only by its address (CUDA's array interface) is placed.
int device_of(const void* p);
// Waits on the host for the work queued on stream `handle` of GPU `device` (made current for the
// wait: the legacy and per-thread default streams, 1 and 2, are the current device's): an array's
// producer's stream, before its memory is read on another.
void synchronize_stream(std::uintptr_t handle, int device);
// name, memory_bytes, sms, l2_bytes, compute_capability, smem_per_block_optin, ...
nlohmann::json device_info(int device = 0);

struct CopyBandwidth {
  double memcpy_gbps = 0;  // cudaMemcpy device-to-device, bytes read + written
  double kernel_gbps = 0;  // a 16-byte-vector copy kernel, bytes read + written
  int64_t bytes = 0;       // bytes of each buffer
};
// Median of several copies of `bytes` (>= 2 GiB by default: far beyond the 50-60 MB L2).
CopyBandwidth measure_copy_bandwidth(int64_t bytes = int64_t(2) << 30, int reps = 15);

}  // namespace fdstencil::cuda
