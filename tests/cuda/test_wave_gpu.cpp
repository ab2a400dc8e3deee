// The wave solver's cuda backend against its cpu backend: the same runs (3D and 2D, CPML on, a
// free surface in some, Hicks sources and receivers off the grid, R = 1, 4, 8) in float on both,
// and the cpu in double as the reference. The GPU's float error against the double reference
// must be of the size of the cpu's own float error (round-off growth, not a different answer);
// several kernel parameter sets must give the same answer; and a 3D homogeneous run at R = 4
// must match the analytic solution within 1 %, as the cpu does (tests/wave/test_wave_analytic).
// Skipped, never passed, without a GPU. The measured figures are printed ("[ measured ]") and
// recorded as test properties: they are what the team reports.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "cuda/wave/acoustic.hpp"
#include "fdstencil/device.hpp"
#include "fdstencil/device_field.hpp"
#include "fdstencil/error.hpp"
#include "fdstencil/wave.hpp"
#include "wave/checkpoint_test_util.hpp"
#include "wave/wave_test_util.hpp"

using namespace fdstencil;
using test::kPi;
using test::relative_l2;
using test::report;
using test::ricker_at;

namespace {

// The launch defaults' share of the points in CPML layers (default_config's layer_share): none, and
// every point (the wide-layer rows; from R = 6 the CPML apart's).
constexpr double kNoLayers = 0, kEveryPointInLayers = 1;

#define REQUIRE_GPU() \
  if (gpu_count() == 0) GTEST_SKIP() << "no GPU: " << gpu_unavailable_reason()

// max |a - b| / max |ref|, with the place of the largest difference for the failure message.
struct Diff {
  double rel = 0;
  size_t at = 0;
};

Diff rel_max_diff(const std::vector<float>& a, const std::vector<float>& b, const std::vector<float>& ref) {
  Diff d;
  if (a.size() != b.size() || a.size() != ref.size() || a.empty()) {
    d.rel = 1e300;
    return d;
  }
  double peak = 0, worst = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    peak = std::max(peak, std::abs(double(ref[i])));
    const double e = std::abs(double(a[i]) - double(b[i]));
    if (!(e <= worst)) {  // also catches NaN
      worst = std::isfinite(e) ? e : 1e300;
      d.at = i;
    }
  }
  d.rel = peak > 0 ? worst / peak : 1e300;
  return d;
}

// Layers plus a smooth random perturbation (seed printed), so reflections reach the receivers.
wave::Model heterogeneous(int dim, int64_t nz, int64_t ny, int64_t nx, double h, uint64_t seed) {
  wave::Model m = wave::Model::layered(dim, nz, ny, nx, h, {{0.0, 1800.f}, {0.4 * double(nz) * h, 2600.f}});
  std::printf("[   seed   ] gpu wave model: seed %llu\n", static_cast<unsigned long long>(seed));
  std::mt19937_64 gen(seed);
  std::uniform_real_distribution<double> phase(0, 2 * kPi);
  const double pz = phase(gen), py = phase(gen), px = phase(gen);
  for (int64_t k = 0; k < nz; ++k)
    for (int64_t j = 0; j < ny; ++j)
      for (int64_t i = 0; i < nx; ++i) {
        const double s = 1 + 0.08 * std::sin(0.21 * double(k) + pz) * std::cos(0.17 * double(j) + py) *
                                 std::sin(0.13 * double(i) + px);
        float& v = m.v[size_t((k * ny + j) * nx + i)];
        v = float(double(v) * s);
      }
  m.validate();
  return m;
}

struct Case {
  int dim, radius;
  bool free_surface;
};

std::string name_of(const Case& c) {
  return std::to_string(c.dim) + "d_r" + std::to_string(c.radius) + (c.free_surface ? "_fs" : "");
}

// Two off-grid sources (different wavelets) and a spread of off-grid receivers, one near the top.
wave::Options shot(const Case& c, const wave::Model& m) {
  wave::Options o;
  o.radius = c.radius;
  o.nt = 250;  // the wavefronts still inside the model: the final field is the wave, not its residue
  o.boundary.cpml_width = 10;
  o.boundary.free_surface = c.free_surface;
  const double dt = o.cfl_safety * wave::max_stable_dt(m.dim, c.radius, m.h, m.vmax());
  o.dt = dt;
  const double h = m.h;
  const bool y = c.dim == 3;
  o.sources = {{{6.37 * h, y ? 9.41 * h : 0.0, 11.23 * h}, wave::ricker(12, 0.1, dt, o.nt)},
               {{17.71 * h, y ? 20.13 * h : 0.0, 25.58 * h}, wave::ricker(8, 0.15, dt, o.nt)}};
  for (double f : {0.13, 0.37, 0.61, 0.83})
    o.receivers.push_back({(2.29 + f * double(m.nz - 5)) * h, y ? (4.7 + f * double(m.ny - 9)) * h : 0.0,
                           (5.17 + (1 - f) * double(m.nx - 11)) * h});
  return o;
}

struct Runs {
  wave::Result gpu, cpu, ref;
};

Runs run_three(const Case& c, const wave::Model& m, const std::string& kernel_params = "") {
  wave::Options o = shot(c, m);
  Runs r;
  o.backend = "cpu";
  r.cpu = wave::run(m, o);
  o.double_precision = true;
  r.ref = wave::run(m, o);
  o.double_precision = false;
  o.backend = "cuda";
  o.kernel_params = kernel_params;
  r.gpu = wave::run(m, o);
  return r;
}

wave::Model model_for(int dim) {
  return dim == 3 ? heterogeneous(3, 30, 34, 38, 10.0, 4242) : heterogeneous(2, 60, 1, 90, 10.0, 4243);
}

}  // namespace

// The GPU's float against the cpu's float and the cpu's double. The bound on the GPU's error is
// the cpu float's own error against double, times 4, plus 1e-6 of the peak: both run the same
// arithmetic in float, in different orders (FMA contraction, the atomically summed receivers), so
// their errors against the exact answer are of one size; a wrong tap, halo or CPML coefficient
// would be orders of magnitude above it.
TEST(WaveGpu, MatchesTheCpuWithinFloatRoundOff) {
  REQUIRE_GPU();
  for (const Case c : {Case{3, 1, false}, Case{3, 4, false}, Case{3, 8, true}, Case{2, 1, true},
                       Case{2, 4, false}, Case{2, 8, false}}) {
    const std::string t = name_of(c);
    const wave::Model m = model_for(c.dim);
    const Runs r = run_three(c, m);
    EXPECT_EQ(r.gpu.backend, "cuda") << t;
    EXPECT_EQ(r.cpu.backend, "cpu") << t;
    ASSERT_EQ(r.gpu.traces.size(), r.cpu.traces.size()) << t;
    ASSERT_EQ(r.gpu.final_field.size(), r.cpu.final_field.size()) << t;
    EXPECT_DOUBLE_EQ(r.gpu.dt, r.cpu.dt) << t;
    const Diff cpu_tr = rel_max_diff(r.cpu.traces, r.ref.traces, r.ref.traces);
    const Diff cpu_ff = rel_max_diff(r.cpu.final_field, r.ref.final_field, r.ref.final_field);
    const Diff gpu_tr = rel_max_diff(r.gpu.traces, r.ref.traces, r.ref.traces);
    const Diff gpu_ff = rel_max_diff(r.gpu.final_field, r.ref.final_field, r.ref.final_field);
    const Diff gc_tr = rel_max_diff(r.gpu.traces, r.cpu.traces, r.ref.traces);
    const Diff gc_ff = rel_max_diff(r.gpu.final_field, r.cpu.final_field, r.ref.final_field);
    report(t + "_cpu_float_vs_double_traces", cpu_tr.rel);
    report(t + "_cpu_float_vs_double_field", cpu_ff.rel);
    report(t + "_gpu_vs_double_traces", gpu_tr.rel);
    report(t + "_gpu_vs_double_field", gpu_ff.rel);
    report(t + "_gpu_vs_cpu_float_traces", gc_tr.rel);
    report(t + "_gpu_vs_cpu_float_field", gc_ff.rel);
    const double bound_tr = 4 * cpu_tr.rel + 1e-6, bound_ff = 4 * cpu_ff.rel + 1e-6;
    EXPECT_LT(gpu_tr.rel, bound_tr) << t << ": worst trace sample " << gpu_tr.at;
    EXPECT_LT(gpu_ff.rel, bound_ff) << t << ": worst field element " << gpu_ff.at;
    EXPECT_LT(gc_tr.rel, 2 * bound_tr) << t;
    EXPECT_LT(gc_ff.rel, 2 * bound_ff) << t;
    // Float's round-off over a few hundred steps: far below 1e-4 however the sums are ordered.
    EXPECT_LT(gpu_tr.rel, 1e-4) << t;
    EXPECT_LT(gpu_ff.rel, 1e-4) << t;
    double peak = 0;
    for (float x : r.gpu.traces) peak = std::max(peak, double(std::abs(x)));
    EXPECT_GT(peak, 0) << t << ": the GPU's traces are all zero";
  }
}

// Launch shapes and the two designs (l1, tile) change which thread computes which point and where
// it reads its neighbours from, not the arithmetic of a point: the final field must agree with
// the defaults' to the bit (receivers are summed atomically, so traces may differ in the last
// bits). The tile sets take blocks wider than the model, odd nw and a free surface (the queue's
// mirrored planes under a tile). Result.kernel must name the parameters, so a launcher that
// ignored them cannot pass unnoticed.
TEST(WaveGpu, KernelParametersGiveTheSameAnswer) {
  REQUIRE_GPU();
  struct Params {
    int dim;
    bool free_surface;
    const char* json;
    const char* shows;  // in Result.kernel
  };
  const Params sets[] = {
      {3, false, R"({"block": "32x4", "vec": 2, "nw": 8, "design": "l1"})", "nw=8 design=l1"},
      {3, false, R"({"design": "l1", "block": "32x8", "vec": 4, "nw": 16})", "block=32x8"},
      {3, false, R"({"design": "l1", "block": "64x2", "vec": 4, "nw": 4})", "block=64x2"},
      {3, false, R"({"design": "tile", "block": "32x4", "nw": 8})", "vec=4 nw=8 design=tile"},
      {3, true, R"({"design": "tile", "block": "16x8", "nw": 5})", "block=16x8 vec=4 nw=5 design=tile"},
      {3, true, R"({"design": "tile", "block": "64x4", "vec": 4, "nw": 16})",
       "block=64x4 vec=4 nw=16 design=tile"},
      {3, true, R"({"design": "tile", "block": "16x8", "nw": 5, "zq": 1})", "nw=5 design=tile zq=1"},
      // Blocks narrow enough for an interior box, one kernel and two (split): the interior kernel
      // is the boundary kernel's CPML-free path compiled alone, the same arithmetic.
      {3, false, R"({"design": "l1", "block": "8x4", "vec": 2, "nw": 8, "split": 1})",
       "nw=8 design=l1 split=1"},
      {3, true, R"({"design": "l1", "block": "8x4", "vec": 2, "nw": 8, "split": 0})",
       "nw=8 design=l1 split=0"},
      {3, true, R"({"design": "tile", "block": "8x8", "nw": 8, "zq": 1, "split": 1})",
       "design=tile zq=1 split=1"},
      {3, false, R"({"design": "tile", "block": "8x8", "nw": 8, "split": 0})", "design=tile split=0"},
      {3, true, R"({"design": "l1", "block": "32x4", "vec": 4, "nw": 7})", "nw=7 design=l1"},
      // The tma design: its ring runs the interior box (narrow blocks, so there is one; ahead 0
      // to 3 and chunks shorter than R), the l1 march or the tile's the rest; and the design's
      // defaults (the table's row where it names tma), whose box is empty here (every block runs
      // the tile's boundary march; at R = 8 the CPML apart, the default there, every set takes).
      {3, false, R"({"design": "tma", "block": "2x16", "nw": 5, "ahead": 0})",
       "nw=5 design=tma split=1 ahead=0"},
      {3, true, R"({"design": "tma", "block": "4x8", "nw": 3, "ahead": 3})",
       "nw=3 design=tma split=1 ahead=3"},
      {3, true, R"({"design": "tma"})", "vec=4 nw=16 design=tma split=1 ahead=2 boundary=tile"},
      {3, true, R"({"design": "tma", "block": "4x8", "nw": 5, "boundary": "l1"})", "ahead=2 boundary=l1"},
      {2, true, R"({"block": "128x1", "vec": 2, "nw": 8})", "nw=8"},
      {2, true, R"({"block": "64x1", "vec": 4, "nw": 16})", "block=64x1"},
      {3, true, R"({"faces": 0})", "faces=0"},
  };
  for (int radius : {1, 4, 8})
    for (const Params& p : sets) {
      if (radius == 1 && std::string(p.json).find("zq") != std::string::npos) continue;  // from R = 2
      const Case c{p.dim, radius, p.free_surface};
      const std::string t = name_of(c) + " " + p.json;
      const wave::Model m = model_for(p.dim);
      wave::Options o = shot(c, m);
      o.backend = "cuda";
      const wave::Result base = wave::run(m, o);
      o.kernel_params = p.json;
      const wave::Result tuned = wave::run(m, o);
      EXPECT_NE(tuned.kernel.find(p.shows), std::string::npos) << t << ": kernel '" << tuned.kernel << "'";
      const Diff ff = rel_max_diff(tuned.final_field, base.final_field, base.final_field);
      const Diff tr = rel_max_diff(tuned.traces, base.traces, base.traces);
      report("params_" + name_of(c) + "_" + std::to_string(&p - sets) + "_field", ff.rel);
      report("params_" + name_of(c) + "_" + std::to_string(&p - sets) + "_traces", tr.rel);
      // The field's arithmetic is the same whatever the launch shape: measured bit-identical (0).
      // The traces are sums of the receivers' taps by atomicAdd, in an order that depends on the
      // shape: measured up to 1.45e-6 of the trace's peak (H100, bench/results/nvidia-h100/
      // wave-test-log.txt).
      EXPECT_EQ(ff.rel, 0.0) << t << " at element " << ff.at;
      EXPECT_LT(tr.rel, 5e-6) << t << " at sample " << tr.at;
    }
}

