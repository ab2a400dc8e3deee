// A build without the CUDA backend: device fields and GPU queries say so instead of being
// missing, so a program written against the full API links and reports a clear error.
#ifndef FDSTENCIL_HAVE_CUDA

#include "fdstencil/device.hpp"
#include "fdstencil/device_field.hpp"
#include "fdstencil/error.hpp"

namespace fdstencil {

namespace {
constexpr const char* kNoCuda =
    "this build of fdstencil has no CUDA backend (configure with FDSTENCIL_CUDA=ON)";
}

namespace cuda {
int device_count() noexcept { return 0; }
std::string no_device_reason() { return kNoCuda; }
int runtime_version() { throw Error(ErrorKind::unsupported, kNoCuda); }
int driver_version() { throw Error(ErrorKind::unsupported, kNoCuda); }
int current_device() { throw Error(ErrorKind::unsupported, kNoCuda); }
void synchronize() { throw Error(ErrorKind::unsupported, kNoCuda); }
int64_t device_free_bytes() { throw Error(ErrorKind::unsupported, kNoCuda); }
int64_t device_bytes_held() noexcept { return 0; }
void ensure_device_memory(int64_t, const char*) { throw Error(ErrorKind::unsupported, kNoCuda); }
nlohmann::json device_info(int) { throw Error(ErrorKind::unsupported, kNoCuda); }
CopyBandwidth measure_copy_bandwidth(int64_t, int) { throw Error(ErrorKind::unsupported, kNoCuda); }
void copy_to_host(const void*, void*, int64_t) { throw Error(ErrorKind::unsupported, kNoCuda); }
int device_of(const void*) { return -1; }
void synchronize_stream(std::uintptr_t, int) { throw Error(ErrorKind::unsupported, kNoCuda); }
}  // namespace cuda

int gpu_count() noexcept { return 0; }
std::string gpu_unavailable_reason() { return kNoCuda; }
void select_gpu(int) { throw Error(ErrorKind::unsupported, kNoCuda); }

template <class T>
DeviceField<T>::DeviceField(const Layout& layout) : layout_(layout) {
  throw Error(ErrorKind::unsupported, std::string("device field: ") + kNoCuda);
}
template <class T>
DeviceField<T>::~DeviceField() = default;
template <class T>
DeviceField<T>& DeviceField<T>::operator=(DeviceField&& other) noexcept {
  layout_ = other.layout_;
  data_ = other.data_;
  other.data_ = nullptr;
  return *this;
}
template <class T>
void DeviceField<T>::upload(const HostField<T>&) {
  throw Error(ErrorKind::unsupported, kNoCuda);
}
template <class T>
void DeviceField<T>::download(HostField<T>&) const {
  throw Error(ErrorKind::unsupported, kNoCuda);
}
template <class T>
void DeviceField<T>::poison(Stream) {
  throw Error(ErrorKind::unsupported, kNoCuda);
}

template class DeviceField<float>;
template class DeviceField<double>;

}  // namespace fdstencil

#endif
