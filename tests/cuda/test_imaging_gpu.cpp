// The gradient, RTM, Born and modelling on the GPU (cuda::wave::AcousticAdjointGpu, the backward
// pass of cuda/wave/acoustic_backward, cuda/wave/acoustic_born) against the cpu's in float on the
// same shot, to round-off: the traces, the gradient, Born's traces, the wavelets' adjoint and the
// cross-correlation image within a relative L2 gap of 1e-4 (float's round-off through 90 steps of
// two differently ordered sums is ~1e-6 of the fields), and the run under a memory budget, with
// its checkpoints and steps run again, giving the very bits of the run that keeps every field. 2D
// with a free surface, and 3D. Skipped without a GPU.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "fdstencil/device.hpp"
#include "fdstencil/device_field.hpp"
#include "fdstencil/error.hpp"
#include "fdstencil/imaging.hpp"
#include "cuda/wave/acoustic_adjoint.hpp"
#include "fdstencil/wave.hpp"
#include "wave/imaging_interior.hpp"
#include "wave/imaging_shot.hpp"
#include "wave/stop_check.hpp"
#include "wave/wave_test_util.hpp"

using namespace fdstencil;
using test::ImagingShot;
using test::report;

namespace {

#define REQUIRE_GPU() \
  if (gpu_count() == 0) GTEST_SKIP() << "no GPU: " << gpu_unavailable_reason()

double gap(const std::vector<double>& got, const std::vector<double>& want) {
  double num = 0, den = 0;
  for (size_t i = 0; i < want.size(); ++i) {
    num += (got[i] - want[i]) * (got[i] - want[i]);
    den += want[i] * want[i];
  }
  return std::sqrt(num / den);
}

class ImagingGpu : public testing::TestWithParam<int> {};

TEST_P(ImagingGpu, GradientAndImageMatchTheCpu) {
  REQUIRE_GPU();
  const int dim = GetParam();
  const ImagingShot gpu(dim, false, "cuda"), cpu(dim, false, "cpu");
  const std::string d = std::to_string(dim) + "D";
  const wave::Gradient g = wave::gradient(gpu.model, gpu.o, gpu.observed);
  const wave::Gradient c = wave::gradient(cpu.model, cpu.o, cpu.observed);
  EXPECT_EQ(g.storage.backend, "cuda");
  ASSERT_EQ(g.velocity.size(), c.velocity.size());
  report("gpu_cpu_traces_gap_" + d, gap(g.traces, c.traces));
  report("gpu_cpu_gradient_gap_" + d, gap(g.velocity, c.velocity));
  EXPECT_LE(gap(g.traces, c.traces), 1e-4);
  EXPECT_LE(gap(g.velocity, c.velocity), 1e-4);
  EXPECT_NEAR(g.misfit, c.misfit, 1e-4 * c.misfit);
  wave::RtmOptions r;
  r.condition = wave::ImagingCondition::crosscorrelation;
  r.illumination = true;
  const std::vector<double> image = wave::rtm(gpu.model, gpu.o, gpu.observed, r);
  const std::vector<double> image_cpu = wave::rtm(cpu.model, cpu.o, cpu.observed, r);
  report("gpu_cpu_rtm_cross_gap_" + d, gap(image, image_cpu));
  EXPECT_LE(gap(image, image_cpu), 1e-4);
  const std::vector<double> traces = wave::modelled(gpu.model, gpu.o);
  EXPECT_EQ(traces, g.traces);  // the forward operator the adjoint belongs to
}

TEST_P(ImagingGpu, CheckpointsGiveTheBitsOfEveryFieldKept) {
  REQUIRE_GPU();
  const ImagingShot s(GetParam(), false, "cuda");
  const wave::Gradient all = wave::gradient(s.model, s.o, s.observed);
  ASSERT_EQ(all.storage.checkpoints, 0);
  const wave::Gradient kept =
      wave::gradient(s.model, s.o, s.observed, wave::Storage{all.storage.stored_bytes / 4});
  ASSERT_GT(kept.storage.checkpoints, 0);
  EXPECT_GT(kept.storage.recomputed_steps, 0);
  EXPECT_LE(kept.storage.stored_bytes, all.storage.stored_bytes / 4);
  report("gpu_checkpoints_" + std::to_string(GetParam()) + "D", double(kept.storage.checkpoints));
  EXPECT_EQ(kept.traces, all.traces);
  EXPECT_EQ(kept.velocity, all.velocity);
}

// A kept state across shots (a survey's worker, wave::Options::kept_state): each backward pass
// takes the buffer the last one left, holding that shot's fields (another source's, so that a
// value read before it is written would show), and gives the bits of a run without a kept state:
// every field kept, checkpoints, boundary saving, RTM, after a forward run's state the kept state
// held. The buffer stays held between shots and is freed with the kept state, by a forward run
// and by modelling (which keeps nothing there).
TEST_P(ImagingGpu, AKeptStateGivesEachShotTheBitsOfAFreshRun) {
  REQUIRE_GPU();
  const ImagingShot s(GetParam(), false, "cuda");
  wave::Options other = s.o;
  other.sources[0].at.x += 60.0;
  const int64_t before = cuda::device_bytes_held();
  const wave::Gradient fresh = wave::gradient(s.model, s.o, s.observed);
  const wave::Storage budget{fresh.storage.stored_bytes / 4}, strips{0, true};
  const wave::Gradient fresh_ck = wave::gradient(s.model, s.o, s.observed, budget);
  const wave::Gradient fresh_b = wave::gradient(s.model, s.o, s.observed, strips);
  const std::vector<double> fresh_image = wave::rtm(s.model, s.o, s.observed);
  {
    wave::Options o = s.o;
    o.kept_state = other.kept_state = wave::make_kept_state();
    wave::run(s.model, o);  // a forward run's state in it first
    for (const wave::Storage& st : {wave::Storage{}, budget, strips}) {
      wave::gradient(s.model, other, s.observed, st);  // the buffer: another shot's, of this size
      EXPECT_GT(cuda::device_bytes_held(), before) << "the buffer is kept";
      const wave::Gradient g = wave::gradient(s.model, o, s.observed, st);
      const wave::Gradient& want = st.boundary ? fresh_b : st.budget_bytes ? fresh_ck : fresh;
      EXPECT_EQ(g.storage.checkpoints, want.storage.checkpoints);
      EXPECT_EQ(g.traces, want.traces);
      EXPECT_EQ(g.velocity, want.velocity) << "budget " << st.budget_bytes << ", boundary " << st.boundary;
    }
    EXPECT_EQ(wave::rtm(s.model, o, s.observed), fresh_image);
    // A forward run gives the buffer back (and keeps its own state); modelling keeps nothing.
    wave::run(s.model, o);
    EXPECT_LT(cuda::device_bytes_held() - before, fresh.storage.stored_bytes);
    wave::modelled(s.model, o);
    EXPECT_EQ(cuda::device_bytes_held(), before);
    other.kept_state.reset();  // the kept state's last holder is `o`, which goes now
  }
  EXPECT_EQ(cuda::device_bytes_held(), before);
}

// Boundary saving (physics/reversal.hpp) on the GPU against its run that keeps every field: the
// same forward sweep's bits, the gradient off the model's outer faces and the cross-correlation
// image everywhere within float's round-off of 89 steps back (tests/wave/test_imaging_boundary.cpp's
// bound); and against the cpu's boundary saving.
TEST_P(ImagingGpu, BoundarySavingGivesEveryFieldsResultOffTheOuterFaces) {
  REQUIRE_GPU();
  const int dim = GetParam();
  const ImagingShot s(dim, false, "cuda"), cpu(dim, false, "cpu");
  const std::string d = std::to_string(dim) + "D";
  const wave::Gradient all = wave::gradient(s.model, s.o, s.observed);
  const wave::Gradient strips = wave::gradient(s.model, s.o, s.observed, wave::Storage{0, true});
  EXPECT_EQ(strips.storage.backend, "cuda");
  EXPECT_TRUE(strips.storage.boundary);
  EXPECT_EQ(strips.storage.reversed_steps, s.o.nt - 1);
  EXPECT_LT(strips.storage.stored_bytes, all.storage.stored_bytes);
  EXPECT_EQ(strips.traces, all.traces);
  const test::ResultGap g = test::interior_gap(s.model, strips.velocity, all.velocity);
  report("gpu_boundary_gradient_gap_" + d, g.relative());
  ASSERT_GT(g.scale, 0.0);
  EXPECT_LE(g.relative(), 1e-4);
  const wave::Gradient on_cpu = wave::gradient(cpu.model, cpu.o, cpu.observed, wave::Storage{0, true});
  report("gpu_cpu_boundary_gradient_gap_" + d, gap(strips.velocity, on_cpu.velocity));
  EXPECT_LE(gap(strips.velocity, on_cpu.velocity), 1e-4);
  wave::RtmOptions r;
  r.condition = wave::ImagingCondition::crosscorrelation;
  const std::vector<double> image = wave::rtm(s.model, s.o, s.observed, r);
  r.storage.boundary = true;
  const test::ResultGap gi = test::whole_gap(s.model, wave::rtm(s.model, s.o, s.observed, r), image);
  report("gpu_boundary_rtm_cross_gap_" + d, gi.relative());
  ASSERT_GT(gi.scale, 0.0);
  EXPECT_LE(gi.relative(), 1e-4);
}

double dot(const std::vector<double>& a, const std::vector<double>& b) {
  double sum = 0;
  for (size_t i = 0; i < a.size(); ++i) sum += a[i] * b[i];
  return sum;
}

std::vector<double> random_values(size_t n, unsigned seed) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  std::vector<double> v(n);
  for (double& x : v) x = u(gen);
  return v;
}

