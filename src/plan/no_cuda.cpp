// A build without the CUDA backend: device fields and GPU queries say so instead of being
// missing, so a program written against the full API links and reports a clear error.
#ifndef FDSTENCIL_HAVE_CUDA

#include "fdstencil/device_field.hpp"
#include "fdstencil/error.hpp"

namespace fdstencil {

namespace {
constexpr const char* kNoCuda = "this build of fdstencil has no CUDA backend (configure with FDSTENCIL_CUDA=ON)";
}

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
