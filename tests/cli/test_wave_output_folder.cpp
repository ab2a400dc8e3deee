// An output folder belongs to one run (issue 33): a run into a folder that holds another run's
// outputs or its checkpoint refuses (exit 2, naming the files, the folder untouched) unless it
// resumes that run or is given --overwrite, which removes the earlier outputs once every check
// has passed and leaves the user's own files alone.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "cli/cli_test_util.hpp"
#include "fdstencil/npy.hpp"

namespace fs = std::filesystem;
using namespace fdstencil;
using test::Result;

namespace {

Result run(const std::string& args) { return test::run_cli(args, "OMP_WAIT_POLICY=passive "); }

const std::string kRun =
    "wave --backend cpu --quiet --constant 2000 --shape 41,61 --spacing 10 --ricker 15 --source 200,300 "
    "--receiver-line 100,100:100,500:5 ";

class WaveOutputFolder : public test::ScratchDirTest {
 protected:
  WaveOutputFolder() : ScratchDirTest("fdstencil_wave_folder_") {}
  std::string out() const { return path("out"); }
  bool has(const std::string& name) const { return fs::exists(dir_ / "out" / name); }
  int64_t samples() const { return read_npy((dir_ / "out" / "shot.npy").string()).shape.back(); }
  // The earlier run: 40 steps, snapshots at 30 and 40.
  void earlier_run() {
    const Result r = run(kRun + "--steps 40 --snapshot-steps 30,40 --output " + out());
    ASSERT_EQ(r.code, 0) << r.out;
  }
};

}  // namespace

TEST_F(WaveOutputFolder, AnotherRunsFolderIsRefusedNamingItsFiles) {
  earlier_run();
  const Result r = run(kRun + "--steps 20 --output " + out());
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_NE(r.out.find("holds the outputs of an earlier run"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("final.npy, shot.json, shot.npy, snapshot_000030.npy and 2 more"), std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("--overwrite"), std::string::npos) << r.out;
  EXPECT_EQ(samples(), 40);  // the earlier record, untouched
  EXPECT_TRUE(has("snapshot_000040.npy"));
}

TEST_F(WaveOutputFolder, OverwriteReplacesTheEarlierRunAfterEveryCheck) {
  earlier_run();
  // The user's own files, some named like a run's: never a run's output, never removed.
  for (const char* name : {"notes.txt", "shot_notes.txt", "snapshot_best.npy"})
    std::ofstream(dir_ / "out" / name) << "the user's own file";
  // A refused input with --overwrite: the earlier run stays whole.
  Result r = run(kRun + "--steps 20 --source 200,99999 --overwrite --output " + out());
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_TRUE(has("snapshot_000040.npy"));
  EXPECT_EQ(samples(), 40);
  r = run(kRun + "--steps 20 --overwrite --output " + out());
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_EQ(samples(), 20);
  EXPECT_FALSE(has("snapshot_000030.npy"));
  EXPECT_FALSE(has("snapshot_000040.npy"));
  for (const char* name : {"notes.txt", "shot_notes.txt", "snapshot_best.npy"})
    EXPECT_TRUE(has(name)) << name;
  std::ifstream f(dir_ / "out" / "summary.json");
  const auto outputs = nlohmann::json::parse(f)["outputs"];
  EXPECT_EQ(outputs, nlohmann::json({"shot.npy", "shot.json", "final.npy", "summary.json"}));
}

TEST_F(WaveOutputFolder, ACheckpointIsNeverDiscardedWithoutBeingAsked) {
  fs::create_directories(dir_ / "out");
  std::ofstream(dir_ / "out" / "checkpoint.ckpt") << "an earlier run's state";
  const Result r = run(kRun + "--steps 20 --output " + out());
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_NE(r.out.find("holds the checkpoint of an earlier run (checkpoint.ckpt)"), std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("--resume"), std::string::npos) << r.out;
  EXPECT_TRUE(has("checkpoint.ckpt"));
  EXPECT_FALSE(has("shot.npy"));
}

TEST_F(WaveOutputFolder, ALeftoverTemporaryCheckpointIsNamed) {
  fs::create_directories(dir_ / "out");
  std::ofstream(dir_ / "out" / "checkpoint.ckpt.tmp.4242.0") << "half a checkpoint";
  Result r = run(kRun + "--steps 20 --resume --output " + out());
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_NE(r.out.find("checkpoint.ckpt.tmp.4242.0"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("rename it to checkpoint.ckpt"), std::string::npos) << r.out;
  r = run(kRun + "--steps 20 --output " + out());
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_NE(r.out.find("checkpoint.ckpt.tmp.4242.0"), std::string::npos) << r.out;
  EXPECT_TRUE(has("checkpoint.ckpt.tmp.4242.0"));
}

TEST_F(WaveOutputFolder, ResumeAndOverwriteTogetherAreRefused) {
  const Result r = run(kRun + "--steps 20 --resume --overwrite --output " + out());
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_NE(r.out.find("give one of them"), std::string::npos) << r.out;
  EXPECT_FALSE(fs::exists(dir_ / "out"));
}

TEST_F(WaveOutputFolder, ASurveyRefusesOverwrite) {
  std::ofstream(path("survey.json")) << R"({"shots": [{"id": 1, "source": [200, 300]}]})";
  const Result r =
      run(kRun + "--steps 20 --survey " + path("survey.json") + " --overwrite --output " + out());
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_NE(r.out.find("a survey's re-run keeps its finished shots"), std::string::npos) << r.out;
}

// A survey's folder is the survey's, and a single run's is the run's: neither writes into the
// other's, --overwrite included (it replaces one run, never a survey's shot folders).
TEST_F(WaveOutputFolder, SurveysAndSingleRunsKeepToTheirOwnFolders) {
  std::ofstream(path("survey.json")) << R"({"shots": [{"id": 1, "source": [200, 300]}]})";
  Result r = run(kRun + "--steps 20 --survey " + path("survey.json") + " --output " + out());
  ASSERT_EQ(r.code, 0) << r.out;
  r = run(kRun + "--steps 20 --overwrite --output " + out());
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_NE(r.out.find("holds a survey (shot_000001, survey.json)"), std::string::npos) << r.out;
  EXPECT_TRUE(has("shot_000001/shot.npy"));
  const std::string single = path("single");  // a single run's folder, and a survey into it
  r = run(kRun + "--steps 20 --output " + single);
  ASSERT_EQ(r.code, 0) << r.out;
  r = run(kRun + "--steps 20 --survey " + path("survey.json") + " --output " + single);
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_NE(r.out.find("holds the outputs of a single run (final.npy, shot.json"), std::string::npos)
      << r.out;
  EXPECT_FALSE(fs::exists(dir_ / "single" / "survey.json"));
  EXPECT_FALSE(fs::exists(dir_ / "single" / "shot_000001"));
}
