// The padded, aligned storage layout of a 3D field: nx x ny x nz interior points with a halo of
// width R on every side, x fastest. One Layout describes host and device storage alike.
#pragma once

#include <cstdint>

namespace fdstencil {

// The seeds' "aligned memory": the first interior point of every x-line starts on a cache line
// (128 bytes on Hopper's L2 and on MI250X alike).
inline constexpr int64_t kAlignBytes = 128;

struct Extents {
  int64_t nx = 0, ny = 0, nz = 0;
  int64_t points() const { return nx * ny * nz; }
  friend bool operator==(const Extents&, const Extents&) = default;
};

class Layout {
 public:
  // Throws Error(invalid_argument) for a radius outside 1..8 or an extent < 1, and
  // Error(out_of_memory) when an element or byte count overflows 64 bits.
  // align_bytes = 1 gives the unaligned, unpadded layout of the seeds' first baselines.
  static Layout make(Extents interior, int radius, int64_t elem_bytes,
                     int64_t align_bytes = kAlignBytes);

  Extents interior() const { return interior_; }
  Extents total() const { return {interior_.nx + 2 * radius_, interior_.ny + 2 * radius_, interior_.nz + 2 * radius_}; }
  int radius() const { return radius_; }
  int64_t elem_bytes() const { return elem_bytes_; }
  int64_t align_bytes() const { return align_bytes_; }
  int64_t line() const { return line_; }    // elements from (i, j, k) to (i, j+1, k)
  int64_t slice() const { return slice_; }  // elements from (i, j, k) to (i, j, k+1)
  int64_t offset() const { return offset_; }            // elements before halo point (-R,-R,-R)
  int64_t alloc_elems() const { return alloc_elems_; }  // elements to allocate, tail slack included
  int64_t alloc_bytes() const { return alloc_elems_ * elem_bytes_; }

  // Element index of interior coordinate (i, j, k); halo points have coordinates in [-R, 0)
  // and [n, n+R).
  int64_t index(int64_t i, int64_t j, int64_t k) const {
    return offset_ + (i + radius_) + (j + radius_) * line_ + (k + radius_) * slice_;
  }
  int64_t origin() const { return index(0, 0, 0); }

  friend bool operator==(const Layout&, const Layout&) = default;

 private:
  Extents interior_{};
  int radius_ = 0;
  int64_t elem_bytes_ = 0, align_bytes_ = 0, line_ = 0, slice_ = 0, offset_ = 0, alloc_elems_ = 0;
};

}  // namespace fdstencil