// The three designs on a small 3D grid (a free surface, CPML, sources and receivers), 40 steps:
// the same field to the bit at every R, with the tile's blocks not dividing the grid, and
// with blocks narrow enough for an interior box (the interior kernels; tma's only kernel of its
// own is its interior one, with the surface's mirrored planes under its first chunk).
// Small enough for compute-sanitizer's memcheck and racecheck (bench/device_run.sh wave-tile-test).
TEST(WaveGpu, TileAndL1DesignsAgreeOnASmallGrid) {
  REQUIRE_GPU();
  const wave::Model m = heterogeneous(3, 24, 23, 29, 10.0, 4244);
  // The CPML in the march (named: from R = 6 the default adds it apart), then apart: each the
  // same field to the bit across the designs.
  for (const std::string cpml : {"march", "apart"})
    for (int radius = 1; radius <= 8; ++radius) {
      wave::Options o = shot({3, radius, true}, m);
      o.nt = 40;
      for (auto& s : o.sources) s.wavelet.resize(40);
      o.backend = "cuda";
      const std::string with = R"({"cpml": ")" + cpml + R"(", )";
      o.kernel_params = with + R"("design": "l1", "block": "32x4", "vec": 4, "nw": 4})";
      const wave::Result l1 = wave::run(m, o);
      // Wide blocks (no interior box along x), then narrow ones, whose interior box is not empty:
      // the interior kernels run too, the tile's with the queue's ring (zq 1) from R = 2.
      for (const char* params : {R"("design": "tile", "block": "16x4", "nw": 5})",
                                 R"("design": "l1", "block": "8x4", "vec": 2, "nw": 4, "split": 1})",
                                 R"("design": "tile", "block": "4x8", "nw": 5, "zq": 1, "split": 1})",
                                 R"("design": "tma", "block": "4x8", "nw": 5, "ahead": 1})",
                                 R"("design": "tma", "block": "4x8", "nw": 5, "boundary": "l1"})"}) {
        if (radius == 1 && std::string(params).find("zq") != std::string::npos) continue;  // from R = 2
        o.kernel_params = with + params;
        const wave::Result other = wave::run(m, o);
        const Diff ff = rel_max_diff(other.final_field, l1.final_field, l1.final_field);
        EXPECT_EQ(ff.rel, 0.0) << "R = " << radius << " " << o.kernel_params << " at element " << ff.at;
        const std::string p = params, key = R"("design": ")";
        const size_t at = p.find(key) + key.size();
        EXPECT_NE(other.kernel.find("design=" + p.substr(at, p.find('"', at) - at)), std::string::npos)
            << other.kernel;
        EXPECT_EQ(other.kernel.find("cpml=apart") != std::string::npos, cpml == "apart") << other.kernel;
      }
    }
}

// With split 1 the step runs as two kernels: the interior box (no CPML compiled) and the
// boundary blocks, which skip the box's (acoustic_step.cuh). On a grid with blocks on both sides
// of every face (a 64 x 60 x 72 model and a 10-point CPML: 84 x 80 x 92 points), narrow blocks, a
// source inside the box and one outside, each design against the cpu within
// MatchesTheCpuWithinFloatRoundOff's bound: a block run twice, or by neither kernel, or a tap
// looked up in the wrong block, would be far outside it. Result.kernel must report a non-empty box.
TEST(WaveGpu, InteriorAndBoundaryKernelsTogetherMatchTheCpu) {
  REQUIRE_GPU();
  const wave::Model m = heterogeneous(3, 64, 60, 72, 10.0, 4245);
  // The CPML in the march, named: from R = 6 the default adds it apart (CpmlApartMatchesTheCpu's).
  const std::string sets[] = {
      R"({"cpml": "march", "design": "l1", "block": "8x4", "vec": 2, "nw": 8, "split": 1})",
      R"({"cpml": "march", "design": "l1", "block": "8x8", "vec": 4, "nw": 6, "split": 1})",
      R"({"cpml": "march", "design": "tile", "block": "8x8", "nw": 6, "split": 1})",
      R"({"cpml": "march", "design": "tile", "block": "8x8", "nw": 7, "zq": 1, "split": 1})",
      R"({"cpml": "march", "design": "tma", "block": "8x8", "nw": 6, "ahead": 1})",
      R"({"cpml": "march", "design": "tma", "block": "4x16", "nw": 9, "ahead": 4})",
      R"({"cpml": "march", "design": "tma", "block": "8x8", "nw": 6, "boundary": "l1"})"};
  for (int radius : {1, 4, 8})
    for (size_t i = 0; i < std::size(sets); ++i) {
      const std::string& params = sets[i];
      if (radius == 1 && params.find("zq") != std::string::npos) continue;  // from R = 2
      const Case c{3, radius, radius == 4};
      const std::string t = name_of(c) + " " + params;
      const Runs r = run_three(c, m, params);
      const std::string& k = r.gpu.kernel;
      const size_t at = k.find("interior_blocks=");
      ASSERT_NE(at, std::string::npos) << t << ": " << k;
      EXPECT_GT(std::stoll(k.substr(at + 16)), 0) << t << ": " << k;
      const Diff cpu_tr = rel_max_diff(r.cpu.traces, r.ref.traces, r.ref.traces);
      const Diff cpu_ff = rel_max_diff(r.cpu.final_field, r.ref.final_field, r.ref.final_field);
      const Diff gpu_tr = rel_max_diff(r.gpu.traces, r.ref.traces, r.ref.traces);
      const Diff gpu_ff = rel_max_diff(r.gpu.final_field, r.ref.final_field, r.ref.final_field);
      report("split_" + name_of(c) + "_" + std::to_string(i) + "_field", gpu_ff.rel);
      EXPECT_LT(gpu_tr.rel, 4 * cpu_tr.rel + 1e-6) << t << ": worst trace sample " << gpu_tr.at;
      EXPECT_LT(gpu_ff.rel, 4 * cpu_ff.rel + 1e-6) << t << ": worst field element " << gpu_ff.at;
    }
}

// The CPML apart (its layers' kernel after a march compiled without it) against the cpu within
// MatchesTheCpuWithinFloatRoundOff's bound, on InteriorAndBoundaryKernelsTogetherMatchTheCpu's grid
// (layers on every face, blocks on both sides of each): each design's march over every block (tma:
// its ring over the whole blocks, the l1 march without the CPML over the blocks that overhang the
// domain), with and without a free surface, and in 2D. A layer point missed, visited twice, or
// given the wrong axis's term would be far outside the bound; the added terms join the sum in
// another order than the march's, so the field is not the march's to the bit.
TEST(WaveGpu, CpmlApartMatchesTheCpu) {
  REQUIRE_GPU();
  const wave::Model m3 = heterogeneous(3, 64, 60, 72, 10.0, 4245), m2 = model_for(2);
  struct Set {
    int dim;
    const char* params;
  };
  const Set sets[] = {
      {3, R"({"cpml": "apart", "design": "l1", "block": "8x4", "vec": 2, "nw": 8})"},
      {3, R"({"cpml": "apart", "design": "l1", "block": "32x4", "vec": 4, "nw": 7, "graph": 8})"},
      {3, R"({"cpml": "apart", "design": "tile", "block": "8x8", "nw": 6})"},
      {3, R"({"cpml": "apart", "design": "tma", "block": "8x8", "nw": 6, "ahead": 1})"},
      {3, R"({"cpml": "apart", "design": "tma", "block": "16x16", "nw": 16})"},
      {2, R"({"cpml": "apart", "block": "64x1", "vec": 2, "nw": 2})"}};
  for (int dim : {3, 2})
    for (int radius : {1, 4, 8})
      for (bool free_surface : {false, true}) {
        const Case c{dim, radius, free_surface};
        const wave::Model& m = dim == 3 ? m3 : m2;
        // The cpu's float and double once for every launch of this case.
        const Runs cpu = run_three(c, m, R"({"cpml": "march"})");
        const Diff cpu_tr = rel_max_diff(cpu.cpu.traces, cpu.ref.traces, cpu.ref.traces);
        const Diff cpu_ff = rel_max_diff(cpu.cpu.final_field, cpu.ref.final_field, cpu.ref.final_field);
        for (size_t i = 0; i < std::size(sets); ++i) {
          if (sets[i].dim != dim) continue;
          const std::string t = name_of(c) + " " + sets[i].params;
          wave::Options o = shot(c, m);
          o.backend = "cuda";
          o.kernel_params = sets[i].params;
          const wave::Result gpu = wave::run(m, o);
          EXPECT_NE(gpu.kernel.find("cpml=apart"), std::string::npos) << t << ": " << gpu.kernel;
          const Diff gpu_tr = rel_max_diff(gpu.traces, cpu.ref.traces, cpu.ref.traces);
          const Diff gpu_ff = rel_max_diff(gpu.final_field, cpu.ref.final_field, cpu.ref.final_field);
          const Diff march = rel_max_diff(gpu.final_field, cpu.gpu.final_field, cpu.ref.final_field);
          report("apart_" + name_of(c) + "_" + std::to_string(i) + "_field", gpu_ff.rel);
          report("apart_" + name_of(c) + "_" + std::to_string(i) + "_traces", gpu_tr.rel);
          report("apart_" + name_of(c) + "_" + std::to_string(i) + "_vs_march", march.rel);
          // Against the march's own field, tighter: measured up to 1.6e-6 of the peak (H200,
          // bench/results/nvidia-h200/cpml-apart/test-wave-imaging-gpu.txt); an error confined to
          // the layers could hide inside the bound against double.
          EXPECT_LT(march.rel, 1e-5) << t << ": against the march, worst field element " << march.at;
          EXPECT_LT(gpu_tr.rel, 4 * cpu_tr.rel + 1e-6) << t << ": worst trace sample " << gpu_tr.at;
          EXPECT_LT(gpu_ff.rel, 4 * cpu_ff.rel + 1e-6) << t << ": worst field element " << gpu_ff.at;
        }
      }
}

namespace {
// A share of the points in layers past the CPML apart's rule (acoustic.cu kApartShare), and the
// march's own rows with layers: "cpml": "march" (at R = 1 and from R = 6 the CPML apart is the
// default at any share).
constexpr double kWideLayers = 0.5;
cuda::wave::KernelConfig march_with_layers(int radius, int64_t plane) {
  const cuda::wave::KernelConfig c =
      cuda::wave::parse_config(R"({"cpml": "march"})", 3, radius, plane, kWideLayers);
  EXPECT_FALSE(c.cpml_apart);
  if (radius >= 2 && radius <= 5) {  // there the rule itself takes the march at this share
    const cuda::wave::KernelConfig d = cuda::wave::default_config(3, radius, plane, kWideLayers);
    EXPECT_TRUE(d.design == c.design && d.bx == c.bx && d.by == c.by && d.nw == c.nw && !d.cpml_apart)
        << radius;
  }
  return c;
}

// A config's design, block, chunk and split against the expected ones (`what` names the case).
void expect_shape(const cuda::wave::KernelConfig& c, cuda::wave::StepDesign design, int bx, int by, int nw,
                  int split, const std::string& what) {
  EXPECT_EQ(c.design, design) << what;
  EXPECT_EQ(c.bx, bx) << what;
  EXPECT_EQ(c.by, by) << what;
  EXPECT_EQ(c.nw, nw) << what;
  EXPECT_EQ(c.split, split) << what;
}
}  // namespace

