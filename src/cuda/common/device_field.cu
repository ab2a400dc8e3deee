// DeviceField (include/fdstencil/device_field.hpp) on the CUDA runtime.
#include "cuda/common/check.hpp"
#include "cuda/common/held_bytes.hpp"
#include "fdstencil/device.hpp"
#include "fdstencil/device_field.hpp"
#include "fdstencil/error.hpp"

#include <string>

namespace fdstencil {

namespace {
void check_same(const Layout& device, const Layout& host) {
  if (!(device == host))
    throw Error(ErrorKind::invalid_argument,
                "device field: the host field's layout differs from the device field's");
}
}  // namespace

template <class T>
DeviceField<T>::DeviceField(const Layout& layout) : layout_(layout) {
  if (layout.elem_bytes() != int64_t(sizeof(T)))
    throw Error(ErrorKind::invalid_argument, "device field: the layout's element size is not the field's");
  const std::string why = cuda::no_device_reason();
  if (!why.empty()) throw Error(ErrorKind::unsupported, "device field: " + why);
  cuda::ensure_device_memory(layout.alloc_bytes(), "device field");
  FDS_CUDA_CHECK(cudaMalloc(&data_, size_t(layout.alloc_bytes())));
  cuda::note_held_bytes(layout.alloc_bytes());
}

template <class T>
DeviceField<T>::~DeviceField() {
  release();
}

template <class T>
void DeviceField<T>::release() noexcept {
  if (!data_) return;
  cuda::note_held_bytes(-layout_.alloc_bytes());
  cudaFree(data_);
  data_ = nullptr;
}

template <class T>
DeviceField<T>& DeviceField<T>::operator=(DeviceField&& other) noexcept {
  if (this != &other) {
    release();
    layout_ = other.layout_;
    data_ = other.data_;
    other.data_ = nullptr;
  }
  return *this;
}

template <class T>
void DeviceField<T>::upload(const HostField<T>& h) {
  check_same(layout_, h.layout());
  FDS_CUDA_CHECK(cudaMemcpy(data_, h.data(), size_t(layout_.alloc_bytes()), cudaMemcpyHostToDevice));
}

template <class T>
void DeviceField<T>::download(HostField<T>& h) const {
  check_same(layout_, h.layout());
  FDS_CUDA_CHECK(cudaMemcpy(h.data(), data_, size_t(layout_.alloc_bytes()), cudaMemcpyDeviceToHost));
}

template <class T>
void DeviceField<T>::poison(Stream stream) {
  FDS_CUDA_CHECK(cudaMemsetAsync(data_, 0xff, size_t(layout_.alloc_bytes()), stream));
}

template class DeviceField<float>;
template class DeviceField<double>;

int gpu_count() noexcept { return cuda::device_count(); }
std::string gpu_unavailable_reason() { return cuda::no_device_reason(); }

void select_gpu(int index) {
  const int n = gpu_count();
  if (index < 0 || index >= n)
    throw Error(ErrorKind::unsupported, "GPU " + std::to_string(index) +
                                            " does not exist (this machine has " + std::to_string(n) + ")");
  FDS_CUDA_CHECK(cudaSetDevice(index));
}

}  // namespace fdstencil
