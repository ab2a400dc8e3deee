// The time step: the stability limit against a von Neumann analysis done here from the stencil's
// weights, its refusal when exceeded (with the limit in the message), long runs that stay
// bounded at the default step and near the limit, and the sampling an order needs.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <regex>
#include <string>
#include <vector>

#include "fdstencil/coefficients.hpp"
#include "fdstencil/wave.hpp"
#include "test_util.hpp"
#include "wave/wave_test_util.hpp"

using namespace fdstencil;
using test::kPi;
using test::report;

namespace {

// -(symbol) of the unit-spacing second derivative of radius R at k h = theta.
double minus_symbol(const std::vector<double>& w, int R, double theta) {
  double s = w[size_t(R)];
  for (int r = 1; r <= R; ++r) s += 2 * w[size_t(R + r)] * std::cos(r * theta);
  return -s;
}

// The numbers written in a message (any notation).
std::vector<double> numbers_in(const std::string& text) {
  static const std::regex number(R"([-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?)");
  std::vector<double> out;
  for (auto it = std::sregex_iterator(text.begin(), text.end(), number); it != std::sregex_iterator(); ++it)
    out.push_back(std::stod(it->str()));
  return out;
}

wave::Options point_shot(int dim, int64_t n, double h, int64_t nt) {
  wave::Options o;
  o.backend = "cpu";
  o.nt = nt;
  const double c = double(n / 2) * h;
  o.sources = {{{c, dim == 3 ? c : 0.0, c}, {}}};
  o.receivers = {{c, dim == 3 ? c : 0.0, c}};
  return o;
}

}  // namespace

// Leapfrog on u_tt = v^2 u_xx' (x' along each of dim axes): a Fourier mode grows unless
// (v dt / h)^2 dim s <= 4, where s = max over theta of -symbol(theta). s is found here by a scan
// of theta (not assumed to sit at Nyquist), from the weights central_weights gives.
TEST(WaveStability, MaxStableDtMatchesVonNeumann) {
  const double h = 7.5, v = 3100;
  for (int R = 1; R <= 8; ++R) {
    const auto w = central_weights(2, R);
    double s = 0;
    for (int q = 0; q <= 4000; ++q) s = std::max(s, minus_symbol(w, R, kPi * q / 4000));
    for (int dim : {2, 3}) {
      const double want = 2 * h / (v * std::sqrt(dim * s));
      const double got = wave::max_stable_dt(dim, R, h, v);
      EXPECT_NEAR(got / want, 1.0, 1e-12) << "dim " << dim << " R " << R;
    }
    // dt scales as 1 / sqrt(dim): the 3D limit is sqrt(2/3) of the 2D one.
    EXPECT_NEAR(wave::max_stable_dt(3, R, h, v) / wave::max_stable_dt(2, R, h, v), std::sqrt(2.0 / 3.0),
                1e-12);
    // and as h / v.
    EXPECT_NEAR(wave::max_stable_dt(2, R, 2 * h, v) / wave::max_stable_dt(2, R, h, 2 * v), 4.0, 1e-12);
    if (R == 1) {
      EXPECT_NEAR(s, 4.0, 1e-12) << "the 3-point stencil's symbol peaks at 4";
    }
  }
}

// The phase velocity of order 2R at G points per wavelength is sqrt(-symbol(2 pi / G)) / (2 pi / G)
// (h = 1): the figure points_per_wavelength_needed claims must hold it within 1 %, a coarser
// sampling must not, and the figure must fall as R rises.
TEST(WaveStability, PointsPerWavelengthNeededHoldsOnePercentAndFallsWithR) {
  double previous = 1e300;
  for (int R = 1; R <= 8; ++R) {
    const auto w = central_weights(2, R);
    const auto error = [&](double ppw) {
      const double theta = 2 * kPi / ppw;
      return std::abs(std::sqrt(minus_symbol(w, R, theta)) / theta - 1);
    };
    const double g = wave::points_per_wavelength_needed(R);
    report("ppw_needed_r" + std::to_string(R), g);
    EXPECT_LE(error(g), 0.01 + 1e-9) << "R " << R;
    EXPECT_GT(error(g - 0.05), 0.01) << "R " << R << ": a coarser sampling also holds 1 %";
    EXPECT_LT(g, previous) << "R " << R;
    previous = g;
  }
}

