// Bad input is reported, never computed on: each case throws fdstencil::Error of the right kind
// with a message that names the problem — radii outside 1..8, laplacian7 at R != 1, empty or
// negative extents, zero / negative / non-finite spacing, sizes that overflow or exceed memory,
// input and output fields of different shapes, unknown operator and backend names. A rejected
// apply must not have written its output.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "fdstencil/backend.hpp"
#include "fdstencil/error.hpp"
#include "fdstencil/field.hpp"
#include "fdstencil/layout.hpp"
#include "fdstencil/stencil.hpp"
#include "test_util.hpp"

namespace fdstencil {
namespace {

using test::throws_error;

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// Words a message about a spacing might use to name it.
const std::initializer_list<std::string_view> kSpacingWords = {"spacing", "hx", "hy", "hz", "step"};
const std::initializer_list<std::string_view> kShapeWords = {
    "layout", "shape", "mismatch", "extent", "differ", "same", "align", "halo", "radius"};

// apply(s, in, out) throws the expected Error, and `out` is bitwise as it was before the call.
template <class T>
::testing::AssertionResult apply_rejected(const Backend& b, const Stencil& s, const HostField<T>& in,
                                          HostField<T>& out, ErrorKind kind,
                                          std::initializer_list<std::string_view> words) {
  test::poison_output(out);
  const std::vector<T> before = test::snapshot(out);
  auto result = throws_error([&] { b.apply(s, in, out); }, kind, words);
  if (!result) return result;
  for (int64_t n = 0; n < out.layout().alloc_elems(); ++n)
    if (test::bits_of(out.data()[n]) != test::bits_of(before[static_cast<size_t>(n)]))
      return ::testing::AssertionFailure() << "threw, but wrote output element " << n << " first";
  return result;
}

// A valid call on the same fields succeeds, so the rejections below are about the argument each
// one changes and not about the fixture.
TEST(BadInput, ValidCallIsAccepted) {
  for (const Backend* b : test::backends_under_test()) {
    HostField<double> in({6, 5, 4}, 2), out({6, 5, 4}, 2);
    test::fill_random(in, 1);
    EXPECT_NO_THROW(b->apply(Stencil{Op::d2xyz, 2, {}}, in, out)) << b->name();
    EXPECT_NO_THROW(check_apply_args(Stencil{Op::d2xyz, 2, {}}, in.layout(), out.layout()));
  }
}

TEST(BadInput, RadiusOutsideOneToEight) {
  for (int r : {0, 9, -1}) {
    SCOPED_TRACE("R=" + std::to_string(r));
    for (Op op : {Op::d2x, Op::d2xyz}) {
      const Stencil s{op, r, {}};
      EXPECT_TRUE(throws_error([&] { validate(s); }, ErrorKind::invalid_argument, {"radius"}));
      // Fields with the widest halo: the radius itself, not the field, is at fault.
      HostField<float> inf(Extents{6, 5, 4}, kMaxRadius), outf(Extents{6, 5, 4}, kMaxRadius);
      HostField<double> ind(Extents{6, 5, 4}, kMaxRadius), outd(Extents{6, 5, 4}, kMaxRadius);
      test::fill_random(inf, 2);
      test::fill_random(ind, 2);
      for (const Backend* b : test::backends_under_test()) {
        EXPECT_TRUE(apply_rejected(*b, s, inf, outf, ErrorKind::invalid_argument, {"radius"}))
            << b->name() << " float";
        EXPECT_TRUE(apply_rejected(*b, s, ind, outd, ErrorKind::invalid_argument, {"radius"}))
            << b->name() << " double";
      }
    }
    EXPECT_TRUE(throws_error(
        [&] {
          Layout::make({6, 5, 4}, r, 8);
        },
        ErrorKind::invalid_argument, {"radius"}));
    EXPECT_TRUE(throws_error(
        [&] {
          HostField<float> f(Extents{6, 5, 4}, r);
        },
        ErrorKind::invalid_argument, {"radius"}));
  }
}

TEST(BadInput, Laplacian7OnlyAtRadiusOne) {
  EXPECT_NO_THROW(validate(Stencil{Op::laplacian7, 1, {}}));
  for (int r : {2, 4, 8}) {
    const Stencil s{Op::laplacian7, r, {}};
    SCOPED_TRACE("R=" + std::to_string(r));
    EXPECT_TRUE(throws_error([&] { validate(s); }, ErrorKind::invalid_argument, {"radius", "laplacian7"}));
    HostField<double> in(Extents{6, 5, 4}, r), out(Extents{6, 5, 4}, r);
    test::fill_random(in, 3);
    for (const Backend* b : test::backends_under_test())
      EXPECT_TRUE(apply_rejected(*b, s, in, out, ErrorKind::invalid_argument, {"radius", "laplacian7"}))
          << b->name();
  }
}

// Every extent must be >= 1 (the halo carries the stencil, so 1 is enough at any radius).
TEST(BadInput, ExtentsTooSmall) {
  for (const test::OpCase c : test::all_op_cases()) {
    const Stencil s{c.op, c.radius, {}};
    EXPECT_NO_THROW(validate_extents(s, {1, 1, 1})) << test::describe(s);
    for (const Extents n : {Extents{0, 4, 4}, Extents{4, 0, 4}, Extents{4, 4, 0}, Extents{-1, 4, 4},
                            Extents{4, -7, 4}, Extents{4, 4, -2}})
      EXPECT_TRUE(throws_error([&] { validate_extents(s, n); }, ErrorKind::invalid_argument,
                               {"extent", "size", "dimension", "interior", "nx", "ny", "nz"}))
          << test::describe(s) << " interior " << n.nx << "x" << n.ny << "x" << n.nz;
  }
}

// Zero, negative, NaN and infinite spacing on each axis, through validate and through apply.
TEST(BadInput, SpacingNotFiniteAndPositive) {
  HostField<double> in(Extents{6, 5, 4}, 2), out(Extents{6, 5, 4}, 2);
  test::fill_random(in, 4);
  for (Op op : {Op::d2xyz, Op::laplacian7})
    for (int axis = 0; axis < 3; ++axis)
      for (double bad : {0.0, -0.0, -0.5, kNaN, kInf, -kInf}) {
        Stencil s{op, op == Op::laplacian7 ? 1 : 2, Spacing{0.5, 0.7, 0.9}};
        (axis == 0 ? s.h.hx : axis == 1 ? s.h.hy : s.h.hz) = bad;
        SCOPED_TRACE(test::describe(s));
        EXPECT_TRUE(throws_error([&] { validate(s); }, ErrorKind::invalid_argument, kSpacingWords));
        for (const Backend* b : test::backends_under_test())
          EXPECT_TRUE(apply_rejected(*b, s, in, out, ErrorKind::invalid_argument, kSpacingWords))
              << b->name();
      }
}

// Element or byte counts beyond int64 (Layout) and allocations beyond the host's memory
// (HostField) are out_of_memory, never a wrapped-around small allocation or std::bad_alloc.
TEST(BadInput, SizesThatOverflowOrExceedMemory) {
  EXPECT_TRUE(throws_error(
      [] {
        Layout::make({3'000'000, 3'000'000, 3'000'000}, 4, 4);
      },
      ErrorKind::out_of_memory, {}));
  EXPECT_TRUE(throws_error(
      [] {
        Layout::make({int64_t{1} << 20, int64_t{1} << 20, int64_t{1} << 20}, 1, 8);
      },
      ErrorKind::out_of_memory, {}));
  // 20000^3 floats = 32 TB: representable, far beyond any host.
  EXPECT_TRUE(throws_error(
      [] {
        HostField<float> f(Extents{20'000, 20'000, 20'000}, 1);
      },
      ErrorKind::out_of_memory, {"host field"}));
  EXPECT_TRUE(throws_error([] { ensure_host_memory(int64_t{1} << 62, "test buffer"); },
                           ErrorKind::out_of_memory, {"test buffer"}));
  EXPECT_NO_THROW(ensure_host_memory(4096, "small test buffer"));
}

// Input and output must share one layout: extents, radius and alignment.
TEST(BadInput, MismatchedShapes) {
  const Stencil s{Op::d2xyz, 2, Spacing{0.5, 0.7, 0.9}};
  HostField<double> in(Extents{8, 7, 6}, 2);
  test::fill_random(in, 5);
  HostField<double> other_extent(Extents{8, 7, 5}, 2);
  HostField<double> other_nx(Extents{9, 7, 6}, 2);
  HostField<double> other_radius(Extents{8, 7, 6}, 3);
  HostField<double> other_align(Extents{8, 7, 6}, 2, 1);
  for (const Backend* b : test::backends_under_test()) {
    SCOPED_TRACE(std::string(b->name()));
    EXPECT_TRUE(apply_rejected(*b, s, in, other_extent, ErrorKind::invalid_argument, kShapeWords));
    EXPECT_TRUE(apply_rejected(*b, s, in, other_nx, ErrorKind::invalid_argument, kShapeWords));
    EXPECT_TRUE(apply_rejected(*b, s, in, other_radius, ErrorKind::invalid_argument, kShapeWords));
    EXPECT_TRUE(apply_rejected(*b, s, in, other_align, ErrorKind::invalid_argument, kShapeWords));
  }
  EXPECT_TRUE(throws_error([&] { check_apply_args(s, in.layout(), other_extent.layout()); },
                           ErrorKind::invalid_argument, kShapeWords));
  EXPECT_TRUE(throws_error([&] { check_apply_args(s, in.layout(), other_align.layout()); },
                           ErrorKind::invalid_argument, kShapeWords));
}

// A stencil wider than the fields' halo would read outside the allocation.
TEST(BadInput, StencilWiderThanHalo) {
  HostField<float> in(Extents{8, 7, 6}, 2), out(Extents{8, 7, 6}, 2);
  test::fill_random(in, 6);
  for (int r : {3, 8}) {
    const Stencil s{Op::d2z, r, {}};
    for (const Backend* b : test::backends_under_test())
      EXPECT_TRUE(apply_rejected(*b, s, in, out, ErrorKind::invalid_argument, {"radius", "halo"}))
          << b->name() << " R=" << r;
  }
}

TEST(BadInput, UnknownOpName) {
  for (Op op : kAllOps) EXPECT_EQ(parse_op(op_name(op)), op) << test::name_of(op);
  for (Op op : kAllOps) EXPECT_EQ(op_name(op), test::name_of(op));
  for (const char* name : {"d2w", "", "laplacian", "d2xyzz", "lap7"})
    // The message lists the valid operators.
    EXPECT_TRUE(throws_error([&] { parse_op(name); }, ErrorKind::invalid_argument, {"d2xyz"}))
        << "'" << name << "'";
}

TEST(BadInput, UnknownBackendName) {
  EXPECT_EQ(&find_backend("reference"), &reference_backend());
  EXPECT_EQ(&find_backend("cpu"), &cpu_backend());
  EXPECT_EQ(reference_backend().name(), "reference");
  EXPECT_EQ(cpu_backend().name(), "cpu");
  EXPECT_TRUE(throws_error([] { find_backend("no-such-backend"); }, ErrorKind::invalid_argument,
                           {"no-such-backend"}));
  EXPECT_TRUE(throws_error([] { find_backend(""); }, ErrorKind::invalid_argument, {"backend"}));
}

}  // namespace
}  // namespace fdstencil
