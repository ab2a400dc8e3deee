// The aligned layout: pad the leading dimension to whole cache lines and shift the base so that
// interior point i = 0 of every x-line sits on a line boundary (seismic part 2's "aligned memory").
#include "fdstencil/layout.hpp"

#include <string>

#include "fdstencil/error.hpp"
#include "fdstencil/stencil.hpp"

namespace fdstencil {

namespace {

int64_t checked_mul(int64_t a, int64_t b, const char* what) {
  int64_t r = 0;
  if (__builtin_mul_overflow(a, b, &r))
    throw Error(ErrorKind::out_of_memory, std::string("size overflow: ") + what +
                                              " does not fit in 64 bits");
  return r;
}

int64_t checked_add(int64_t a, int64_t b, const char* what) {
  int64_t r = 0;
  if (__builtin_add_overflow(a, b, &r))
    throw Error(ErrorKind::out_of_memory, std::string("size overflow: ") + what +
                                              " does not fit in 64 bits");
  return r;
}

int64_t round_up(int64_t v, int64_t m) { return checked_mul((checked_add(v, m - 1, "line") / m), m, "line"); }

// Vector kernels read whole 16-byte vectors past the last point of a line, and the bulk-copy
// Laplacian (k8) whole staged rows of 34 vectors (544 bytes): give them slack inside the
// allocation rather than a special case at the last line.
constexpr int64_t kTailSlackBytes = 1024;

}  // namespace

Layout Layout::make(Extents n, int radius, int64_t elem_bytes, int64_t align_bytes) {
  if (radius < 1 || radius > kMaxRadius)
    throw Error(ErrorKind::invalid_argument,
                "radius " + std::to_string(radius) + " is outside 1.." + std::to_string(kMaxRadius));
  if (n.nx < 1 || n.ny < 1 || n.nz < 1)
    throw Error(ErrorKind::invalid_argument,
                "interior extents " + std::to_string(n.nx) + " x " + std::to_string(n.ny) + " x " +
                    std::to_string(n.nz) + " must each be at least 1");
  if (elem_bytes != 4 && elem_bytes != 8)
    throw Error(ErrorKind::invalid_argument, "element size must be 4 or 8 bytes");
  const bool power_of_two = align_bytes >= 1 && (align_bytes & (align_bytes - 1)) == 0;
  if (!power_of_two || (align_bytes != 1 && align_bytes % elem_bytes != 0))
    throw Error(ErrorKind::invalid_argument,
                "alignment " + std::to_string(align_bytes) +
                    " must be 1 or a power of two that is a multiple of the element size");

  Layout l;
  l.interior_ = n;
  l.radius_ = radius;
  l.elem_bytes_ = elem_bytes;
  l.align_bytes_ = align_bytes;
  const int64_t align = align_bytes <= elem_bytes ? 1 : align_bytes / elem_bytes;  // in elements
  const int64_t R = radius;
  const int64_t tx = checked_add(n.nx, 2 * R, "nx + 2R");
  const int64_t ty = checked_add(n.ny, 2 * R, "ny + 2R");
  const int64_t tz = checked_add(n.nz, 2 * R, "nz + 2R");
  l.line_ = round_up(tx, align);
  l.slice_ = checked_mul(l.line_, ty, "line x (ny + 2R)");
  // Interior i = 0 sits R elements into its line; shift the base so that spot is aligned.
  l.offset_ = (align - R % align) % align;
  const int64_t field = checked_mul(l.slice_, tz, "slice x (nz + 2R)");
  const int64_t slack = (kTailSlackBytes + elem_bytes - 1) / elem_bytes;
  l.alloc_elems_ = checked_add(checked_add(field, l.offset_, "elements"), slack, "elements");
  checked_mul(l.alloc_elems_, elem_bytes, "bytes of the field");
  return l;
}

}  // namespace fdstencil