// Born on the GPU (cuda/wave/acoustic_born) against the cpu's, and against the GPU's born_adjoint
// in the dot-product test: |<J dv, dd> - <dv, J^T dd>| within 1e-5 of |J dv| |dd| (float's
// round-off through the steps is relative to the traces, as tests/wave/test_imaging.cpp says).
TEST_P(ImagingGpu, BornMatchesTheCpuAndItsTranspose) {
  REQUIRE_GPU();
  const int dim = GetParam();
  const ImagingShot gpu(dim, false, "cuda"), cpu(dim, false, "cpu");
  const std::string d = std::to_string(dim) + "D";
  std::vector<double> dv = random_values(size_t(gpu.model.points()), 7);
  for (double& x : dv) x *= 20.0;  // m/s
  const std::vector<double> jdv = wave::born(gpu.model, gpu.o, dv),
                            jdv_cpu = wave::born(cpu.model, cpu.o, dv);
  ASSERT_EQ(jdv.size(), jdv_cpu.size());
  report("gpu_cpu_born_gap_" + d, gap(jdv, jdv_cpu));
  EXPECT_LE(gap(jdv, jdv_cpu), 1e-4);
  EXPECT_GT(dot(jdv, jdv), 0.0);
  const std::vector<double> dd = random_values(jdv.size(), 11);
  const std::vector<double> jtdd = wave::born_adjoint(gpu.model, gpu.o, dd);
  const double lhs = dot(jdv, dd), rhs = dot(dv, jtdd);
  const double bound = std::sqrt(dot(jdv, jdv) * dot(dd, dd));
  report("gpu_born_dot_gap_" + d, std::abs(lhs - rhs) / bound);
  EXPECT_LE(std::abs(lhs - rhs), 1e-5 * bound) << lhs << " against " << rhs;
}

