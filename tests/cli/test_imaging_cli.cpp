// fdstencil gradient and fdstencil rtm as a user meets them: a shot recorded by `fdstencil wave`,
// then its gradient and image in another model; a record of the very model giving a misfit and a
// gradient of exactly zero; a memory budget giving the bits of the run that keeps every field; and
// each refusal (a record sampled at another step, other receivers, an earlier run's outputs, a
// budget below one checkpoint, another radius or source) exiting 2 with its reason and leaving no
// folder behind. Small 2D runs on the cpu backend.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cli/cli_test_util.hpp"
#include "fdstencil/npy.hpp"

namespace fs = std::filesystem;
using namespace fdstencil;
using nlohmann::json;
using test::Result;

namespace {

Result run(const std::string& args) {
  return test::run_cli(args, "OMP_WAIT_POLICY=${OMP_WAIT_POLICY:-passive} ");
}

// The run both the record and the imaging describe: 41 x 61 points of 10 m, a fixed dt (the
// models' largest velocities differ, and with them the default step), six receivers.
std::string shot(const std::string& dt = "0.0015") {
  return " --backend cpu --quiet --shape 41,61 --spacing 10 --steps 150 --ricker 15 --source 50,300 "
         "--receiver-line 20,50:20,550:6 --dt " +
         dt;
}
const std::string kShot = shot();
const std::string kTrue = " --layered 0:2000,200:2400";
const std::string kStart = " --constant 2000";

json read_json(const fs::path& p) {
  std::ifstream f(p);
  return json::parse(f);
}

std::vector<float> floats(const fs::path& p) {
  const NpyArray a = read_npy(p);
  EXPECT_EQ(a.dtype, DType::f32);
  EXPECT_EQ(a.shape, (std::vector<int64_t>{41, 61}));
  std::vector<float> v(a.bytes.size() / 4);
  std::memcpy(v.data(), a.bytes.data(), a.bytes.size());
  return v;
}

class ImagingCli : public test::ScratchDirTest {
 protected:
  ImagingCli() : ScratchDirTest("fdstencil_imaging_cli_") {}
  void SetUp() override {
    ScratchDirTest::SetUp();
    const Result r = run("wave" + kShot + kTrue + " --no-final --output " + path("record"));
    ASSERT_EQ(r.code, 0) << r.out;
  }
};

TEST_F(ImagingCli, GradientAndImageOfARecordedShot) {
  Result r = run("gradient" + kShot + kStart + " --observed " + path("record") + " --output " + path("g"));
  ASSERT_EQ(r.code, 0) << r.out;
  const std::vector<float> g = floats(dir_ / "g" / "gradient.npy");
  double most = 0;
  for (float x : g) {
    ASSERT_TRUE(std::isfinite(x));
    most = std::max(most, double(std::abs(x)));
  }
  EXPECT_GT(most, 0.0);
  const json sum = read_json(dir_ / "g" / "summary.json");
  EXPECT_GT(sum["misfit"].get<double>(), 0.0);
  EXPECT_EQ(sum["storage"]["backend"], "cpu");
  EXPECT_EQ(sum["storage"]["checkpoints"], 0);
  // Under a budget of half a MiB (every field takes about 3.5): checkpoints, and the same bits.
  r = run("gradient" + kShot + kStart + " --observed " + path("record") + " --memory-budget 0.5 --output " +
          path("low"));
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_GT(read_json(dir_ / "low" / "summary.json")["storage"]["checkpoints"].get<int64_t>(), 0);
  EXPECT_EQ(floats(dir_ / "low" / "gradient.npy"), g);
  r = run("rtm" + kShot + kStart + " --observed " + path("record") +
          " --condition crosscorrelation --illumination --laplacian --output " + path("i"));
  ASSERT_EQ(r.code, 0) << r.out;
  for (float x : floats(dir_ / "i" / "image.npy")) ASSERT_TRUE(std::isfinite(x));
  EXPECT_EQ(read_json(dir_ / "i" / "summary.json")["condition"], "crosscorrelation");
}

TEST_F(ImagingCli, TheRecordedModelGivesZero) {
  const Result r =
      run("gradient" + kShot + kTrue + " --observed " + path("record") + " --output " + path("g"));
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_EQ(read_json(dir_ / "g" / "summary.json")["misfit"].get<double>(), 0.0);
  for (float x : floats(dir_ / "g" / "gradient.npy")) ASSERT_EQ(x, 0.f);
}

TEST_F(ImagingCli, RefusesWhatDoesNotMatchAndWritesNothing) {
  const std::string observed = " --observed " + path("record") + " --output " + path("refused");
  const struct {
    std::string args, says;
  } cases[] = {
      {"gradient" + shot("0.001") + kStart + observed, "the record is sampled every"},
      {"gradient" + kShot + kStart + " --receiver-line 30,50:30,550:5" + observed,
       "6 traces and the run has 11"},
      {"gradient" + kShot + kStart + " --radius 2" + observed, "which this run does not take (--radius"},
      {"gradient" + kShot + kStart + " --source 60,300" + observed,
       "shot.json lists 1 sources and the run has 2"},
      // Refused after the folders are made (the budget is known once the run's state is): all removed.
      {"gradient" + kShot + kStart + " --memory-budget 0.001 --observed " + path("record") + " --output " +
           path("refused/deep/er"),
       "holds not even one checkpoint"},
      {"gradient" + kShot + kStart + " --memory-budget 1e-9" + observed, "--memory-budget: expected MiB"},
      {"rtm" + kShot + kStart + " --condition deconvolution" + observed, "--condition: expected"},
      {"gradient" + kShot + kStart + " --output " + path("refused"), "--observed DIR is required"},
  };
  for (const auto& c : cases) {
    const Result r = run(c.args);
    EXPECT_EQ(r.code, 2) << c.args << "\n" << r.out;
    EXPECT_NE(r.out.find(c.says), std::string::npos) << r.out;
    EXPECT_FALSE(fs::exists(path("refused"))) << c.args;
  }
  // An earlier run's outputs: refused without --overwrite, replaced with it.
  const std::string again =
      "gradient" + kShot + kStart + " --observed " + path("record") + " --output " + path("g");
  ASSERT_EQ(run(again).code, 0);
  const Result r = run(again);
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.out.find("holds an earlier run's gradient.npy (--overwrite replaces it)"), std::string::npos)
      << r.out;
  EXPECT_EQ(run(again + " --overwrite").code, 0);
}

}  // namespace
