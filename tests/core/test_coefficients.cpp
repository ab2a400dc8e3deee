// Central finite-difference weights (central_weights, fornberg_weights) and the per-axis
// operator weights built from them (stencil_weights, op_axes): the published values for
// R = 1..4, the moment conditions that define the weights for every R = 1..8, the 1/h and 1/h^2
// scaling, and the rejection of radii, derivatives and spacings outside the domain.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <numbers>
#include <vector>

#include "fdstencil/coefficients.hpp"
#include "fdstencil/error.hpp"
#include "fdstencil/stencil.hpp"
#include "test_util.hpp"

namespace fdstencil {
namespace {

using test::throws_error;

constexpr double kEps = std::numeric_limits<double>::epsilon();

// Expands the published half stencil (offsets -R..0) to all 2R+1 weights: symmetric for the
// second derivative, antisymmetric (centre 0) for the first.
std::vector<double> expand(const std::vector<double>& half, bool antisymmetric) {
  const int r = static_cast<int>(half.size()) - 1;
  std::vector<double> w(2 * r + 1);
  for (int n = 0; n <= r; ++n) {
    w[n] = half[n];
    w[2 * r - n] = antisymmetric ? -half[n] : half[n];
  }
  return w;
}

void expect_weights(const std::vector<double>& got, const std::vector<double>& want, double tol) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t n = 0; n < want.size(); ++n)
    EXPECT_NEAR(got[n], want[n], tol) << "offset " << static_cast<int>(n) - static_cast<int>(want.size() / 2);
}

// The seeds' published second-derivative weights (the values the posts' kernels hard-code).
TEST(CentralWeights, SecondDerivativeMatchesPublishedValues) {
  const std::vector<std::vector<double>> half = {
      {1.0, -2.0},
      {-1.0 / 12, 4.0 / 3, -5.0 / 2},
      {1.0 / 90, -3.0 / 20, 3.0 / 2, -49.0 / 18},
      {-1.0 / 560, 8.0 / 315, -1.0 / 5, 8.0 / 5, -205.0 / 72},
  };
  for (int r = 1; r <= 4; ++r) {
    SCOPED_TRACE("R=" + std::to_string(r));
    expect_weights(central_weights(2, r), expand(half[r - 1], false), 1e-15);
  }
}

// The standard central first-derivative weights.
TEST(CentralWeights, FirstDerivativeMatchesStandardValues) {
  const std::vector<std::vector<double>> half = {
      {-1.0 / 2, 0.0},
      {1.0 / 12, -2.0 / 3, 0.0},
      {-1.0 / 60, 3.0 / 20, -3.0 / 4, 0.0},
      {1.0 / 280, -4.0 / 105, 1.0 / 5, -4.0 / 5, 0.0},
  };
  for (int r = 1; r <= 4; ++r) {
    SCOPED_TRACE("R=" + std::to_string(r));
    expect_weights(central_weights(1, r), expand(half[r - 1], true), 1e-15);
  }
}

TEST(CentralWeights, HasTwoRPlusOneWeightsWithTheRightSymmetry) {
  for (int d = 1; d <= 2; ++d)
    for (int r = 1; r <= kMaxRadius; ++r) {
      SCOPED_TRACE("derivative " + std::to_string(d) + " R=" + std::to_string(r));
      const std::vector<double> w = central_weights(d, r);
      ASSERT_EQ(w.size(), static_cast<size_t>(2 * r + 1));
      // Fornberg's recurrence on symmetric nodes gives exactly (anti)symmetric weights up to
      // the final rounding; allow one ulp-scale difference.
      for (int n = 0; n < r; ++n) {
        const double mirrored = d == 2 ? w[2 * r - n] : -w[2 * r - n];
        EXPECT_NEAR(w[n], mirrored, 4 * kEps * std::abs(w[n])) << "offset " << n - r;
      }
      if (d == 1) {
        EXPECT_NEAR(w[r], 0.0, 4 * kEps) << "the first derivative's centre weight";
      }
      // The second-derivative weights alternate in sign, starting negative at the centre: that
      // makes sum|w| = |symbol(pi)| < pi^2, the bound the round-off tolerances rely on.
      if (d == 2) {
        double sum_abs = 0.0;
        for (int n = 0; n <= 2 * r; ++n) {
          EXPECT_EQ(w[n] < 0, (n - r) % 2 == 0) << "sign at offset " << n - r;
          sum_abs += std::abs(w[n]);
        }
        EXPECT_LT(sum_abs, std::numbers::pi * std::numbers::pi);
      }
    }
}