// The defaults' table (acoustic.cu): the tile, split, for planes up to 512 x 512 points at R = 1
// and 2 (with zq at R = 2), the l1 march in one kernel above them and at R = 3; tma from R = 4
// (but on planes of up to 256^2 without layers l1 at R = 4 and the tile at R = 6), its block and
// chunk by the plane, the CPML's presence and whether the state is a slab of a split run; l1 in 2D. A design named by hand
// starts from that design's defaults. Host-side: CI runs it.
TEST(WaveGpu, DefaultsFollowTheRadiusAndThePlaneSize) {
  using cuda::wave::StepDesign;
  const int64_t small = 512 * 512, large = 1024 * 1024;
  for (int r : {1, 2}) {
    const auto s = cuda::wave::default_config(3, r, small, kNoLayers),
               l = cuda::wave::default_config(3, r, large, kNoLayers);
    EXPECT_EQ(s.design, StepDesign::tile) << r;
    EXPECT_EQ(s.split, 1) << r;
    EXPECT_EQ(s.zq, r == 2 ? 1 : 0) << r;
    EXPECT_EQ(l.design, StepDesign::l1) << r;
    EXPECT_EQ(l.split, 0) << r;
    // A design named by hand starts from that design's defaults, not the other's shape.
    const auto l1 = cuda::wave::parse_config(R"({"design": "l1"})", 3, r, small, kNoLayers);
    EXPECT_EQ(l1.design, StepDesign::l1) << r;
    EXPECT_EQ(l1.zq, 0) << r;
    EXPECT_EQ(l1.split, 0) << r;
    EXPECT_EQ(l1.vec, 2) << r;
    EXPECT_EQ(l1.bx, l.bx) << r;  // the large planes' l1 row
    EXPECT_EQ(l1.by, l.by) << r;
    EXPECT_EQ(l1.nw, l.nw) << r;
    const auto tile = cuda::wave::parse_config(R"({"design": "tile"})", 3, r, large, kNoLayers);
    EXPECT_EQ(tile.design, StepDesign::tile) << r;
    EXPECT_EQ(tile.vec, 4) << r;
    EXPECT_EQ(tile.split, 1) << r;
  }
  // tma by hand: d2xyz tma's shape, split, two tiles ahead, where the table names no tma row.
  for (int r : {1, 2, 3})
    for (int64_t plane : {small, large}) {
      const auto tma = cuda::wave::parse_config(R"({"design": "tma"})", 3, r, plane, kNoLayers);
      EXPECT_EQ(tma.design, StepDesign::tma) << r;
      EXPECT_EQ(tma.bx, 16) << r;
      EXPECT_EQ(tma.by, 16) << r;
      EXPECT_EQ(tma.vec, 4) << r;
      EXPECT_EQ(tma.nw, 16) << r;
      EXPECT_EQ(tma.split, 1) << r;
      EXPECT_EQ(tma.ahead, 2) << r;
      EXPECT_EQ(tma.boundary, StepDesign::tile) << r;
      EXPECT_EQ(cuda::wave::parse_config(R"({"design": "tma", "ahead": 5, "block": "8x16"})", 3, r, plane,
                                         kNoLayers)
                    .ahead,
                5);
    }
  // R = 3: the l1 march in one kernel, R = 4's l1 shape.
  for (int64_t plane : {small, large}) {
    const auto c = cuda::wave::default_config(3, 3, plane, kNoLayers);
    EXPECT_EQ(c.design, StepDesign::l1);
    EXPECT_EQ(c.vec, 4);
    EXPECT_EQ(c.split, 0);
  }
  // From R = 4 tma on planes above 256^2, split, its boundary blocks by the tile's march: 16x16
  // without layers at R = 4, 7 and 8, 8x16 at R = 5 and 6 and wherever there are layers; chunks of
  // 64 from R = 6, and at R = 4 and 5 on planes above 512^2.
  for (int r = 4; r <= 8; ++r)
    for (int64_t plane : {small, large})
      for (bool layers : {false, true}) {
        const auto c =
            layers ? march_with_layers(r, plane) : cuda::wave::default_config(3, r, plane, kNoLayers);
        EXPECT_EQ(c.design, StepDesign::tma) << r;
        EXPECT_EQ(c.split, 1) << r;
        EXPECT_EQ(c.vec, 4) << r;
        EXPECT_EQ(c.boundary, StepDesign::tile) << r;
        EXPECT_EQ(c.bx * c.by, layers || r == 5 || r == 6 ? 128 : 256) << r << " " << layers;
      }
  for (int r : {4, 5}) {  // 512^2 planes: chunks of 16, two tiles ahead
    EXPECT_EQ(cuda::wave::default_config(3, r, small, kNoLayers).nw, 16) << r;
    EXPECT_EQ(cuda::wave::default_config(3, r, small, kNoLayers).ahead, 2) << r;
  }
  // A slab of a split run keeps chunks of 16 (its faces are whole chunks) unless nw is given.
  for (int r = 4; r <= 8; ++r) {
    EXPECT_EQ(cuda::wave::default_config(3, r, large, kNoLayers, /*slabs=*/true).nw, 16) << r;
    EXPECT_EQ(cuda::wave::parse_config(R"({"nw": 64})", 3, r, large, kNoLayers, /*slabs=*/true).nw, 64) << r;
  }
  // Just above 256^2 the 512^2 rows hold.
  const auto above = cuda::wave::default_config(3, 4, 256 * 257, kNoLayers);
  EXPECT_EQ(above.design, StepDesign::tma);
  EXPECT_EQ(above.nw, 16);
  for (int r : {4, 5}) {  // large planes: chunks of 64, two tiles ahead; with layers as on small ones
    EXPECT_EQ(cuda::wave::default_config(3, r, large, kNoLayers).nw, 64) << r;
    EXPECT_EQ(cuda::wave::default_config(3, r, large, kNoLayers).ahead, 2) << r;
    EXPECT_EQ(march_with_layers(r, large).nw, 16) << r;
  }
  for (int r : {6, 7, 8})  // from R = 6 long chunks on 512^2 planes too
    for (int64_t plane : {small, large}) {
      EXPECT_EQ(cuda::wave::default_config(3, r, plane, kNoLayers).nw, 64) << r;
      EXPECT_EQ(cuda::wave::default_config(3, r, plane, kNoLayers).ahead, 2) << r;
      EXPECT_EQ(march_with_layers(r, plane).nw, 16) << r;
    }
  // Planes of up to 256^2 without layers: R = 4 the l1 march's own shape, R = 5 tma 8x16 in chunks
  // of 8, R = 6 the tile 8x16 in chunks of 8 (split), R = 7 and 8 tma 16x16 in chunks of 16; with
  // layers from R = 5 tma 8x16 in chunks of 16, as on larger planes (R = 4: the next test's rule).
  const int64_t tiny = 256 * 256;
  const auto t4 = cuda::wave::default_config(3, 4, tiny, kNoLayers),
             t5 = cuda::wave::default_config(3, 5, tiny, kNoLayers);
  expect_shape(t4, StepDesign::l1, 32, 4, 32, 0, "tiny R = 4");
  EXPECT_EQ(t4.vec, 4);
  expect_shape(t5, StepDesign::tma, 8, 16, 8, 1, "tiny R = 5");
  EXPECT_EQ(t5.ahead, 2);
  for (int r = 5; r <= 8; ++r) {
    const auto layered = march_with_layers(r, tiny);
    EXPECT_EQ(layered.design, StepDesign::tma) << r;
    EXPECT_EQ(layered.bx, 8) << r;
    EXPECT_EQ(layered.nw, 16) << r;
  }
  const auto t6 = cuda::wave::default_config(3, 6, tiny, kNoLayers);
  expect_shape(t6, StepDesign::tile, 8, 16, 8, 1, "tiny R = 6");
  EXPECT_EQ(t6.zq, 0);
  // tma by hand there starts from the block the table gives tma at R = 6 elsewhere.
  const auto t6tma = cuda::wave::parse_config(R"({"design": "tma"})", 3, 6, tiny, kNoLayers);
  expect_shape(t6tma, StepDesign::tma, 8, 16, 16, 1, "tiny R = 6, tma by hand");
  for (int r : {7, 8}) {
    const auto t = cuda::wave::default_config(3, r, tiny, kNoLayers);
    EXPECT_EQ(t.design, StepDesign::tma) << r;
    EXPECT_EQ(t.bx, 16) << r;
    EXPECT_EQ(t.nw, 16) << r;
  }
  // Below R = 4 the layers change nothing, but at R = 2 on planes of up to 512^2 (below).
  for (int r = 1; r <= 3; ++r)
    for (int64_t plane : {small, large}) {
      if (r == 2 && plane == small) continue;
      const auto a = cuda::wave::default_config(3, r, plane, kNoLayers), b = march_with_layers(r, plane);
      EXPECT_EQ(a.design, b.design) << r;
      EXPECT_EQ(a.bx, b.bx) << r;
      EXPECT_EQ(a.nw, b.nw) << r;
    }
  // "l1" by hand from R = 4 takes the l1 march's own shapes: R = 4's old row (vec 4), and from R = 5
  // the shape R = 8 had before the tile (vec 2); "tile" by hand R = 8's tile row before tma.
  const auto l1r4 = cuda::wave::parse_config(R"({"design": "l1"})", 3, 4, small, kNoLayers);
  expect_shape(l1r4, StepDesign::l1, 32, 4, 32, 0, "l1 by hand, R = 4");
  EXPECT_EQ(l1r4.vec, 4);
  const auto l1r8 = cuda::wave::parse_config(R"({"design": "l1"})", 3, 8, small, kNoLayers);
  expect_shape(l1r8, StepDesign::l1, 32, 4, 32, 0, "l1 by hand, R = 8");
  EXPECT_EQ(l1r8.vec, 2);
  const auto tile8 = cuda::wave::parse_config(R"({"design": "tile"})", 3, 8, large, kNoLayers);
  expect_shape(tile8, StepDesign::tile, 8, 16, 16, 1, "tile by hand, R = 8");
  for (int64_t plane : {small, large})
    EXPECT_EQ(cuda::wave::default_config(2, 2, plane, kNoLayers).design, StepDesign::l1);
  // 2D without layers (wave-2d-plain-shapes): rows of 64 threads, 4-wide vectors in chunks of 4
  // rows on rows of up to 1200 points; above, 2-wide in chunks of 16 rows (8 from 3000 points) at
  // R <= 4, 4-wide in chunks of 8 at R = 5..8. A 2D model's plane is one row of nx points.
  const auto r4short = cuda::wave::default_config(2, 4, 1040, kNoLayers),
             r4long = cuda::wave::default_config(2, 4, 2040, kNoLayers),
             r4longer = cuda::wave::default_config(2, 4, 4040, kNoLayers),
             r8long = cuda::wave::default_config(2, 8, 2040, kNoLayers);
  expect_shape(r4short, StepDesign::l1, 64, 1, 4, 0, "2D R = 4, 1040 points a row");
  expect_shape(r4long, StepDesign::l1, 64, 1, 16, 0, "2D R = 4, 2040 points a row");
  expect_shape(r4longer, StepDesign::l1, 64, 1, 8, 0, "2D R = 4, 4040 points a row");
  expect_shape(r8long, StepDesign::l1, 64, 1, 8, 0, "2D R = 8, 2040 points a row");
  EXPECT_EQ(r4short.vec, 4);
  EXPECT_EQ(r4long.vec, 2);
  EXPECT_EQ(r8long.vec, 4);
  // The CPML in the march by hand keeps the launch chosen for it (wave-2d-chunks): 2-wide vectors,
  // chunks of 2 rows on short rows and 4 on longer at R <= 4; 4, and 8 on long rows, at R = 5..8.
  const auto march = [](int r, int64_t row) {
    return cuda::wave::parse_config(R"({"cpml": "march"})", 2, r, row, kEveryPointInLayers);
  };
  expect_shape(march(4, 1040), StepDesign::l1, 64, 1, 2, 0, "2D march R = 4, 1040 points a row");
  expect_shape(march(4, 2040), StepDesign::l1, 64, 1, 4, 0, "2D march R = 4, 2040 points a row");
  expect_shape(march(8, 2040), StepDesign::l1, 64, 1, 4, 0, "2D march R = 8, 2040 points a row");
  expect_shape(march(8, 4040), StepDesign::l1, 64, 1, 8, 0, "2D march R = 8, 4040 points a row");
  EXPECT_EQ(march(4, 2040).vec, 2);
  // With layers (wave-2d-beside-shapes): every march block is plain under the CPML beside, and rows
  // of 64 threads take 4-wide vectors in chunks of 4 rows (2 at R = 1 on rows of up to 1200 points),
  // from R = 5 of 16 on rows above 1200 points; a slab's march (the CPML apart, after it) the same.
  const double layer_share = 0.02;
  for (int r : {1, 2, 3, 4}) {
    for (int64_t row : {1020, 2020, 4020}) {
      const auto c = cuda::wave::default_config(2, r, row, layer_share);
      expect_shape(c, StepDesign::l1, 64, 1, r == 1 && row == 1020 ? 2 : 4, 0,
                   "2D with layers, R = " + std::to_string(r) + ", " + std::to_string(row) + " points a row");
      EXPECT_EQ(c.vec, 4) << r << " " << row;
      EXPECT_TRUE(c.cpml_beside) << r << " " << row;
    }
  }
  EXPECT_EQ(cuda::wave::default_config(2, 8, 1020, layer_share).nw, 4);
  EXPECT_EQ(cuda::wave::default_config(2, 8, 1210, layer_share).nw, 16);
  EXPECT_EQ(cuda::wave::default_config(2, 8, 2020, layer_share).nw, 16);
  const auto slab = cuda::wave::default_config(2, 4, 2020, layer_share, /*slabs=*/true);
  expect_shape(slab, StepDesign::l1, 64, 1, 4, 0, "2D slab with layers");
  EXPECT_EQ(slab.vec, 4);
  EXPECT_TRUE(slab.cpml_apart);
  EXPECT_FALSE(slab.cpml_beside);
}

// With CPML layers on small planes the l1 march in one kernel, 16x8 threads of 2-wide vectors in
// chunks of 4 or 8 planes: R = 2 on planes of up to 512^2, R = 3 and 4 up to 256^2, from R = 5 up
// to 240^2; above each, and without layers, the other rows; R = 1 keeps its tile. Chunks of 4 at
// R = 2 and on planes of up to 192^2, else 8.
TEST(WaveGpu, SmallPlanesWithLayersTakeTheL1MarchInShortChunks) {
  using cuda::wave::StepDesign;
  const auto layer_l1 = [](const cuda::wave::KernelConfig& c) {
    return c.design == StepDesign::l1 && c.bx == 16 && c.by == 8 && c.vec == 2 && (c.nw == 4 || c.nw == 8) &&
           c.split == 0;
  };
  for (int r : {2, 4, 8}) EXPECT_EQ(march_with_layers(r, 148 * 148).nw, 4) << r;
  EXPECT_EQ(march_with_layers(2, 236 * 236).nw, 4);
  EXPECT_EQ(march_with_layers(4, 236 * 236).nw, 8);
  EXPECT_EQ(march_with_layers(3, 193 * 193).nw, 8);
  EXPECT_EQ(march_with_layers(8, 236 * 236).nw, 8);
  const struct {
    int radius;
    int64_t last;  // the largest plane that takes it
  } rows[] = {{2, 512 * 512}, {3, 256 * 256}, {4, 256 * 256}, {5, 240 * 240}, {8, 240 * 240}};
  for (const auto& row : rows) {
    EXPECT_TRUE(layer_l1(march_with_layers(row.radius, row.last))) << row.radius;
    EXPECT_TRUE(layer_l1(march_with_layers(row.radius, 148 * 148))) << row.radius;
    EXPECT_FALSE(layer_l1(march_with_layers(row.radius, row.last + 1))) << row.radius;
    EXPECT_FALSE(layer_l1(cuda::wave::default_config(3, row.radius, row.last, kNoLayers))) << row.radius;
  }
  EXPECT_EQ(march_with_layers(4, 256 * 256 + 1).design, StepDesign::tma);
  EXPECT_EQ(march_with_layers(1, 148 * 148).design, StepDesign::tile);
  // A design named by hand there starts from the table's row the rule replaced: tma 8x16 in chunks
  // of 16 (R = 4), the tile 8x16 in chunks of 8 with zq (R = 2).
  expect_shape(cuda::wave::parse_config(R"({"design": "tma"})", 3, 4, 148 * 148, kWideLayers),
               StepDesign::tma, 8, 16, 16, 1, "tma by hand, R = 4, layers");
  const auto tile2 = cuda::wave::parse_config(R"({"design": "tile"})", 3, 2, 148 * 148, kWideLayers);
  expect_shape(tile2, StepDesign::tile, 8, 16, 8, 1, "tile by hand, R = 2, layers");
  EXPECT_EQ(tile2.zq, 1);
}

