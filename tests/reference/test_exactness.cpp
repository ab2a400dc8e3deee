// Exactness on polynomials: a central stencil of radius R differentiates polynomials of degree
// <= 2R without truncation error, so on such fields every backend must return the analytic second
// derivative up to round-off. Covers the Laplacian series' quadratic (whose 7-point Laplacian is
// 3) and, for every operator, radius, element type and backend, a random product polynomial of
// degree exactly 2R per axis with distinct spacings on the three axes.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "fdstencil/backend.hpp"
#include "fdstencil/field.hpp"
#include "fdstencil/stencil.hpp"
#include "test_util.hpp"

namespace fdstencil {
namespace {

using test::kEps;

// The round-off factor C of the tolerances C * eps_T * weight_norm * max|u|. A d2xyz output at
// R = 8 sums 3 * 17 - 2 = 49 distinct terms; recursive summation errs by at most (n - 1) eps of
// the sum of magnitudes, and rounding the input, the weights and the result add about 1.5 eps
// more. 64 covers that worst case for any summation order, while a wrong weight, axis, spacing
// or line is off by many orders of magnitude more in double.
constexpr double kRoundoffC = 64.0;

// The posts' Laplacian check: u = (x^2 + y^2 + z^2) / 2 with x = i hx, y = j hy, z = k hz has
// Laplacian exactly 3, and the 7-point stencil is exact on quadratics. The spacings differ (and
// are not powers of two) so that a stencil that divides by the wrong h fails.
// Tolerance: each output sums 7 terms of magnitude <= max|u| * 4 / h_a^2 (the weight norm); the
// input is rounded to T (eps/2 relative), so the error is a few eps * weight_norm * max|u|.
template <class T>
void check_laplacian_quadratic(const Backend& backend) {
  const Spacing h{0.11, 0.07, 0.13};
  const Stencil s{Op::laplacian7, 1, h};
  for (const Extents n : {Extents{12, 10, 9}, Extents{37, 5, 3}}) {
    SCOPED_TRACE(std::string(backend.name()) + " " + test::type_name<T>() + " " + test::describe(s) +
                 " interior " + std::to_string(n.nx) + "x" + std::to_string(n.ny) + "x" +
                 std::to_string(n.nz));
    HostField<T> in(n, 1), out(n, 1);
    test::fill_input(in, [&](int64_t i, int64_t j, int64_t k) {
      const long double x = i * static_cast<long double>(h.hx);
      const long double y = j * static_cast<long double>(h.hy);
      const long double z = k * static_cast<long double>(h.hz);
      return (x * x + y * y + z * z) / 2;
    });
    test::poison_output(out);
    const std::vector<T> before = test::snapshot(out);
    backend.apply(s, in, out);
    const double tol = kRoundoffC * kEps<T> * test::weight_norm(s) * test::max_abs_read(in);
    EXPECT_TRUE(test::interior_matches(
        out, [](int64_t, int64_t, int64_t) { return 3.0; }, tol));
    EXPECT_TRUE(test::outside_interior_unchanged(out, before));
  }
}

TEST(Exactness, LaplacianOfQuadraticIsThree) {
  for (const Backend* b : test::backends_under_test()) {
    check_laplacian_quadratic<float>(*b);
    check_laplacian_quadratic<double>(*b);
  }
}

// A polynomial of degree exactly 2R along one axis, in the scaled coordinate
//   s = (i - (n - 1)/2) / L,   L = (n - 1)/2 + R,
// which runs over [-1, 1] across the interior and the halo, so |p| <= sum |c_m| stays O(1) and no
// power of a large coordinate swamps the round-off. In physical units x = i h, s = (x - x_c) /
// (L h), hence p''(x) = q(s) / (L h)^2 with q = sum_m m (m-1) c_m s^(m-2). Everything is
// evaluated in long double, so the field carries only its final rounding to T.
struct AxisPolynomial {
  std::vector<long double> c;  // c[m], m = 0..2R
  long double centre = 0, half_width = 1, h = 1;

