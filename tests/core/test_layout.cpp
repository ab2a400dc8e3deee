// The padded, aligned layout (Layout::make) and host storage (HostField): the first interior
// point of every x-line on a cache-line boundary for every radius, element size and awkward nx;
// strides and allocation that cover the halo; the unaligned layout of the seeds' baselines; and
// the errors for bad radii, extents and sizes that overflow or exceed memory.
#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <string>

#include "fdstencil/error.hpp"
#include "fdstencil/field.hpp"
#include "fdstencil/layout.hpp"
#include "test_util.hpp"

namespace fdstencil {
namespace {

using test::throws_error;

// Odd, prime, power-of-two and just-past-power-of-two line lengths, so that every residue of
// nx + 2R modulo the 16 or 32 elements of a cache line occurs for some R.
constexpr int64_t kNxs[] = {1, 2, 3, 7, 15, 16, 17, 31, 32, 33, 37, 64, 100, 129};

// The invariants of any layout, aligned or not.
void check_common(const Layout& l, Extents n, int r, int64_t elem_bytes) {
  EXPECT_EQ(l.interior(), n);
  EXPECT_EQ(l.radius(), r);
  EXPECT_EQ(l.elem_bytes(), elem_bytes);
  EXPECT_EQ(l.total(), (Extents{n.nx + 2 * r, n.ny + 2 * r, n.nz + 2 * r}));
  // A line holds the halo on both sides; a slice is exactly ny + 2R lines.
  EXPECT_GE(l.line(), n.nx + 2 * r);
  EXPECT_EQ(l.slice(), l.line() * (n.ny + 2 * r));
  // Unit stride in x, line in y, slice in z.
  EXPECT_EQ(l.index(1, 0, 0) - l.index(0, 0, 0), 1);
  EXPECT_EQ(l.index(0, 1, 0) - l.index(0, 0, 0), l.line());
  EXPECT_EQ(l.index(0, 0, 1) - l.index(0, 0, 0), l.slice());
  EXPECT_EQ(l.origin(), l.index(0, 0, 0));
  // The allocation holds the first and the last halo point.
  EXPECT_GE(l.index(-r, -r, -r), 0);
  EXPECT_EQ(l.index(-r, -r, -r), l.offset());
  EXPECT_LT(l.index(n.nx + r - 1, n.ny + r - 1, n.nz + r - 1), l.alloc_elems());
  EXPECT_EQ(l.alloc_bytes(), l.alloc_elems() * elem_bytes);
}

// The seeds' aligned memory: index(0, j, k) * elem_bytes is a multiple of the alignment for every
// x-line, halo lines included (with an aligned base pointer, each line's first interior point
// then starts a cache line), and the line is padded by less than one alignment unit (more would
// only waste memory and bandwidth).
TEST(Layout, FirstInteriorPointOfEveryLineIsAligned) {
  for (int64_t elem_bytes : {int64_t{4}, int64_t{8}})
    for (int64_t align : {kAlignBytes, int64_t{64}, int64_t{256}})
      for (int r = 1; r <= kMaxRadius; ++r)
        for (int64_t nx : kNxs) {
          const Extents n{nx, 3, 2};
          SCOPED_TRACE("elem_bytes=" + std::to_string(elem_bytes) + " align=" + std::to_string(align) +
                       " R=" + std::to_string(r) + " nx=" + std::to_string(nx));
          const Layout l = Layout::make(n, r, elem_bytes, align);
          check_common(l, n, r, elem_bytes);
          EXPECT_EQ(l.align_bytes(), align);
          EXPECT_LT(l.line() - (nx + 2 * r), align / elem_bytes) << "line " << l.line();
          int bad = 0;
          for (int64_t k = -r; k < n.nz + r; ++k)
            for (int64_t j = -r; j < n.ny + r; ++j)
              if ((l.index(0, j, k) * elem_bytes) % align != 0 && bad++ < 3)
                ADD_FAILURE() << "line (j=" << j << ", k=" << k << ") starts at element " << l.index(0, j, k)
                              << ", byte " << l.index(0, j, k) * elem_bytes << ", not a multiple of "
                              << align;
        }
}

// Default alignment is the 128-byte cache line.
TEST(Layout, DefaultAlignmentIsTheCacheLine) {
  const Layout l = Layout::make({37, 5, 4}, 3, 4);
  EXPECT_EQ(l.align_bytes(), 128);
  EXPECT_EQ(l.index(0, 0, 0) * 4 % 128, 0);
  EXPECT_EQ(l.line(), 64);  // 37 + 6 = 43 floats, rounded up to 32
}

// A HostField's allocation is aligned, so the interior points themselves sit on cache lines.
template <class T>
void check_host_field_addresses() {
  for (int r = 1; r <= kMaxRadius; ++r)
    for (int64_t nx : {int64_t{1}, int64_t{17}, int64_t{37}}) {
      HostField<T> f({nx, 4, 3}, r);
      SCOPED_TRACE(std::string(test::type_name<T>()) + " R=" + std::to_string(r) +
                   " nx=" + std::to_string(nx));
      EXPECT_EQ(reinterpret_cast<uintptr_t>(f.data()) % kAlignBytes, 0u);
      for (int64_t k = -r; k < 3 + r; ++k)
        for (int64_t j = -r; j < 4 + r; ++j)
          EXPECT_EQ(reinterpret_cast<uintptr_t>(&f.at(0, j, k)) % kAlignBytes, 0u)
              << "line j=" << j << " k=" << k;
      // Every interior and halo element is writable without touching another point.
      f.fill(T(0));
      test::for_each_point(f.layout(), r, [&](int64_t i, int64_t j, int64_t k) { f.at(i, j, k) += T(1); });
      int64_t ones = 0;
      for (int64_t e = 0; e < f.layout().alloc_elems(); ++e) ones += f.data()[e] == T(1);
      EXPECT_EQ(ones, (nx + 2 * r) * (4 + 2 * r) * (3 + 2 * r));
    }
}

TEST(HostField, InteriorLinesAreAlignedInMemoryFloat) { check_host_field_addresses<float>(); }
TEST(HostField, InteriorLinesAreAlignedInMemoryDouble) { check_host_field_addresses<double>(); }

// align_bytes = 1: the seeds' first baselines, no padding at all.
TEST(Layout, UnalignedLayoutIsUnpadded) {
  for (int64_t elem_bytes : {int64_t{4}, int64_t{8}})
    for (int r = 1; r <= kMaxRadius; ++r)
      for (int64_t nx : kNxs) {
        const Extents n{nx, 5, 3};
        SCOPED_TRACE("elem_bytes=" + std::to_string(elem_bytes) + " R=" + std::to_string(r) +
                     " nx=" + std::to_string(nx));
        const Layout l = Layout::make(n, r, elem_bytes, 1);
        check_common(l, n, r, elem_bytes);
        EXPECT_EQ(l.line(), nx + 2 * r);
        EXPECT_EQ(l.slice(), (nx + 2 * r) * (5 + 2 * r));
      }
}

TEST(Layout, RejectsBadRadius) {
  for (int r : {0, 9, -1, 100})
    EXPECT_TRUE(throws_error(
        [&] {
          Layout::make({8, 8, 8}, r, 4);
        },
        ErrorKind::invalid_argument, {"radius"}))
        << "R=" << r;
}

TEST(Layout, RejectsEmptyOrNegativeExtents) {
  for (const Extents n : {Extents{0, 8, 8}, Extents{8, 0, 8}, Extents{8, 8, 0}, Extents{-1, 8, 8},
                          Extents{8, -5, 8}, Extents{8, 8, -3}, Extents{0, 0, 0}})
    EXPECT_TRUE(throws_error([&] { Layout::make(n, 2, 8); }, ErrorKind::invalid_argument,
                             {"extent", "size", "dimension", "interior", "nx", "ny", "nz"}))
        << n.nx << "x" << n.ny << "x" << n.nz;
}

// Element or byte counts beyond int64 are reported as out_of_memory, never wrapped around into
// a small (and then overrun) allocation.
TEST(Layout, OverflowingSizesThrowOutOfMemory) {
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
  const Extents element_overflow[] = {
      {3'000'000, 3'000'000, 3'000'000},                       // 2.7e19 points > 9.2e18
      {int64_t{1} << 21, int64_t{1} << 21, int64_t{1} << 21},  // 2^63 points
      {int64_t{1} << 40, int64_t{1} << 40, 1},
      {kMax, 1, 1},  // nx + 2R itself overflows
      {1, kMax - 1, 1},
      {1, 1, kMax / 2},  // times the slice
  };
  for (const Extents& n : element_overflow)
    for (int64_t elem_bytes : {int64_t{4}, int64_t{8}})
      EXPECT_TRUE(throws_error([&] { Layout::make(n, 4, elem_bytes); }, ErrorKind::out_of_memory, {}))
          << n.nx << "x" << n.ny << "x" << n.nz << " elem_bytes " << elem_bytes;

  // 2^20 cubed: about 2^60 elements fit in int64, but 8-byte elements make more than 2^63 bytes.
  // The float layout fits (2^62 bytes) and is only described, not allocated.
  const Extents n{int64_t{1} << 20, int64_t{1} << 20, int64_t{1} << 20};
  EXPECT_TRUE(throws_error([&] { Layout::make(n, 1, 8); }, ErrorKind::out_of_memory, {}));
  EXPECT_NO_THROW(Layout::make(n, 1, 4));
}

// A size that fits in int64 but not in memory: 20000^3 floats is 32 TB. The allocation must be
// refused with Error(out_of_memory), not std::bad_alloc and not a crash on first touch.
TEST(HostField, SizeBeyondHostMemoryThrowsOutOfMemory) {
  const Extents n{20'000, 20'000, 20'000};
  ASSERT_NO_THROW(Layout::make(n, 4, 4));
  EXPECT_TRUE(throws_error([&] { HostField<float> f(n, 4); }, ErrorKind::out_of_memory, {"host field"}));
  EXPECT_TRUE(throws_error([&] { HostField<double> f(n, 8, 1); }, ErrorKind::out_of_memory, {"host field"}));
}

}  // namespace
}  // namespace fdstencil