// The new keys' bad values, refused on the host by parse_config with the key named (CI runs it;
// BadKernelParametersAreRefused checks the same through wave::run on a GPU).
TEST(WaveGpu, ZqAndSplitValuesAreCheckedOnTheHost) {
  const int64_t small = 512 * 512;
  const auto refused = [&](const char* json, int dim, int radius, const char* says) {
    try {
      cuda::wave::parse_config(json, dim, radius, small, kNoLayers);
      ADD_FAILURE() << json << " at R = " << radius << " was accepted";
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::invalid_argument) << json;
      EXPECT_NE(std::string(e.what()).find(says), std::string::npos) << json << ": " << e.what();
    }
  };
  refused(R"({"split": 2})", 3, 4, "split must be 0 or 1");
  refused(R"({"faces": 2})", 3, 4, "faces must be 0 or 1");
  refused(R"({"design": "tile", "zq": 2})", 3, 4, "zq must be 0 or 1");
  refused(R"({"zq": 1})", 3, 4, "the tile design's");
  refused(R"({"design": "l1", "zq": 1})", 3, 2, "the tile design's");
  refused(R"({"design": "tile", "zq": 1})", 3, 1, "from R = 2");
  refused(R"({"vec": 2})", 3, 1, "add \"design\": \"l1\"");  // the tile is the default there
  refused(R"({"design": "tile", "block": "32x1"})", 2, 4, "3D only");
  refused(R"({"design": "tma", "block": "32x1"})", 2, 4, "3D only");
  refused(R"({"design": "tma", "split": 0})", 3, 4, "split must be 1");
  refused(R"({"design": "tma", "vec": 2})", 3, 4, "vec must be 4");
  refused(R"({"design": "tma", "ahead": 9})", 3, 4, "ahead must be 0..8");
  refused(R"({"design": "tma", "ahead": -1})", 3, 4, "ahead must be 0..8");
  refused(R"({"design": "tile", "ahead": 2})", 3, 4, "the tma design's");
  refused(R"({"design": "l1", "boundary": "tile"})", 3, 4, "the tma design's");
  refused(R"({"design": "tma", "boundary": "tma"})", 3, 4, "boundary must be \"l1\" or \"tile\"");
  EXPECT_EQ(
      cuda::wave::parse_config(R"({"design": "tma", "boundary": "l1"})", 3, 4, small, kNoLayers).boundary,
      cuda::wave::StepDesign::l1);
  refused(R"({"design": "dma"})", 3, 4, "\"l1\", \"tile\" or \"tma\"");
  refused(R"({"graph": 3})", 3, 4, "graph must be 0 or an even count");
  refused(R"({"graph": -2})", 2, 4, "graph must be 0 or an even count");
  refused(R"({"graph": 1026})", 3, 4, "up to 1024");
  EXPECT_EQ(cuda::wave::parse_config(R"({"graph": 0})", 3, 4, small, kNoLayers).graph, 0);
  EXPECT_EQ(cuda::wave::parse_config(R"({"graph": 1024})", 2, 4, 1000, kEveryPointInLayers).graph, 1024);
  EXPECT_EQ(cuda::wave::parse_config(R"({"design": "l1", "vec": 2})", 3, 1, small, kNoLayers).vec, 2);
  refused(R"({"temporal": 1})", 2, 4, "temporal must be 0 or 2..4");
  refused(R"({"temporal": 5})", 2, 4, "temporal must be 0 or 2..4");
  refused(R"({"temporal": 2})", 3, 4, "2D only");
  refused(R"({"temporal": 3, "graph": 32})", 2, 4, "multiple of 2 x temporal = 6");
  // Without a graph given, the default's is cut to a multiple of 2 T.
  EXPECT_EQ(cuda::wave::parse_config(R"({"temporal": 3})", 2, 4, 1000, kEveryPointInLayers).graph, 30);
  EXPECT_EQ(cuda::wave::parse_config(R"({"temporal": 4, "graph": 0})", 2, 4, 1000, kEveryPointInLayers).graph,
            0);
  const cuda::wave::KernelConfig t = cuda::wave::parse_config(
      R"({"temporal": 2, "temporal_block": 128, "temporal_nw": 9})", 2, 4, 1000, kEveryPointInLayers);
  EXPECT_EQ(t.temporal, 2);
  EXPECT_EQ(t.temporal_block, 128);
  EXPECT_EQ(t.temporal_nw, 9);
  EXPECT_NE(cuda::wave::describe(t).find("temporal=2 temporal_block=128 temporal_nw=9"), std::string::npos);
  refused(R"({"temporal": 2, "temporal_block": 100})", 2, 4, "temporal_block must be whole warps");
  refused(R"({"temporal": 2, "temporal_block": 512})", 2, 4, "at most 256 threads");
  refused(R"({"temporal": 4, "temporal_block": 64})", 2, 5, "leaves 24 columns beside the 2 T R = 40");
  refused(R"({"temporal": 3, "temporal_block": 64})", 2, 8, "leaves 16 columns beside the 2 T R = 48");
  EXPECT_EQ(
      cuda::wave::parse_config(R"({"temporal": 4, "temporal_block": 64})", 2, 4, 1000, kEveryPointInLayers)
          .temporal_block,
      64);  // 32 columns beside 32 of halo: the least allowed
  refused(R"({"temporal": 2, "temporal_nw": 0})", 2, 4, "temporal_nw must be at least 1");
}

// "cpml": "apart" on the host (CI runs it): parsed and described, and refused where the layers'
// kernel cannot follow (temporal blocking) or with a bad value; a slab of a split run takes it.
TEST(WaveGpu, CpmlApartIsCheckedOnTheHost) {
  const int64_t small = 512 * 512;
  const cuda::wave::KernelConfig c =
      cuda::wave::parse_config(R"({"cpml": "apart"})", 3, 4, small, kEveryPointInLayers);
  EXPECT_TRUE(c.cpml_apart);
  EXPECT_NE(cuda::wave::describe(c).find("cpml=apart"), std::string::npos) << cuda::wave::describe(c);
  EXPECT_FALSE(cuda::wave::parse_config(R"({"cpml": "march"})", 3, 4, small, kEveryPointInLayers).cpml_apart);
  const auto refused = [&](const char* json, int dim, bool slabs, const char* says) {
    try {
      cuda::wave::parse_config(json, dim, 4, small, kEveryPointInLayers, slabs);
      ADD_FAILURE() << json << " was accepted";
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::invalid_argument) << json;
      EXPECT_NE(std::string(e.what()).find(says), std::string::npos) << json << ": " << e.what();
    }
  };
  refused(R"({"cpml": "inline"})", 3, false, "cpml must be \"march\", \"apart\" or \"beside\"");
  refused(R"({"cpml": 1})", 3, false, "cpml must be");
  EXPECT_TRUE(
      cuda::wave::parse_config(R"({"cpml": "apart"})", 3, 4, small, kEveryPointInLayers, /*slabs=*/true)
          .cpml_apart);
  refused(R"({"cpml": "apart", "temporal": 2})", 2, false, "steps one at a time");
  // Beside: the CPML apart's arithmetic, its layers' points computed beside the march on one GPU;
  // a slab adds them after its march (the same bits), and temporal blocking refuses it as apart.
  const cuda::wave::KernelConfig b =
      cuda::wave::parse_config(R"({"cpml": "beside"})", 3, 4, small, kEveryPointInLayers);
  EXPECT_TRUE(b.cpml_apart && b.cpml_beside);
  EXPECT_NE(cuda::wave::describe(b).find("cpml=apart layers=beside"), std::string::npos)
      << cuda::wave::describe(b);
  const cuda::wave::KernelConfig slab =
      cuda::wave::parse_config(R"({"cpml": "beside"})", 3, 4, small, kEveryPointInLayers, /*slabs=*/true);
  EXPECT_TRUE(slab.cpml_apart && !slab.cpml_beside);
  const cuda::wave::KernelConfig by_hand =
      cuda::wave::parse_config(R"({"cpml": "beside", "design": "tma"})", 3, 4, small, kEveryPointInLayers);
  EXPECT_TRUE(by_hand.cpml_beside && by_hand.design == cuda::wave::StepDesign::tma);
  EXPECT_FALSE(
      cuda::wave::parse_config(R"({"cpml": "apart"})", 3, 4, small, kEveryPointInLayers).cpml_beside);
  refused(R"({"cpml": "beside", "temporal": 2})", 2, false, "steps one at a time");
}

// "resident" on the host (CI runs it): parsed, described, the CPML apart with its layers beside
// the march by default, and refused where it cannot run (3D, temporal blocking, a slab, the CPML
// in the march) or with a bad value.
TEST(WaveGpu, ResidentIsCheckedOnTheHost) {
  const cuda::wave::KernelConfig c =
      cuda::wave::parse_config(R"({"resident": 1})", 2, 4, 1000, kEveryPointInLayers);
  EXPECT_EQ(c.resident, 1);
  EXPECT_TRUE(c.cpml_apart && c.cpml_beside);
  EXPECT_NE(cuda::wave::describe(c).find("resident=1"), std::string::npos) << cuda::wave::describe(c);
  const cuda::wave::KernelConfig apart =
      cuda::wave::parse_config(R"({"resident": 1, "cpml": "apart"})", 2, 4, 1000, kEveryPointInLayers);
  EXPECT_TRUE(apart.cpml_apart && !apart.cpml_beside);  // "apart" given is kept for the single steps
  EXPECT_EQ(cuda::wave::parse_config("{}", 2, 4, 1000, kEveryPointInLayers).resident, 0);
  const auto refused = [&](const char* json, int dim, bool slabs, const char* says) {
    try {
      cuda::wave::parse_config(json, dim, 4, 1000, kEveryPointInLayers, slabs);
      ADD_FAILURE() << json << " was accepted";
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::invalid_argument) << json;
      EXPECT_NE(std::string(e.what()).find(says), std::string::npos) << json << ": " << e.what();
    }
  };
  refused(R"({"resident": 2})", 2, false, "resident must be 0 or 1");
  refused(R"({"resident": 1})", 3, false, "2D only");
  refused(R"({"resident": 1})", 2, true, "slabs step one at a time");
  refused(R"({"resident": 1, "temporal": 2})", 2, false, "exclude each other");
  refused(R"({"resident": 1, "cpml": "march"})", 2, false, "computes the CPML apart");
  refused(R"({"resident": "on"})", 2, false, "unknown or mistyped kernel parameter 'resident'");
}

// The CPML beside the march (acoustic_layers.cuh: the march writes the points clear of the layers,
// acoustic_layers_whole the layers' points, on two streams) gives the bits of the CPML apart,
// whose arithmetic it repeats, at every point: on CpmlApartMatchesTheCpu's grids, each design, in
// graphs and step by step, R = 1, 4, 8, with and without a free surface, and a third source by the
// corner whose taps reach into the layers (the layers' kernel adds those). Chunks of 6 and 7 planes
// put a chunk's first planes in the z layer. A point written by both kernels, or by neither, or a
// tap lost or added twice, would differ.
TEST(WaveGpu, CpmlBesideGivesTheBitsOfTheCpmlApart) {
  REQUIRE_GPU();
  const wave::Model m3 = heterogeneous(3, 64, 60, 72, 10.0, 4246), m2 = model_for(2);
  struct Set {
    int dim;
    const char* shape;
  };
  const Set sets[] = {{3, R"("design": "l1", "block": "8x4", "vec": 2, "nw": 8})"},
                      {3, R"("design": "l1", "block": "32x4", "vec": 4, "nw": 7, "graph": 8})"},
                      {3, R"("design": "tile", "block": "8x8", "nw": 6, "zq": 1, "graph": 8})"},
                      {3, R"("design": "tma", "block": "8x8", "nw": 6, "ahead": 1})"},
                      {2, R"("block": "64x1", "vec": 2, "nw": 2})"},
                      {2, R"("block": "32x1", "vec": 4, "nw": 3, "graph": 8})"}};
  for (int dim : {3, 2})
    for (int radius : {1, 4, 8})
      for (bool free_surface : {false, true}) {
        const Case c{dim, radius, free_surface};
        const wave::Model& m = dim == 3 ? m3 : m2;
        wave::Options o = shot(c, m);
        o.backend = "cuda";
        o.final_field = true;
        o.sources.push_back(
            {{1.3 * m.h, dim == 3 ? 1.7 * m.h : 0.0, 0.9 * m.h}, wave::ricker(10, 0.12, o.dt, o.nt)});
        for (const Set& set : sets) {
          if (set.dim != dim || (radius == 1 && std::string(set.shape).find("zq") != std::string::npos))
            continue;
          const std::string t = name_of(c) + " " + set.shape;
          o.kernel_params = std::string(R"({"cpml": "apart", )") + set.shape;
          const wave::Result apart = wave::run(m, o);
          o.kernel_params = std::string(R"({"cpml": "beside", )") + set.shape;
          const wave::Result beside = wave::run(m, o);
          EXPECT_NE(beside.kernel.find("layers=beside"), std::string::npos) << t << ": " << beside.kernel;
          ASSERT_FALSE(apart.final_field.empty()) << t;
          const Diff ff = rel_max_diff(beside.final_field, apart.final_field, apart.final_field);
          const Diff tr = rel_max_diff(beside.traces, apart.traces, apart.traces);
          EXPECT_EQ(ff.rel, 0.0) << t << ": worst field element " << ff.at;
          EXPECT_EQ(tr.rel, 0.0) << t << ": worst trace sample " << tr.at;
        }
      }
}

