// The wave step's tuned launch (apps/fdstencil/tune_wave.hpp): the cache beside the plans', its
// entries found by card and grid, a damaged file read as none, `tune --wave`'s refusals, and on a
// GPU the tune itself and a run that takes its launch.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>

#include <nlohmann/json.hpp>

#include "cli/cli_test_util.hpp"
#include "fdstencil/error.hpp"
#include "tune_wave.hpp"
#ifdef FDSTENCIL_HAVE_CUDA
#include "cuda/wave/acoustic.hpp"
#endif

using namespace fdstencil;
using namespace fdstencil::test;
namespace fs = std::filesystem;

namespace {

// Every point in a CPML layer: the launch defaults' widest share (default_config's layer_share).
[[maybe_unused]] constexpr double kEveryPointInLayers = 1;

class TuneWave : public ScratchDirTest {
 protected:
  TuneWave() : ScratchDirTest("fdstencil_tune_wave_") {}
  Result run(const std::string& args) { return run_cli(args); }
};

// A tune_wave record as the tuner writes it, of `device` and `c`, whose winner is `params`.
nlohmann::json record(const std::string& device, const cli::WaveCase& c, const std::string& params) {
  return {{"device", device},
          {"dim", c.dim},
          {"radius", c.radius},
          {"shape", {c.nz, c.ny, c.nx}},
          {"cpml", c.cpml},
          {"free_surface", c.free_surface},
          {"kernel_params", nlohmann::json::parse(params)},
          {"gpts", 2.0},
          {"default_gpts", 1.0},
          {"candidates", nlohmann::json::array({1, 2})}};
}

std::string no_warning(const fs::path& file, const std::string& device, const cli::WaveCase& c) {
  return cli::tuned_launch(file, device, c, [](const std::string& w) { ADD_FAILURE() << "warned: " << w; });
}

}  // namespace

TEST_F(TuneWave, TheCacheSitsBesideThePlansOne) {
  EXPECT_EQ(cli::wave_cache_file(path("plans.json")), dir_ / "wave-tuning.json");
  EXPECT_EQ(cli::wave_cache_file("").filename(), "wave-tuning.json");
}

// One entry per card and grid: a second store of a key replaces it; another card, shape, radius,
// width or surface finds nothing.
TEST_F(TuneWave, EntriesAreFoundByCardAndGrid) {
  const fs::path file = path("wave-tuning.json");
  const cli::WaveCase a{3, 4, 216, 216, 216, 10, false}, b{2, 8, 1000, 1, 1000, 20, true};
  EXPECT_EQ(no_warning(file, "NVIDIA H100 80GB HBM3", a), "");  // no file yet: none
  cli::store_wave_entry(file, record("NVIDIA H100 80GB HBM3", a, R"({"design": "l1", "nw": 8})"));
  cli::store_wave_entry(file, record("NVIDIA H100 80GB HBM3", b, R"({"block": "128x1"})"));
  cli::store_wave_entry(file, record("NVIDIA H100 80GB HBM3", a, R"({"design": "tma", "nw": 16})"));
  // An entry that names no "cpml" was timed with the CPML in the march (before the CPML apart), and
  // keeps it; one that names it keeps its own. One without "side" and "pdl" (before them) ran its
  // layers' points on a second stream and launched plainly.
  EXPECT_EQ(nlohmann::json::parse(no_warning(file, "NVIDIA H100 80GB HBM3", a)),
            nlohmann::json::parse(R"({"design": "tma", "nw": 16, "cpml": "march", "side": 0, "pdl": 0})"));
  EXPECT_EQ(nlohmann::json::parse(no_warning(file, "NVIDIA H100 80GB HBM3", b))["block"], "128x1");
  EXPECT_EQ(no_warning(file, "NVIDIA H200", a), "");
  std::vector<cli::WaveCase> others(5, a);
  others[0].nx = 215;
  others[1].radius = 2;
  others[2].cpml = 20;
  others[3].free_surface = true;
  others[4].dim = 2;
  for (size_t i = 0; i < others.size(); ++i)
    EXPECT_EQ(no_warning(file, "NVIDIA H100 80GB HBM3", others[i]), "") << i;
  cli::store_wave_entry(file, record("NVIDIA H100 80GB HBM3", a, R"({"cpml": "apart", "nw": 8})"));
  EXPECT_EQ(nlohmann::json::parse(no_warning(file, "NVIDIA H100 80GB HBM3", a)),
            nlohmann::json::parse(R"({"cpml": "apart", "nw": 8, "side": 0, "pdl": 0})"));
  cli::store_wave_entry(file, record("NVIDIA H100 80GB HBM3", a, "{}"));  // the default launch
  EXPECT_EQ(no_warning(file, "NVIDIA H100 80GB HBM3", a), "{}");
  const auto entries = nlohmann::json::parse(std::ifstream(file))["entries"];
  ASSERT_EQ(entries.size(), 2u);
  EXPECT_FALSE(entries[0].contains("candidates"));  // the record's candidates stay in --json
}

