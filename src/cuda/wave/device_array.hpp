// A zeroed device allocation of the wave solver's state, owned: the fields, the CPML memory, the
// taps. Allocated and copied on the legacy stream (the constructor synchronizes it before the run's
// stream goes); whole-array downloads and uploads on a given stream, waited for.
#pragma once

#include <cstdint>
#include <utility>

#include <cuda_runtime.h>

#include "cuda/common/check.hpp"
#include "cuda/common/held_bytes.hpp"

namespace fdstencil::cuda::wave {

// A device allocation of n elements, zeroed.
template <class T>
struct DeviceArray {
  T* p = nullptr;
  int64_t n = 0;
  DeviceArray() = default;
  explicit DeviceArray(int64_t count) : n(count) {
    if (n > 0) {
      FDS_CUDA_CHECK(cudaMalloc(&p, size_t(n) * sizeof(T)));
      note_held_bytes(bytes());
      FDS_CUDA_CHECK(cudaMemset(p, 0, size_t(n) * sizeof(T)));
    }
  }
  // Not zeroed: for an array every element of which is written before it is read.
  static DeviceArray uninitialised(int64_t count) {
    DeviceArray a;
    a.n = count;
    if (count > 0) {
      FDS_CUDA_CHECK(cudaMalloc(&a.p, size_t(count) * sizeof(T)));
      note_held_bytes(a.bytes());
    }
    return a;
  }
  DeviceArray(const T* host, int64_t count) : DeviceArray(count) {
    if (n > 0) FDS_CUDA_CHECK(cudaMemcpy(p, host, size_t(n) * sizeof(T), cudaMemcpyHostToDevice));
  }
  // Whole-array copies on `stream`, waited for: a checkpoint's download and a resume's upload.
  void download(T* host, cudaStream_t stream) const {
    if (n == 0) return;
    FDS_CUDA_CHECK(cudaMemcpyAsync(host, p, size_t(n) * sizeof(T), cudaMemcpyDeviceToHost, stream));
    FDS_CUDA_CHECK(cudaStreamSynchronize(stream));
  }
  void upload(const T* host, cudaStream_t stream) {
    if (n == 0) return;
    FDS_CUDA_CHECK(cudaMemcpyAsync(p, host, size_t(n) * sizeof(T), cudaMemcpyHostToDevice, stream));
    FDS_CUDA_CHECK(cudaStreamSynchronize(stream));
  }
  DeviceArray(DeviceArray&& o) noexcept : p(o.p), n(o.n) { o.p = nullptr; }
  DeviceArray& operator=(DeviceArray&& o) noexcept {
    std::swap(p, o.p);
    std::swap(n, o.n);
    return *this;
  }
  ~DeviceArray() {
    if (p) {
      note_held_bytes(-bytes());
      cudaFree(p);
    }
  }
  void zero() {
    if (n > 0) FDS_CUDA_CHECK(cudaMemset(p, 0, size_t(n) * sizeof(T)));
  }
  int64_t bytes() const { return n * int64_t(sizeof(T)); }
};

}  // namespace fdstencil::cuda::wave
