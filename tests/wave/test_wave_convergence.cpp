// The observed order of accuracy of the solver against the analytic 2D solution: the leapfrog's
// second order in time and the stencil's order 2R in space, each isolated by refining what it
// depends on. One geometry in metres for every run (a 900 m square, the source and the receiver
// 300 m apart on the grid of every spacing), compared over the same window of time: before a
// wave mirrored across the model's faces, where the CPML begins, could reach the receiver, so the
// absorbing layer's own (spacing-dependent) reflection cannot blur the rates. Double precision
// throughout: the finest errors are ~1e-4 and float round-off would show.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "fdstencil/wave.hpp"
#include "wave/wave_test_util.hpp"

using namespace fdstencil;
using test::report;

namespace {

constexpr double kV = 2000, kF0 = 10, kDelay = 1.5 / kF0;  // f0 = 10 Hz: 200 m dominant wavelength
constexpr double kSide = 900;                              // the model is kSide x kSide metres
const wave::Point kSrc{450, 0, 300}, kRec{450, 0, 600};

double source_wavelet(double t) { return test::ricker_at(kF0, kDelay, t); }

// The window: the nearest image of the source across the model's four faces, over v.
double window_seconds() {
  double nearest = 1e300;
  const auto dist = [](double z, double x) { return std::hypot(z - kRec.z, x - kRec.x); };
  for (double face : {0.0, kSide}) {
    nearest = std::min(nearest, dist(kSrc.z, 2 * face - kSrc.x));
    nearest = std::min(nearest, dist(2 * face - kSrc.z, kSrc.x));
  }
  return nearest / kV;
}

// The analytic trace is computed at 1/16 of the coarsest step: wave::analytic_trace's 2D
// quadrature errs by ~7e-4 (relative L2) at f0 dt = 0.026, falling ~3x per halving of dt,
// which would otherwise be a large part of the finest levels' misfits (~3e-4); at 1/16 it is
// ~1e-5.
constexpr int64_t kReferenceRefinement = 16;

// The misfits of a refinement sequence: level l runs with spacing h[l] and step dt[l], where
// each dt is the coarsest divided by a power of two (exactly, in floating point: the callers
// scale by powers of two), so every level has a sample at each of the coarsest level's times.
// The misfit (relative L2 over the window) is taken at those shared times: the same norm for
// every level, against one analytic trace (whose cost grows as its samples squared).
std::vector<double> misfits(const std::vector<double>& h, const std::vector<double>& dt, int radius) {
  const int64_t window = int64_t(std::floor(window_seconds() / dt[0]));
  const double r = std::hypot(kSrc.z - kRec.z, kSrc.x - kRec.x);
  const auto fine = wave::analytic_trace(2, r, kV, source_wavelet, dt[0] / double(kReferenceRefinement),
                                         window * kReferenceRefinement);
  std::vector<double> want(static_cast<size_t>(window));
  for (int64_t i = 0; i < window; ++i) want[size_t(i)] = fine[size_t(i * kReferenceRefinement)];
  std::vector<double> out;
  for (size_t l = 0; l < h.size(); ++l) {
    const int64_t stride = std::llround(dt[0] / dt[l]);
    EXPECT_EQ(double(stride) * dt[l], dt[0]) << "level " << l << ": not a power-of-two refinement in time";
    const int64_t n = int64_t(std::llround(kSide / h[l])) + 1;
    wave::Options o;
    o.backend = "cpu";
    o.double_precision = true;
    o.radius = radius;
    o.dt = dt[l];
    o.nt = window * stride;
    o.sources.push_back({kSrc, wave::ricker(kF0, kDelay, dt[l], o.nt)});
    o.receivers = {kRec};
    const wave::Result res = wave::run(wave::Model::constant(2, n, 1, n, h[l], float(kV)), o);
    if (res.traces.size() != size_t(o.nt)) {
      ADD_FAILURE() << "got " << res.traces.size() << " samples, expected " << o.nt;
      return std::vector<double>(h.size(), 1e300);
    }
    double num = 0, den = 0;
    for (int64_t i = 0; i < window; ++i) {
      const double e = double(res.traces[size_t(i * stride)]) - want[size_t(i)];
      num += e * e;
      den += want[size_t(i)] * want[size_t(i)];
    }
    out.push_back(std::sqrt(num / den));
    std::printf("  h %.4g m, dt %.4g ms, R %d: %lld steps, misfit %.4e\n", h[l], dt[l] * 1e3, radius,
                static_cast<long long>(o.nt), out.back());
  }
  return out;
}

// log2 of successive error ratios for a refinement by 2 (in h, or in dt).
std::vector<double> orders(const std::vector<double>& e) {
  std::vector<double> p;
  for (size_t i = 1; i < e.size(); ++i) p.push_back(std::log2(e[i - 1] / e[i]));
  return p;
}

}  // namespace

// (a) h and dt refined together at a fixed Courant number (half the limit), R = 1: the space and
// time errors are both O(h^2), so the total is second order.
TEST(WaveConvergence, SecondOrderInSpaceAndTimeTogetherAtR1) {
  std::vector<double> h, dt;
  for (double x : {12.5, 6.25, 3.125}) {
    h.push_back(x);
    dt.push_back(0.5 * wave::max_stable_dt(2, 1, x, kV));
  }
  const auto p = orders(misfits(h, dt, 1));
  for (size_t i = 0; i < p.size(); ++i) report("order_h_and_dt_r1_level" + std::to_string(i), p[i]);
  // 16 to 64 points per dominant wavelength: both refinements sit in the asymptotic range.
  for (double q : p) EXPECT_GT(q, 1.7);
  for (double q : p) EXPECT_LT(q, 2.3);
}

// (b) h fixed (16 points per dominant wavelength) at R = 8, whose spatial error there is far
// below the time error, dt halved twice: second order in time.
TEST(WaveConvergence, SecondOrderInTimeAtR8) {
  std::vector<double> dt;
  for (double safety : {0.8, 0.4, 0.2}) dt.push_back(safety * wave::max_stable_dt(2, 8, 12.5, kV));
  const auto p = orders(misfits({12.5, 12.5, 12.5}, dt, 8));
  for (size_t i = 0; i < p.size(); ++i) report("order_dt_r8_level" + std::to_string(i), p[i]);
  for (double q : p) EXPECT_GT(q, 1.7);
  for (double q : p) EXPECT_LT(q, 2.3);
}

// (c) R = 2, h halved twice and dt quartered each time (dt proportional to h^2, starting from a
// Courant number of 0.1 on the coarsest grid, 1/6 of R = 2's limit): the time error, O(dt^2) =
// O(h^4), then scales like the stencil's O(h^4) error and stays a fixed ~12 % of it at every
// level, so the observed rate is the spatial fourth order and no level needs a dt so small that
// the time error vanishes outright.
TEST(WaveConvergence, FourthOrderInSpaceAtR2) {
  std::vector<double> h, dt;
  const double h0 = 25, dt0 = 0.1 * h0 / kV;
  for (int level = 0; level < 3; ++level) {
    const double f = std::ldexp(1.0, -level);
    h.push_back(h0 * f);
    dt.push_back(dt0 * f * f);
  }
  const auto p = orders(misfits(h, dt, 2));
  for (size_t i = 0; i < p.size(); ++i) report("order_h_r2_level" + std::to_string(i), p[i]);
  for (double q : p) EXPECT_GT(q, 3.3);
  for (double q : p) EXPECT_LT(q, 4.7);
}
