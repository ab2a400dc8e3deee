// Views over a caller's storage: the layout from the caller's strides, the alignment from its
// pointer and strides.
#include <cstdint>
#include <string>

#include "fdstencil/error.hpp"
#include "fdstencil/field.hpp"

namespace fdstencil {

template <class T>
FieldView<T> view_of(T* origin, Memory memory, Extents interior, int radius, int64_t line, int64_t slice) {
  constexpr int64_t eb = sizeof(T);
  if (origin == nullptr) throw Error(ErrorKind::invalid_argument, "a view over a null pointer");
  const auto addr = uint64_t(reinterpret_cast<uintptr_t>(origin));
  if (addr % eb != 0)
    throw Error(ErrorKind::invalid_argument,
                "a view's origin pointer is not aligned to its " + std::to_string(eb) + "-byte elements");
  // Checks the strides against the extents (and for overflow) before they are multiplied below.
  const Layout checked = Layout::strided(interior, radius, eb, line, slice, 1);
  const int64_t align = aligned_bytes_of({addr, uint64_t(line) * eb, uint64_t(slice) * eb});
  const Layout l = Layout::strided(interior, radius, eb, line, slice, align);
  (void)checked;
  return FieldView<T>(origin - l.origin(), l, memory);
}

template FieldView<float> view_of(float*, Memory, Extents, int, int64_t, int64_t);
template FieldView<double> view_of(double*, Memory, Extents, int, int64_t, int64_t);
template FieldView<const float> view_of(const float*, Memory, Extents, int, int64_t, int64_t);
template FieldView<const double> view_of(const double*, Memory, Extents, int, int64_t, int64_t);

}  // namespace fdstencil