// The one-kernel 2D step (KernelConfig::side: the layers' points and the receivers in the first
// blocks of the march's launch, acoustic_step_beside.cuh) against the layers' kernel on a second
// stream (side 0), bit for bit in traces and final field: R = 1, 4, 8, with and without a free
// surface, a third source by the corner whose taps reach into the layers, 24 receivers (at 16
// layer points a thread more than the side's warps), 1, 2 and 16 layer points a thread, 4- and
// 2-wide vectors, graphs of 8 and step by step.
TEST(WaveGpu, OneKernelStepGivesTheBitsOfTwoStreams) {
  REQUIRE_GPU();
  const wave::Model m = model_for(2);
  const char* shapes[] = {R"("block": "64x1", "vec": 4, "nw": 4, "graph": 8)",
                          R"("block": "32x1", "vec": 2, "nw": 3, "graph": 0)"};
  for (int radius : {1, 4, 8})
    for (bool free_surface : {false, true}) {
      const Case c{2, radius, free_surface};
      wave::Options o = shot(c, m);
      o.backend = "cuda";
      o.final_field = true;
      o.sources.push_back({{1.3 * m.h, 0.0, 0.9 * m.h}, wave::ricker(10, 0.12, o.dt, o.nt)});
      for (int r = 0; r < 20; ++r)  // more receivers than the side's warps at 16 points a thread
        o.receivers.push_back({(3.5 + 2.5 * r) * m.h, 0.0, (4.25 + 4.0 * r) * m.h});
      for (const char* shape : shapes) {
        o.kernel_params = std::string(R"({"cpml": "beside", "side": 0, )") + shape + "}";
        const wave::Result two = wave::run(m, o);
        ASSERT_FALSE(two.final_field.empty());
        for (int side : {1, 2, 16}) {
          const std::string t = name_of(c) + " side " + std::to_string(side) + " " + shape;
          o.kernel_params = R"({"cpml": "beside", "side": )" + std::to_string(side) + ", " + shape + "}";
          const wave::Result one = wave::run(m, o);
          EXPECT_NE(one.kernel.find("side=" + std::to_string(side)), std::string::npos)
              << t << ": " << one.kernel;
          const Diff ff = rel_max_diff(one.final_field, two.final_field, two.final_field);
          const Diff tr = rel_max_diff(one.traces, two.traces, two.traces);
          EXPECT_EQ(ff.rel, 0.0) << t << ": worst field element " << ff.at;
          EXPECT_EQ(tr.rel, 0.0) << t << ": worst trace sample " << tr.at;
        }
      }
    }
}

// march_rows (a 2D step's plain blocks at R = 3 and 4: acoustic_step.cuh rows_lead) against
// march_l1. With the CPML in the march and split 1 the interior box runs acoustic_step_rows and
// the other blocks march_l1; with split 0 every block runs march_l1. The same arithmetic on x
// neighbours loaded a row earlier: the same bits, with 2- and 4-wide vectors, chunks shorter and
// longer than R, a free surface and none, and a source and a receiver inside the box (its taps
// are march_rows'); at R = 2 and 8 both launches run march_l1 (the same bits as well). 300 points
// wide, so that 64- and 128-point blocks lie clear of the layers.
TEST(WaveGpu, TheRowsMarchGivesTheBitsOfTheL1March) {
  REQUIRE_GPU();
  const wave::Model m = heterogeneous(2, 40, 1, 300, 10.0, 4247);
  for (int radius : {2, 3, 4, 8})
    for (bool free_surface : {false, true})
      for (const char* shape :
           {R"("block": "32x1", "vec": 2, "nw": 5)", R"("block": "32x1", "vec": 4, "nw": 2)"}) {
        const Case c{2, radius, free_surface};
        const std::string t = name_of(c) + " " + shape;
        wave::Options o = shot(c, m);
        o.backend = "cuda";
        o.final_field = true;
        // Grid x 160.7 and 176.3 (10 layer points, then the model's): inside the 64- and the
        // 128-point blocks that start at grid x 128.
        o.sources.push_back({{20.3 * m.h, 0.0, 150.7 * m.h}, wave::ricker(14, 0.08, o.dt, o.nt)});
        o.receivers.push_back({17.6 * m.h, 0.0, 166.3 * m.h});
        o.kernel_params = std::string(R"({"cpml": "march", "split": 0, )") + shape + "}";
        const wave::Result l1 = wave::run(m, o);
        o.kernel_params = std::string(R"({"cpml": "march", "split": 1, )") + shape + "}";
        const wave::Result rows = wave::run(m, o);
        const size_t at = rows.kernel.find("interior_blocks=");
        ASSERT_NE(at, std::string::npos) << t << ": " << rows.kernel;
        EXPECT_GT(std::stoll(rows.kernel.substr(at + 16)), 0) << t << ": " << rows.kernel;
        ASSERT_FALSE(l1.final_field.empty());
        const Diff ff = rel_max_diff(rows.final_field, l1.final_field, l1.final_field);
        const Diff tr = rel_max_diff(rows.traces, l1.traces, l1.traces);
        EXPECT_EQ(ff.rel, 0.0) << t << ": worst field element " << ff.at;
        EXPECT_EQ(tr.rel, 0.0) << t << ": worst trace sample " << tr.at;
      }
}

// "side" on the host (CI runs it): parsed and described; 0..16; only with the layers beside the
// march in 2D, where a placement given by hand that is another drops the default's.
TEST(WaveGpu, SideIsCheckedOnTheHost) {
  const auto parse = [](const char* json, int dim, bool slabs = false) {
    return cuda::wave::parse_config(json, dim, 4, dim == 2 ? 1020 : 236 * 236, 0.04, slabs);
  };
  const cuda::wave::KernelConfig c = parse(R"({"side": 2})", 2);
  EXPECT_EQ(c.side, 2);
  EXPECT_NE(cuda::wave::describe(c).find("layers=beside side=2"), std::string::npos)
      << cuda::wave::describe(c);
  EXPECT_EQ(parse(R"({"side": 0})", 2).side, 0);
  EXPECT_EQ(cuda::wave::describe(parse(R"({"side": 0})", 2)).find("side="), std::string::npos);
  EXPECT_EQ(parse(R"({"cpml": "apart"})", 2).side, 0);
  EXPECT_EQ(parse(R"({"cpml": "march"})", 2).side, 0);
  EXPECT_EQ(parse(R"({"temporal": 2})", 2).side, 0);  // temporal blocking computes its CPML in its pass
  EXPECT_EQ(parse("{}", 2, /*slabs=*/true).side, 0);  // a slab adds its layers' terms after its march
  EXPECT_EQ(parse("{}", 3).side, 0);
  // The default (acoustic.cu side_points_2d, from the campaign wave-2d-side): about 40 side threads a
  // row point at R <= 2 and at R >= 5 on rows of up to 1200 points, 20 at R = 3 and 4; a second
  // stream at R >= 5 on longer rows and on rows above 3000 points.
  const auto side_of = [](int r, int64_t n, int width) {
    const int64_t row = n + 2 * width;
    const double share = 1 - double(n) * double(n) / (double(row) * double(row));
    return cuda::wave::default_config(2, r, row, share).side;
  };
  EXPECT_EQ(side_of(1, 1000, 10), 1);
  EXPECT_EQ(side_of(2, 2800, 10), 1);
  EXPECT_EQ(side_of(4, 1000, 10), 2);
  EXPECT_EQ(side_of(4, 2000, 10), 2);
  EXPECT_EQ(side_of(8, 1000, 10), 1);
  EXPECT_EQ(side_of(8, 1400, 10), 0);
  EXPECT_EQ(side_of(2, 1000, 20), 2);
  EXPECT_EQ(side_of(4, 1400, 20), 4);
  EXPECT_EQ(side_of(8, 1000, 20), 2);
  EXPECT_EQ(side_of(4, 4000, 10), 0);
  EXPECT_EQ(side_of(4, 2000, 100), 16);  // capped
  const auto refused = [&](const char* json, int dim, const char* says) {
    try {
      parse(json, dim);
      ADD_FAILURE() << json << " was accepted";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(says), std::string::npos) << json << ": " << e.what();
    }
  };
  refused(R"({"side": 17})", 2, "side must be 0..16");
  refused(R"({"side": -1})", 2, "side must be 0..16");
  refused(R"({"side": 1})", 3, "needs cpml \"beside\" in 2D");
  refused(R"({"cpml": "beside", "side": 1})", 3, "needs cpml \"beside\" in 2D");
  refused(R"({"cpml": "apart", "side": 1})", 2, "needs cpml \"beside\" in 2D");
  refused(R"({"side": "1"})", 2, "unknown or mistyped kernel parameter 'side'");
}

// "pdl" on the host (CI runs it): parsed and described, 0 or 1; by default (acoustic.cu pdl_leads,
// from the campaign wave-2d-pdl) on in 2D from R = 3, and at R = 1 with the layers' points in the
// march's launch; off at R = 2, at R = 1 without them, and in 3D.
TEST(WaveGpu, PdlIsCheckedOnTheHost) {
  const auto parse = [](const char* json, int r, double share) {
    return cuda::wave::parse_config(json, 2, r, 1020, share);
  };
  EXPECT_EQ(parse(R"({"pdl": 0})", 4, 0.04).pdl, 0);
  EXPECT_NE(cuda::wave::describe(parse(R"({"pdl": 0})", 4, 0.04)).find(" pdl=0"), std::string::npos);
  EXPECT_EQ(cuda::wave::describe(parse(R"({"pdl": 1})", 4, 0.04)).find("pdl="), std::string::npos);
  EXPECT_EQ(parse("{}", 4, 0.04).pdl, 1);
  EXPECT_EQ(parse("{}", 8, 0).pdl, 1);
  EXPECT_EQ(parse("{}", 2, 0.04).pdl, 0);
  EXPECT_EQ(parse("{}", 2, 0).pdl, 0);
  EXPECT_EQ(parse("{}", 1, 0.04).pdl, 1);  // side 1
  EXPECT_EQ(parse("{}", 1, 0).pdl, 0);
  EXPECT_EQ(parse(R"({"cpml": "apart"})", 1, 0.04).pdl, 0);             // no side
  EXPECT_EQ(cuda::wave::default_config(3, 4, 236 * 236, 0.23).pdl, 0);  // 3D launches plainly
  EXPECT_EQ(cuda::wave::parse_config(R"({"pdl": 1})", 3, 4, 236 * 236, 0.23).pdl, 1);
  for (const char* bad : {R"({"pdl": 2})", R"({"pdl": -1})", R"({"pdl": true})"}) try {
      parse(bad, 4, 0.04);
      ADD_FAILURE() << bad << " was accepted";
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::invalid_argument) << bad;
      EXPECT_NE(std::string(e.what()).find("pdl"), std::string::npos) << bad << ": " << e.what();
    }
}

// A slab of a split run: its planes are a run of the whole domain's (the z axis's offset), and its
// face and inner chunks' planes are asked for apart. The boxes of the three plane ranges cover each
// layer point of the slab once, by the whole domain's z layers.
TEST(WaveGpu, LayerBoxesOfASlabFollowTheWholeDomainsLayers) {
  const int64_t whole = 40;
  for (int64_t offset : {0, 3, 12, 25, 31}) {
    acoustic::SetupFrame<float> s;
    s.dim = 3;
    s.nx = 14;
    s.ny = 11;
    s.nz = 9;  // planes [offset, offset + 9) of 40
    s.axis[0] = {3, 4, s.nx, 0};
    s.axis[1] = {2, 2, s.ny, 0};
    s.axis[2] = {6, 10, whole, offset};
    std::vector<int> seen(size_t(s.nx * s.ny * s.nz), 0);
    for (const auto& [k0, k1] : {std::pair<int64_t, int64_t>{0, 2}, {2, 7}, {7, 9}}) {
      const cuda::wave::LayerBoxes b = cuda::wave::layer_boxes(s, k0, k1);
      for (int k = 0; k < b.count; ++k)
        for (int z = 0; z < b.extent[k][2]; ++z)
          for (int y = 0; y < b.extent[k][1]; ++y)
            for (int x = 0; x < b.extent[k][0]; ++x) {
              const int64_t kk = b.lo[k][2] + z;
              ASSERT_TRUE(kk >= k0 && kk < k1) << offset;
              ++seen[size_t((kk * s.ny + b.lo[k][1] + y) * s.nx + b.lo[k][0] + x)];
            }
    }
    for (int64_t k = 0; k < s.nz; ++k)
      for (int64_t j = 0; j < s.ny; ++j)
        for (int64_t i = 0; i < s.nx; ++i) {
          const bool layer = s.axis[0].slot(i) >= 0 || s.axis[1].slot(j) >= 0 || s.axis[2].slot(k) >= 0;
          EXPECT_EQ(seen[size_t((k * s.ny + j) * s.nx + i)], layer ? 1 : 0)
              << "offset " << offset << " at " << i << "," << j << "," << k;
        }
  }
}

