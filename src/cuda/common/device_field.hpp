// Device storage on the foundation's aligned layout (one Layout for host and device).
#pragma once

#include <cuda_runtime.h>

#include "cuda/common/check.hpp"
#include "fdstencil/field.hpp"

namespace fdstencil::cuda {

// Throws Error(out_of_memory) naming the sizes when `bytes` exceed the device's free memory.
void ensure_device_memory(int64_t bytes, const char* what);

template <class T>
class DeviceField {
 public:
  explicit DeviceField(const Layout& layout) : layout_(layout) {
    ensure_device_memory(layout.alloc_bytes(), "device field");
    FDS_CUDA_CHECK(cudaMalloc(&data_, size_t(layout.alloc_bytes())));
  }
  ~DeviceField() { cudaFree(data_); }
  DeviceField(const DeviceField&) = delete;
  DeviceField& operator=(const DeviceField&) = delete;

  const Layout& layout() const { return layout_; }
  T* data() { return data_; }
  const T* data() const { return data_; }
  T* origin() { return data_ + layout_.origin(); }  // interior point (0, 0, 0)
  const T* origin() const { return data_ + layout_.origin(); }

  void upload(const HostField<T>& h) {
    check_same(h.layout());
    FDS_CUDA_CHECK(cudaMemcpy(data_, h.data(), size_t(layout_.alloc_bytes()), cudaMemcpyHostToDevice));
  }
  void download(HostField<T>& h) const {
    check_same(h.layout());
    FDS_CUDA_CHECK(cudaMemcpy(h.data(), data_, size_t(layout_.alloc_bytes()), cudaMemcpyDeviceToHost));
  }
  // All bits set is a quiet NaN in float and double alike.
  void poison() { FDS_CUDA_CHECK(cudaMemset(data_, 0xff, size_t(layout_.alloc_bytes()))); }

 private:
  void check_same(const Layout& other) const {
    if (!(other == layout_))
      throw Error(ErrorKind::invalid_argument, "device field: host and device layouts differ");
  }
  Layout layout_;
  T* data_ = nullptr;
};

}  // namespace fdstencil::cuda