// The wavelets' adjoint on the GPU against the cpu's, and against the GPU's modelling (linear in
// the wavelets) in the dot-product test, random wavelets and traces.
TEST_P(ImagingGpu, TheWaveletsAdjointMatchesTheCpuAndItsTranspose) {
  REQUIRE_GPU();
  const int dim = GetParam();
  ImagingShot gpu(dim, false, "cuda"), cpu(dim, false, "cpu");
  const std::string d = std::to_string(dim) + "D";
  const std::vector<double> f = random_values(size_t(gpu.o.nt), 13);
  gpu.o.sources[0].wavelet = cpu.o.sources[0].wavelet = f;
  const std::vector<double> dd = random_values(gpu.o.receivers.size() * size_t(gpu.o.nt), 17);
  const std::vector<double> ftdd = wave::source_adjoint(gpu.model, gpu.o, dd),
                            ftdd_cpu = wave::source_adjoint(cpu.model, cpu.o, dd);
  ASSERT_EQ(ftdd.size(), f.size());
  report("gpu_cpu_wavelets_adjoint_gap_" + d, gap(ftdd, ftdd_cpu));
  EXPECT_LE(gap(ftdd, ftdd_cpu), 1e-4);
  const std::vector<double> ff = wave::modelled(gpu.model, gpu.o);
  const double lhs = dot(ff, dd), rhs = dot(f, ftdd), bound = std::sqrt(dot(ff, ff) * dot(dd, dd));
  report("gpu_wavelets_dot_gap_" + d, std::abs(lhs - rhs) / bound);
  EXPECT_LE(std::abs(lhs - rhs), 1e-5 * bound) << lhs << " against " << rhs;
}

