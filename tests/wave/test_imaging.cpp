// The linearised solvers (fdstencil/imaging.hpp, issue 37) against the forward run they belong to.
// Dot-product tests: <J dv, dd> = <dv, J^T dd> for Born modelling and <F f, dd> = <f, F^T dd> for
// the map from the sources' wavelets to the traces, on random vectors, in 2D and 3D, R = 1, 4
// and 8, with a CPML on every face or a free surface on top, sources and receivers off the grid;
// relative gaps at most 1e-12 in double and 1e-5 in float (issue 37's). A Taylor test of the FWI
// gradient: the misfit's first-order remainder falls as h and its second as h^2 over three
// decades. The models are layers with smooth blobs, so the fields carry reflections.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <functional>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "fdstencil/error.hpp"
#include "fdstencil/imaging.hpp"
#include "fdstencil/wave.hpp"
#include "test_util.hpp"
#include "wave/stop_check.hpp"
#include "wave/wave_test_util.hpp"

using namespace fdstencil;
using test::report;

namespace {

constexpr double kH = 10.0;  // m

wave::Model blobby(int dim, int64_t nz, int64_t ny, int64_t nx) {
  wave::Model m = wave::Model::layered(dim, nz, ny, nx, kH, {{0.0, 1800.f}, {0.5 * double(nz) * kH, 2400.f}});
  for (int64_t k = 0; k < nz; ++k)
    for (int64_t j = 0; j < ny; ++j)
      for (int64_t i = 0; i < nx; ++i) {
        const double dz = double(k) - 0.3 * double(nz), dy = dim == 3 ? double(j) - 0.5 * double(ny) : 0.0,
                     dx = double(i) - 0.6 * double(nx);
        m.v[size_t((k * ny + j) * nx + i)] *=
            float(1 + 0.1 * std::exp(-(dz * dz + dy * dy + dx * dx) / 18.0));
      }
  m.validate();
  return m;
}

struct Case {
  int dim, radius;
  bool free_surface, double_precision;
};

std::string name_of(const testing::TestParamInfo<Case>& info) {
  const Case& c = info.param;
  return std::to_string(c.dim) + "D_R" + std::to_string(c.radius) + (c.free_surface ? "_surface" : "_cpml") +
         (c.double_precision ? "_double" : "_float");
}

wave::Model model_of(const Case& c) { return c.dim == 3 ? blobby(3, 16, 14, 18) : blobby(2, 36, 1, 44); }

// Two sources and five receivers off the grid, a 6-point CPML, 120 steps at half the limit, the
// CPML's alpha fixed (not taken from the wavelets, which the source pair's test changes).
wave::Options options_of(const Case& c, const wave::Model& m) {
  wave::Options o;
  o.radius = c.radius;
  o.double_precision = c.double_precision;
  o.backend = "cpu";
  o.nt = 120;
  o.dt = 0.5 * wave::max_stable_dt(c.dim, c.radius, kH, m.vmax());
  o.boundary.cpml_width = 6;
  o.boundary.free_surface = c.free_surface;
  o.boundary.cpml_frequency = 15;
  const double width = double(m.nx - 1) * kH, depth = double(m.nz - 1) * kH;
  const double y = c.dim == 3 ? 0.45 * double(m.ny - 1) * kH + 0.33 : 0.0;
  for (double x : {0.27, 0.64})
    o.sources.push_back({{0.37 * depth + 0.21, y, x * width + 0.37}, wave::ricker(25, 0.04, o.dt, o.nt)});
  for (double x : {0.07, 0.26, 0.45, 0.63, 0.88})
    o.receivers.push_back({0.14 * depth + 0.37, y, x * width + 0.13});
  return o;
}

// Whether model point (k, j, i) lies within 5 points of a source: inside its taps' reach. A tap's
// weight holds the m of its point rounded to float (solver.cpp's build_setup), so a small change
// of v there moves the source in steps the linearisation, which takes it as proportional to m,
// does not see.
bool near_a_source(const wave::Options& o, int64_t k, int64_t j, int64_t i) {
  for (const wave::Source& s : o.sources)
    if (std::abs(double(k) - s.at.z / kH) <= 5 && std::abs(double(j) - s.at.y / kH) <= 5 &&
        std::abs(double(i) - s.at.x / kH) <= 5)
      return true;
  return false;
}

std::vector<double> random_vector(size_t n, uint64_t seed) {
  std::mt19937_64 gen(seed);
  std::normal_distribution<double> normal;
  std::vector<double> v(n);
  for (double& x : v) x = normal(gen);
  return v;
}

double dot(const std::vector<double>& a, const std::vector<double>& b) {
  double s = 0;
  for (size_t i = 0; i < a.size(); ++i) s += a[i] * b[i];
  return s;
}

double relative_gap(double a, double b) { return std::abs(a - b) / std::max(std::abs(a), std::abs(b)); }

double norm(const std::vector<double>& a) { return std::sqrt(dot(a, a)); }

wave::RtmOptions rtm_options(wave::ImagingCondition condition, bool illumination, bool laplacian) {
  wave::RtmOptions r;
  r.condition = condition;
  r.illumination = illumination;
  r.laplacian = laplacian;
  return r;
}

// The dot-product test's gap: relative to the products themselves in double; in float relative to
// the bound |<a, b>| <= |a| |b| (Cauchy-Schwarz) of the traces' side, since float's round-off
// through the steps is relative to the traces, and random vectors' products cancel to about
// 1/sqrt(n) of that bound. Both figures are reported.
void expect_adjoint(const std::string& what, const Case& c, double lhs, double rhs, double bound) {
  const double gap = relative_gap(lhs, rhs), gap_bound = std::abs(lhs - rhs) / bound;
  report(what + "_gap_" + name_of({c, 0}), gap);
  report(what + "_gap_of_bound_" + name_of({c, 0}), gap_bound);
  EXPECT_GT(std::abs(lhs), 0.0) << "the traces must not vanish";
  if (c.double_precision)
    EXPECT_LE(gap, 1e-12) << lhs << " against " << rhs;
  else
    EXPECT_LE(gap_bound, 1e-5) << lhs << " against " << rhs << " (bound " << bound << ")";
}

class Adjoint : public testing::TestWithParam<Case> {};

TEST_P(Adjoint, BornAndItsTransposeMeetInTheDotProduct) {
  const Case c = GetParam();
  const wave::Model m = model_of(c);
  const wave::Options o = options_of(c, m);
  const auto dv = random_vector(m.v.size(), 11), dd = random_vector(o.receivers.size() * size_t(o.nt), 12);
  const auto jdv = wave::born(m, o, dv);
  const auto jtdd = wave::born_adjoint(m, o, dd);
  ASSERT_EQ(jdv.size(), dd.size());
  ASSERT_EQ(jtdd.size(), dv.size());
  expect_adjoint("born_dot", c, dot(jdv, dd), dot(dv, jtdd), norm(jdv) * norm(dd));
}

TEST_P(Adjoint, TheSourcesToTracesMapAndItsTransposeMeetInTheDotProduct) {
  const Case c = GetParam();
  const wave::Model m = model_of(c);
  wave::Options o = options_of(c, m);
  const auto f = random_vector(o.sources.size() * size_t(o.nt), 21),
             dd = random_vector(o.receivers.size() * size_t(o.nt), 22);
  for (size_t s = 0; s < o.sources.size(); ++s)
    o.sources[s].wavelet.assign(f.begin() + long(s) * o.nt, f.begin() + long(s + 1) * o.nt);
  const auto ff = wave::modelled(m, o);
  const auto ftdd = wave::source_adjoint(m, o, dd);
  ASSERT_EQ(ftdd.size(), f.size());
  expect_adjoint("source_dot", c, dot(ff, dd), dot(f, ftdd), norm(ff) * norm(dd));
}

std::vector<Case> cases() {
  std::vector<Case> out;
  for (int dim : {2, 3})
    for (int r : {1, 4, 8})
      for (bool surface : {false, true})
        for (bool dp : {true, false}) out.push_back({dim, r, surface, dp});
  return out;
}

INSTANTIATE_TEST_SUITE_P(Imaging, Adjoint, testing::ValuesIn(cases()), name_of);

double misfit(const wave::Model& m, const wave::Options& o, const std::vector<double>& observed) {
  const auto d = wave::modelled(m, o);
  double s = 0;
  for (size_t i = 0; i < d.size(); ++i) s += 0.5 * (d[i] - observed[i]) * (d[i] - observed[i]);
  return s;
}

// The misfit at v + h dv against its first- and second-order predictions from the gradient, in
// double, 2D, R = 4, with a free surface. dv lies where v is below 2300 m/s, so the largest
// velocity (the CPML's profile) stays where it is, and away from the sources (near_a_source).
TEST(Gradient, TaylorRemaindersFallAsHAndHSquared) {
  const Case c{2, 4, true, true};
  const wave::Model start = model_of(c);
  wave::Options o = options_of(c, start);
  wave::Model truth = start;
  for (size_t i = 0; i < truth.v.size(); ++i) truth.v[i] *= 1.03f;
  const auto observed = wave::modelled(truth, o);
  const wave::Gradient g = wave::gradient(start, o, observed);
  EXPECT_GT(g.misfit, 0.0);
  EXPECT_NEAR(g.misfit, misfit(start, o, observed), 1e-12 * g.misfit)
      << "the gradient's misfit is the forward's";
  auto dv = random_vector(start.v.size(), 31);
  for (int64_t k = 0; k < start.nz; ++k)
    for (int64_t i = 0; i < start.nx; ++i) {
      const size_t p = size_t(k * start.nx + i);
      dv[p] = start.v[p] < 2300.f && !near_a_source(o, k, 0, i) ? 20.0 * dv[p] : 0.0;
    }
  const double slope = dot(g.velocity, dv);
  double last1 = 0, last2 = 0;
  for (double h : {0.1, 0.01, 0.001, 0.0001}) {
    wave::Model moved = start;
    for (size_t i = 0; i < dv.size(); ++i) moved.v[i] = float(double(start.v[i]) + h * dv[i]);
    // The float model rounds h dv: the step actually taken is measured back from it.
    std::vector<double> taken(dv.size());
    for (size_t i = 0; i < dv.size(); ++i) taken[i] = double(moved.v[i]) - double(start.v[i]);
    const double j = misfit(moved, o, observed);
    const double r1 = std::abs(j - g.misfit), r2 = std::abs(j - g.misfit - dot(g.velocity, taken));
    report("taylor_r1_h" + std::to_string(h), r1);
    report("taylor_r2_h" + std::to_string(h), r2);
    if (last1 > 0) {
      EXPECT_NEAR(last1 / r1, 10.0, 3.0) << "first order at h = " << h;
      EXPECT_NEAR(last2 / r2, 100.0, 30.0) << "second order at h = " << h;
    }
    last1 = r1;
    last2 = r2;
  }
  EXPECT_NE(slope, 0.0);
}

TEST(Gradient, RefusesDataOfTheWrongShape) {
  const Case c{2, 2, false, true};
  const wave::Model m = model_of(c);
  const wave::Options o = options_of(c, m);
  const std::vector<double> short_data(o.receivers.size() * size_t(o.nt) - 1, 0.0);
  try {
    wave::gradient(m, o, short_data);
    FAIL() << "data of the wrong length taken";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::invalid_argument);
    EXPECT_NE(std::string(e.what()).find("observed: expected 600 values (5 receivers x 120 steps)"),
              std::string::npos)
        << e.what();
  }
  std::vector<double> dv(m.v.size(), 0.0);
  dv[7] = std::nan("");
  EXPECT_THROW(wave::born(m, o, dv), Error);
  EXPECT_THROW(wave::born_adjoint(m, o, std::vector<double>(3, 0.0)), Error);
  // "cuda" in double (o's precision) is refused as run() refuses it, with or without a GPU, and in a
  // build without CUDA.
  wave::Options on_gpu = o;
  ASSERT_TRUE(on_gpu.double_precision);
  on_gpu.backend = "cuda";
  try {
    wave::born(m, on_gpu, std::vector<double>(m.v.size(), 0.0));
    FAIL() << "the cuda backend taken";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::unsupported) << e.what();
  }
}

}  // namespace