// Where the CPML apart is the default (acoustic.cu apart_leads and apart_shape, from the campaigns
// wave-3d-cpml-apart-shapes, wave-2d-cpml-apart and wave-{2d,3d}-r1-cpml): 3D from R = 2 where the
// layers hold at most 0.375 of the points, at R = 1 and from R = 6 at any share; the tile 8x16 in
// chunks of 8 (its z ring at R = 2..5) on small planes, tma 16x16 on large ones; a slab of a split
// run as one GPU; in 2D at every row length and radius. Host-side: CI runs it.
TEST(WaveGpu, TheCpmlApartIsTheDefaultWhereItLed) {
  using cuda::wave::StepDesign;
  acoustic::PmlAxis ten[3];  // 216^3 and a 10-point layer on every face
  for (auto& a : ten) a = {10, 10, 236, 0};
  const double share = acoustic::layer_share(ten);
  EXPECT_NEAR(share, 1 - std::pow(216.0 / 236.0, 3), 1e-12);
  const auto c4 = cuda::wave::default_config(3, 4, 236 * 236, share);
  EXPECT_TRUE(c4.cpml_apart);
  expect_shape(c4, StepDesign::tile, 8, 16, 8, 1, "R = 4, 236^2, apart");
  EXPECT_EQ(c4.zq, 1);
  const auto c4large = cuda::wave::default_config(3, 4, 620 * 620, 0.09);
  EXPECT_TRUE(c4large.cpml_apart);
  expect_shape(c4large, StepDesign::tma, 16, 16, 16, 1, "R = 4, 620^2, apart");
  const auto c8 = cuda::wave::default_config(3, 8, 276 * 276, 0.4);
  EXPECT_TRUE(c8.cpml_apart);
  expect_shape(c8, StepDesign::tile, 8, 16, 8, 1, "R = 8, 276^2, apart");
  EXPECT_EQ(c8.zq, 0);
  expect_shape(cuda::wave::default_config(3, 8, 492 * 492, 0.1), StepDesign::tma, 16, 16, 16, 1,
               "R = 8, 492^2");
  expect_shape(cuda::wave::default_config(3, 8, 620 * 620, 0.1), StepDesign::tma, 16, 16, 64, 1,
               "R = 8, 620^2");
  EXPECT_FALSE(cuda::wave::default_config(3, 2, 256 * 256, 0.399).cpml_apart);  // 216^3 + 20 points
  EXPECT_TRUE(cuda::wave::default_config(3, 2, 148 * 148, 0.353).cpml_apart);   // 128^3 + 10
  // R = 1 at any share (wave-3d-r1-cpml): the tile without its ring, which is compiled from R = 2.
  for (double r1_share : {share, 0.399}) {
    const auto c1 = cuda::wave::default_config(3, 1, 236 * 236, r1_share);
    EXPECT_TRUE(c1.cpml_apart && !c1.cpml_beside) << r1_share;
    expect_shape(c1, StepDesign::tile, 8, 16, 8, 1, "R = 1, 236^2, apart");
    EXPECT_EQ(c1.zq, 0);
  }
  EXPECT_FALSE(cuda::wave::default_config(3, 4, 236 * 236, kNoLayers).cpml_apart);
  // A slab places its CPML as one GPU would (a split run gives one GPU's bits), in chunks of at most
  // 16 planes (its faces are whole chunks).
  EXPECT_TRUE(cuda::wave::default_config(3, 4, 236 * 236, share, /*slabs=*/true).cpml_apart);
  EXPECT_EQ(cuda::wave::default_config(3, 8, 620 * 620, 0.1, /*slabs=*/true).nw, 16);
  EXPECT_FALSE(cuda::wave::default_config(3, 2, 256 * 256, 0.399, /*slabs=*/true).cpml_apart);
  EXPECT_FALSE(cuda::wave::default_config(3, 4, 236 * 236, share).cpml_beside);  // 3D: the terms after
  // 2D: apart at every row length and radius, its layers' points beside the march on one GPU, after
  // it in a slab (the same bits).
  for (int r : {1, 4})
    for (int64_t row : {1020, 2020, 4020}) {
      const auto d2 = cuda::wave::default_config(2, r, row, 0.02);
      EXPECT_TRUE(d2.cpml_apart && d2.cpml_beside) << r << " " << row;
      const auto slab = cuda::wave::default_config(2, r, row, 0.02, /*slabs=*/true);
      EXPECT_TRUE(slab.cpml_apart && !slab.cpml_beside) << r << " " << row;
    }
  expect_shape(cuda::wave::default_config(2, 4, 2020, 0.02), StepDesign::l1, 64, 1, 4, 0,
               "2D R = 4, 2020 points a row, apart");
  EXPECT_FALSE(cuda::wave::parse_config(R"({"cpml": "apart"})", 2, 4, 2020, 0.02).cpml_beside);
  EXPECT_FALSE(cuda::wave::parse_config(R"({"cpml": "march"})", 2, 4, 2020, 0.02).cpml_beside);
  // A design by hand keeps the default's choice; "cpml" overrides it; temporal blocking without
  // "cpml" takes the march, which its pass computes the CPML in.
  EXPECT_TRUE(cuda::wave::parse_config(R"({"design": "l1"})", 3, 4, 236 * 236, share).cpml_apart);
  EXPECT_FALSE(cuda::wave::parse_config(R"({"cpml": "march"})", 3, 4, 236 * 236, share).cpml_apart);
  EXPECT_FALSE(cuda::wave::parse_config(R"({"temporal": 2})", 2, 4, 2020, 0.02).cpml_apart);
}

// The layers' boxes cover each point that lies in some axis's layer once, and no other point: on
// grids whose layers differ per face (a free surface's missing top layer among them), overlap
// (layers wider than half an axis) or are absent, in 3D and 2D.
TEST(WaveGpu, LayerBoxesCoverEachLayerPointOnce) {
  struct Grid {
    int dim;
    int64_t nx, ny, nz;
    int lo[3], hi[3];
  };
  for (const Grid& g : {Grid{3, 30, 25, 20, {4, 3, 0}, {5, 2, 6}}, Grid{3, 12, 9, 7, {8, 5, 4}, {8, 6, 5}},
                        Grid{3, 16, 16, 16, {0, 0, 0}, {0, 0, 0}}, Grid{3, 17, 13, 11, {0, 4, 3}, {2, 0, 3}},
                        Grid{2, 40, 1, 30, {10, 0, 0}, {10, 0, 10}}}) {
    acoustic::SetupFrame<float> s;
    s.dim = g.dim;
    s.nx = g.nx;
    s.ny = g.ny;
    s.nz = g.nz;
    const int64_t n[3] = {g.nx, g.ny, g.nz};
    for (int a = 0; a < 3; ++a) s.axis[a] = {g.lo[a], g.hi[a], n[a], 0};
    const cuda::wave::LayerBoxes b = cuda::wave::layer_boxes(s, 0, g.nz);
    std::vector<int> seen(size_t(g.nx * g.ny * g.nz), 0);
    ASSERT_LE(b.count, cuda::wave::kLayerBoxes);
    for (int k = 0; k < b.count; ++k) {
      EXPECT_EQ(b.first[k + 1] - b.first[k], int64_t(b.extent[k][0]) * b.extent[k][1] * b.extent[k][2]);
      for (int z = 0; z < b.extent[k][2]; ++z)
        for (int y = 0; y < b.extent[k][1]; ++y)
          for (int x = 0; x < b.extent[k][0]; ++x) {
            const int64_t i = b.lo[k][0] + x, j = b.lo[k][1] + y, kk = b.lo[k][2] + z;
            ASSERT_TRUE(i >= 0 && i < g.nx && j >= 0 && j < g.ny && kk >= 0 && kk < g.nz);
            ++seen[size_t((kk * g.ny + j) * g.nx + i)];
          }
    }
    for (int64_t k = 0; k < g.nz; ++k)
      for (int64_t j = 0; j < g.ny; ++j)
        for (int64_t i = 0; i < g.nx; ++i) {
          const bool layer = s.axis[0].slot(i) >= 0 || s.axis[1].slot(j) >= 0 || s.axis[2].slot(k) >= 0;
          EXPECT_EQ(seen[size_t((k * g.ny + j) * g.nx + i)], layer ? 1 : 0) << i << "," << j << "," << k;
        }
  }
}

namespace {

// A 2D R = 4 setup of 64^2 points whose launches are checked on the host (no device touched).
acoustic::Setup<float> hand_built_setup() {
  acoustic::Setup<float> s;
  s.dim = 2;
  s.radius = 4;
  s.nx = s.nz = 64;
  s.line = s.slice = 72;
  s.axis[2].n = s.nz;
  return s;
}

// The state's constructor refuses `c` on `setup` as invalid input, saying `says`.
void refused_by_state(const acoustic::Setup<float>& setup, const cuda::wave::KernelConfig& c,
                      const std::string& says) {
  try {
    cuda::wave::AcousticGpu state(setup, c);
    ADD_FAILURE() << says << ": accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::invalid_argument) << says << ": " << e.what();
    EXPECT_NE(std::string(e.what()).find(says), std::string::npos) << says << ": " << e.what();
  }
}

}  // namespace

// The CPML beside the march built by hand (parse_config never gives it to a slab, nor without the
// CPML apart): refused by the state's constructor before it touches the device (CI runs this).
TEST(WaveGpu, AHandBuiltBesideLaunchIsChecked) {
  const acoustic::Setup<float> s = hand_built_setup();
  const cuda::wave::KernelConfig c = cuda::wave::default_config(2, 4, 64, kEveryPointInLayers);
  ASSERT_TRUE(c.cpml_apart && c.cpml_beside);
  cuda::wave::KernelConfig alone = c;
  alone.cpml_apart = false;
  refused_by_state(s, alone, "the CPML apart's");
  acoustic::Setup<float> slab = s;  // planes 3..66 of a 100-plane domain
  slab.axis[2].offset = 3;
  slab.axis[2].n = 100;
  refused_by_state(slab, c, "a slab of a split run");
  // KernelConfig::side: the 2D layers beside the march only, 0..16.
  cuda::wave::KernelConfig lone_side = c;
  lone_side.cpml_beside = false;
  lone_side.side = 2;
  refused_by_state(s, lone_side, "side must be 0, or 1..16");
  cuda::wave::KernelConfig many = c;
  many.side = 17;
  refused_by_state(s, many, "side must be 0, or 1..16");
  cuda::wave::KernelConfig odd = c;  // the side's receivers take whole warps
  odd.side = 1;
  odd.bx = 48;
  refused_by_state(s, odd, "side needs rows of whole warps");
  cuda::wave::KernelConfig pdl = c;
  pdl.pdl = 2;
  refused_by_state(s, pdl, "pdl must be 0 or 1");
}

// A temporal launch built by hand skips parse_config: the state's constructor refuses it before it
// touches the device (so CI runs this too), naming what is wrong.
TEST(WaveGpu, AHandBuiltTemporalLaunchIsChecked) {
  acoustic::Setup<float> s = hand_built_setup();
  cuda::wave::KernelConfig c = cuda::wave::default_config(2, 4, 64, kEveryPointInLayers);
  c.graph = 0;
  c.temporal = 2;
  c.cpml_apart = c.cpml_beside = false;  // a temporal pass computes its CPML (parse_config's choice)
  c.side = 0;
  cuda::wave::KernelConfig bad = c;
  bad.temporal = 7;
  refused_by_state(s, bad, "temporal must be 0 or 2..4");
  bad = c;
  bad.temporal_block = 48;
  refused_by_state(s, bad, "temporal_block must be whole warps");
  bad = c;
  bad.temporal_block = 32;
  refused_by_state(s, bad, "leaves 16 columns");
  bad = c;
  bad.temporal_nw = 0;
  refused_by_state(s, bad, "temporal_nw must be at least 1");
  bad = c;
  bad.graph = 6;  // not a multiple of 2 T = 4
  refused_by_state(s, bad, "graph must be a multiple of 2 x temporal");
  acoustic::Setup<float> slab = s;
  slab.axis[2].offset = 32;  // a split run's slab
  slab.axis[2].n = 128;
  refused_by_state(slab, c, "a split run's slabs step one at a time");
  acoustic::Setup<float> cube = s;
  cube.dim = 3;
  cube.ny = 64;
  cube.slice = 72 * 72;
  cube.axis[2].n = cube.nz;
  refused_by_state(cube, c, "2D only");
}

// The launch table was measured on the H100 and checked on the H200: a run at the defaults on any
// other card says so, naming the card and how to choose another launch.
TEST(WaveGpu, AnUnmeasuredCardIsTold) {
  for (const char* measured : {"NVIDIA H100 80GB HBM3", "NVIDIA H100 PCIe", "NVIDIA H200", "NVIDIA H200 NVL"})
    EXPECT_EQ(cuda::wave::untuned_card_notice(measured), "") << measured;
  EXPECT_NE(cuda::wave::untuned_card_notice("NVIDIA GH200 480GB"), "");
  const std::string n = cuda::wave::untuned_card_notice("NVIDIA L40S");
  EXPECT_NE(n.find("NVIDIA L40S"), std::string::npos) << n;
  EXPECT_NE(n.find("--kernel-params"), std::string::npos) << n;
}

// A KernelConfig built by hand skips parse_config: the state's constructor checks `ahead` itself,
// before it touches the device (so CI runs this too).
TEST(WaveGpu, AHandBuiltConfigsAheadIsChecked) {
  acoustic::Setup<float> s;
  s.dim = 3;
  s.radius = 4;
  s.nx = s.ny = s.nz = 16;
  for (int graph : {-2, 3, 2048}) {  // an odd graph would end on the other time level
    cuda::wave::KernelConfig c = cuda::wave::default_config(3, 4, 512 * 512, kNoLayers);
    c.graph = graph;
    try {
      cuda::wave::AcousticGpu state(s, c);
      ADD_FAILURE() << "graph " << graph << " was accepted";
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::invalid_argument) << e.what();
      EXPECT_NE(std::string(e.what()).find("graph must be 0 or an even count"), std::string::npos)
          << e.what();
    }
  }
  for (int ahead : {-1, 9, 1000}) {
    cuda::wave::KernelConfig c = cuda::wave::default_config(3, 4, 512 * 512, kNoLayers);
    ASSERT_EQ(c.design, cuda::wave::StepDesign::tma);
    c.ahead = ahead;
    try {
      cuda::wave::AcousticGpu state(s, c);
      ADD_FAILURE() << "ahead " << ahead << " was accepted";
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::invalid_argument) << e.what();
      EXPECT_NE(std::string(e.what()).find("ahead must be 0..8, got " + std::to_string(ahead)),
                std::string::npos)
          << e.what();
    }
  }
}