// The backward march at the radii its template spans the ends of, with the source and the
// receivers within a point of the top plane, whose taps then reach the free surface's plane (2D):
// the values the march keeps there before its zero, the residual injected there and the
// wavelets' adjoint read there. The gradient, the cross-correlation image and the wavelets' adjoint
// against the cpu's. A second model adds a free surface in 3D too (the surface plane's y lines)
// and has 31 planes, 37 computed, which no chunk of the march divides (its last chunk's tail).
TEST_P(ImagingGpu, TheBackwardMarchMatchesTheCpuAtRadiiOneAndEightNearTheTop) {
  REQUIRE_GPU();
  const int dim = GetParam();
  for (const bool surface_and_tail : {false, true})
    for (int radius : {1, 8}) {
      ImagingShot gpu(dim, false, "cuda"), cpu(dim, false, "cpu");
      for (ImagingShot* s : {&gpu, &cpu}) {
        s->o.radius = radius;
        s->o.sources[0].at.z = 4.1;
        for (auto& r : s->o.receivers) r.z = 2.6;
        if (!surface_and_tail) continue;
        s->o.boundary.free_surface = true;
        s->model = wave::Model::layered(dim, 31, dim == 3 ? 22 : 1, 34, ImagingShot::kH,
                                        {{0.0, 1900.f}, {160.0, 2500.f}});
      }
      const std::string d =
          std::to_string(dim) + "D_R" + std::to_string(radius) + (surface_and_tail ? "_surface_31" : "");
      const wave::Gradient g = wave::gradient(gpu.model, gpu.o, gpu.observed);
      const wave::Gradient c = wave::gradient(cpu.model, cpu.o, cpu.observed);
      report("gpu_cpu_gradient_gap_top_" + d, gap(g.velocity, c.velocity));
      EXPECT_LE(gap(g.traces, c.traces), 1e-4) << d;
      EXPECT_LE(gap(g.velocity, c.velocity), 1e-4) << d;
      wave::RtmOptions r;
      r.condition = wave::ImagingCondition::crosscorrelation;
      const std::vector<double> image = wave::rtm(gpu.model, gpu.o, gpu.observed, r),
                                image_cpu = wave::rtm(cpu.model, cpu.o, cpu.observed, r);
      report("gpu_cpu_rtm_cross_gap_top_" + d, gap(image, image_cpu));
      EXPECT_LE(gap(image, image_cpu), 1e-4) << d;
      const std::vector<double> dd = random_values(gpu.o.receivers.size() * size_t(gpu.o.nt), 19);
      const std::vector<double> f = wave::source_adjoint(gpu.model, gpu.o, dd),
                                f_cpu = wave::source_adjoint(cpu.model, cpu.o, dd);
      report("gpu_cpu_wavelets_adjoint_gap_top_" + d, gap(f, f_cpu));
      EXPECT_LE(gap(f, f_cpu), 1e-4) << d;
    }
}

// The backward march in pairs of points (where their loads are aligned: the shot's 46 computed
// points a row) against one point a thread: the same bits in the gradient, under checkpoints too,
// and in the cross-correlation image with its illumination, at R = 1, 3, 4 and 8, and in 3D with a
// free surface too.
TEST_P(ImagingGpu, TheMarchInPairsGivesTheBitsOfOnePointAThread) {
  REQUIRE_GPU();
  struct Restore {
    ~Restore() { cuda::wave::allow_adjoint_pairs(true); }
  } restore;
  for (int radius : {1, 3, 4, 8}) {
    ImagingShot s(GetParam(), false, "cuda");
    s.o.radius = radius;
    if (GetParam() == 3 && radius == 3) s.o.boundary.free_surface = true;
    // An even row of computed points, which the march takes in pairs: else both runs below would
    // take one point a thread, and the test would compare a way with itself.
    ASSERT_EQ((s.model.nx + 2 * s.o.boundary.cpml_width) % 2, 0);
    wave::RtmOptions r;
    r.condition = wave::ImagingCondition::crosscorrelation;
    r.illumination = true;
    std::vector<double> got[2][3];
    for (const bool pairs : {true, false}) {
      cuda::wave::allow_adjoint_pairs(pairs);
      const wave::Gradient g = wave::gradient(s.model, s.o, s.observed);
      const wave::Gradient kept =
          wave::gradient(s.model, s.o, s.observed, wave::Storage{g.storage.stored_bytes / 4});
      ASSERT_GT(kept.storage.checkpoints, 0);
      got[pairs][0] = g.velocity;
      got[pairs][1] = kept.velocity;
      got[pairs][2] = wave::rtm(s.model, s.o, s.observed, r);
    }
    for (int k = 0; k < 3; ++k) {
      EXPECT_EQ(got[1][k], got[0][k]) << "R = " << radius << ", result " << k;
      EXPECT_TRUE(std::any_of(got[1][k].begin(), got[1][k].end(), [](double v) { return v != 0.0; }))
          << "R = " << radius << ", result " << k;
    }
  }
}

