// fdstencil wave as a user meets it: the files a run writes and their shapes, the record's
// resampling, snapshots and their slices, the misfit against the analytic solution, and every
// refusal exiting 2 with a message that names the problem and leaving no file behind. Small
// models on the cpu backend, so each test takes a second or two on two cores.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "fdstencil/field.hpp"
#include "fdstencil/npy.hpp"
#include "fdstencil/wave.hpp"
#include "cli/cli_test_util.hpp"
#include "npy_as_numpy.hpp"

namespace fs = std::filesystem;
using namespace fdstencil;
using nlohmann::json;
using test::gpu_present;
using test::Result;

namespace {

// OpenMP threads that spin while they wait turn a 0.6 s run into 7 s when another process holds one
// of two cores (measured on the build machine); sleeping waiters keep the tests quick under load.
// A policy the caller chose is kept.
Result run(const std::string& args) {
  return test::run_cli(args, "OMP_WAIT_POLICY=${OMP_WAIT_POLICY:-passive} ");
}

json read_json(const fs::path& p) {
  std::ifstream f(p);
  return json::parse(f);
}

std::vector<float> floats(const NpyArray& a) {
  EXPECT_EQ(a.dtype, DType::f32);
  std::vector<float> v(a.bytes.size() / 4);
  std::memcpy(v.data(), a.bytes.data(), a.bytes.size());
  return v;
}

class WaveCli : public test::ScratchDirTest {
 protected:
  WaveCli() : ScratchDirTest("fdstencil_wave_cli_") {}
  fs::path out() const { return dir_ / "out"; }
  fs::path out(const std::string& name) const { return dir_ / "out" / name; }
};

// A 2D homogeneous run small enough for a second: 41 x 61 points of 10 m, five receivers.
const std::string kSmall2D =
    "wave --backend cpu --quiet --constant 2000 --shape 41,61 --spacing 10 --ricker 15 --source 200,300 "
    "--receiver-line 100,100:100,500:5";

}  // namespace

TEST_F(WaveCli, HelpListsEveryOption) {
  const Result r = run("wave --help");
  ASSERT_EQ(r.code, 0) << r.out;
  for (const char* option : {"--model",
                             "--constant",
                             "--layered",
                             "--shape",
                             "--spacing",
                             "--steps",
                             "--time",
                             "--dt",
                             "--cfl-safety",
                             "--radius",
                             "--cpml",
                             "--free-surface",
                             "--cpml-reflection",
                             "--interpolation",
                             "--source",
                             "--sources",
                             "--ricker",
                             "--delay",
                             "--wavelet",
                             "--wavelet-dt",
                             "--receivers",
                             "--receiver-line",
                             "--receiver-grid",
                             "--record-dt",
                             "--output",
                             "--no-final",
                             "--snapshot-every",
                             "--snapshot-steps",
                             "--snapshot-slice",
                             "--compare-analytic",
                             "--backend",
                             "--double",
                             "--kernel-params",
                             "--quiet",
                             "--overlap",
                             "--no-overlap",
                             "mpirun"})
    EXPECT_NE(r.out.find(option), std::string::npos) << option;
  // Units and defaults are part of the documentation.
  for (const char* text : {"m/s", "metres", "seconds", "Hz", "default 4", "default 0.8", "default 10"})
    EXPECT_NE(r.out.find(text), std::string::npos) << text;
  // The CPML's default width, on its own option's line (10 is also the Ricker's default).
  const size_t cpml = r.out.find("--cpml W");
  ASSERT_NE(cpml, std::string::npos);
  EXPECT_NE(r.out.substr(cpml, r.out.find("--free-surface", cpml) - cpml).find("(default 10)"),
            std::string::npos);
  EXPECT_NE(run("--help").out.find("wave"), std::string::npos);
}

