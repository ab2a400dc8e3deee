// Device storage on the same Layout as host storage (one layout, so a host field uploads into a
// device field of the same layout byte for byte), allocated on the CUDA device current at
// construction. Without the CUDA backend in the build, constructing one throws
// Error(unsupported).
#pragma once

#include <string>

#include "fdstencil/field.hpp"
#include "fdstencil/stream.hpp"

namespace fdstencil {

// GPUs this build can use: 0 without the CUDA backend, a driver or a device. Never throws.
int gpu_count() noexcept;
// Why gpu_count() is 0, in words ("" when it is not).
std::string gpu_unavailable_reason();
// Makes GPU `index` (0..gpu_count()-1) the calling thread's: the device fields, plans and wave runs
// it makes next take it. Throws Error(unsupported) without it.
void select_gpu(int index);

template <class T>
class DeviceField {
  static_assert(std::is_same_v<T, float> || std::is_same_v<T, double>);

 public:
  // Throws Error(out_of_memory) naming the sizes when the device lacks the memory.
  DeviceField(Extents interior, int radius, int64_t align_bytes = kAlignBytes)
      : DeviceField(Layout::make(interior, radius, sizeof(T), align_bytes)) {}
  explicit DeviceField(const Layout& layout);
  ~DeviceField();
  DeviceField(DeviceField&& other) noexcept : layout_(other.layout_), data_(other.data_) {
    other.data_ = nullptr;
  }
  DeviceField& operator=(DeviceField&& other) noexcept;
  DeviceField(const DeviceField&) = delete;
  DeviceField& operator=(const DeviceField&) = delete;

  const Layout& layout() const { return layout_; }
  T* data() { return data_; }  // the allocation, padding included
  const T* data() const { return data_; }
  T* origin() { return data_ + layout_.origin(); }  // interior point (0, 0, 0)
  const T* origin() const { return data_ + layout_.origin(); }
  FieldView<T> view() { return {data_, layout_, Memory::device}; }
  FieldView<const T> view() const { return {data_, layout_, Memory::device}; }

  // Whole-allocation copies to and from a host field of the same layout; complete on return.
  // Throws Error(invalid_argument) when the layouts differ.
  void upload(const HostField<T>& h);
  void download(HostField<T>& h) const;
  // NaN over the whole allocation (all bits set is a quiet NaN in float and double alike),
  // enqueued on `stream`.
  void poison(Stream stream = nullptr);

 private:
  void release() noexcept;  // frees the allocation, if any, and counts it out of the bytes held

  Layout layout_;
  T* data_ = nullptr;
};

extern template class DeviceField<float>;
extern template class DeviceField<double>;

}  // namespace fdstencil
