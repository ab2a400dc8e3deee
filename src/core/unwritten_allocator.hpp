// An allocator whose elements start unwritten, for large arrays that their users write whole
// themselves: the pages are placed by the first thread to write them (first touch), and nobody
// pays a single-threaded zero fill that the array's own parallel writes would repeat.
#pragma once

#include <memory>
#include <utility>

namespace fdstencil {

template <class T>
struct UnwrittenAllocator : std::allocator<T> {
  template <class U>
  struct rebind {
    using other = UnwrittenAllocator<U>;
  };
  UnwrittenAllocator() = default;
  template <class U>
  UnwrittenAllocator(const UnwrittenAllocator<U>&) noexcept {}
  template <class U>
  void construct(U* p) noexcept {
    ::new (static_cast<void*>(p)) U;
  }
  template <class U, class... A>
  void construct(U* p, A&&... a) {
    ::new (static_cast<void*>(p)) U(std::forward<A>(a)...);
  }
};

}  // namespace fdstencil