TEST_F(WaveCli, Small2DRunWritesTheRecordTheSidecarTheFinalFieldAndTheSummary) {
  const Result r = run(kSmall2D + " --steps 100 -o " + out().string());
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_EQ(r.out.find("%"), std::string::npos) << "--quiet prints no progress: " << r.out;

  const NpyArray shot = read_npy(out("shot.npy"));
  ASSERT_EQ(shot.shape, (std::vector<int64_t>{5, 100}));
  const auto record = floats(shot);
  float peak = 0;
  for (float v : record) peak = std::max(peak, std::abs(v));
  EXPECT_GT(peak, 0.f) << "the record is all zeros";

  const NpyArray final_field = read_npy(out("final.npy"));
  EXPECT_EQ(final_field.shape, (std::vector<int64_t>{41, 61}));

  const json side = read_json(out("shot.json"));
  EXPECT_EQ(side["format"], "fdstencil-shot-1");
  EXPECT_EQ(side["shape"], json({5, 100}));
  EXPECT_EQ(side["t0"], 0.0);
  EXPECT_EQ(side["units"]["time"], "s");
  EXPECT_EQ(side["units"]["position"], "m");
  ASSERT_EQ(side["receivers"].size(), 5u);
  EXPECT_EQ(side["receivers"][4], json({100.0, 500.0}));
  ASSERT_EQ(side["sources"].size(), 1u);
  EXPECT_EQ(side["sources"][0]["position"], json({200.0, 300.0}));
  EXPECT_EQ(side["sources"][0]["wavelet"]["kind"], "ricker");
  EXPECT_DOUBLE_EQ(side["sources"][0]["wavelet"]["f0"].get<double>(), 15.0);
  EXPECT_DOUBLE_EQ(side["sources"][0]["wavelet"]["delay"].get<double>(), 0.1);  // 1.5 / f0
  EXPECT_EQ(side["model"]["kind"], "constant");
  EXPECT_EQ(side["model"]["dim"], 2);
  EXPECT_EQ(side["model"]["shape"], json({41, 61}));
  EXPECT_EQ(side["radius"], 4);
  EXPECT_EQ(side["interpolation"], "hicks");
  EXPECT_EQ(side["cpml_width"], 10);
  EXPECT_EQ(side["free_surface"], false);
  EXPECT_EQ(side["dt"], side["run_dt"]);

  const json sum = read_json(out("summary.json"));
  EXPECT_EQ(sum["format"], "fdstencil-wave-summary-1");
  EXPECT_EQ(sum["steps"], 100);
  EXPECT_EQ(sum["backend"], "cpu");
  EXPECT_NE(sum["command"].get<std::string>().find("wave --backend cpu"), std::string::npos);
  // The default step: 0.8 of the limit.
  EXPECT_NEAR(sum["dt"].get<double>() / sum["dt_limit"].get<double>(), 0.8, 1e-12);
  EXPECT_EQ(sum["domain"]["model"], json({41, 61}));
  EXPECT_EQ(sum["domain"]["computational"], json({61, 81}));  // 10 points of CPML on each face
  EXPECT_EQ(sum["domain"]["absorbing"]["z"]["lo"], 10);
  EXPECT_FALSE(sum["domain"]["absorbing"].contains("y"));
  for (const char* field : {"loop_s", "total_s", "gpts", "bytes_per_point", "copy_gbps", "bound_gpts",
                            "percent_of_bound", "device_bytes"})
    EXPECT_TRUE(sum["timing"].contains(field)) << field;
  // The setup's phases, each timed, together no more than the setup.
  const json& phases = sum["timing"]["setup_phases_s"];
  double phase_sum = 0;
  for (const char* phase : {"checks", "memory", "taps", "identity", "medium", "state"}) {
    ASSERT_TRUE(phases.contains(phase)) << phase;
    EXPECT_GE(phases[phase].get<double>(), 0) << phase;
    phase_sum += phases[phase].get<double>();
  }
  EXPECT_EQ(phases.size(), 6u) << phases.dump();
  EXPECT_LE(phase_sum, sum["timing"]["setup_s"].get<double>());
  ASSERT_TRUE(sum["timing"].contains("threads"));  // a cpu run says how many threads stepped it
  EXPECT_GE(sum["timing"]["threads"].get<int>(), 1);
  EXPECT_GT(sum["bytes_per_grid_point"].get<double>(), 0);
  EXPECT_TRUE(sum["warnings"].is_array());
  EXPECT_EQ(sum["outputs"], json({"shot.npy", "shot.json", "final.npy", "summary.json"}));
}

