// Fields on the aligned layout: owning host storage (HostField), and views (FieldView) over any
// storage, host or device, owned here or by the caller, with the caller's strides. A plan applies
// an operator to views; HostField and DeviceField (device_field.hpp) hand out views of themselves.
#pragma once

#include <cstdint>
#include <cstdlib>
#include <memory>
#include <type_traits>

#include "fdstencil/layout.hpp"

namespace fdstencil {

// Bytes of host memory the system can still give (MemAvailable); 0 when unknown.
int64_t host_memory_available();

// Throws Error(out_of_memory) naming `what` when `bytes` exceed what the host can give.
void ensure_host_memory(int64_t bytes, const char* what);

// Where a view's elements live: a plan on the cuda backend takes device views, the host
// backends host views.
enum class Memory { host, device };

// A field's elements at `data` (element 0 of `layout`, so interior point (i, j, k) is
// data[layout.index(i, j, k)]), without ownership. T may be const.
template <class T>
class FieldView {
  static_assert(std::is_same_v<std::remove_const_t<T>, float> ||
                std::is_same_v<std::remove_const_t<T>, double>);

 public:
  FieldView(T* data, const Layout& layout, Memory memory) : data_(data), layout_(layout), memory_(memory) {}
  // A view of mutable elements is also a view of const ones.
  template <class U, class = std::enable_if_t<std::is_same_v<T, const U>>>
  FieldView(const FieldView<U>& v) : FieldView(v.data(), v.layout(), v.memory()) {}

  T* data() const { return data_; }
  T* origin() const { return data_ + layout_.origin(); }  // interior point (0, 0, 0)
  const Layout& layout() const { return layout_; }
  Memory memory() const { return memory_; }
  // Host views only: element access through the layout.
  T& at(int64_t i, int64_t j, int64_t k) const { return data_[layout_.index(i, j, k)]; }

 private:
  T* data_;
  Layout layout_;
  Memory memory_;
};

// A view over a caller's array: `origin` points at interior point (0, 0, 0), the halo of width
// `radius` lies around it, and `line` / `slice` are the strides in elements between x-lines and
// between planes. The alignment the plan may rely on is read off the pointer and the strides.
// Throws Error(invalid_argument) for a null or misaligned pointer or strides too small.
template <class T>
FieldView<T> view_of(T* origin, Memory memory, Extents interior, int radius, int64_t line, int64_t slice);

namespace detail {
struct FreeDeleter {
  void operator()(void* p) const noexcept { std::free(p); }
};
void* aligned_host_alloc(int64_t bytes, const char* what);  // throws Error(out_of_memory)
}  // namespace detail

template <class T>
class HostField {
  static_assert(std::is_same_v<T, float> || std::is_same_v<T, double>);

 public:
  HostField(Extents interior, int radius, int64_t align_bytes = kAlignBytes)
      : HostField(Layout::make(interior, radius, sizeof(T), align_bytes)) {}
  explicit HostField(const Layout& layout)
      : layout_(layout),
        data_(static_cast<T*>(detail::aligned_host_alloc(layout.alloc_bytes(), "host field"))) {}

  const Layout& layout() const { return layout_; }
  Extents interior() const { return layout_.interior(); }
  int radius() const { return layout_.radius(); }

  T* data() { return data_.get(); }  // the allocation, padding included
  const T* data() const { return data_.get(); }
  T& at(int64_t i, int64_t j, int64_t k) { return data_.get()[layout_.index(i, j, k)]; }
  const T& at(int64_t i, int64_t j, int64_t k) const { return data_.get()[layout_.index(i, j, k)]; }

  FieldView<T> view() { return {data(), layout_, Memory::host}; }
  FieldView<const T> view() const { return {data(), layout_, Memory::host}; }

  void fill(T value) {
    T* p = data_.get();
    for (int64_t n = 0; n < layout_.alloc_elems(); ++n) p[n] = value;
  }

 private:
  Layout layout_;
  std::unique_ptr<T, detail::FreeDeleter> data_;
};

}  // namespace fdstencil
