// The solver against the analytic Green's functions of a homogeneous medium (wave.hpp's source
// scaling, wave::analytic_trace): 3D and 2D, source and receivers on the grid and off it (Hicks,
// trilinear), and the misfit falling as the order 2R rises. Every comparison stops before a wave
// mirrored across any face of the computational box (model + CPML) could reach the receiver, so
// what is compared is the discretisation alone, not the absorbing layer's reflection.
//
// The figures each test measures are printed ("[ measured ]") and recorded as test properties;
// the thresholds are those figures with a margin, chosen from a run of these tests.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <string>
#include <vector>

#include "fdstencil/wave.hpp"
#include "wave/wave_test_util.hpp"

using namespace fdstencil;
using test::relative_l2;
using test::report;
using test::ricker_at;

namespace {

// The Ricker's delay: at t = 0 the wavelet is 2e-5 of its peak, so the run starts from rest to
// that level. 1.1 / f0 after the peak it is below 2e-4 of it: 2.3 / f0 holds all of the wavelet
// that matters at a 1 % tolerance.
double delay_for(double f0) { return 1.2 / f0; }
double wavelet_length(double f0) { return 2.3 / f0; }

double distance(int dim, const wave::Point& a, const wave::Point& b) {
  const double dz = a.z - b.z, dy = dim == 3 ? a.y - b.y : 0.0, dx = a.x - b.x;
  return std::sqrt(dz * dz + dy * dy + dx * dx);
}

double coord(const wave::Point& p, int axis) { return axis == 0 ? p.x : axis == 1 ? p.y : p.z; }
void set_coord(wave::Point& p, int axis, double v) { (axis == 0 ? p.x : axis == 1 ? p.y : p.z) = v; }

// The earliest time a wave from `s` could come back to `r` from a face of the computational box:
// `s` mirrored across each face, the nearest image's distance over v. The face is taken R points
// inside the outermost computational point (axis a runs from -lo[a] to model_n - 1 + hi[a]),
// because the stencil starts reading the zero halo there.
double reflection_time(const wave::Domain& d, double h, const wave::Point& s, const wave::Point& r,
                       double v) {
  const int64_t model_n[3] = {d.model_nx, d.model_ny, d.model_nz};
  double nearest = 1e300;
  for (int axis = 0; axis < 3; ++axis) {
    if (d.dim == 2 && axis == 1) continue;
    const double faces[2] = {double(-d.lo[axis] + d.radius) * h,
                             double(model_n[axis] - 1 + d.hi[axis] - d.radius) * h};
    for (double face : faces) {
      wave::Point image = s;
      set_coord(image, axis, 2 * face - coord(s, axis));
      nearest = std::min(nearest, distance(d.dim, image, r));
    }
  }
  return nearest / v;
}

// wave::analytic_trace at the run's dt. In 2D it is computed finer (by a power of two, until
// f0 dt <= 0.004) and subsampled: its quadrature errs by ~7e-4 (relative L2) at f0 dt = 0.026
// and ~2.5e-4 at the 0.013 of the tests at 0.4 of the limit, a tenth of the misfits measured
// here; at 0.004 it is ~3e-5. (3D is a closed form.)
std::vector<double> reference_trace(int dim, double r, double v, double f0,
                                    const std::function<double(double)>& f, double dt, int64_t n) {
  if (dim == 3) return wave::analytic_trace(3, r, v, f, dt, n);
  int64_t refine = 1;
  while (f0 * dt / double(refine) > 0.004) refine *= 2;
  const auto fine = wave::analytic_trace(2, r, v, f, dt / double(refine), n * refine);
  std::vector<double> out(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) out[size_t(i)] = fine[size_t(i * refine)];
  return out;
}

// One shot in a homogeneous model: a Ricker at `src`, a trace at each of `recs`.
struct Shot {
  int dim = 3, radius = 4;
  int64_t nz = 0, ny = 1, nx = 0;
  double h = 10, v = 2000, f0 = 12;
  // The step as a fraction of max_stable_dt. At the default 0.8 the leapfrog's time dispersion
  // alone gives ~2.7 % over two wavelengths in this geometry (measured in 2D: 2.7 % at 0.8, 0.68 %
  // at 0.4, 0.20 % at 0.2; R = 4's spatial error at 6 points per wavelength is smaller), so the
  // 1 % target is tested at 0.4.
  double cfl = 0.4;
  int cpml = 20;
  bool double_precision = false;
  wave::Interpolation interpolation = wave::Interpolation::hicks;
  wave::Point src;
  std::vector<wave::Point> recs;
  int64_t min_window = 0;  // compare at most this many steps when > 0 (a window shared by several runs)
};

struct Outcome {
  std::vector<double> misfit;   // per receiver, relative L2 over its window
  std::vector<int64_t> window;  // the steps compared per receiver
  double ppw = 0;               // points per wavelength at the highest significant frequency
  double dt = 0;
};

// Steps before the first possible reflection at each receiver.
std::vector<int64_t> windows_of(const Shot& s, double dt) {
  wave::Boundary b;
  b.cpml_width = s.cpml;
  const wave::Domain d = wave::Domain::make(s.dim, s.radius, s.nz, s.ny, s.nx, b);
  std::vector<int64_t> w;
  for (const wave::Point& r : s.recs) {
    int64_t n = int64_t(std::floor(reflection_time(d, s.h, s.src, r, s.v) / dt));
    if (s.min_window > 0) n = std::min(n, s.min_window);
    w.push_back(n);
  }
  return w;
}

double dt_of(const Shot& s) { return s.cfl * wave::max_stable_dt(s.dim, s.radius, s.h, s.v); }

Outcome measure(const Shot& s) {
  Outcome out;
  out.dt = dt_of(s);
  out.window = windows_of(s, out.dt);
  const int64_t nt = *std::max_element(out.window.begin(), out.window.end());
  const double delay = delay_for(s.f0);

  wave::Options o;
  o.backend = "cpu";
  o.radius = s.radius;
  o.dt = out.dt;
  o.nt = nt;
  o.boundary.cpml_width = s.cpml;
  o.interpolation = s.interpolation;
  o.double_precision = s.double_precision;
  o.sources.push_back({s.src, wave::ricker(s.f0, delay, out.dt, nt)});
  o.receivers = s.recs;
  out.ppw = s.v / (wave::highest_significant_frequency(o.sources[0].wavelet, out.dt) * s.h);

  const wave::Model model = wave::Model::constant(s.dim, s.nz, s.ny, s.nx, s.h, float(s.v));
  const wave::Result res = wave::run(model, o);
  std::printf("  %dD R=%d %s: %lld steps of %lld points in %.2f s\n", s.dim, s.radius,
              s.double_precision ? "double" : "float", static_cast<long long>(nt),
              static_cast<long long>(res.domain.points()), res.timing.loop_s);
  EXPECT_EQ(res.backend, "cpu");
  EXPECT_EQ(res.nt, nt);
  EXPECT_DOUBLE_EQ(res.dt, out.dt);
  EXPECT_EQ(res.traces.size(), s.recs.size() * size_t(nt));
  if (res.traces.size() != s.recs.size() * size_t(nt)) {
    out.misfit.assign(s.recs.size(), 1e300);
    return out;
  }
  for (size_t i = 0; i < s.recs.size(); ++i) {
    const double r = distance(s.dim, s.src, s.recs[i]);
    const auto want = reference_trace(
        s.dim, r, s.v, s.f0, [&](double t) { return ricker_at(s.f0, delay, t); }, out.dt, out.window[i]);
    const float* got = res.traces.data() + i * size_t(nt);
    bool finite = true;
    for (int64_t n = 0; n < out.window[i]; ++n) finite = finite && std::isfinite(got[n]);
    EXPECT_TRUE(finite) << "receiver " << i << " has non-finite samples";
    out.misfit.push_back(finite ? relative_l2(got, want) : 1e300);
  }
  return out;
}

// The window must hold the whole direct wavelet, else the misfit would judge only part of it.
void expect_window_holds_direct_wave(const Shot& s, const Outcome& o) {
  for (size_t i = 0; i < s.recs.size(); ++i) {
    const double end = distance(s.dim, s.src, s.recs[i]) / s.v + wavelet_length(s.f0);
    EXPECT_GT(double(o.window[i]) * o.dt, end)
        << "receiver " << i << ": the geometry leaves too short a window";
  }
}

// A homogeneous box of 2000 m/s at h = 10 m; a source and receivers 17 and 34 points (1.02 and
// 2.04 dominant wavelengths) away along x; the box (model + CPML) just large enough that no
// image source's wavelet can reach the far receiver before the direct one has passed (the
// 3D run is the costliest of the suite: 467k points x 410 steps).
Shot cube_shot(int dim) {
  Shot s;
  s.dim = dim;
  s.nz = 35;
  s.ny = dim == 3 ? 35 : 1;
  s.nx = 43;
  s.f0 = 12;  // highest significant frequency 2.76 f0 = 33 Hz: 6.04 points per wavelength
  const double c = 17 * s.h, a = 4 * s.h;
  s.src = {c, dim == 3 ? c : 0.0, a};
  s.recs = {{c, dim == 3 ? c : 0.0, a + 17 * s.h}, {c, dim == 3 ? c : 0.0, a + 34 * s.h}};
  return s;
}

// The same cube with the source and receivers off the grid by fractions of h on every axis.
Shot off_grid(Shot s, wave::Interpolation interp) {
  s.interpolation = interp;
  const bool y = s.dim == 3;
  s.src = {s.src.z + 0.37 * s.h, y ? s.src.y - 0.23 * s.h : 0.0, s.src.x + 0.41 * s.h};
  for (size_t i = 0; i < s.recs.size(); ++i)
    s.recs[i] = {s.recs[i].z - 0.29 * s.h, y ? s.recs[i].y + 0.44 * s.h : 0.0,
                 s.recs[i].x - 0.18 * s.h - 0.5 * s.h * double(i)};
  return s;
}

std::string tag(const Shot& s, const std::string& what) {
  return std::to_string(s.dim) + "d_r" + std::to_string(s.radius) + "_" + what;
}

}  // namespace