// The derivative of a constant is zero: the weights sum to zero. Each weight is rounded once to
// double (error <= eps/2 |w|) and the sum is taken in long double, so the residual is bounded by
// about eps/2 * sum|w|; 8 eps leaves room for a last-bit difference in Fornberg's long double.
TEST(CentralWeights, WeightsSumToZero) {
  for (int d = 1; d <= 2; ++d)
    for (int r = 1; r <= kMaxRadius; ++r) {
      const std::vector<double> w = central_weights(d, r);
      long double sum = 0, sum_abs = 0;
      for (double x : w) {
        sum += x;
        sum_abs += std::abs(static_cast<long double>(x));
      }
      EXPECT_LE(std::abs(static_cast<double>(sum)), 8 * kEps * static_cast<double>(sum_abs))
          << "derivative " << d << " R=" << r << " sum " << static_cast<double>(sum);
    }
}

// The defining property: the radius-R stencil differentiates x^k exactly for every k <= 2R.
// On the integer nodes -R..R, sum_r w_r r^k must be k! when k is the derivative, else 0. The
// moments are summed in long double; the residual comes from rounding each weight (eps/2
// relative), so the tolerance is a few eps times sum_r |w_r| |r|^k.
TEST(CentralWeights, DifferentiatesPolynomialsUpToDegreeTwoRExactly) {
  for (int d = 1; d <= 2; ++d)
    for (int r = 1; r <= kMaxRadius; ++r) {
      const std::vector<double> w = central_weights(d, r);
      ASSERT_EQ(w.size(), static_cast<size_t>(2 * r + 1));
      for (int k = 0; k <= 2 * r; ++k) {
        long double moment = 0, scale = 0;
        for (int n = -r; n <= r; ++n) {
          const long double rk = std::pow(static_cast<long double>(n), k);
          moment += w[n + r] * rk;
          scale += std::abs(w[n + r] * rk);
        }
        const double expected = k == d ? (d == 1 ? 1.0 : 2.0) : 0.0;
        EXPECT_NEAR(static_cast<double>(moment), expected, 8 * kEps * static_cast<double>(scale))
            << "derivative " << d << " R=" << r << " x^" << k;
      }
    }
}

// The order is exactly 2R, no more: the first moment the stencil does not reproduce is
// k = 2R + 1 (first derivative) or 2R + 2 (second; 2R + 1 vanishes by symmetry). A routine that
// returned the weights of a larger radius would reproduce it and fail here.
TEST(CentralWeights, OrderIsExactlyTwoR) {
  for (int d = 1; d <= 2; ++d)
    for (int r = 1; r <= kMaxRadius; ++r) {
      const std::vector<double> w = central_weights(d, r);
      const int k = d == 1 ? 2 * r + 1 : 2 * r + 2;
      long double moment = 0, scale = 0;
      for (int n = -r; n <= r; ++n) {
        const long double rk = std::pow(static_cast<long double>(n), k);
        moment += w[n + r] * rk;
        scale += std::abs(w[n + r] * rk);
      }
      EXPECT_GT(std::abs(static_cast<double>(moment)), 1e-3 * static_cast<double>(scale))
          << "derivative " << d << " R=" << r << " reproduces x^" << k;
    }
}

// Scaling by 1/h (first derivative) and 1/h^2 (second). A power-of-two h scales exactly, so
// the weights must agree bit for bit; otherwise to a couple of roundings.
TEST(CentralWeights, ScalesWithSpacing) {
  for (int d = 1; d <= 2; ++d)
    for (int r = 1; r <= kMaxRadius; ++r) {
      const std::vector<double> unit = central_weights(d, r);
      for (double h : {0.25, 0.1, 3.7, 1e-3}) {
        const std::vector<double> w = central_weights(d, r, h);
        ASSERT_EQ(w.size(), unit.size());
        const double scale = d == 1 ? 1.0 / h : 1.0 / (h * h);
        const bool exact = h == 0.25;
        for (size_t n = 0; n < w.size(); ++n) {
          const double want = unit[n] * scale;
          if (exact) {
            EXPECT_EQ(w[n], want) << "derivative " << d << " R=" << r << " h=" << h << " n=" << n;
          } else {
            EXPECT_NEAR(w[n], want, 4 * kEps * std::abs(want))
                << "derivative " << d << " R=" << r << " h=" << h << " n=" << n;
          }
        }
      }
    }
}