namespace {

// RTM of a flat interface: three shots at the surface of a 2D model whose velocity steps from 2000
// to 2600 m/s at depth 30 points, migrated in the model without the step (the reflected data: the
// traces less those of the background). Along vertical lines the stack's largest value below the
// sources' footprint lies within two points of the interface, by either imaging condition.
constexpr double kRtmF0 = 18;  // Hz

TEST(Rtm, AFlatInterfaceImagesAtItsDepth) {
  const int64_t nz = 56, nx = 80;
  const wave::Model truth = wave::Model::layered(2, nz, 1, nx, kH, {{0.0, 2000.f}, {29.5 * kH, 2600.f}});
  const wave::Model background = wave::Model::constant(2, nz, 1, nx, kH, 2000.f);
  wave::Options o;
  o.radius = 4;
  o.double_precision = true;
  o.backend = "cpu";
  o.dt = 0.5 * wave::max_stable_dt(2, 4, kH, 2600.0);
  o.nt = int64_t(0.42 / o.dt);  // the reflection's two-way time from the surface, and its length
  o.boundary.cpml_width = 10;
  o.boundary.cpml_frequency = kRtmF0;
  for (int64_t x = 2; x < nx - 2; x += 2) o.receivers.push_back({20.3, 0.0, double(x) * kH});
  std::vector<double> adjoint(size_t(nz * nx), 0.0), cross(adjoint.size(), 0.0);
  for (double xs : {200.0, 400.0, 600.0}) {
    o.sources = {{{30.0, 0.0, xs}, wave::ricker(kRtmF0, 0.08, o.dt, o.nt)}};
    const auto d = wave::modelled(truth, o), d0 = wave::modelled(background, o);
    std::vector<double> reflected(d.size());
    for (size_t i = 0; i < d.size(); ++i) reflected[i] = d[i] - d0[i];
    const auto a =
        wave::rtm(background, o, reflected, rtm_options(wave::ImagingCondition::adjoint, false, true));
    const auto c = wave::rtm(background, o, reflected,
                             rtm_options(wave::ImagingCondition::crosscorrelation, true, true));
    for (size_t i = 0; i < adjoint.size(); ++i) {
      adjoint[i] += a[i];
      cross[i] += c[i];
    }
  }
  for (const auto* image : {&adjoint, &cross})
    for (int64_t x : {20, 40, 60}) {
      int64_t best = 10;
      for (int64_t z = 10; z < nz - 4; ++z)
        if (std::abs((*image)[size_t(z * nx + x)]) > std::abs((*image)[size_t(best * nx + x)])) best = z;
      report(
          std::string(image == &adjoint ? "rtm_adjoint" : "rtm_cross") + "_peak_depth_x" + std::to_string(x),
          double(best));
      EXPECT_LE(std::abs(double(best) - 29.5), 2.0) << "line x = " << x;
    }
}

// One source and one receiver on a 20 x 20 model, 10 steps: the refusals' run.
wave::Options tiny_run(std::vector<double> wavelet) {
  wave::Options o;
  o.backend = "cpu";
  o.nt = 10;
  o.dt = 1e-3;
  o.boundary.cpml_frequency = 10;
  o.sources = {{{50.0, 0.0, 50.0}, std::move(wavelet)}};
  o.receivers = {{20.0, 0.0, 100.0}};
  return o;
}

TEST(Rtm, RefusesRecordsOfTheWrongShape) {
  const wave::Model m = wave::Model::constant(2, 20, 1, 20, kH, 2000.f);
  EXPECT_THROW(wave::rtm(m, tiny_run(wave::ricker(12, 0.1, 1e-3, 10)), std::vector<double>(9, 0.0)), Error);
}

TEST(Rtm, RefusesToDivideByAnIlluminationOfNothing) {
  const wave::Model m = wave::Model::constant(2, 20, 1, 20, kH, 2000.f);
  EXPECT_THROW(wave::rtm(m, tiny_run(std::vector<double>(10, 0.0)), std::vector<double>(10, 1.0),
                         rtm_options(wave::ImagingCondition::crosscorrelation, true, false)),
               Error);
}

// Each run() option the linearised solvers do not serve is refused by name, in each of them, and
// the same run without it goes through: none is taken and quietly ignored. A kept state is served
// (on the GPU the backward pass's buffer; the cpu keeps nothing) and goes through.
TEST(Linearised, RefusesTheRunOptionsItDoesNotServe) {
  const wave::Model m = wave::Model::constant(2, 20, 1, 20, kH, 2000.f);
  const wave::Checkpoint state;
  const std::vector<std::pair<std::string, std::function<void(wave::Options&)>>> unserved = {
      {"resume", [&](wave::Options& o) { o.resume = &state; }},
      {"snapshots", [](wave::Options& o) { o.snapshot_steps = {5}; }},
      {"snapshots", [](wave::Options& o) { o.on_snapshot = [](const wave::Snapshot&) {}; }},
      {"checkpoints", [](wave::Options& o) { o.checkpoint_every = 4; }},
      {"checkpoints", [](wave::Options& o) { o.on_checkpoint = [](wave::Checkpoint) {}; }},
      {"split_final_file", [](wave::Options& o) { o.split_final_file = "final.npy"; }},
      {"kernel parameters", [](wave::Options& o) { o.kernel_params = R"({"block": "32x4"})"; }},
  };
  const std::vector<double> traces(10, 1.0), dv(m.v.size(), 1.0);
  const std::vector<std::pair<std::string, std::function<void(const wave::Options&)>>> solvers = {
      {"modelled", [&](const wave::Options& o) { wave::modelled(m, o); }},
      {"born", [&](const wave::Options& o) { wave::born(m, o, dv); }},
      {"born_adjoint", [&](const wave::Options& o) { wave::born_adjoint(m, o, traces); }},
      {"rtm", [&](const wave::Options& o) { wave::rtm(m, o, traces); }},
      {"gradient", [&](const wave::Options& o) { wave::gradient(m, o, traces); }},
  };
  for (const auto& [solver, call] : solvers) {
    const wave::Options plain = tiny_run(wave::ricker(12, 0.1, 1e-3, 10));
    EXPECT_NO_THROW(call(plain)) << solver;
    wave::Options kept = plain;  // served: on the GPU the backward pass keeps its buffer there
    kept.kept_state = wave::make_kept_state();
    EXPECT_NO_THROW(call(kept)) << solver;
    for (const auto& [what, set] : unserved) {
      wave::Options o = plain;
      set(o);
      try {
        call(o);
        ADD_FAILURE() << solver << " took " << what;
      } catch (const Error& e) {
        EXPECT_EQ(e.kind(), ErrorKind::invalid_argument) << solver << ", " << what;
        EXPECT_NE(std::string(e.what()).find(what + ": the linearised solvers"), std::string::npos)
            << solver << ": " << e.what();
      }
    }
  }
}

// Each linearised solver on a 20 x 20 model (tiny_run's shot), in the three storage modes of the
// backward pass: every field kept, checkpoints, boundary saving. `again` holds the steps the
// checkpoints ran again in the last gradient.
struct SolverCalls {
  const wave::Model m = wave::Model::constant(2, 20, 1, 20, kH, 2000.f);
  const std::vector<double> traces = std::vector<double>(10, 1.0), dv = std::vector<double>(m.v.size(), 1.0);
  // Below every field's 11 fields (202 KiB) and above two checkpoints' states beside the adjoint's
  // three fields (167 KiB).
  const wave::Storage every{}, checkpoints{180000, false};
  mutable int64_t again = -1;