// A stored winner names the "side" and "pdl" its launch ran with (from the kernel's description),
// so that later defaults do not change it; the default launch stays {} and given keys stay.
TEST_F(TuneWave, AStoredLaunchNamesItsSideAndPdl) {
  const auto as_ran = [](const char* params, const std::string& kernel) {
    return cli::wave_params_as_ran(nlohmann::json::parse(params), kernel);
  };
  EXPECT_EQ(as_ran(R"({"cpml": "beside", "nw": 4})",
                   "acoustic_step block=64x1 vec=4 nw=4 layers=beside side=2 faces=1"),
            nlohmann::json::parse(R"({"cpml": "beside", "nw": 4, "side": 2, "pdl": 1})"));
  EXPECT_EQ(as_ran(R"({"nw": 8})", "acoustic_step block=16x8 vec=2 nw=8 design=l1 pdl=0 faces=1"),
            nlohmann::json::parse(R"({"nw": 8, "side": 0, "pdl": 0})"));
  EXPECT_EQ(as_ran(R"({"side": 1, "pdl": 0})", "acoustic_step side=1 pdl=0"),
            nlohmann::json::parse(R"({"side": 1, "pdl": 0})"));
  EXPECT_EQ(as_ran("{}", "acoustic_step side=2"), nlohmann::json::object());
}

// A damaged file: the default launch, with a warning naming the file; storing into it is refused.
TEST_F(TuneWave, ADamagedFileGivesTheDefaultLaunchAndAWarning) {
  const fs::path file = path("wave-tuning.json");
  const cli::WaveCase a{3, 4, 64, 64, 64, 10, false};
  for (const char* text : {"{ not json", R"({"format": "fdstencil-tuning-cache", "entries": []})",
                           R"({"format": "fdstencil-wave-tuning", "format_version": 9, "entries": []})"}) {
    std::ofstream(file) << text;
    std::vector<std::string> warnings;
    EXPECT_EQ(cli::tuned_launch(file, "NVIDIA H100 80GB HBM3", a,
                                [&warnings](const std::string& w) { warnings.push_back(w); }),
              "");
    ASSERT_EQ(warnings.size(), 1u) << text;
    EXPECT_NE(warnings[0].find(file.string()), std::string::npos) << warnings[0];
    EXPECT_THROW(cli::store_wave_entry(file, record("NVIDIA H100 80GB HBM3", a, "{}")), Error) << text;
    EXPECT_THROW(cli::check_wave_cache(file), Error) << text;
  }
  // An entry edited out of shape is left out with a word; the whole ones still serve.
  std::ofstream(file) << R"({"format": "fdstencil-wave-tuning", "format_version": 1, "entries": [7,
    {"device": "NVIDIA H100 80GB HBM3", "dim": 3, "radius": 4, "shape": [64, 64, 64], "cpml": 10,
     "free_surface": false},
    {"device": "NVIDIA H100 80GB HBM3", "dim": 3, "radius": 4, "shape": [64, 64, 64], "cpml": 10,
     "free_surface": false, "kernel_params": {"nw": 8}}]})";
  std::vector<std::string> warnings;
  EXPECT_EQ(cli::tuned_launch(file, "NVIDIA H100 80GB HBM3", a,
                              [&warnings](const std::string& w) { warnings.push_back(w); }),
            R"({"cpml":"march","nw":8,"pdl":0,"side":0})");
  EXPECT_EQ(warnings.size(), 2u);
  // tune --wave refuses a damaged cache before it times anything.
  std::ofstream(file) << "{ not json";
  const Result r = run("tune --wave --shape 64,64 --radius 4 --cache " + path("plans.json"));
  EXPECT_NE(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("not a wave tuning cache"), std::string::npos) << r.out;
}

TEST_F(TuneWave, BadCasesAreRefusedBeforeAnyRun) {
  const struct {
    std::string args, needle;
  } cases[] = {
      {"tune --wave --radius 4", "--shape"},
      {"tune --wave --shape 64,64,64", "--radius"},
      {"tune --wave --shape 64,64,64,64 --radius 4", "NZ,NY,NX"},
      {"tune --wave --shape 64,0 --radius 4", "at least 1"},
      {"tune --wave --shape 64,64 --radius 9", "R = 1..8"},
      {"tune --wave --shape 64,64 --radius 4 --cpml -1", "--cpml"},
      {"tune --wave --shape 64,64 --radius 4 --steps 0", "--steps"},
      {"tune --wave --shape 64,64 --radius 4 --op d2x", "--op"},
  };
  for (const auto& c : cases) {
    const Result r = run(c.args + " --cache " + path("plans.json"));
    EXPECT_EQ(r.code, 2) << c.args << ": " << r.out;
    EXPECT_NE(r.out.find(c.needle), std::string::npos) << c.args << ": " << r.out;
  }
  EXPECT_FALSE(fs::exists(path("wave-tuning.json")));
  if (!gpu_present()) {
    const Result r = run("tune --wave --shape 64,64 --radius 4 --cache " + path("plans.json"));
    EXPECT_EQ(r.code, 2) << r.out;
    EXPECT_NE(r.out.find("needs a GPU"), std::string::npos) << r.out;
    EXPECT_FALSE(fs::exists(path("wave-tuning.json")));
  }
}

