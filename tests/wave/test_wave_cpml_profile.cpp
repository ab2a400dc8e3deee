// The CPML's coefficients (src/wave/cpml.cpp): the damping grows outwards, the recursion stays
// a contraction, and the derivatives the step uses match the coefficients' own slope.
#include <gtest/gtest.h>

#include <cmath>

#include "wave/cpml.hpp"

namespace fdstencil::wave {

TEST(WaveCpmlProfile, DefaultReflectionFallsADecadePerDoubling) {
  EXPECT_NEAR(detail::default_reflection(10), 1e-3, 1e-12);
  EXPECT_NEAR(detail::default_reflection(20), 1e-4, 1e-13);
  EXPECT_NEAR(detail::default_reflection(40), 1e-5, 1e-14);
}

TEST(WaveCpmlProfile, CoefficientsDampOutwardsAndSlopesMatch) {
  const int w = 20;
  const double h = 10, dt = 1e-3, vmax = 3000, alpha0 = M_PI * 10;
  const acoustic::PmlAxis axis{w, w, 200};
  const auto c = detail::cpml_coefficients<double>(axis, h, dt, vmax, 1e-4, alpha0);
  ASSERT_EQ(c.size(), size_t(2 * w));
  for (const auto& k : c) {
    EXPECT_GT(k.b, 0.0);
    EXPECT_LT(k.b, 1.0);  // |b| < 1: the memory variables' recursion decays
    EXPECT_LE(k.a, 0.0);
  }
  // Slot 0 is the outermost point of the low layer, slot w - 1 its innermost; the high layer runs
  // the other way. The damping (-a) is largest outside.
  EXPECT_LT(c[0].a, c[w - 1].a);
  EXPECT_LT(c[2 * w - 1].a, c[w].a);
  // The stored derivative along the axis against the centred difference of neighbouring slots.
  for (int p = 1; p + 1 < w; ++p) {
    const double slope = (c[size_t(p + 1)].a - c[size_t(p - 1)].a) / (2 * h);
    EXPECT_NEAR(c[size_t(p)].da, slope, 0.05 * std::abs(slope) + 1e-9) << "low slot " << p;
    const double slope_hi = (c[size_t(w + p + 1)].a - c[size_t(w + p - 1)].a) / (2 * h);
    EXPECT_NEAR(c[size_t(w + p)].da, slope_hi, 0.05 * std::abs(slope_hi) + 1e-9) << "high slot " << p;
  }
}

}  // namespace fdstencil::wave
