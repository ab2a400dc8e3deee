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
    throw Error(ErrorKind::out_of_memory, std::string("size overflow: ") + what + " does not fit in 64 bits");
  return r;
}

int64_t checked_add(int64_t a, int64_t b, const char* what) {
  int64_t r = 0;
  if (__builtin_add_overflow(a, b, &r))
    throw Error(ErrorKind::out_of_memory, std::string("size overflow: ") + what + " does not fit in 64 bits");
  return r;
}

int64_t round_up(int64_t v, int64_t m) { return checked_mul((checked_add(v, m - 1, "line") / m), m, "line"); }

void check_common(Extents n, int radius, int64_t elem_bytes) {
  if (radius < 1 || radius > kMaxRadius)
    throw Error(ErrorKind::invalid_argument,
                "radius " + std::to_string(radius) + " is outside 1.." + std::to_string(kMaxRadius));
  if (n.nx < 1 || n.ny < 1 || n.nz < 1)
    throw Error(ErrorKind::invalid_argument, "interior extents " + std::to_string(n.nx) + " x " +
                                                 std::to_string(n.ny) + " x " + std::to_string(n.nz) +
                                                 " must each be at least 1");
  if (elem_bytes != 4 && elem_bytes != 8)
    throw Error(ErrorKind::invalid_argument, "element size must be 4 or 8 bytes");
}

}  // namespace

int64_t aligned_bytes_of(std::initializer_list<uint64_t> values) {
  int64_t a = kAlignBytes;
  for (uint64_t v : values)
    while (a > 1 && v % uint64_t(a) != 0) a /= 2;
  return a;
}

Layout Layout::strided(Extents n, int radius, int64_t elem_bytes, int64_t line, int64_t slice,
                       int64_t align_bytes, int64_t tail_elems, int64_t head_elems) {
  check_common(n, radius, elem_bytes);
  const int64_t R = radius;
  const int64_t tx = checked_add(n.nx, 2 * R, "nx + 2R");
  const int64_t ty = checked_add(n.ny, 2 * R, "ny + 2R");
  const int64_t tz = checked_add(n.nz, 2 * R, "nz + 2R");
  if (line < tx)
    throw Error(ErrorKind::invalid_argument, "line stride " + std::to_string(line) +
                                                 " is less than nx + 2R = " + std::to_string(tx) +
                                                 " elements");
  if (slice < checked_mul(line, ty, "line x (ny + 2R)"))
    throw Error(ErrorKind::invalid_argument,
                "plane stride " + std::to_string(slice) +
                    " is less than line x (ny + 2R) = " + std::to_string(line * ty) + " elements");
  const bool power_of_two = align_bytes >= 1 && (align_bytes & (align_bytes - 1)) == 0;
  if (!power_of_two || align_bytes > kAlignBytes)
    throw Error(ErrorKind::invalid_argument, "alignment " + std::to_string(align_bytes) +
                                                 " must be a power of two of at most " +
                                                 std::to_string(kAlignBytes));
  if (tail_elems < 0 || head_elems < 0)
    throw Error(ErrorKind::invalid_argument, "a negative count of readable elements around the field");
  if (checked_mul(line, elem_bytes, "line bytes") % align_bytes != 0 ||
      (checked_mul(slice, elem_bytes, "plane bytes") % align_bytes) != 0)
    throw Error(ErrorKind::invalid_argument,
                "strides of " + std::to_string(line) + " and " + std::to_string(slice) +
                    " elements do not keep the x-lines " + std::to_string(align_bytes) + "-byte aligned");
  Layout l;
  l.interior_ = n;
  l.radius_ = radius;
  l.elem_bytes_ = elem_bytes;
  l.align_bytes_ = align_bytes;
  l.line_ = line;
  l.slice_ = slice;
  l.offset_ = head_elems;
  // The head, the far halo corner's index from the halo corner plus one, the tail.
  const int64_t last = checked_add(checked_add(tx - 1, checked_mul(ty - 1, line, "elements"), "elements"),
                                   checked_mul(tz - 1, slice, "elements"), "elements");
  l.alloc_elems_ = checked_add(checked_add(head_elems, last + 1, "elements"), tail_elems, "elements");
  checked_mul(l.alloc_elems_, elem_bytes, "bytes of the field");
  return l;
}

Layout Layout::make(Extents n, int radius, int64_t elem_bytes, int64_t align_bytes) {
  check_common(n, radius, elem_bytes);
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