TEST(WaveGpu, BadKernelParametersAreRefused) {
  REQUIRE_GPU();
  const wave::Model m3 = model_for(3), m2 = model_for(2);
  for (const char* bad : {R"({"vec": 3})", R"({"block": "32by4"})", R"({"blocks": "32x4"})", R"({"nw": 0})",
                          R"({"block": "33x1"})", "not json", R"({"design": "ring"})", R"({"design": 1})",
                          R"({"design": "tile", "vec": 2})", R"({"zq": 1})", R"({"design": "tile", "zq": 2})",
                          R"({"split": 2})",
                          // A box edge of 64 x 4 + 2 x 4 = 264 points, past the copy engine's 256.
                          R"({"design": "tma", "block": "64x4"})", R"({"design": "tma", "split": 0})"}) {
    wave::Options o = shot({3, 4, false}, m3);
    o.backend = "cuda";
    o.kernel_params = bad;
    try {
      wave::run(m3, o);
      ADD_FAILURE() << bad << " was accepted";
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::invalid_argument) << bad << ": " << e.what();
    }
  }
  // 2D has no y: a block with by > 1, and the tile design, are refused.
  for (const char* bad : {R"({"block": "32x4"})", R"({"design": "tile", "block": "32x1"})"}) {
    wave::Options o = shot({2, 4, false}, m2);
    o.backend = "cuda";
    o.kernel_params = bad;
    try {
      wave::run(m2, o);
      ADD_FAILURE() << "2D " << bad << " was accepted";
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::invalid_argument) << e.what();
    }
  }
}

// tests/wave/test_wave_analytic.cpp's 3D geometry on the GPU: 2000 m/s, h = 10 m, a 12 Hz Ricker
// (6.04 points per shortest wavelength), receivers 17 and 34 points away along x (the second
// off the grid by fractions of h on every axis, Hicks), dt at 0.4 of the limit, compared until
// a wave mirrored across any face of the box (R points inside its outermost points) could arrive.
TEST(WaveGpu, Homogeneous3DMatchesTheAnalyticSolutionAtR4) {
  REQUIRE_GPU();
  const double h = 10, v = 2000, f0 = 12, delay = 1.2 / f0;
  const int R = 4, cpml = 20;
  const int64_t nz = 35, ny = 35, nx = 43;
  const wave::Point src{170, 170, 40};
  const std::vector<wave::Point> recs = {{170, 170, 210}, {170 - 2.9, 170 + 4.4, 380 - 6.8}};
  const double dt = 0.4 * wave::max_stable_dt(3, R, h, v);
  wave::Boundary b;
  b.cpml_width = cpml;
  const wave::Domain d = wave::Domain::make(3, R, nz, ny, nx, b);
  const auto reflection_steps = [&](const wave::Point& r) {
    const double lo[3] = {double(-d.lo[0] + R) * h, double(-d.lo[1] + R) * h, double(-d.lo[2] + R) * h};
    const double hi[3] = {double(nx - 1 + d.hi[0] - R) * h, double(ny - 1 + d.hi[1] - R) * h,
                          double(nz - 1 + d.hi[2] - R) * h};
    const double s[3] = {src.x, src.y, src.z}, p[3] = {r.x, r.y, r.z};
    double nearest = 1e300;
    for (int a = 0; a < 3; ++a)
      for (double face : {lo[a], hi[a]}) {
        double q[3] = {s[0], s[1], s[2]};
        q[a] = 2 * face - s[a];
        nearest = std::min(nearest, std::sqrt((q[0] - p[0]) * (q[0] - p[0]) + (q[1] - p[1]) * (q[1] - p[1]) +
                                              (q[2] - p[2]) * (q[2] - p[2])));
      }
    return int64_t(std::floor(nearest / v / dt));
  };
  std::vector<int64_t> window;
  for (const auto& r : recs) window.push_back(reflection_steps(r));
  const int64_t nt = *std::max_element(window.begin(), window.end());
  wave::Options o;
  o.backend = "cuda";
  o.radius = R;
  o.dt = dt;
  o.nt = nt;
  o.boundary = b;
  o.sources = {{src, wave::ricker(f0, delay, dt, nt)}};
  o.receivers = recs;
  const wave::Result res = wave::run(wave::Model::constant(3, nz, ny, nx, h, float(v)), o);
  ASSERT_EQ(res.traces.size(), recs.size() * size_t(nt));
  for (size_t i = 0; i < recs.size(); ++i) {
    const double r =
        std::sqrt((recs[i].x - src.x) * (recs[i].x - src.x) + (recs[i].y - src.y) * (recs[i].y - src.y) +
                  (recs[i].z - src.z) * (recs[i].z - src.z));
    EXPECT_GT(double(window[i]) * dt, r / v + 2.3 / f0) << "receiver " << i << ": the window is too short";
    const auto want = wave::analytic_trace(
        3, r, v, [&](double t) { return ricker_at(f0, delay, t); }, dt, window[i]);
    const double misfit = relative_l2(res.traces.data() + i * size_t(nt), want);
    report("gpu_3d_r4_analytic_misfit_rec" + std::to_string(i), misfit);
    EXPECT_LE(misfit, 0.01) << "receiver " << i;
  }
}

// The process's own count of device memory held (what Python's Ctrl-C tests read): it rises while
// a run holds its state, and a run stopped part-way gives back every byte; a field's move keeps its
// bytes counted once.
TEST(WaveGpu, AStoppedRunGivesBackEveryByteItHeld) {
  REQUIRE_GPU();
  const int64_t before = cuda::device_bytes_held();
  {
    DeviceField<float> a(Extents{40, 30, 20}, 4);
    EXPECT_EQ(cuda::device_bytes_held() - before, a.layout().alloc_bytes());
    DeviceField<float> b(std::move(a));
    DeviceField<float> c(Extents{8, 8, 8}, 1);
    c = std::move(b);
    EXPECT_EQ(cuda::device_bytes_held() - before, c.layout().alloc_bytes());
  }
  EXPECT_EQ(cuda::device_bytes_held(), before);
  const auto c = test::checkpoint_case(3, false, "cuda");
  wave::Options o = c.options;
  int64_t polls = 0, held_inside = 0;
  o.stop_requested = [&] {
    held_inside = std::max(held_inside, cuda::device_bytes_held() - before);
    return ++polls > c.options.nt / 2;
  };
  EXPECT_TRUE(wave::run(c.model, o).interrupted);
  EXPECT_GT(held_inside, 0) << "the run's state was not counted";
  EXPECT_EQ(cuda::device_bytes_held(), before);
}

// The GPU's traces are the same bits on every run (the receivers' sums have a fixed order), and a
// run resumed from any of its checkpoints ends with the traces and field of the run never
// stopped, bit for bit: 3D and 2D, with and without a free surface, and after a stop request.
TEST(WaveGpu, ResumesFromACheckpointBitForBit) {
  REQUIRE_GPU();
  for (const auto& [dim, free_surface] : {std::pair{3, false}, std::pair{3, true}, std::pair{2, false}}) {
    SCOPED_TRACE(std::to_string(dim) + "D" + (free_surface ? " free surface" : ""));
    const auto c = test::checkpoint_case(dim, free_surface, "cuda");
    const wave::Result whole = wave::run(c.model, c.options);
    EXPECT_TRUE(test::same_bits(wave::run(c.model, c.options).traces, whole.traces)) << "two runs differ";
    wave::Options o = c.options;
    o.checkpoint_every = c.options.nt / 3;
    std::vector<wave::Checkpoint> kept;
    o.on_checkpoint = [&kept](const wave::Checkpoint& k) { kept.push_back(k); };
    int64_t polls = 0;
    o.stop_requested = [&polls, &c] { return ++polls > c.options.nt - 7; };
    const wave::Result stopped = wave::run(c.model, o);
    EXPECT_TRUE(stopped.interrupted);
    ASSERT_EQ(kept.size(), 3u);  // two periodic, then the stop's
    EXPECT_EQ(kept.back().step, c.options.nt - 7);
    EXPECT_EQ(kept.front().backend, "cuda");
    for (const wave::Checkpoint& k : kept) {
      wave::Options r = c.options;
      r.resume = &k;
      const wave::Result resumed = wave::run(c.model, r);
      EXPECT_TRUE(test::same_bits(resumed.traces, whole.traces))
          << "from step " << k.step << ": first difference at "
          << test::first_difference(resumed.traces, whole.traces);
      EXPECT_TRUE(test::same_bits(resumed.final_field, whole.final_field)) << "from step " << k.step;
    }
    // The cpu refuses a GPU checkpoint, naming the backend to use.
    wave::Options cpu = c.options;
    cpu.backend = "cpu";
    cpu.resume = &kept.front();
    try {
      wave::run(c.model, cpu);
      ADD_FAILURE() << "a cuda checkpoint resumed on the cpu";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("--backend cuda"), std::string::npos) << e.what();
    }
  }
}

namespace {

// A second shot of checkpoint_case's model: other sources (two, another wavelet) and another
// receiver count, so that every array the kept state renews changes size or values.
wave::Options second_shot(const test::CheckpointCase& c) {
  wave::Options o = c.options;
  const double dt = wave::run_dt(c.model, o);
  const bool y = c.model.dim == 3;
  o.sources = {{{121.7, y ? 143.1 : 0.0, 88.4}, wave::ricker(18, 0.07, dt, o.nt)},
               {{201.2, y ? 66.6 : 0.0, 240.9}, wave::ricker(30, 0.04, dt, o.nt)}};
  o.receivers.push_back({300.1, y ? 250.5 : 0.0, 30.7});
  o.receivers.push_back({12.9, y ? 20.2 : 0.0, 333.3});
  return o;
}

// A run of `o` under kernel parameters `params`, with snapshots at steps 0, 7, 33, 101 and the
// last (odd steps, so that blocks of steps of both parities end at them).
wave::Result run_with_snapshots(const wave::Model& m, const wave::Options& o, const std::string& params,
                                std::vector<wave::Snapshot>& snaps) {
  wave::Options p = o;
  p.kernel_params = params;
  p.snapshot_steps = {0, 7, 33, 101, o.nt - 1};
  p.on_snapshot = [&snaps](const wave::Snapshot& s) { snaps.push_back(s); };
  return wave::run(m, p);
}

void expect_same_run(const wave::Result& got, const wave::Result& fresh, const std::string& what) {
  EXPECT_TRUE(test::same_bits(got.traces, fresh.traces))
      << what << ": traces differ first at " << test::first_difference(got.traces, fresh.traces);
  EXPECT_TRUE(test::same_bits(got.final_field, fresh.final_field)) << what << ": final fields differ";
}

}  // namespace

// CUDA graphs of 2 to 64 steps (KernelConfig::graph) against one step at a time: the same kernels
// in the same order, so the same bits in the traces, the final field and snapshots taken between
// graphs (at steps no graph boundary falls on); and progress reports of steps done, from 0 to nt.
TEST(WaveGpu, GraphsGiveTheBitsOfOneStepAtATime) {
  REQUIRE_GPU();
  for (const auto& [dim, free_surface] : {std::pair{3, false}, std::pair{3, true}, std::pair{2, false}}) {
    SCOPED_TRACE(std::to_string(dim) + "D" + (free_surface ? " free surface" : ""));
    const auto c = test::checkpoint_case(dim, free_surface, "cuda");
    const int64_t nt = c.options.nt;
    const auto run = [&c, nt](const char* params, std::vector<wave::Snapshot>& snaps,
                              std::vector<int64_t>& reports) {
      wave::Options o = c.options;
      o.kernel_params = params;
      o.snapshot_steps = {0, 7, 33, 101, nt - 1};
      o.on_snapshot = [&snaps](const wave::Snapshot& s) { snaps.push_back(s); };
      o.progress = [&reports, nt](int64_t done, int64_t total) {
        EXPECT_EQ(total, nt);
        reports.push_back(done);
      };
      return wave::run(c.model, o);
    };
    std::vector<wave::Snapshot> one_snaps;
    std::vector<int64_t> one_reports;
    const wave::Result one = run(R"({"graph": 0})", one_snaps, one_reports);
    ASSERT_NE(one.kernel.find("graph=0"), std::string::npos) << one.kernel;
    for (const char* params : {R"({"graph": 2})", R"({"graph": 8})", R"({"graph": 64})"}) {
      SCOPED_TRACE(params);
      std::vector<wave::Snapshot> snaps;
      std::vector<int64_t> reports;
      const wave::Result r = run(params, snaps, reports);
      const std::string p = params;
      EXPECT_NE(r.kernel.find("graph=" + p.substr(p.find(':') + 2, p.find('}') - p.find(':') - 2)),
                std::string::npos)
          << r.kernel;
      expect_same_run(r, one, params);
      ASSERT_EQ(snaps.size(), one_snaps.size());
      for (size_t i = 0; i < snaps.size(); ++i) {
        EXPECT_EQ(snaps[i].step, one_snaps[i].step);
        EXPECT_TRUE(test::same_bits(snaps[i].field, one_snaps[i].field)) << "snapshot at " << snaps[i].step;
      }
      ASSERT_FALSE(reports.empty());
      EXPECT_EQ(reports.front(), 0);
      EXPECT_EQ(reports.back(), nt);
      EXPECT_TRUE(std::is_sorted(reports.begin(), reports.end()));
      EXPECT_LE(reports.size(), one_reports.size() + 1);
    }
  }
}