// A stop asked between steps on the GPU: each way of keeping the forward run, and Born, the
// modelling and the wavelets' adjoint, end with Error(interrupted) at the k-th question, in the
// first sweep and in the backward one, and the GPU then gives the stopped call's bits whole.
TEST_P(ImagingGpu, AStopBetweenStepsEndsEachSolverAndLeavesTheGpuUsable) {
  REQUIRE_GPU();
  const ImagingShot s(GetParam(), false, "cuda");
  const wave::Gradient all = wave::gradient(s.model, s.o, s.observed);
  const std::vector<double> dv(s.model.v.size(), 1.0);
  std::vector<double> got;
  const std::vector<std::pair<std::string, std::function<void(const wave::Options&)>>> solvers = {
      {"every field", [&](const wave::Options& o) { got = wave::gradient(s.model, o, s.observed).velocity; }},
      {"checkpoints",
       [&](const wave::Options& o) {
         got = wave::gradient(s.model, o, s.observed, wave::Storage{all.storage.stored_bytes / 4}).velocity;
       }},
      {"boundary saving",
       [&](const wave::Options& o) {
         got = wave::gradient(s.model, o, s.observed, {0, true}).velocity;
       }},
      {"born", [&](const wave::Options& o) { got = wave::born(s.model, o, dv); }},
      {"modelled", [&](const wave::Options& o) { got = wave::modelled(s.model, o); }},
      {"source_adjoint", [&](const wave::Options& o) { got = wave::source_adjoint(s.model, o, s.observed); }},
  };
  for (const auto& [solver, call] : solvers) {
    const int sweeps = solver == "born" || solver == "modelled" || solver == "source_adjoint" ? 1 : 2;
    const int nt = int(s.o.nt);
    // The first step, the first sweep's last, and where there are two, the backward sweep's.
    test::expect_stops_between_steps(solver, s.o, sweeps, {1, nt, sweeps * nt}, call);
    const std::vector<double> whole = got;  // the unstopped call's: a stopped one assigns nothing
    call(s.o);
    EXPECT_EQ(got, whole) << solver;
  }
}

// Progress over every step of each solver's sweeps on the GPU, as on the cpu: the total is the
// steps polled, and under checkpoints counts the steps run again, known before they run.
TEST_P(ImagingGpu, ProgressCountsEveryStepOfEachSolver) {
  REQUIRE_GPU();
  const ImagingShot s(GetParam(), false, "cuda");
  const wave::Gradient all = wave::gradient(s.model, s.o, s.observed);
  const std::vector<double> dv(s.model.v.size(), 1.0);
  int64_t again = -1;
  const std::vector<std::pair<std::string, std::function<void(const wave::Options&)>>> solvers = {
      {"every field", [&](const wave::Options& o) { wave::gradient(s.model, o, s.observed); }},
      {"checkpoints",
       [&](const wave::Options& o) {
         again = wave::gradient(s.model, o, s.observed, wave::Storage{all.storage.stored_bytes / 4})
                     .storage.recomputed_steps;
       }},
      {"boundary saving",
       [&](const wave::Options& o) {
         wave::gradient(s.model, o, s.observed, {0, true});
       }},
      {"born", [&](const wave::Options& o) { wave::born(s.model, o, dv); }},
      {"modelled", [&](const wave::Options& o) { wave::modelled(s.model, o); }},
      {"source_adjoint", [&](const wave::Options& o) { wave::source_adjoint(s.model, o, s.observed); }},
  };
  for (const auto& [solver, call] : solvers) {
    const int64_t total = test::expect_progress_over_every_step(solver, s.o, call);
    const int sweeps = solver == "born" || solver == "modelled" || solver == "source_adjoint" ? 1 : 2;
    EXPECT_EQ(total, sweeps * s.o.nt + (solver == "checkpoints" ? again : 0)) << solver;
  }
  EXPECT_GT(again, 0) << "the checkpoints ran steps again";
}

INSTANTIATE_TEST_SUITE_P(Imaging, ImagingGpu, testing::Values(2, 3),
                         [](const testing::TestParamInfo<int>& i) { return std::to_string(i.param) + "D"; });

}  // namespace