// --- on the grid -------------------------------------------------------------------------------

TEST(WaveAnalytic, Homogeneous3DOnGridR4WithinOnePercent) {
  const Shot s = cube_shot(3);
  const Outcome o = measure(s);
  report("3d_ppw_at_fmax", o.ppw);
  ASSERT_GE(o.ppw, 6.0) << "the test's own premise: >= 6 points per wavelength";
  expect_window_holds_direct_wave(s, o);
  // Measured 0.27 % (1 wavelength) and 0.55 % (2 wavelengths).
  for (size_t i = 0; i < s.recs.size(); ++i) {
    report(tag(s, "on_grid_misfit_rec" + std::to_string(i)), o.misfit[i]);
    EXPECT_LE(o.misfit[i], 0.01) << "receiver " << i << " over " << o.window[i] << " steps";
  }
}

TEST(WaveAnalytic, Homogeneous2DOnGridR4WithinOnePercent) {
  Shot s = cube_shot(2);
  s.double_precision = true;
  const Outcome o = measure(s);
  report("2d_ppw_at_fmax", o.ppw);
  ASSERT_GE(o.ppw, 6.0);
  expect_window_holds_direct_wave(s, o);
  // Measured 0.32 % and 0.64 %.
  for (size_t i = 0; i < s.recs.size(); ++i) {
    report(tag(s, "on_grid_misfit_rec" + std::to_string(i)), o.misfit[i]);
    EXPECT_LE(o.misfit[i], 0.01) << "receiver " << i << " over " << o.window[i] << " steps";
  }
}

