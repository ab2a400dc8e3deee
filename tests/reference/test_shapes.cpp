// Awkward shapes: odd, non-cubic interiors (one larger than the cache line in x, one smaller than
// the halo on every axis) at every radius, operator and element type. The cpu backend must match
// the reference on random input, write every interior point, and leave every halo and padding
// element bit for bit as it was; the reference itself is held to the same write discipline.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <type_traits>
#include <vector>

#include "fdstencil/backend.hpp"
#include "fdstencil/field.hpp"
#include "fdstencil/stencil.hpp"
#include "test_util.hpp"

namespace fdstencil {
namespace {

using test::kEps;

// 37 x 23 x 19: odd, prime-ish, nx + 2R never a multiple of the cache line for small R.
// 5 x 3 x 2: thinner than the R = 8 halo, so most reads of a point come from the halo.
const Extents kShapes[] = {{37, 23, 19}, {5, 3, 2}};
const Spacing kSpacing{0.9, 1.1, 1.3};

std::string shape_name(Extents n) {
  return std::to_string(n.nx) + "x" + std::to_string(n.ny) + "x" + std::to_string(n.nz);
}

// Runs `backend` on a poisoned output and checks what every backend owes: a finite value at
// every interior point, not all zero, and untouched halo and padding bits.
template <class T>
void apply_poisoned(const Backend& backend, const Stencil& s, const HostField<T>& in, HostField<T>& out) {
  test::poison_output(out);
  const std::vector<T> before = test::snapshot(out);
  backend.apply(s, in, out);
  EXPECT_TRUE(test::interior_all_finite(out)) << "backend " << backend.name();
  EXPECT_TRUE(test::outside_interior_unchanged(out, before)) << "backend " << backend.name();
  EXPECT_TRUE(test::interior_not_all_zero(out)) << "backend " << backend.name();
}

template <class T>
void check_shapes(uint64_t base_seed) {
  uint64_t seed = base_seed;
  for (const Extents n : kShapes)
    for (const test::OpCase c : test::all_op_cases()) {
      const Stencil s{c.op, c.radius, kSpacing};
      ++seed;
      SCOPED_TRACE(std::string(test::type_name<T>()) + " " + test::describe(s) + " interior " +
                   shape_name(n) + " seed " + std::to_string(seed));
      HostField<T> in(n, c.radius);
      test::fill_random(in, seed);  // interior and halo random, padding NaN

      HostField<T> want(n, c.radius), got(n, c.radius);
      apply_poisoned(reference_backend(), s, in, want);
      apply_poisoned(cpu_backend(), s, in, got);

      // Tolerance: the reference sums in double, the cpu backend may sum in T in another order;
      // both err by at most a few eps_T per term of the sum of |w| |u| (see test_exactness).
      const double tol = 64.0 * kEps<T> * test::weight_norm(s) * test::max_abs_read(in);
      EXPECT_TRUE(test::fields_match(got, want, tol)) << "cpu vs reference";
    }
}

TEST(Shapes, CpuMatchesReferenceFloat) {
  check_shapes<float>(test::announce_seed(7'000, "Shapes float inputs (seed per case = base + n)"));
}

TEST(Shapes, CpuMatchesReferenceDouble) {
  check_shapes<double>(test::announce_seed(9'000, "Shapes double inputs (seed per case = base + n)"));
}

// The reference against an independent computation on the same awkward shapes: the weights
// times the input, summed in long double here. This pins the oracle itself on random data (the
// analytic tests pin it on smooth data) at a tolerance of a few eps of the sum of magnitudes.
template <class T>
void check_reference_against_direct_sum(uint64_t base_seed) {
  uint64_t seed = base_seed;
  for (const Extents n : kShapes)
    for (const test::OpCase c : test::all_op_cases()) {
      const Stencil s{c.op, c.radius, kSpacing};
      ++seed;
      SCOPED_TRACE(std::string(test::type_name<T>()) + " " + test::describe(s) + " interior " +
                   shape_name(n) + " seed " + std::to_string(seed));
      HostField<T> in(n, c.radius), out(n, c.radius);
      test::fill_random(in, seed);
      apply_poisoned(reference_backend(), s, in, out);

      const std::vector<double> w = central_weights(2, c.radius);
      const auto axes = test::axes_of(c.op);
      const double h[3] = {kSpacing.hx, kSpacing.hy, kSpacing.hz};
      const int r = c.radius;
      const auto direct = [&](int64_t i, int64_t j, int64_t k) {
        long double sum = 0;
        for (int o = -r; o <= r; ++o) {
          const long double wo = w[static_cast<size_t>(o + r)];
          if (axes[0]) sum += wo / (h[0] * h[0]) * in.at(i + o, j, k);
          if (axes[1]) sum += wo / (h[1] * h[1]) * in.at(i, j + o, k);
          if (axes[2]) sum += wo / (h[2] * h[2]) * in.at(i, j, k + o);
        }
        return static_cast<double>(sum);
      };
      // The reference accumulates in double (a few eps_double of the sum of |w| |u|) and rounds
      // once to T (eps_T / 2 of |result| <= sum of |w| |u|); kEps<T> allows for float weights too.
      const double tol = (64.0 * kEps<double> + kEps<T>)*test::weight_norm(s) * test::max_abs_read(in);
      EXPECT_TRUE(test::interior_matches(out, direct, tol));
    }
}

TEST(Shapes, ReferenceMatchesDirectSumFloat) {
  check_reference_against_direct_sum<float>(
      test::announce_seed(11'000, "Reference direct-sum float inputs (seed per case = base + n)"));
}

TEST(Shapes, ReferenceMatchesDirectSumDouble) {
  check_reference_against_direct_sum<double>(
      test::announce_seed(13'000, "Reference direct-sum double inputs (seed per case = base + n)"));
}

}  // namespace
}  // namespace fdstencil