TEST(WaveStability, DtAboveTheLimitIsRefusedWithTheLimitInTheMessage) {
  const double h = 10;
  for (int dim : {2, 3})
    for (int R : {1, 4, 8}) {
      // Layered, so the limit must come from the fastest layer, not the first.
      const int64_t n = 12;
      const wave::Model m = wave::Model::layered(dim, n, dim == 3 ? n : 1, n, h,
                                                 {{0.0, 1500.f}, {50.0, 3200.f}, {90.0, 2500.f}});
      const double limit = wave::max_stable_dt(dim, R, h, 3200);
      wave::Options o = point_shot(dim, n, h, 2);
      o.radius = R;
      o.boundary.cpml_width = 4;
      o.sources[0].wavelet = {1.0, 0.0};
      o.dt = 1.01 * limit;
      std::string message;
      EXPECT_TRUE(test::throws_error([&] { wave::run(m, o); }, ErrorKind::invalid_argument, {"stab"}))
          << "dim " << dim << " R " << R;
      try {
        wave::run(m, o);
      } catch (const Error& e) {
        message = e.what();
      }
      bool named = false;
      for (double x : numbers_in(message)) named = named || std::abs(x / limit - 1) < 1e-5;
      EXPECT_TRUE(named) << "the message does not give the limit " << limit << ": " << message;
      // Just below the limit is accepted, and the result reports the limit.
      o.dt = 0.99 * limit;
      const wave::Result r = wave::run(m, o);
      EXPECT_NEAR(r.dt_limit / limit, 1.0, 1e-12);
      EXPECT_DOUBLE_EQ(r.dt, o.dt);
    }
}

namespace {

// max |u| over snapshots of the early steps (the wave inside the model), at half time and in the
// final field.
struct Bounded {
  double early = 0, half = 0, final = 0;
  bool finite = true;
};

Bounded long_run(int radius, bool free_surface, double cfl_safety, int width, int64_t nt) {
  const int64_t n = 40;
  const double h = 10, v = 2000, f0 = 15;
  wave::Options o = point_shot(2, n, h, nt);
  o.radius = radius;
  o.cfl_safety = cfl_safety;  // dt = 0: the default step, this fraction of the limit
  o.boundary.cpml_width = width;
  o.boundary.free_surface = free_surface;
  const double dt = cfl_safety * wave::max_stable_dt(2, radius, h, v);
  o.sources[0].wavelet = wave::ricker(f0, 1.5 / f0, dt, int64_t(std::ceil(3 / f0 / dt)));
  for (int64_t s = 5; s <= 80; s += 5) o.snapshot_steps.push_back(s);
  o.snapshot_steps.push_back(nt / 2);
  Bounded b;
  const auto max_abs = [](const std::vector<float>& u, bool& finite) {
    double m = 0;
    for (float x : u) {
      finite = finite && std::isfinite(x);
      m = std::max(m, double(std::abs(x)));
    }
    return m;
  };
  o.on_snapshot = [&](const wave::Snapshot& s) {
    (s.step == nt / 2 ? b.half : b.early) =
        std::max(s.step == nt / 2 ? b.half : b.early, max_abs(s.field, b.finite));
  };
  const wave::Result r = wave::run(wave::Model::constant(2, n, 1, n, h, float(v)), o);
  EXPECT_NEAR(r.dt / r.dt_limit, cfl_safety, 1e-12);
  b.final = max_abs(r.final_field, b.finite);
  return b;
}

}  // namespace

// 10,000 steps (~20 s of a wave that crosses the 400 m model in 0.2 s), at the default step and
// at 0.99 of the limit, with the CPML on every face (the default width, and 20 points, the default
// before issue 35) and with the free surface on top. The field
// must stay finite and below its early peak; and since the wave has long left through the CPML
// by half time, what is left must not grow from there to the end: an unstable mode (of the
// interior, the CPML's recursions or the free surface) grows exponentially and shows there long
// before it overflows.
TEST(WaveStability, TenThousandStepsStayBounded) {
  struct Case {
    int radius;
    bool free_surface;
    double cfl_safety;
    int width;
  };
  const int w = wave::Boundary{}.cpml_width;
  for (const Case c : {Case{4, false, 0.8, w}, Case{4, false, 0.8, 20}, Case{1, false, 0.8, w},
                       Case{8, true, 0.8, w}, Case{4, true, 0.99, w}}) {
    const int64_t nt = 10000;
    const Bounded b = long_run(c.radius, c.free_surface, c.cfl_safety, c.width, nt);
    const std::string t = "r" + std::to_string(c.radius) + (c.free_surface ? "_fs" : "") + "_cfl" +
                          std::to_string(int(std::lround(c.cfl_safety * 100))) + "_w" +
                          std::to_string(c.width);
    report("long_run_half_over_early_max_" + t, b.half / b.early);
    report("long_run_final_over_early_max_" + t, b.final / b.early);
    EXPECT_TRUE(b.finite) << t;
    EXPECT_GT(b.early, 0) << t;
    EXPECT_LT(b.final, b.early) << t;
    EXPECT_LE(b.final, b.half) << t << ": max |u| grew from " << b.half << " at step " << nt / 2 << " to "
                               << b.final << " at step " << nt << ", long after the wave had left";
  }
}