// --- off the grid ------------------------------------------------------------------------------

TEST(WaveAnalytic, Homogeneous3DOffGridHicksWithinOnePercent) {
  const Shot s = off_grid(cube_shot(3), wave::Interpolation::hicks);
  const Outcome o = measure(s);
  expect_window_holds_direct_wave(s, o);
  // Measured 0.30 % and 0.54 %: Hicks costs nothing measurable against the on-grid run.
  for (size_t i = 0; i < s.recs.size(); ++i) {
    report(tag(s, "hicks_misfit_rec" + std::to_string(i)), o.misfit[i]);
    EXPECT_LE(o.misfit[i], 0.01) << "receiver " << i << " over " << o.window[i] << " steps";
  }
}

// Trilinear beside Hicks in 2D (in 3D the pair would cost two more of the suite's largest runs).
TEST(WaveAnalytic, Homogeneous2DOffGridHicksWithinOnePercentAndBeatsTrilinear) {
  Shot base = cube_shot(2);
  base.double_precision = true;
  const Shot hicks = off_grid(base, wave::Interpolation::hicks);
  const Shot tri = off_grid(base, wave::Interpolation::trilinear);
  const Outcome oh = measure(hicks), ot = measure(tri);
  expect_window_holds_direct_wave(hicks, oh);
  for (size_t i = 0; i < hicks.recs.size(); ++i) {
    report(tag(hicks, "hicks_misfit_rec" + std::to_string(i)), oh.misfit[i]);
    report(tag(tri, "trilinear_misfit_rec" + std::to_string(i)), ot.misfit[i]);
    EXPECT_LE(oh.misfit[i], 0.01) << "Hicks, receiver " << i;
    // Linear interpolation of a field at 6 points per shortest wavelength errs by ~(kh)^2 / 8
    // at the source and again at the receiver: measured 9.8x and 6.3x Hicks's misfit (3.3 % and
    // 3.9 % against 0.34 % and 0.62 %), a clear margin, so the ordering is asserted at 3x.
    EXPECT_GT(ot.misfit[i], 3 * oh.misfit[i]) << "receiver " << i;
  }
}