  long double s(int64_t i) const { return (i - centre) / half_width; }
  long double value(int64_t i) const {
    long double p = 0;
    for (size_t m = c.size(); m-- > 0;) p = p * s(i) + c[m];
    return p;
  }
  long double second_derivative(int64_t i) const {
    long double q = 0;
    for (size_t m = c.size(); m-- > 2;) q = q * s(i) + static_cast<long double>(m) * (m - 1) * c[m];
    return q / (half_width * half_width * h * h);
  }
};

AxisPolynomial random_polynomial(std::mt19937_64& gen, int degree, int64_t n, int radius, double h) {
  std::uniform_real_distribution<double> coef(-1.0, 1.0), lead(0.5, 1.0);
  AxisPolynomial p;
  p.c.resize(static_cast<size_t>(degree) + 1);
  for (int m = 0; m < degree; ++m) p.c[static_cast<size_t>(m)] = coef(gen);
  // Degree exactly 2R: the leading coefficient is bounded away from zero.
  const double sign = (gen() & 1) ? 1.0 : -1.0;  // drawn first: a fixed draw order
  p.c[static_cast<size_t>(degree)] = sign * lead(gen);
  p.centre = (n - 1) / 2.0L;
  p.half_width = (n - 1) / 2.0L + radius;
  p.h = h;
  return p;
}

// u = px(x) py(y) pz(z): a product, not a sum, so that d2x u = px'' py pz depends on j and k and
// a stencil that reads a neighbouring line or plane cannot pass.
template <class T>
void check_polynomial(const Backend& backend, const test::OpCase c, uint64_t seed) {
  const Spacing h{0.7, 1.3, 0.45};
  const Stencil s{c.op, c.radius, h};
  const Extents n{9, 8, 7};
  SCOPED_TRACE(std::string(backend.name()) + " " + test::type_name<T>() + " " + test::describe(s) + " seed " +
               std::to_string(seed));
  std::mt19937_64 gen(seed);
  const int degree = 2 * c.radius;
  const AxisPolynomial px = random_polynomial(gen, degree, n.nx, c.radius, h.hx);
  const AxisPolynomial py = random_polynomial(gen, degree, n.ny, c.radius, h.hy);
  const AxisPolynomial pz = random_polynomial(gen, degree, n.nz, c.radius, h.hz);

  HostField<T> in(n, c.radius), out(n, c.radius);
  test::fill_input(in,
                   [&](int64_t i, int64_t j, int64_t k) { return px.value(i) * py.value(j) * pz.value(k); });
  test::poison_output(out);
  const std::vector<T> before = test::snapshot(out);
  backend.apply(s, in, out);

  const auto axes = test::axes_of(c.op);
  const auto exact = [&](int64_t i, int64_t j, int64_t k) {
    long double d = 0;
    if (axes[0]) d += px.second_derivative(i) * py.value(j) * pz.value(k);
    if (axes[1]) d += px.value(i) * py.second_derivative(j) * pz.value(k);
    if (axes[2]) d += px.value(i) * py.value(j) * pz.second_derivative(k);
    return static_cast<double>(d);
  };
  const double tol = kRoundoffC * kEps<T> * test::weight_norm(s) * test::max_abs_read(in);
  EXPECT_TRUE(test::interior_matches(out, exact, tol));
  EXPECT_TRUE(test::outside_interior_unchanged(out, before));
  EXPECT_TRUE(test::interior_not_all_zero(out));
}

TEST(Exactness, PolynomialOfDegreeTwoRHasExactSecondDerivative) {
  const uint64_t base_seed = test::announce_seed(20240611, "Exactness polynomial coefficients");
  for (const Backend* b : test::backends_under_test()) {
    uint64_t seed = base_seed;
    for (const test::OpCase c : test::all_op_cases()) {
      ++seed;  // one seed per case, the same for every backend and type
      check_polynomial<float>(*b, c, seed);
      check_polynomial<double>(*b, c, seed);
    }
  }
}

// The seismic posts' check, now asserted: u = i + j + k (linear, so every second derivative is
// zero). Small integers are exact in float, and the weights sum to zero only up to rounding, so
// the result is round-off around zero.
TEST(Exactness, LinearFieldHasZeroSecondDerivative) {
  for (const Backend* b : test::backends_under_test())
    for (const test::OpCase c : test::all_op_cases()) {
      const Stencil s{c.op, c.radius, Spacing{1.0, 1.0, 1.0}};
      SCOPED_TRACE(std::string(b->name()) + " " + test::describe(s));
      const Extents n{11, 6, 5};
      HostField<float> in(n, c.radius), out(n, c.radius);
      test::fill_input(in, [](int64_t i, int64_t j, int64_t k) { return double(i + j + k); });
      test::poison_output(out);
      b->apply(s, in, out);
      const double tol = kRoundoffC * kEps<float> * test::weight_norm(s) * test::max_abs_read(in);
      EXPECT_TRUE(test::interior_matches(
          out, [](int64_t, int64_t, int64_t) { return 0.0; }, tol));
    }
}

}  // namespace
}  // namespace fdstencil
