// The padded, aligned storage layout of a 3D field: nx x ny x nz interior points with a halo of
// width R on every side, x fastest. One Layout describes host and device storage alike.
#pragma once

#include <cstdint>
#include <initializer_list>

namespace fdstencil {

// The seeds' "aligned memory": the first interior point of every x-line starts on a cache line
// (128 bytes on Hopper's L2 and on MI250X alike).
inline constexpr int64_t kAlignBytes = 128;

// Slack after the last element of a make() layout. Vector kernels read whole 16-byte vectors past
// the last point of a line, and the bulk-copy Laplacian (bulk_ring) whole staged rows of 34 vectors
// (544 bytes): they get room inside the allocation rather than a special case at the last line.
inline constexpr int64_t kTailSlackBytes = 1024;

// The largest power of two, at most kAlignBytes, that divides every one of `values` (addresses
// and byte strides): the alignment a view's x-lines keep.
int64_t aligned_bytes_of(std::initializer_list<uint64_t> values);

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
  static Layout make(Extents interior, int radius, int64_t elem_bytes, int64_t align_bytes = kAlignBytes);

  // A caller's storage (a view): `line` and `slice` elements between neighbouring x-lines and
  // planes, at least nx + 2R and line * (ny + 2R). `head_elems` readable elements come before
  // halo point (-R, -R, -R) (offset() is head_elems) and `tail_elems` after the far halo corner
  // (nx+R-1, ny+R-1, nz+R-1). `align_bytes` (1 or a power of two, at most kAlignBytes) is the
  // alignment of every x-line's first interior point, which the caller's pointer and strides
  // guarantee (see aligned_bytes_of). Throws like make(), and Error(invalid_argument) for
  // strides too small for the extents or an alignment the strides do not keep.
  static Layout strided(Extents interior, int radius, int64_t elem_bytes, int64_t line, int64_t slice,
                        int64_t align_bytes, int64_t tail_elems = 0, int64_t head_elems = 0);

  Extents interior() const { return interior_; }
  Extents total() const {
    return {interior_.nx + 2 * radius_, interior_.ny + 2 * radius_, interior_.nz + 2 * radius_};
  }
  int radius() const { return radius_; }
  int64_t elem_bytes() const { return elem_bytes_; }
  int64_t align_bytes() const { return align_bytes_; }
  int64_t line() const { return line_; }                // elements from (i, j, k) to (i, j+1, k)
  int64_t slice() const { return slice_; }              // elements from (i, j, k) to (i, j, k+1)
  int64_t offset() const { return offset_; }            // elements before halo point (-R,-R,-R)
  int64_t alloc_elems() const { return alloc_elems_; }  // elements to allocate, tail slack included
  int64_t alloc_bytes() const { return alloc_elems_ * elem_bytes_; }
  // Readable bytes after the far halo corner, and before the halo corner: kTailSlackBytes or more
  // after and the base shift before for make(), the caller's promise for strided(). Kernels whose
  // loads run past either end need some (the bulk-copy Laplacian bulk_ring).
  int64_t head_bytes() const { return offset_ * elem_bytes_; }
  int64_t tail_bytes() const {
    return (alloc_elems_ -
            index(interior_.nx + radius_ - 1, interior_.ny + radius_ - 1, interior_.nz + radius_ - 1) - 1) *
           elem_bytes_;
  }

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

// Whether two layouts address their points alike from their origins (interior point (0, 0, 0)):
// extents, halo, element size and strides. Not the alignment, the offset of the origin from
// element 0, or the tail: every backend addresses points from the origin, so those only say what
// a kernel may assume of the storage around them.
inline bool same_geometry(const Layout& a, const Layout& b) {
  return a.interior() == b.interior() && a.radius() == b.radius() && a.elem_bytes() == b.elem_bytes() &&
         a.line() == b.line() && a.slice() == b.slice();
}

}  // namespace fdstencil
