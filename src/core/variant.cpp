// The problem on the library's own layout.
#include "core/variant.hpp"

namespace fdstencil {

Problem make_problem(const Stencil& s, Extents interior, DType t, int64_t align_bytes) {
  return {s, Layout::make(interior, s.radius, dtype_bytes(t), align_bytes)};
}

}  // namespace fdstencil