#ifdef FDSTENCIL_HAVE_CUDA
// Every candidate is a launch the step takes at every radius (parse_config's checks).
TEST_F(TuneWave, EveryCandidateParses) {
  for (int dim : {2, 3})
    for (int r = 1; r <= 8; ++r)
      for (const std::string& p : cli::wave_candidates(dim, r))
        EXPECT_NO_THROW(cuda::wave::parse_config(p, dim, r, dim == 3 ? 64 * 64 : 64, kEveryPointInLayers))
            << dim << "D R=" << r << " " << p;
}

// On a GPU: a small tune stores its winner, whose field the tuner checked, and a run of that grid
// takes the stored launch and says where from; the same run elsewhere does not.
TEST_F(TuneWave, ATunedLaunchIsTakenByTheRunsOfItsGrid) {
  if (!gpu_present()) GTEST_SKIP() << "no GPU";
  const std::string cache = "--cache " + path("plans.json");
  Result r = run("tune --wave --shape 40,36 --radius 4 --cpml 10 --steps 60 -q --json " + path("t.json") +
                 " " + cache);
  ASSERT_EQ(r.code, 0) << r.out;
  const auto t = nlohmann::json::parse(std::ifstream(path("t.json")));
  ASSERT_EQ(t["cases"].size(), 1u);
  const auto& c = t["cases"][0];
  EXPECT_GE(c["gpts"].get<double>(), c["default_gpts"].get<double>());
  EXPECT_GT(c["candidates"].size(), 5u);
  for (const auto& cand : c["candidates"]) EXPECT_NE(cand["status"], "FAILED") << cand.dump();
  const std::string env = "FDSTENCIL_TUNING_CACHE=" + path("plans.json") + " ";
  const std::string args =
      "wave --backend cuda --quiet --constant 2000 --spacing 10 --steps 20 --ricker 8 "
      "--source 180,170 --no-final --radius 4 --cpml 10 --shape ";
  r = run_cli(args + "40,36 --output " + path("run"), env);
  ASSERT_EQ(r.code, 0) << r.out;
  const auto s = nlohmann::json::parse(std::ifstream(path("run/summary.json")));
  EXPECT_EQ(s["launch_from"], (dir_ / "wave-tuning.json").string());
  r = run_cli(args + "40,38 --output " + path("other"), env);
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_TRUE(nlohmann::json::parse(std::ifstream(path("other/summary.json")))["launch_from"].is_null());
}
#endif

// The default launch stays unless a candidate beats it by more than the noise (kMinGain); failed
// and unsupported candidates never win, however fast they were recorded.
TEST(TuneWaveWinner, TheDefaultStaysWithinTheNoise) {
  const auto cands = [](double a, double b, const char* status_b) {
    return nlohmann::json::array({{{"status", "ok"}, {"gpts", a}}, {{"status", status_b}, {"gpts", b}}});
  };
  EXPECT_EQ(cli::wave_winner(cands(100, 100.5, "ok")), 0u);
  EXPECT_EQ(cli::wave_winner(cands(100, 101.5, "ok")), 1u);
  EXPECT_EQ(cli::wave_winner(cands(100, 150, "FAILED")), 0u);
  EXPECT_EQ(cli::wave_winner(cands(100, 150, "unsupported")), 0u);
  nlohmann::json three = cands(100, 103, "ok");
  three.push_back({{"status", "ok"}, {"gpts", 105.0}});
  EXPECT_EQ(cli::wave_winner(three), 2u);
}

// The other placement's first launch is held to the default's probe within round-off of the larger
// of its peaks: on a small grid after a long run the field left is the layers' residue (here 2e-6
// against a direct wave of 1), and a gap of 5e-6 there is round-off, not a wrong launch. (Measured:
// on a 128^3 grid after 500 steps every launch with the CPML in the march failed against the final
// field's own peak.) A gap of 1e-2 of the direct wave, a NaN or another size fail.
TEST(TuneWaveRoundOff, TheDirectWavesPeakScalesTheRoundOff) {
  const cli::WaveProbe ref{{1e-6f, -2e-6f, 0.f}, {1.f, 0.5f, -0.25f}};
  cli::WaveProbe run{{6e-6f, -2e-6f, 0.f}, {1.00001f, 0.5f, -0.25f}};
  EXPECT_TRUE(cli::within_round_off(run, ref));
  run.traces[1] = 0.51f;
  EXPECT_FALSE(cli::within_round_off(run, ref));
  run = ref;
  run.field[2] = std::nanf("");
  EXPECT_FALSE(cli::within_round_off(run, ref));
  run = ref;
  run.traces.pop_back();
  EXPECT_FALSE(cli::within_round_off(run, ref));
  EXPECT_TRUE(cli::within_round_off(ref, ref));
  cli::WaveProbe broken = ref;  // a reference that is not finite holds nothing
  broken.traces[0] = INFINITY;
  EXPECT_FALSE(cli::within_round_off(run, broken));
}