TEST(CentralWeights, RejectsBadInput) {
  const double inf = std::numeric_limits<double>::infinity();
  const double nan = std::numeric_limits<double>::quiet_NaN();
  for (int r : {0, 9, -1})
    EXPECT_TRUE(throws_error([&] { central_weights(2, r); }, ErrorKind::invalid_argument, {"radius"}))
        << "R=" << r;
  for (int d : {0, 3, -1})
    EXPECT_TRUE(
        throws_error([&] { central_weights(d, 2); }, ErrorKind::invalid_argument, {"derivative", "order"}))
        << "derivative " << d;
  for (double h : {0.0, -0.0, -1.0, nan, inf, -inf})
    EXPECT_TRUE(throws_error([&] { central_weights(2, 2, h); }, ErrorKind::invalid_argument,
                             {"spacing", "h =", "h=", "step"}))
        << "h=" << h;
  // The boundaries of the valid domain are accepted.
  EXPECT_NO_THROW(central_weights(1, 1, 1e-10));
  EXPECT_NO_THROW(central_weights(2, kMaxRadius));
}

// fornberg_weights on arbitrary nodes: order 0 interpolates (delta at a node), and a one-sided
// set reproduces the textbook forward difference weights.
TEST(FornbergWeights, InterpolatesAndDifferentiatesOnGeneralNodes) {
  const std::vector<double> nodes = {0.0, 1.0, 2.0};
  const auto c = fornberg_weights(0.0, nodes, 2);
  ASSERT_EQ(c.size(), 3u);
  expect_weights(c[0], {1.0, 0.0, 0.0}, 1e-15);
  expect_weights(c[1], {-1.5, 2.0, -0.5}, 1e-15);
  expect_weights(c[2], {1.0, -2.0, 1.0}, 1e-15);

  // Non-uniform nodes: the weights must reproduce x^k exactly at z for k < number of nodes.
  const std::vector<double> x = {-0.7, -0.1, 0.3, 1.1, 1.6};
  const double z = 0.2;
  const auto cw = fornberg_weights(z, x, 2);
  for (int m = 0; m <= 2; ++m)
    for (int k = 0; k < static_cast<int>(x.size()); ++k) {
      long double sum = 0, scale = 0;
      for (size_t n = 0; n < x.size(); ++n) {
        const long double xk = std::pow(static_cast<long double>(x[n]), k);
        sum += cw[m][n] * xk;
        scale += std::abs(cw[m][n] * xk);
      }
      // d^m/dx^m x^k at z.
      double want = 0.0;
      if (k >= m) {
        want = std::pow(z, k - m);
        for (int t = 0; t < m; ++t) want *= k - t;
      }
      EXPECT_NEAR(static_cast<double>(sum), want, 64 * kEps * static_cast<double>(scale) + 1e-15)
          << "m=" << m << " k=" << k;
    }
}

// stencil_weights: per axis, the central second-derivative weights over h_a^2 on the
// differentiated axes and zeros elsewhere; op_axes agrees with the operator definitions.
TEST(StencilWeights, PerAxisWeightsFollowTheOperator) {
  const Spacing h{0.5, 0.3, 1.7};
  for (const test::OpCase c : test::all_op_cases()) {
    const Stencil s{c.op, c.radius, h};
    SCOPED_TRACE(test::describe(s));
    const auto want_axes = test::axes_of(c.op);
    EXPECT_EQ(op_axes(c.op), want_axes);
    const StencilWeights sw = stencil_weights(s);
    EXPECT_EQ(sw.radius, c.radius);
    EXPECT_EQ(sw.axis, want_axes);
    const double hs[3] = {h.hx, h.hy, h.hz};
    const std::vector<double> unit = central_weights(2, c.radius);
    for (int a = 0; a < 3; ++a)
      for (int n = 0; n <= 2 * c.radius; ++n) {
        const double want = want_axes[a] ? unit[n] / (hs[a] * hs[a]) : 0.0;
        EXPECT_NEAR(sw.w[a][n], want, 4 * kEps * std::abs(want)) << "axis " << a << " tap " << n;
      }
  }
}

// The 7-point Laplacian is [1, -2, 1] / h_a^2 on each axis.
TEST(StencilWeights, Laplacian7IsTheSevenPointStencil) {
  const Spacing h{0.5, 0.25, 2.0};  // powers of two: exact
  const StencilWeights sw = stencil_weights(Stencil{Op::laplacian7, 1, h});
  const double hs[3] = {h.hx, h.hy, h.hz};
  for (int a = 0; a < 3; ++a) {
    EXPECT_EQ(sw.w[a][0], 1.0 / (hs[a] * hs[a]));
    EXPECT_EQ(sw.w[a][1], -2.0 / (hs[a] * hs[a]));
    EXPECT_EQ(sw.w[a][2], 1.0 / (hs[a] * hs[a]));
  }
}

}  // namespace
}  // namespace fdstencil