TEST_F(WaveCli, ProgressAndSummaryOnStderrUnlessQuiet) {
  const std::string args =
      "wave --backend cpu --constant 2000 --shape 41,61 --spacing 10 --steps 50 --source 200,300 --no-final "
      "-o " +
      out().string();
  const Result r = run(args);
  ASSERT_EQ(r.code, 0) << r.out;
  // Not a terminal: a line every 10 %, no carriage returns.
  EXPECT_NE(r.out.find("50 % (25/50 steps)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("100 % (50/50 steps)"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find('\r'), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("GPts/s"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("50 steps of dt"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find(" thread"), std::string::npos) << r.out;  // "(cpu float, N threads)"
  // No receivers: no shot record.
  EXPECT_FALSE(fs::exists(out("shot.npy")));
  EXPECT_FALSE(fs::exists(out("final.npy")));
  EXPECT_EQ(read_json(out("summary.json"))["outputs"], json({"summary.json"}));
}

TEST_F(WaveCli, A3DRunWithAReceiverGridAndPositionFiles) {
  {  // sources as CSV with a header and a comment; receivers as an (n, 3) .npy
    std::ofstream csv(path("sources.csv"));
    csv << "z,y,x\n# the shot\n100, 110, 120\n";
  }
  const std::vector<double> rec = {50, 60, 70, 60, 70, 80};
  write_npy(path("receivers.npy"), DType::f64, {2, 3}, rec.data(), int64_t(rec.size() * 8));
  const Result r =
      run("wave --backend cpu --quiet --constant 1500 --shape 24,25,26 --spacing 10 --cpml 8 --steps 12 "
          "--sources " +
          path("sources.csv") + " --receivers " + path("receivers.npy") +
          " --receiver-grid 40:50,150,3:60,200,2 --interpolation trilinear --radius 2 -o " + out().string());
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_EQ(read_npy(out("shot.npy")).shape, (std::vector<int64_t>{2 + 6, 12}));
  EXPECT_EQ(read_npy(out("final.npy")).shape, (std::vector<int64_t>{24, 25, 26}));
  const json side = read_json(out("shot.json"));
  EXPECT_EQ(side["sources"][0]["position"], json({100.0, 110.0, 120.0}));
  EXPECT_EQ(side["receivers"][1], json({60.0, 70.0, 80.0}));
  EXPECT_EQ(side["receivers"][2], json({40.0, 50.0, 60.0}));  // the grid, y slow, x fast
  EXPECT_EQ(side["receivers"][3], json({40.0, 50.0, 200.0}));
  EXPECT_EQ(side["receivers"][7], json({40.0, 150.0, 200.0}));
  EXPECT_EQ(side["interpolation"], "trilinear");
  EXPECT_EQ(side["radius"], 2);
  const json sum = read_json(out("summary.json"));
  EXPECT_EQ(sum["domain"]["computational"], json({40, 41, 42}));
  EXPECT_EQ(sum["domain"]["absorbing"]["y"]["hi"], 8);
}

// The other two models: layers under a free surface, and a user's .npy. A 50-step run cuts the
// 10 Hz Ricker off before its end; the wavelet handed to the solver is still whole, so the
// under-sampling check sees 10 Hz (5.4 points per wavelength at 1500 m/s) rather than the cut's
// spread spectrum (282 Hz when only the run's samples were passed).
TEST_F(WaveCli, LayeredUnderAFreeSurfaceAndAModelFile) {
  Result r =
      run("wave --backend cpu --quiet --layered 0:1500,200:2500 --shape 41,61 --spacing 10 --free-surface "
          "--steps 50 --source 20,300 --receiver-line 10,100:10,500:3 -o " +
          out().string());
  ASSERT_EQ(r.code, 0) << r.out;
  json side = read_json(out("shot.json"));
  EXPECT_EQ(side["free_surface"], true);
  EXPECT_EQ(side["model"]["kind"], "layered");
  EXPECT_EQ(side["model"]["layers"], json({{0.0, 1500.0}, {200.0, 2500.0}}));
  EXPECT_EQ(side["model"]["vmin"], 1500.0);
  EXPECT_EQ(side["model"]["vmax"], 2500.0);
  json sum = read_json(out("summary.json"));
  EXPECT_EQ(sum["domain"]["absorbing"]["z"]["lo"], 0);  // the surface absorbs nothing
  EXPECT_EQ(sum["domain"]["absorbing"]["z"]["hi"], 10);
  EXPECT_EQ(sum["warnings"], json::array()) << sum["warnings"].dump();

  std::vector<float> v(size_t(12 * 13 * 14), 1800.f);
  write_npy(path("model.npy"), DType::f32, {12, 13, 14}, v.data(), int64_t(v.size() * 4));
  r = run("wave --backend cpu --quiet --model " + path("model.npy") +
          " --spacing 10 --cpml 6 --radius 2 --steps 5 --source 50,60,70 -o " + path("file"));
  ASSERT_EQ(r.code, 0) << r.out;
  sum = read_json(path("file/summary.json"));
  EXPECT_EQ(sum["model"]["kind"], "file");
  EXPECT_EQ(sum["model"]["path"], path("model.npy"));
  EXPECT_EQ(sum["model"]["shape"], json({12, 13, 14}));
  EXPECT_EQ(read_npy(path("file/final.npy")).shape, (std::vector<int64_t>{12, 13, 14}));
}

// The record's sample count follows floor((nt - 1) dt / record_dt) + 1, and --time gives ceil(T / dt)
// steps.
TEST_F(WaveCli, RecordDtSetsTheSampleCount) {
  Result r = run(kSmall2D + " --dt 0.001 --steps 101 --record-dt 0.004 --no-final -o " + out().string());
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_EQ(read_npy(out("shot.npy")).shape, (std::vector<int64_t>{5, 26}));  // 100 ms / 4 ms + 1
  json side = read_json(out("shot.json"));
  EXPECT_DOUBLE_EQ(side["dt"].get<double>(), 0.004);
  EXPECT_DOUBLE_EQ(side["run_dt"].get<double>(), 0.001);
  EXPECT_EQ(read_json(out("summary.json"))["cfl_safety"], nullptr);  // --dt, not a fraction of the limit

  // A record finer than the run: 100 ms at 0.3 ms is 333 intervals, 334 samples.
  fs::remove_all(out());
  r = run(kSmall2D + " --dt 0.001 --time 0.1 --record-dt 0.0003 --no-final -o " + out().string());
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_EQ(read_json(out("summary.json"))["steps"], 100);                     // ceil(0.1 / 0.001), not 101
  EXPECT_EQ(read_npy(out("shot.npy")).shape, (std::vector<int64_t>{5, 331}));  // floor(99 / 0.3) + 1
}

// Resampling is band-limited: a record at twice the run's interval keeps every other sample of
// a well-sampled trace.
TEST_F(WaveCli, ACoarserRecordMatchesTheRunsOwnSamples) {
  Result r = run(kSmall2D + " --dt 0.001 --steps 200 --no-final -o " + out().string());
  ASSERT_EQ(r.code, 0) << r.out;
  const auto fine = floats(read_npy(out("shot.npy")));
  r = run(kSmall2D + " --dt 0.001 --steps 200 --record-dt 0.002 --no-final -o " + path("coarse"));
  ASSERT_EQ(r.code, 0) << r.out;
  const NpyArray coarse_npy = read_npy(path("coarse/shot.npy"));
  ASSERT_EQ(coarse_npy.shape, (std::vector<int64_t>{5, 100}));
  const auto coarse = floats(coarse_npy);
  float peak = 0, worst = 0;
  for (float v : fine) peak = std::max(peak, std::abs(v));
  // Away from the ends, where the sinc's window runs off the trace.
  for (int k = 0; k < 5; ++k)
    for (int n = 10; n < 90; ++n)
      worst = std::max(worst, std::abs(coarse[size_t(k * 100 + n)] - fine[size_t(k * 200 + 2 * n)]));
  EXPECT_GT(peak, 0.f);
  EXPECT_LT(worst, 0.01f * peak) << "peak " << peak;
}

TEST_F(WaveCli, SnapshotsAndTheirSlices) {
  Result r =
      run(kSmall2D +
          " --steps 40 --snapshot-every 20 --snapshot-steps 0,10 --snapshot-slice z=20 --no-final -o " +
          out().string());
  ASSERT_EQ(r.code, 0) << r.out;
  for (const char* name :
       {"snapshot_000000.npy", "snapshot_000010.npy", "snapshot_000020.npy", "snapshot_000040.npy"})
    EXPECT_EQ(read_npy(out(name)).shape, (std::vector<int64_t>{61})) << name;  // a 2D slice is a line
  EXPECT_FALSE(fs::exists(out("snapshot_000030.npy")));
  const json sum = read_json(out("summary.json"));
  EXPECT_EQ(sum["snapshot_steps"], json({0, 10, 20, 40}));
  EXPECT_EQ(sum["outputs"][0], "snapshot_000000.npy");
  // Step 0 is the field before the first step: zero everywhere.
  for (float v : floats(read_npy(out("snapshot_000000.npy")))) ASSERT_EQ(v, 0.f);
  // The slice z = 20 (200 m, the source's depth) of the last snapshot is the final field's row 20.
  fs::remove_all(out());
  r = run(kSmall2D + " --steps 40 --snapshot-steps 40 -o " + out().string());
  ASSERT_EQ(r.code, 0) << r.out;
  const auto full = floats(read_npy(out("snapshot_000040.npy")));
  const auto last = floats(read_npy(out("final.npy")));
  EXPECT_EQ(full, last);

  // 3D: a vertical slice y = J is (nz, nx), and the whole volume.
  const struct {
    std::string args;
    std::vector<int64_t> shape;
  } cases3d[] = {{"--snapshot-slice y=4", {20, 22}}, {"--no-final", {20, 21, 22}}};
  for (const auto& c : cases3d) {
    fs::remove_all(out());
    r =
        run("wave --backend cpu --quiet --constant 1500 --shape 20,21,22 --spacing 10 --cpml 6 --radius 2 "
            "--steps 6 --source 100,100,100 --snapshot-steps 3 " +
            c.args + " -o " + out().string());
    ASSERT_EQ(r.code, 0) << r.out;
    EXPECT_EQ(read_npy(out("snapshot_000003.npy")).shape, c.shape) << c.args;
  }
}

// The homogeneous 2D shot against wave::analytic_trace: 201 x 201 points of 5 m at 2000 m/s, a
// 25 Hz Ricker (highest significant frequency ~69 Hz: 5.8 points per shortest wavelength), order 8,
// receivers 150 m and 212 m from the source, 0.5 s; the window ends before the first possible echo,
// off the rigid wall behind the default 10-point CPML, at 0.475 s.
// Measured misfit 0.031 (0.026 and 0.037 per receiver; cpu, float), almost all of it the leapfrog's
// time dispersion at 0.8 of the stability limit: at 0.2 it falls to 0.0020, and at h = 2.5 m to
// 0.0005. The bound is 2x the measurement; a trace one step late would miss it by 3x (~0.17).
TEST_F(WaveCli, CompareAnalyticIn2D) {
  const Result r =
      run("wave --backend cpu --quiet --constant 2000 --shape 201,201 --spacing 5 --radius 4 --ricker 25 "
          "--source 500,500 --receiver-line 500,650:650,650:2 --time 0.5 --no-final --compare-analytic -o " +
          out().string());
  ASSERT_EQ(r.code, 0) << r.out;
  const json a = read_json(out("summary.json"))["analytic"];
  ASSERT_TRUE(a.is_object()) << r.out;
  std::printf("misfit %.4g, per receiver %s, window ends at %.4g s\n", a["misfit"].get<double>(),
              a["per_receiver"].dump().c_str(), a["window_end_s"].get<double>());
  EXPECT_LT(a["misfit"].get<double>(), 0.06);
  EXPECT_NEAR(a["first_reflection_s"].get<double>(), 950.0 / 2000.0, 1e-9);  // mirrored across x = 1050 m
  // The window ends within the run and before that reflection (issue 33: the arrival was quoted).
  const json sm = read_json(out("summary.json"));
  EXPECT_LE(a["window_end_s"].get<double>(), 0.5 + 1e-9);
  EXPECT_NEAR(a["window_end_s"].get<double>(),
              (a["window_samples"].get<double>() - 1) * sm["record_dt"].get<double>(), 1e-12);
  EXPECT_EQ(a["per_receiver"].size(), 2u);
  EXPECT_EQ(a["skipped"].size(), 0u);
  const NpyArray an = read_npy(out("analytic.npy"));
  EXPECT_EQ(an.shape, read_npy(out("shot.npy")).shape);
}

// The same in 3D, small: 31^3 points of 10 m, 8 points of CPML, a 20 Hz Ricker (~5.4 points per
// shortest wavelength), receivers 80 m and 113 m away; the first echo could come off x = 380 m at
// 0.19 s. Measured misfit 0.027 (0.023 and 0.035 per receiver), the bound 2x.
TEST_F(WaveCli, CompareAnalyticIn3D) {
  const Result r =
      run("wave --backend cpu --quiet --constant 2000 --shape 31,31,31 --spacing 10 --cpml 8 --ricker 20 "
          "--source 150,150,150 --receiver-line 150,150,230:150,230,230:2 --time 0.15 --no-final "
          "--compare-analytic -o " +
          out().string());
  ASSERT_EQ(r.code, 0) << r.out;
  const json a = read_json(out("summary.json"))["analytic"];
  std::printf("3D misfit %.4g, per receiver %s\n", a["misfit"].get<double>(),
              a["per_receiver"].dump().c_str());
  EXPECT_LT(a["misfit"].get<double>(), 0.055);
  EXPECT_NEAR(a["first_reflection_s"].get<double>(), 380.0 / 2000.0, 1e-9);
  EXPECT_LE(a["window_end_s"].get<double>(), 0.15 + 1e-9);
  EXPECT_EQ(a["per_receiver"].size(), 2u);
}

// A file wavelet (a 25 Hz Ricker at 0.2 ms) is resampled to the run's step; the analytic solution
// of the samples injected agrees with the record. The source lies off the grid, so Hicks'
// interpolation is in play, and the step is 0.25 of the limit so that time dispersion does not
// hide an error: measured misfit 0.0020 (trilinear interpolation gives 0.018); the bound is 2x.
TEST_F(WaveCli, AFileWaveletIsResampledToTheRunsStep) {
  const double f0 = 25, delay = 1.5 / f0, wdt = 0.0002;
  std::vector<float> w(600);
  for (size_t n = 0; n < w.size(); ++n) {
    const double a = std::pow(M_PI * f0 * (double(n) * wdt - delay), 2);
    w[n] = float((1 - 2 * a) * std::exp(-a));
  }
  write_npy(path("w.npy"), DType::f32, {int64_t(w.size())}, w.data(), int64_t(w.size() * 4));
  const Result r = run("wave --backend cpu --quiet --constant 2000 --shape 121,121 --spacing 5 --wavelet " +
                       path("w.npy") +
                       " --wavelet-dt 0.0002 --source 301.3,298.7 --receiver-line 300,420:300,420:1 "
                       "--cfl-safety 0.25 --time 0.2 --no-final --compare-analytic -o " +
                       out().string());
  ASSERT_EQ(r.code, 0) << r.out;
  const json sum = read_json(out("summary.json"));
  std::printf("file wavelet misfit %.4g\n", sum["analytic"]["misfit"].get<double>());
  EXPECT_LT(sum["analytic"]["misfit"].get<double>(), 0.004);
  const json side = read_json(out("shot.json"));
  EXPECT_EQ(side["sources"][0]["wavelet"]["kind"], "file");
  EXPECT_DOUBLE_EQ(side["sources"][0]["wavelet"]["dt"].get<double>(), 0.0002);
}

// Every refusal: exit code 2, a message naming the problem, and no output directory or file.
// Models and receivers as NumPy writes them from arrays it did not make (issue 33: refused
// before): a float64, big-endian, Fortran-order model (np.save of a transposed array) and a
// Fortran-order receivers array give the record of their float32 C-order twins, bit for bit.
TEST_F(WaveCli, NpyInputsAsNumPyWritesThemRunAsTheirCOrderTwins) {
  std::vector<float> v(41 * 61);
  for (size_t i = 0; i < v.size(); ++i) v[i] = 1800.f + float(i % 61) * 5.f + float(i / 61) * 3.f;
  write_npy(path("c.npy"), DType::f32, {41, 61}, v.data(), int64_t(v.size() * 4));
  test::write_numpy_style(path("numpy.npy"), {41, 61}, std::vector<double>(v.begin(), v.end()), true, true);
  const std::vector<double> rec = {100, 100, 100, 300, 150, 500};  // (3, 2): z, x per receiver
  write_npy(path("rec_c.npy"), DType::f64, {3, 2}, rec.data(), 48);
  test::write_numpy_style(path("rec_f.npy"), {3, 2}, rec, false, true);
  const std::string args = "wave --backend cpu --quiet --spacing 10 --ricker 15 --source 200,300 --steps 60 ";
  Result a =
      run(args + "--model " + path("c.npy") + " --receivers " + path("rec_c.npy") + " --output " + path("a"));
  ASSERT_EQ(a.code, 0) << a.out;
  Result b = run(args + "--model " + path("numpy.npy") + " --receivers " + path("rec_f.npy") + " --output " +
                 path("b"));
  ASSERT_EQ(b.code, 0) << b.out;
  const NpyArray ra = read_npy(path("a") + "/shot.npy"), rb = read_npy(path("b") + "/shot.npy");
  EXPECT_EQ(ra.shape, (std::vector<int64_t>{3, 60}));
  EXPECT_EQ(ra.bytes, rb.bytes);
}

// A billion steps with 100 receivers: the record and the wavelets are sized before either is made
// (issue 33: the wavelets grew to 14 GB before the record was refused). Under a 4 GB address-space
// limit the old order failed allocating them; now the refusal names both and what would help.
TEST_F(WaveCli, ARecordTooLargeIsRefusedBeforeAnythingIsMade) {
  const Result r = test::run_cli(
      "wave --backend cpu --quiet --constant 2000 --shape 41,61 --spacing 10 --source 200,300 "
      "--receiver-line 100,100:100,500:100 --steps 1000000000 --output " +
          out().string(),
      "ulimit -v 4000000; ");
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_NE(
      r.out.find("the memory for the shot record (100 receivers x 1000000000 samples) and the wavelets"),
      std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("fewer --steps"), std::string::npos) << r.out;
  EXPECT_FALSE(fs::exists(out()));
}

// Four million receivers in 3D under Hicks' 8^3 taps: their taps' memory is refused before any
// tap is made (issue 33: three million took 13 s to build first). Under a 4 GB address-space limit
// building them fails otherwise. Skipped where the host could hold the taps (~80 GB).
TEST_F(WaveCli, ReceiversWhoseTapsCannotFitAreRefusedBeforeTheyAreBuilt) {
  const int64_t available = host_memory_available();  // what the tool checks against
  if (available <= 0 || available > (int64_t(70) << 30)) GTEST_SKIP() << "this host could hold the taps";
  const Result r = test::run_cli(
      "wave --backend cpu --quiet --constant 2000 --shape 21,21,21 --spacing 10 --source 100,100,100 "
      "--receiver-line 50,50,50:150,150,150:4000000 --steps 2 --output " +
          out().string(),
      "ulimit -v 4000000; ");
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_NE(r.out.find("the wave solver's host state needs"), std::string::npos) << r.out;
  EXPECT_FALSE(fs::exists(out()));
}

// Outputs larger than the disk are refused before the run, the largest named first with what would
// shrink it (issue 33: the advice once named snapshots where the receivers' memory was at fault).
// 2000 x 2000 snapshots every step for a million steps: 16 TB, more than any test machine's disk.
TEST_F(WaveCli, OutputsLargerThanTheDiskAreRefusedNamingTheLargestFirst) {
  std::error_code ec;
  const auto space = fs::space(dir_, ec);
  if (ec || space.available > (uintmax_t(15) << 40)) GTEST_SKIP() << "this disk could hold 16 TB";
  const Result r = test::run_cli(
      "wave --backend cpu --quiet --constant 2000 --shape 2000,2000 --spacing 10 "
      "--source 100,100 --receiver-line 50,50:150,150:1000 --steps 1000000 "
      "--snapshot-every 1 --output " +
      out().string());
  EXPECT_EQ(r.code, 2) << r.out;
  const size_t disk = r.out.find("not enough disk space"), snapshots = r.out.find("snapshots 14.6 TiB");
  const size_t record = r.out.find("the shot record 3.73 GiB (fewer receivers, or a larger --record-dt)");
  EXPECT_NE(disk, std::string::npos) << r.out;
  EXPECT_NE(r.out.find("a larger --snapshot-every"), std::string::npos) << r.out;
  ASSERT_NE(snapshots, std::string::npos) << r.out;
  ASSERT_NE(record, std::string::npos) << r.out;
  EXPECT_LT(snapshots, record) << "the largest first: " << r.out;
  EXPECT_FALSE(fs::exists(out()));
}

// Every phase before and after the steps says what it is doing once it has taken
// FDSTENCIL_NOTICE_AFTER_S (0 here: at once), in the order it happens, and a log's first progress
// line comes then too, before the 10 % mark; --quiet says none of it (issue 33: a long resampling
// once printed nothing for 90 s).
TEST_F(WaveCli, EachPhaseSaysWhatItIsDoing) {
  const std::vector<float> v(31 * 41, 2000.f);
  write_npy(path("v.npy"), DType::f32, {31, 41}, v.data(), int64_t(v.size() * 4));
  const std::string args = "wave --backend cpu --model " + path("v.npy") +
                           " --spacing 10 --source 100,200 --receiver-line 50,50:50,350:3 --steps 40 "
                           "--record-dt 1e-4 --output ";
  const Result r = test::run_cli(args + out().string(), "FDSTENCIL_NOTICE_AFTER_S=0 ");
  ASSERT_EQ(r.code, 0) << r.out;
  size_t at = 0;
  for (const char* line : {"reading the model", "reading the sources and receivers",
                           "setting up the solver ...", "setting up the solver done in",
                           "fdstencil wave: 0 % (0/40 steps)", "resampling the record to dt 0.0001 s ...",
                           "writing the outputs ...", "writing the outputs done in"}) {
    const size_t found = r.out.find(line, at);
    EXPECT_NE(found, std::string::npos) << "'" << line << "' after offset " << at << " in:\n" << r.out;
    if (found != std::string::npos) at = found;
  }
  const Result q = test::run_cli(args + path("quiet") + " --quiet", "FDSTENCIL_NOTICE_AFTER_S=0 ");
  ASSERT_EQ(q.code, 0) << q.out;
  EXPECT_EQ(q.out, "");
}

// The watcher thread speaks while the phase's one long call is still running: a record resampled to
// 5 ns takes seconds, and says so at the default second.
TEST_F(WaveCli, ALongResamplingSaysWhatItIsDoing) {
  const Result r = test::run_cli(
      "wave --backend cpu --constant 2000 --shape 41,41 --spacing 10 --source 200,200 "
      "--receiver-line 100,100:100,300:1 --steps 20 --record-dt 5e-9 --output " +
      out().string());
  ASSERT_EQ(r.code, 0) << r.out;
  const size_t saying = r.out.find("resampling the record to dt 5e-09 s ...");
  EXPECT_NE(saying, std::string::npos) << r.out;
  EXPECT_NE(r.out.find("resampling the record to dt 5e-09 s done in", saying), std::string::npos) << r.out;
}

TEST_F(WaveCli, RefusesBadInputAndWritesNothing) {
  const std::vector<float> v(12, 2000.f), holes = {2000, 2000, -1, 2000, 2000, 2000};
  write_npy(path("model3d.npy"), DType::f32, {2, 2, 3}, v.data(), 48);
  write_npy(path("holes.npy"), DType::f32, {2, 3}, holes.data(), 24);
  write_npy(path("w2d.npy"), DType::f32, {2, 3}, v.data(), 24);
  std::ofstream(path("rec3.csv")) << "100,200,300\n";
  std::ofstream(path("badnum.csv")) << "z,x\n100,abc\n";
  std::ofstream(path("empty.csv")) << "# nothing\n";
  std::ofstream(path("a_file")) << "x";
  const std::string M = " --constant 2000 --shape 41,61 --spacing 10 ";  // a good 2D model
  const std::string S = " --steps 10 --source 200,300 ";                 // a good time and source
  const struct {
    std::string args, needle;
  } cases[] = {
      // the model
      {"--spacing 10" + S, "velocity model is required"},
      {"--constant 2000 --layered 0:1500 --shape 41,61 --spacing 10" + S, "one velocity model"},
      {"--constant 2000 --spacing 10" + S, "--shape is required"},
      {"--constant 2000 --shape 41 --spacing 10" + S, "--shape '41'"},
      {"--constant 2000 --shape 4,4,4,4 --spacing 10" + S, "NZ,NY,NX"},
      {"--constant 2000 --shape 41,0 --spacing 10" + S, "at least 1"},
      {"--constant 2000 --shape 41,x --spacing 10" + S, "not an integer"},
      {"--constant 2000 --shape 41,61" + S, "--spacing is required"},
      {"--constant 2000 --shape 41,61 --spacing 0" + S, "--spacing: 0 must be positive"},
      {"--constant 2000 --shape 41,61 --spacing -5" + S, "--spacing: -5 must be positive"},
      {"--constant 2000 --shape 41,61 --spacing abc" + S, "--spacing: 'abc' is not a finite number"},
      {"--constant 2000 --shape 41,61 --spacing inf" + S, "not a finite number"},
      {"--constant -2000 --shape 41,61 --spacing 10" + S, "--constant: -2000 must be positive"},
      {"--layered 5:1500,100:2000 --shape 41,61 --spacing 10" + S, "depth 0"},
      {"--layered 0:1500,100:2000,50:2500 --shape 41,61 --spacing 10" + S, "depths must rise"},
      {"--layered 0-1500 --shape 41,61 --spacing 10" + S, "DEPTH:VELOCITY"},
      {"--model " + path("missing.npy") + " --spacing 10" + S, "missing.npy: no such file"},
      {"--model " + path("model3d.npy") + " --shape 2,2,3 --spacing 10" + S, "--shape goes with"},
      {"--model " + path("holes.npy") + " --spacing 10" + S, "velocity -1"},  // the library's message
      {"--constant 2000 --shape 100000,100000,100000 --spacing 10" + S, "GiB"},
      // time
      {M + "--source 200,300", "--steps N or --time T"},
      {M + "--steps 10 --time 1 --source 200,300", "exactly one"},
      {M + "--steps 0 --source 200,300", "--steps: 0 must be at least 1"},
      {M + "--time nan --source 200,300", "--time: 'nan'"},
      {M + S + "--dt 0", "--dt: 0 must be positive"},
      {M + S + "--dt 1", "exceeds the stability limit"},  // the library's check, with the limit
      {M + S + "--dt 0.001 --cfl-safety 0.5", "not both"},
      {M + S + "--cfl-safety 1.5", "(0, 1]"},
      // numerics
      {M + S + "--radius 9", "1..8"},
      {M + S + "--radius 0", "--radius: 0 must be at least 1"},
      {M + S + "--cpml -1", "--cpml"},
      {M + S + "--cpml-reflection 1.5", "[0, 1)"},
      {M + S + "--interpolation cubic", "hicks or trilinear"},
      {M + S + "--overlap sideways", "--overlap 'sideways': expected auto, on or off"},
      {M + S + "--no-overlap --overlap on", "--no-overlap and --overlap on disagree"},
      // positions: 2D against 3D, files, outside the model
      {M + "--steps 10 --source 200,300,400", "the model is 2D"},
      {" --constant 2000 --shape 20,20,20 --spacing 10 --steps 10 --source 100,100", "the model is 3D"},
      {M + "--steps 10 --source 200,abc", "not a finite number"},
      {M + "--steps 10", "at least one source"},
      {M + "--steps 10 --sources " + path("nosuch.csv"), "nosuch.csv: no such file"},
      {M + "--steps 10 --sources " + path("badnum.csv"), "badnum.csv:2"},
      {M + "--steps 10 --sources " + path("empty.csv"), "no positions"},
      {M + S + "--receivers " + path("rec3.csv"), "rec3.csv:1: 3 values, but the model is 2D"},
      {M + S + "--receivers " + path("w2d.npy"), "(n, 2) array"},
      {M + S + "--receiver-line 100,100:100,500:0", "N: 0 must be at least 1"},
      {M + S + "--receiver-line 100,100:100,500", "Z,X:Z,X:N"},
      {M + S + "--receiver-grid 40:0,100,2:0,100,2", "needs a 3D model"},
      {M + "--steps 10 --source 9000,300", "source 0 at"},              // the library: outside the model
      {M + S + "--receiver-line 100,100:100,5000:3", "receiver 1 at"},  // likewise
      // the wavelet
      {M + S + "--ricker 0", "--ricker: 0 must be positive"},
      {M + S + "--ricker 10 --wavelet " + path("w2d.npy") + " --wavelet-dt 0.001", "one of them"},
      {M + S + "--wavelet " + path("w2d.npy"), "--wavelet-dt"},
      {M + S + "--wavelet " + path("w2d.npy") + " --wavelet-dt 0.001", "1-D array"},
      {M + S + "--wavelet " + path("none.npy") + " --wavelet-dt 0.001", "none.npy: no such file"},
      {M + S + "--wavelet-dt 0.001", "none was given"},
      {M + S + "--delay -0.1", "at least 0 s"},
      // the record and snapshots
      {M + S + "--receiver-line 100,100:100,500:3 --record-dt 0", "--record-dt: 0 must be positive"},
      {M + S + "--snapshot-steps 5,11", "step 11 is beyond the run's 10 steps"},
      {M + S + "--snapshot-every 11", "only 10 steps"},
      {M + S + "--snapshot-steps 5 --snapshot-slice z=41", "index 41 is outside the model"},
      {M + S + "--snapshot-steps 5 --snapshot-slice y=1", "no y axis"},
      {M + S + "--snapshot-steps 5 --snapshot-slice q=1", "z=K, y=J or x=I"},
      {M + S + "--snapshot-slice z=1", "none were asked for"},
      // the analytic comparison
      {"--layered 0:1500,100:2000 --shape 41,61 --spacing 10" + S +
           "--receiver-line 100,100:100,500:3 --compare-analytic",
       "homogeneous"},
      {M + S + "--receiver-line 100,100:100,500:3 --free-surface --compare-analytic", "--free-surface"},
      {M + S + "--compare-analytic", "no receivers"},
      {M + S + "--receiver-line 200,305:200,305:1 --compare-analytic", "closer than one grid spacing"},
      {M + "--steps 10 --source 200,300 --receiver-line 200,600:200,600:1 --cpml 0 --compare-analytic",
       "no receiver sees the direct wave"},
      // the run
      {M + S + "--backend cuda --double", "--double"},
      {M + S + "--backend fpga", "auto, cuda or cpu"},
      {M + S + "--backend cpu --kernel-params '{\"vec\": 4}'", "GPU step kernel"},
      {M + S + "--kernel-params 'vec=4'", "JSON object"},
  };
  for (const auto& c : cases) {
    const Result r = run("wave --quiet " + c.args + " -o " + (dir_ / "out" / "nested").string());
    EXPECT_EQ(r.code, 2) << c.args << "\n" << r.out;
    EXPECT_NE(r.out.find(c.needle), std::string::npos) << c.args << "\n" << r.out;
    EXPECT_FALSE(fs::exists(out())) << c.args << ": the output directory is left behind";
    fs::remove_all(out());
  }
  // No --output at all, and an --output that is a file.
  Result r = run("wave --quiet" + M + S);
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_NE(r.out.find("--output DIR is required"), std::string::npos) << r.out;
  r = run("wave --quiet" + M + S + "-o " + path("a_file"));
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_NE(r.out.find("not a directory"), std::string::npos) << r.out;
  // A directory that existed stays, empty, after a refusal.
  fs::create_directories(out());
  r = run("wave --quiet" + M + S + "--dt 1 -o " + out().string());
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_TRUE(fs::is_directory(out()));
  EXPECT_TRUE(fs::is_empty(out()));
}

TEST_F(WaveCli, CudaWithoutAGpuIsAnInputError) {
  if (gpu_present()) GTEST_SKIP() << "a GPU is present";
  const Result r =
      run("wave --quiet --backend cuda --constant 2000 --shape 41,61 --spacing 10 --steps 10 --source "
          "200,300 -o " +
          out().string());
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_NE(r.out.find("--backend cuda"), std::string::npos) << r.out;
  EXPECT_FALSE(fs::exists(out()));
}

// --double runs the cpu solver in double precision; on this small run it agrees with float to
// float's rounding.
TEST_F(WaveCli, DoublePrecisionOnTheCpu) {
  Result r = run(kSmall2D + " --steps 40 --double -o " + out().string());
  ASSERT_EQ(r.code, 0) << r.out;
  const json sum = read_json(out("summary.json"));
  EXPECT_EQ(sum["backend"], "cpu");
  EXPECT_EQ(sum["double_precision"], true);
  const auto d = floats(read_npy(out("shot.npy")));
  r = run(kSmall2D + " --steps 40 -o " + path("float"));
  ASSERT_EQ(r.code, 0) << r.out;
  const auto f = floats(read_npy(path("float/shot.npy")));
  ASSERT_EQ(d.size(), f.size());
  float peak = 0, worst = 0;
  for (size_t i = 0; i < d.size(); ++i) {
    peak = std::max(peak, std::abs(d[i]));
    worst = std::max(worst, std::abs(d[i] - f[i]));
  }
  EXPECT_GT(peak, 0.f);
  EXPECT_LT(worst, 1e-4f * peak);
}