// A run on a state kept from an earlier run (Options::kept_state) gives the bits of a run on a
// state of its own: the earlier run's wavefield, CPML memory, taps and traces (non-zero, of other
// sizes) leave nothing behind. A run of another medium, grid or launch builds its own state and
// keeps it in place of the old; a resumed run on a kept state continues bit for bit.
TEST(WaveGpu, AKeptStateGivesTheBitsOfAFreshOne) {
  REQUIRE_GPU();
  for (const auto& [dim, free_surface] : {std::pair{3, false}, std::pair{3, true}, std::pair{2, false}}) {
    SCOPED_TRACE(std::to_string(dim) + "D" + (free_surface ? " free surface" : ""));
    const auto c = test::checkpoint_case(dim, free_surface, "cuda");
    const wave::Options b = second_shot(c);
    wave::Model other = c.model;
    other.v[other.v.size() / 2] *= 1.1f;  // one velocity: another medium of the same shape
    wave::Options launch = b;
    launch.kernel_params = dim == 3 ? R"({"design": "l1", "block": "32x8", "vec": 4, "nw": 16})"
                                    : R"({"block": "64x1", "vec": 2, "nw": 8})";
    const wave::Result fresh_a = wave::run(c.model, c.options), fresh_b = wave::run(c.model, b);
    const wave::Result fresh_other = wave::run(other, b), fresh_launch = wave::run(c.model, launch);
    ASSERT_FALSE(test::same_bits(fresh_a.traces, fresh_b.traces));
    ASSERT_FALSE(test::same_bits(fresh_b.traces, fresh_other.traces));

    const std::shared_ptr<wave::KeptState> kept = wave::make_kept_state();
    const auto with_kept = [&kept](const wave::Model& m, wave::Options o) {
      o.kept_state = kept;
      return wave::run(m, o);
    };
    const wave::Result a = with_kept(c.model, c.options);
    EXPECT_FALSE(a.timing.state_kept) << "the first run found a state to keep";
    expect_same_run(a, fresh_a, "the first run");
    const wave::Result b1 = with_kept(c.model, b);
    EXPECT_TRUE(b1.timing.state_kept) << "the second shot of one medium built its own state";
    expect_same_run(b1, fresh_b, "the second shot on the kept state");
    const wave::Result o1 = with_kept(other, b);
    EXPECT_FALSE(o1.timing.state_kept) << "another medium took the kept state";
    expect_same_run(o1, fresh_other, "another medium");
    const wave::Result b2 = with_kept(c.model, b);
    EXPECT_FALSE(b2.timing.state_kept) << "the medium before the last took the last one's state";
    expect_same_run(b2, fresh_b, "back to the first medium");
    const wave::Result l1 = with_kept(c.model, launch);
    EXPECT_FALSE(l1.timing.state_kept) << "another launch took the kept state";
    expect_same_run(l1, fresh_launch, "another launch");

    // A run stopped part-way leaves its state kept; the resumed run renews it and ends as the
    // fresh run does.
    wave::Options stop = b;
    stop.kept_state = kept;
    std::vector<wave::Checkpoint> taken;
    stop.on_checkpoint = [&taken](const wave::Checkpoint& k) { taken.push_back(k); };
    int64_t polls = 0;
    stop.stop_requested = [&polls, &b] { return ++polls > b.nt / 2; };
    ASSERT_TRUE(wave::run(c.model, stop).interrupted);
    ASSERT_EQ(taken.size(), 1u);
    wave::Options resume = b;
    resume.resume = &taken.front();
    const wave::Result r = with_kept(c.model, resume);
    EXPECT_TRUE(r.timing.state_kept);
    expect_same_run(r, fresh_b, "resumed on the kept state");
  }
}

// The resident launch (KernelConfig::resident: a block of steps in one cooperative kernel, the
// fields in shared memory, bands of rows cut to equal cost) against one step at a time with the
// CPML apart, whose arithmetic it repeats: the same bits in the traces, the final field and the
// snapshots, at R = 1, 4 and 8, with CPML layers on every face or a free surface, launches of
// both parities (snapshots at odd steps; the time loop's blocks of 128 and 16 steps, at graph 32
// and 0), receivers whose taps cross bands (the halo grows past R to reach them), and a source near
// a band's edge; a model whose rows leave no room for m in shared memory; a block of 700 steps in
// launches of 256 (the receivers' samples buffer's); then a second shot on a kept state. A band's
// edge exchanged late, a tap lost or a receiver sampled from a stale halo would differ.
TEST(WaveGpu, ResidentGivesTheBitsOfOneStepAtATime) {
  REQUIRE_GPU();
  for (const bool free_surface : {false, true}) {
    auto c = test::checkpoint_case(2, free_surface, "cuda");
    for (int r = 0; r < 12; ++r) c.options.receivers.push_back({7.3 + 73.1 * r, 0.0, 455.5 - 37.9 * r});
    c.options.sources.push_back({{478.6, 0.0, 600.2}, c.options.sources.front().wavelet});
    c.options.nt = 211;
    for (const int radius : {1, 4, 8}) {
      wave::Options o = c.options;
      o.radius = radius;
      for (auto& src : o.sources) src.wavelet = wave::ricker(25, 0.05, wave::run_dt(c.model, o), o.nt);
      const auto run = [&](const std::string& params, std::vector<wave::Snapshot>& snaps) {
        return run_with_snapshots(c.model, o, params, snaps);
      };
      std::vector<wave::Snapshot> one_snaps;
      const wave::Result one = run(R"({"cpml": "apart", "graph": 0})", one_snaps);
      for (const char* params : {R"({"resident": 1})", R"({"resident": 1, "graph": 0})"}) {
        SCOPED_TRACE(std::string(free_surface ? "free surface " : "") + "R = " + std::to_string(radius) +
                     " " + params);
        std::vector<wave::Snapshot> snaps;
        const wave::Result r = run(params, snaps);
        EXPECT_NE(r.kernel.find("resident bands="), std::string::npos) << r.kernel;
        if (radius == 1) {  // Hicks' receivers reach 4 rows past a band
          EXPECT_EQ(r.kernel.find("halo=1 "), std::string::npos) << r.kernel;
        }
        expect_same_run(r, one, params);
        ASSERT_EQ(snaps.size(), one_snaps.size());
        for (size_t i = 0; i < snaps.size(); ++i) {
          EXPECT_EQ(snaps[i].step, one_snaps[i].step);
          EXPECT_TRUE(test::same_bits(snaps[i].field, one_snaps[i].field)) << "snapshot at " << snaps[i].step;
        }
      }
    }
    const wave::Options b = second_shot(c);
    wave::Options rb = b, ra = c.options, fb = b;
    rb.kernel_params = ra.kernel_params = R"({"resident": 1})";
    fb.kernel_params = R"({"cpml": "apart", "graph": 0})";
    const wave::Result fresh_b = wave::run(c.model, fb);
    const std::shared_ptr<wave::KeptState> kept = wave::make_kept_state();
    ra.kept_state = rb.kept_state = kept;
    (void)wave::run(c.model, ra);
    const wave::Result b1 = wave::run(c.model, rb);
    EXPECT_TRUE(b1.timing.state_kept);
    EXPECT_NE(b1.kernel.find("resident bands="), std::string::npos) << b1.kernel;
    expect_same_run(b1, fresh_b, "a second shot by the resident launch on a kept state");
  }
  // Rows of 2000 points: m stays in global memory.
  {
    wave::Model wide = wave::Model::layered(2, 300, 1, 2000, 10.0, {{0.0, 1800.f}, {1500.0, 2600.f}});
    wave::Options o = test::checkpoint_case(2, false, "cuda").options;
    o.sources.front().at = {1501.0, 0.0, 9990.0};  // (z, y, x): by a band's edge
    for (int r = 0; r < 6; ++r) o.receivers.push_back({700.0 + 310.0 * r, 0.0, 1000.0 + 3000.0 * r});
    o.nt = 90;
    o.radius = 4;
    o.sources.front().wavelet = wave::ricker(25, 0.05, wave::run_dt(wide, o), o.nt);
    wave::Options one = o, res = o;
    one.kernel_params = R"({"cpml": "apart", "graph": 0})";
    res.kernel_params = R"({"resident": 1})";
    const wave::Result a = wave::run(wide, one), r = wave::run(wide, res);
    EXPECT_NE(r.kernel.find("m_shared=0"), std::string::npos) << r.kernel;
    expect_same_run(r, a, "rows of 2000 points, m in global memory");
  }
  // A block of 700 steps (graph 256: blocks of 1024) in launches of at most kSampleSteps = 256,
  // each summing its receivers' samples: the flags zeroed again, an odd launch's swap, the steps'
  // traces in their places.
  {
    auto c = test::checkpoint_case(2, true, "cuda");
    c.options.nt = 700;
    c.options.sources.front().wavelet =
        wave::ricker(25, 0.05, wave::run_dt(c.model, c.options), c.options.nt);
    wave::Options one = c.options, res = c.options;
    one.kernel_params = R"({"cpml": "apart", "graph": 0})";
    res.kernel_params = R"({"resident": 1, "graph": 256})";
    expect_same_run(wave::run(c.model, res), wave::run(c.model, one), "700 steps in launches of 256");
  }
  // A model whose bands do not fit one block's shared memory is refused by name, before any step.
  wave::Model big = wave::Model::layered(2, 6000, 1, 6000, 10.0, {{0.0, 1800.f}});
  wave::Options o = test::checkpoint_case(2, false, "cuda").options;
  o.kernel_params = R"({"resident": 1})";
  o.nt = 4;
  for (auto& src : o.sources) src.wavelet.resize(4);
  try {
    (void)wave::run(big, o);
    ADD_FAILURE() << "a 6000^2 resident run was accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::invalid_argument);
    EXPECT_NE(std::string(e.what()).find("bytes of shared memory a block"), std::string::npos) << e.what();
  }
}

// Temporal blocking (KernelConfig::temporal: T steps a pass, overlapped blocks marching a
// wavefront) against one step at a time: the same bits in the traces, the final field and the
// snapshots, at R = 1, 4 and 8 and T = 2, 3 and 4, with CPML layers on every face or a free
// surface, blocks much narrower than the model (several strips, so taps fall in blocks' halos) and
// chunks that do not divide it, passes alone and in CUDA graphs, snapshots at steps no pass ends
// on; and a second shot on a kept state.
TEST(WaveGpu, TemporalBlockingGivesTheBitsOfOneStepAtATime) {
  REQUIRE_GPU();
  for (const bool free_surface : {false, true}) {
    auto c = test::checkpoint_case(2, free_surface, "cuda");
    // Receivers across the model and a second source near a strip's edge: taps in several strips.
    for (int r = 0; r < 12; ++r) c.options.receivers.push_back({7.3 + 73.1 * r, 0.0, 455.5 - 17.2 * r});
    c.options.sources.push_back({{478.6, 0.0, 600.2}, c.options.sources.front().wavelet});
    c.options.nt = 211;
    for (auto& src : c.options.sources) src.wavelet.resize(size_t(c.options.nt));
    for (const int radius : {1, 4, 8}) {
      wave::Options o = c.options;
      o.radius = radius;
      for (auto& src : o.sources)  // the wavelet's length is the run's, whatever the radius's dt
        src.wavelet = wave::ricker(25, 0.05, wave::run_dt(c.model, o), o.nt);
      const auto run = [&](const std::string& params, std::vector<wave::Snapshot>& snaps) {
        return run_with_snapshots(c.model, o, params, snaps);
      };
      // One step at a time with the CPML in the march, whose arithmetic the passes repeat (2D's
      // default adds it apart).
      std::vector<wave::Snapshot> one_snaps;
      const wave::Result one = run(R"({"cpml": "march", "graph": 0})", one_snaps);
      for (const int T : {2, 3, 4}) {
        const int block = 2 * T * radius + 32 <= 64 ? 64 : 2 * T * radius + 32 <= 128 ? 128 : 256;
        for (const int graph : {0, 24}) {
          const std::string params = "{\"temporal\": " + std::to_string(T) +
                                     ", \"temporal_block\": " + std::to_string(block) +
                                     ", \"temporal_nw\": 7, \"graph\": " + std::to_string(graph) + "}";
          SCOPED_TRACE(std::string(free_surface ? "free surface " : "") + "R = " + std::to_string(radius) +
                       " " + params);
          std::vector<wave::Snapshot> snaps;
          const wave::Result r = run(params, snaps);
          EXPECT_NE(r.kernel.find("temporal=" + std::to_string(T)), std::string::npos) << r.kernel;
          expect_same_run(r, one, params);
          ASSERT_EQ(snaps.size(), one_snaps.size());
          for (size_t i = 0; i < snaps.size(); ++i)
            EXPECT_TRUE(test::same_bits(snaps[i].field, one_snaps[i].field))
                << "snapshot at " << snaps[i].step;
        }
      }
    }
    // A kept state renews the pass's taps, samples and second set of arrays for the next shot.
    const wave::Options b = second_shot(c);
    wave::Options tb = b;
    tb.kernel_params = R"({"temporal": 4, "temporal_block": 128, "temporal_nw": 11})";
    wave::Options ta = c.options;
    ta.kernel_params = tb.kernel_params;
    wave::Options fb = b;  // one step at a time in the passes' arithmetic (the CPML in the march)
    fb.kernel_params = R"({"cpml": "march"})";
    const wave::Result fresh_b = wave::run(c.model, fb);
    const std::shared_ptr<wave::KeptState> kept = wave::make_kept_state();
    ta.kept_state = tb.kept_state = kept;
    (void)wave::run(c.model, ta);
    const wave::Result b1 = wave::run(c.model, tb);
    EXPECT_TRUE(b1.timing.state_kept);
    expect_same_run(b1, fresh_b, "a second shot by temporal passes on a kept state");
  }
}
