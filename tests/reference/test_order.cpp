// Order of accuracy on a smooth field. For the plane wave u = sin(kx x + ky y + kz z + phi) every
// central stencil returns exactly (1 - eps_R(theta)) times the true second derivative -k_a^2 u at
// every point, where theta = k_a h_a and eps_R(theta) = 1 + sum_r w_r cos(r theta) / theta^2 is the
// stencil's truncation error, O(theta^2R). Choosing h_a = theta / k_a on every axis gives the same
// relative error on each, so the measured max|error| / max|exact| is eps_R(theta) itself and a
// small grid suffices. Two resolutions give the observed order log(e1/e2) / log(theta1/theta2),
// which must reach 2R - 0.5, for every operator, radius and host backend.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "fdstencil/backend.hpp"
#include "fdstencil/field.hpp"
#include "fdstencil/stencil.hpp"
#include "test_util.hpp"

namespace fdstencil {
namespace {

using test::kEps;

constexpr double kWave[3] = {1.0, 1.7, 0.6};  // kx, ky, kz: distinct, so the spacings differ
constexpr double kPhase = 0.3;
const Extents kInterior{12, 12, 12};  // theta (i+j+k) spans > 6 rad: max|u| is close to 1

Stencil plane_wave_stencil(Op op, int radius, double theta) {
  return Stencil{op, radius, Spacing{theta / kWave[0], theta / kWave[1], theta / kWave[2]}};
}

// The input: kx x + ky y + kz z = theta (i + j + k) since x = i h_x = i theta / kx, and so on.
template <class T>
void fill_plane_wave(HostField<T>& in, double theta) {
  test::fill_input(in, [&](int64_t i, int64_t j, int64_t k) {
    return std::sin(static_cast<long double>(theta) * (i + j + k) + kPhase);
  });
}

template <class T>
HostField<T> apply_to_plane_wave(const Backend& backend, const Stencil& s, double theta) {
  HostField<T> in(kInterior, s.radius), out(kInterior, s.radius);
  fill_plane_wave(in, theta);
  test::poison_output(out);
  backend.apply(s, in, out);
  return out;
}

// max |got - exact| / max |exact| over the interior; NaN if any output is not finite.
template <class T>
double relative_error(const HostField<T>& out, Op op, double theta) {
  const auto axes = test::axes_of(op);
  long double k2 = 0;
  for (int a = 0; a < 3; ++a)
    if (axes[a]) k2 += static_cast<long double>(kWave[a]) * kWave[a];
  long double max_err = 0, max_exact = 0;
  bool finite = true;
  test::for_each_point(out.layout(), 0, [&](int64_t i, int64_t j, int64_t k) {
    const long double exact = -k2 * std::sin(static_cast<long double>(theta) * (i + j + k) + kPhase);
    const long double got = out.at(i, j, k);
    if (!std::isfinite(static_cast<double>(got))) finite = false;
    max_err = std::max(max_err, std::abs(got - exact));
    max_exact = std::max(max_exact, std::abs(exact));
  });
  return finite ? static_cast<double>(max_err / max_exact) : std::nan("");
}

template <class T>
void check_observed_order(const Backend& backend, Op op, int radius, double theta1, double theta2) {
  const Stencil s1 = plane_wave_stencil(op, radius, theta1);
  const Stencil s2 = plane_wave_stencil(op, radius, theta2);
  const double e1 = relative_error(apply_to_plane_wave<T>(backend, s1, theta1), op, theta1);
  const double e2 = relative_error(apply_to_plane_wave<T>(backend, s2, theta2), op, theta2);
  const double order = std::log(e1 / e2) / std::log(theta1 / theta2);
  EXPECT_GE(order, 2 * radius - 0.5) << backend.name() << " " << test::type_name<T>() << " "
                                     << test::name_of(op) << " R=" << radius << ": relative errors " << e1
                                     << " at theta=" << theta1 << ", " << e2 << " at theta=" << theta2
                                     << ", observed order " << order;
}

struct ThetaPair {
  int radius;
  double theta1, theta2;
};

// Double: the resolution pair per radius. eps_R(theta) is the exact-arithmetic relative error;
// the round-off is ~1.1e-16 * sum|w| / theta^2 relative (sum|w| < pi^2), i.e. 2e-14 at theta 0.2
// and 5e-15 at 0.4. The coarser theta1 must be in the asymptotic regime (observed order in exact
// arithmetic >= 2R - 0.5); the finer theta2 must keep eps_R a thousand times above round-off.
//   R  pair        eps(theta1)  eps(theta2)  order (exact)   why this pair
//   1  (0.4, 0.2)  1.3e-2       3.3e-3       1.99            the finest cheap pair; any works
//   2  (0.8, 0.4)  4.3e-3       2.8e-4       3.94
//   3  (0.8, 0.4)  4.2e-4       7.1e-6       5.89
//   4  (0.8, 0.4)  4.6e-5       2.0e-7       7.84
//   5  (0.8, 0.4)  5.3e-6       6.0e-9       9.79
//   6  (0.8, 0.4)  6.4e-7       1.9e-10      11.74
//   7  (0.8, 0.4)  8.0e-8       6.1e-12      13.68           (0.4, 0.2) would hit round-off
//   8  (0.8, 0.5)  1.0e-8       6.8e-12      15.55           at 0.4, eps = 2e-13 is only 40x
//                                                            round-off; at 1.0 the order < 15.5
constexpr ThetaPair kDoublePairs[] = {{1, 0.4, 0.2}, {2, 0.8, 0.4}, {3, 0.8, 0.4}, {4, 0.8, 0.4},
                                      {5, 0.8, 0.4}, {6, 0.8, 0.4}, {7, 0.8, 0.4}, {8, 0.8, 0.5}};

TEST(OrderOfAccuracy, DoubleReachesTwoR) {
  for (const Backend* b : test::backends_under_test())
    for (const test::OpCase c : test::all_op_cases()) {
      const ThetaPair p = kDoublePairs[c.radius - 1];
      ASSERT_EQ(p.radius, c.radius);
      check_observed_order<double>(*b, c.op, c.radius, p.theta1, p.theta2);
    }
}

// Float. The round-off is ~6e-8 * sum|w| / theta^2 relative, about 1e-6 at the thetas below,
// while eps_R(theta) falls as theta^2R: from R = 4 on, the truncation error drops under the
// round-off before the observed order reaches 2R - 0.5 (e.g. R = 4 needs theta <= 0.8 for order
// 7.5, where eps = 4.6e-5 and the finer theta 0.4 gives 2e-7, below round-off). So:
//  - R = 1..3: the observed order, on pairs where eps(theta2) is >= 70x the round-off:
//      R = 1 (0.4, 0.2): 3.3e-3;  R = 2 (0.8, 0.4): 2.8e-4;  R = 3 (1.2, 0.6): 7.9e-5
//    (R = 3 at (1.2, 0.6) has exact-arithmetic order 5.76; the round-off shifts it by < 0.1).
//  - R = 4..8: the float result equals the double reference result to within the round-off bound
//    C * eps_float * weight_norm * max|u|; the double tests above then carry the order.
constexpr ThetaPair kFloatPairs[] = {{1, 0.4, 0.2}, {2, 0.8, 0.4}, {3, 1.2, 0.6}};

TEST(OrderOfAccuracy, FloatReachesTwoRForSmallRadii) {
  for (const Backend* b : test::backends_under_test())
    for (const test::OpCase c : test::all_op_cases()) {
      if (c.radius > 3) continue;
      const ThetaPair p = kFloatPairs[c.radius - 1];
      ASSERT_EQ(p.radius, c.radius);
      check_observed_order<float>(*b, c.op, c.radius, p.theta1, p.theta2);
    }
}

// See the comment above kFloatPairs. C = 64 covers the worst-case summation of up to 49 terms
// plus the roundings of input, weights and result (as in test_exactness).
TEST(OrderOfAccuracy, FloatMatchesDoubleWithinRoundoffForLargeRadii) {
  constexpr double theta = 0.8;
  for (const Backend* b : test::backends_under_test())
    for (const test::OpCase c : test::all_op_cases()) {
      if (c.radius < 4) continue;
      const Stencil s = plane_wave_stencil(c.op, c.radius, theta);
      SCOPED_TRACE(std::string(b->name()) + " " + test::describe(s));
      const HostField<float> got = apply_to_plane_wave<float>(*b, s, theta);
      const HostField<double> want = apply_to_plane_wave<double>(reference_backend(), s, theta);
      HostField<float> in(kInterior, c.radius);
      fill_plane_wave(in, theta);
      const double tol = 64.0 * kEps<float> * test::weight_norm(s) * test::max_abs_read(in);
      EXPECT_TRUE(test::interior_matches(
          got, [&](int64_t i, int64_t j, int64_t k) { return want.at(i, j, k); }, tol));
      // And the float result is still a derivative to within eps_R + round-off (< 1e-4 here).
      EXPECT_LT(relative_error(got, c.op, theta), 1e-4);
    }
}

}  // namespace
}  // namespace fdstencil