  std::vector<std::pair<std::string, std::function<void(const wave::Options&)>>> each() const {
    wave::RtmOptions saving;
    saving.storage = {0, true};
    return {
        {"modelled", [this](const wave::Options& o) { wave::modelled(m, o); }},
        {"born", [this](const wave::Options& o) { wave::born(m, o, dv); }},
        {"source_adjoint", [this](const wave::Options& o) { wave::source_adjoint(m, o, traces); }},
        {"born_adjoint", [this](const wave::Options& o) { wave::born_adjoint(m, o, traces, every); }},
        {"gradient, checkpoints",
         [this](const wave::Options& o) {
           const wave::Gradient g = wave::gradient(m, o, traces, checkpoints);
           EXPECT_GT(g.storage.checkpoints, 0);
           again = g.storage.recomputed_steps;
         }},
        {"rtm, boundary saving", [this, saving](const wave::Options& o) { wave::rtm(m, o, traces, saving); }},
    };
  }
};

// options.stop_requested is asked between every two steps of each sweep: a check that says stop
// at its k-th question ends each solver there with Error(interrupted), asked exactly k times, in
// the first sweep and in the backward one, with every field kept, under checkpoints and with
// boundary saving; a check that never says stop is asked at least once a step of each sweep.
TEST(Linearised, StopsBetweenStepsWhenAsked) {
  const SolverCalls calls;
  const auto solvers = calls.each();
  for (const auto& [solver, call] : solvers) {
    const wave::Options o = tiny_run(wave::ricker(12, 0.1, 1e-3, 10));
    const int sweeps = solver == "modelled" || solver == "born" || solver == "source_adjoint" ? 1 : 2;
    // The first sweep's first step .. the last sweep's last.
    test::expect_stops_between_steps(solver, o, sweeps, {1, 7, sweeps * int(o.nt)}, call);
  }
}

// options.progress: each solver reports its sweeps' steps, rising, and last done == total, where
// the total is every step it polls between (counted by a stop check that never stops): one sweep,
// two, and two with the steps checkpoints run again.
TEST(Linearised, ReportsProgressOverEveryStepOfItsSweeps) {
  const SolverCalls calls;
  const auto solvers = calls.each();
  for (const auto& [solver, call] : solvers) {
    const wave::Options o = tiny_run(wave::ricker(12, 0.1, 1e-3, 10));
    const int64_t total = test::expect_progress_over_every_step(solver, o, call);
    const int sweeps = solver == "modelled" || solver == "born" || solver == "source_adjoint" ? 1 : 2;
    EXPECT_EQ(total, sweeps * o.nt + (solver == "gradient, checkpoints" ? calls.again : 0)) << solver;
  }
  EXPECT_GT(calls.again, 0) << "the checkpoints ran steps again";
  // A run stopped by its check ends without the last report.
  wave::Options o = tiny_run(wave::ricker(12, 0.1, 1e-3, 10));
  std::vector<int64_t> done;
  int64_t asked = 0;
  o.stop_requested = [&asked] { return ++asked > 5; };
  o.progress = [&done](int64_t d, int64_t) { done.push_back(d); };
  EXPECT_THROW(wave::gradient(calls.m, o, calls.traces), Error);
  ASSERT_FALSE(done.empty());
  EXPECT_LT(done.back(), 20);
}

}  // namespace
