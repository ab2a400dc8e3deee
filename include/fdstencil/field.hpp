// Host storage of a field on the aligned layout.
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

  void fill(T value) {
    T* p = data_.get();
    for (int64_t n = 0; n < layout_.alloc_elems(); ++n) p[n] = value;
  }

 private:
  Layout layout_;
  std::unique_ptr<T, detail::FreeDeleter> data_;
};

}  // namespace fdstencil