// --- the order ---------------------------------------------------------------------------------

// At ~4 points per shortest wavelength the spatial error dominates: one small dt for every order
// (10 % of R = 4's limit, the smallest of the three) keeps the leapfrog's time error below
// R = 4's spatial error, so the misfit must fall as R rises.
TEST(WaveAnalytic, MisfitFallsAsTheOrderRises2D) {
  Shot base;
  base.dim = 2;
  base.nz = 41;
  base.nx = 49;
  base.f0 = 18;
  base.double_precision = true;
  base.src = {20 * base.h, 0, 7 * base.h};
  base.recs = {{20 * base.h, 0, 41 * base.h}};
  const double dt = 0.1 * wave::max_stable_dt(2, 4, base.h, base.v);
  const int radii[] = {1, 2, 4};
  // One window for every order: the shortest (R = 4 moves the conservative face the furthest in).
  int64_t window = int64_t(1) << 40;
  for (int R : radii) {
    Shot s = base;
    s.radius = R;
    window = std::min(window, windows_of(s, dt).front());
  }
  std::vector<double> misfit;
  for (int R : radii) {
    Shot s = base;
    s.radius = R;
    s.cfl = dt / wave::max_stable_dt(2, R, s.h, s.v);
    s.min_window = window;
    const Outcome o = measure(s);
    if (R == 1) report("2d_order_test_ppw_at_fmax", o.ppw);
    report("2d_coarse_misfit_r" + std::to_string(R), o.misfit[0]);
    misfit.push_back(o.misfit[0]);
  }
  // Measured 46 %, 4.8 % and 0.16 %: ratios of 9.6 and 29, asserted at about a third of each.
  EXPECT_GT(misfit[0], 3 * misfit[1]) << "R = 1 vs R = 2";
  EXPECT_GT(misfit[1], 9 * misfit[2]) << "R = 2 vs R = 4";
}
