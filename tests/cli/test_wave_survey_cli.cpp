// fdstencil wave's checkpoints, interrupts and surveys as a user meets them: a
// run stopped by SIGINT or SIGTERM exits 128 + the signal with a message naming
// how to resume, keeps a complete checkpoint and writes no other output;
// --resume finishes it with a record equal, byte for byte, to the run never
// stopped; a survey runs every shot into its own directory, and a re-run
// verifies and skips the finished ones and runs again only what is missing or
// damaged. Small 2D models on the cpu backend (the GPU's bit-identical resume
// is tests/cuda/test_wave_gpu.cpp's).
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>

#include "cli/cli_test_util.hpp"

namespace fs = std::filesystem;
using fdstencil::test::bytes_of;
using fdstencil::test::exit_code;
using fdstencil::test::Result;
using fdstencil::test::wait_for;
using nlohmann::json;

namespace {

// Sleeping OpenMP waiters: see test_wave_cli.cpp.
const std::string kEnv = "OMP_WAIT_POLICY=${OMP_WAIT_POLICY:-passive} ";
Result run(const std::string& args) { return fdstencil::test::run_cli(args, kEnv); }

json read_json(const fs::path& p) {
  std::ifstream f(p);
  return json::parse(f);
}

pid_t start(const std::string& args, const fs::path& log) {
  return fdstencil::test::start_cli(args, log, kEnv);
}

class WaveCheckpointCli : public fdstencil::test::ScratchDirTest {
 protected:
  WaveCheckpointCli() : ScratchDirTest("fdstencil_ckpt_cli_") {}
};

// Long enough on one thread (~2 s) that a signal sent after the first
// checkpoint finds it running.
const std::string kLong2D =
    "wave --backend cpu --quiet --layered 0:1800,600:2600 --shape 201,201 --spacing 5 --ricker 20 --source "
    "300,500 --receiver-line 50,100:50,900:9 --steps 3000 --no-final";

void interrupted_then_resumed(const fs::path& dir, int sig) {
  const fs::path whole = dir / "whole", cut = dir / "cut";
  ASSERT_EQ(run(kLong2D + " -o " + whole.string()).code, 0);
  // A snapshot before the first checkpoint: taken by the interrupted run, listed by the resumed one.
  const std::string args = kLong2D + " --checkpoint-every 25 --snapshot-steps 10 -o " + cut.string();
  const pid_t pid = start(args, dir / "log.txt");
  ASSERT_TRUE(wait_for(cut / "checkpoint.ckpt", pid)) << bytes_of(dir / "log.txt");
  kill(pid, sig);
  const int code = exit_code(pid);
  const std::string log = bytes_of(dir / "log.txt");
  ASSERT_EQ(code, 128 + sig) << log;
  EXPECT_NE(log.find(sig == SIGINT ? "SIGINT" : "SIGTERM"), std::string::npos) << log;
  EXPECT_NE(log.find("--resume"), std::string::npos) << log;
  EXPECT_NE(log.find((cut / "checkpoint.ckpt").string()), std::string::npos) << log;
  // Nothing but the checkpoint: no record, no summary of a run that did not
  // finish.
  EXPECT_FALSE(fs::exists(cut / "shot.npy"));
  EXPECT_FALSE(fs::exists(cut / "summary.json"));
  const Result resumed = run(args + " --resume");
  ASSERT_EQ(resumed.code, 0) << resumed.out;
  EXPECT_EQ(bytes_of(cut / "shot.npy"), bytes_of(whole / "shot.npy")) << "the resumed record differs";
  const json summary = read_json(cut / "summary.json");
  EXPECT_GT(summary["checkpoint"]["resumed_from_step"].get<int64_t>(), 0) << summary.dump();
  EXPECT_TRUE(fs::exists(cut / "snapshot_000010.npy"));
  const auto& outputs = summary["outputs"];
  EXPECT_NE(std::find(outputs.begin(), outputs.end(), "snapshot_000010.npy"), outputs.end())
      << summary.dump();
  EXPECT_FALSE(fs::exists(cut / "checkpoint.ckpt")) << "a finished run leaves no checkpoint to resume";
}

}  // namespace

TEST_F(WaveCheckpointCli, SigintStopsWithACheckpointAndResumeEqualsTheRunNeverStopped) {
  interrupted_then_resumed(dir_, SIGINT);
}

TEST_F(WaveCheckpointCli, SigtermStopsWithACheckpointAndResumeEqualsTheRunNeverStopped) {
  interrupted_then_resumed(dir_, SIGTERM);
}

TEST_F(WaveCheckpointCli, ResumeRefusesAMissingOrForeignCheckpoint) {
  const fs::path out = dir_ / "out";
  Result r = run(kLong2D + " --resume -o " + out.string());
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_NE(r.out.find("no checkpoint"), std::string::npos) << r.out;
  EXPECT_FALSE(fs::exists(out)) << "a refused run leaves nothing";
  // A checkpoint of one run, then a resume of another: the source moved by 10
  // m.
  const pid_t pid = start(kLong2D + " --checkpoint-every 25 -o " + out.string(), dir_ / "log.txt");
  ASSERT_TRUE(wait_for(out / "checkpoint.ckpt", pid)) << bytes_of(dir_ / "log.txt");
  kill(pid, SIGINT);
  ASSERT_EQ(exit_code(pid), 128 + SIGINT) << bytes_of(dir_ / "log.txt");
  const std::string kept = bytes_of(out / "checkpoint.ckpt");
  std::string moved = kLong2D;
  moved.replace(moved.find("--source 300,500"), 16, "--source 310,500");
  r = run(moved + " --resume -o " + out.string());
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_NE(r.out.find("different run"), std::string::npos) << r.out;
  EXPECT_EQ(bytes_of(out / "checkpoint.ckpt"), kept) << "a refused resume leaves the checkpoint as it was";
  EXPECT_FALSE(fs::exists(out / "shot.npy"));
}

TEST_F(WaveCheckpointCli, CheckpointEveryIsCheckedBeforeTheRun) {
  const fs::path out = dir_ / "out";
  for (const char* bad : {"0", "-5", "x", "1.5"}) {
    const Result r =
        run("wave --backend cpu --quiet --constant 2000 --shape 41,61 --spacing 10 --source 200,300 --steps "
            "10 --checkpoint-every " +
            std::string(bad) + " -o " + out.string());
    EXPECT_EQ(r.code, 2) << bad << ": " << r.out;
    EXPECT_NE(r.out.find("--checkpoint-every"), std::string::npos) << r.out;
    EXPECT_FALSE(fs::exists(out));
  }
}

namespace {

class WaveSurveyCli : public fdstencil::test::ScratchDirTest {
 protected:
  WaveSurveyCli() : ScratchDirTest("fdstencil_survey_cli_") {}
  fs::path write(const std::string& name, const std::string& text) const {
    const fs::path p = dir_ / name;
    std::ofstream(p) << text;
    return p;
  }
};

// The command line every shot shares (model, time, receivers); the survey moves
// the source.
const std::string kSurveyModel =
    "wave --backend cpu --quiet --layered 0:1800,200:2600 --shape 61,81 --spacing 10 --receiver-line "
    "20,50:20,750:8 --no-final";
const std::string kSurveyBase = kSurveyModel + " --ricker 15 --steps 250";

const char* kThreeShots = R"({
  "description": "three shots along the line, the last with its own wavelet and receivers",
  "shots": [
    {"id": 11, "source": [300, 150]},
    {"id": 12, "source": "300,400"},
    {"id": 13, "source": [300, 650], "ricker": 20, "receiver_lines": ["30,100:30,700:4"]}
  ]
})";

}  // namespace

TEST_F(WaveSurveyCli, RunsEveryShotIntoItsOwnDirectory) {
  const fs::path survey = write("survey.json", kThreeShots), out = dir_ / "out";
  const Result r = run(kSurveyBase + " --survey " + survey.string() + " -o " + out.string());
  ASSERT_EQ(r.code, 0) << r.out;
  for (const char* shot : {"shot_000011", "shot_000012", "shot_000013"}) {
    EXPECT_TRUE(fs::exists(out / shot / "shot.npy")) << shot;
    EXPECT_TRUE(fs::exists(out / shot / "done.json")) << shot;
    EXPECT_TRUE(fs::exists(out / shot / "summary.json")) << shot;
  }
  const json s13 = read_json(out / "shot_000013" / "shot.json");
  EXPECT_EQ(s13["receivers"].size(), 4u) << s13.dump();
  EXPECT_EQ(read_json(out / "shot_000011" / "shot.json")["receivers"].size(), 8u);
  EXPECT_NE(bytes_of(out / "shot_000011" / "shot.npy"), bytes_of(out / "shot_000012" / "shot.npy"));
  const json manifest = read_json(out / "survey.json");
  EXPECT_EQ(manifest["shots_run"], 3);
  EXPECT_EQ(manifest["status"]["12"], "done");
  // The cpu keeps no state between the shots (the GPU's: LaterShotsKeepTheGpuState... below).
  for (const json& e : manifest["shots"]) EXPECT_EQ(e["state_kept"], false) << e.dump();
}

TEST_F(WaveSurveyCli, ARerunSkipsVerifiedShotsAndRunsDamagedOnesAgain) {
  const fs::path survey = write("survey.json", kThreeShots), out = dir_ / "out";
  const std::string cmd = kSurveyBase + " --survey " + survey.string() + " -o " + out.string();
  ASSERT_EQ(run(cmd).code, 0);
  const std::string original = bytes_of(out / "shot_000012" / "shot.npy");
  Result r = run(cmd);
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_EQ(read_json(out / "survey.json")["shots_run"], 0) << r.out;
  EXPECT_EQ(read_json(out / "survey.json")["shots_skipped"], 3);
  EXPECT_EQ(read_json(out / "survey.json")["shots"].size(), 3u) << "skipped shots keep their entries";
  // One flipped byte in shot 12's record: its checksum fails, and it alone runs
  // again.
  {
    std::fstream f(out / "shot_000012" / "shot.npy", std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(-3, std::ios::end);
    f.put('\x55');
  }
  r = run(cmd);
  ASSERT_EQ(r.code, 0) << r.out;
  const json manifest = read_json(out / "survey.json");
  EXPECT_EQ(manifest["shots_run"], 1) << manifest.dump();
  EXPECT_EQ(manifest["status"]["11"], "skipped: finished and verified");
  EXPECT_EQ(bytes_of(out / "shot_000012" / "shot.npy"), original);
}

// A survey's folder holds one run's shots: a re-run whose inputs differ from a finished shot's,
// or that lacks a finished shot, is refused before any shot, and the folder is left as it was.
TEST_F(WaveSurveyCli, AnotherRunsFinishedShotsAreNeverReplacedOrMixed) {
  const fs::path survey = write("survey.json", kThreeShots), out = dir_ / "out";
  ASSERT_EQ(run(kSurveyBase + " --survey " + survey.string() + " -o " + out.string()).code, 0);
  const std::string manifest = bytes_of(out / "survey.json"),
                    record = bytes_of(out / "shot_000011" / "shot.npy");
  // Another wavelet for the shots that take the command line's: shots 11 and 12 differ.
  Result r =
      run(kSurveyModel + " --steps 250 --ricker 12 --survey " + survey.string() + " -o " + out.string());
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_NE(r.out.find("holds the finished record of shot 11 of another run"), std::string::npos) << r.out;
  // A survey without shot 13.
  const fs::path two = write("two.json", R"({"shots": [{"id": 11, "source": [300, 150]},
                                                      {"id": 12, "source": "300,400"}]})");
  r = run(kSurveyBase + " --survey " + two.string() + " -o " + out.string());
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_NE(r.out.find("shot 13, which this survey does not have"), std::string::npos) << r.out;
  EXPECT_EQ(bytes_of(out / "survey.json"), manifest);
  EXPECT_EQ(bytes_of(out / "shot_000011" / "shot.npy"), record);
  // A shot finished before the identity named the backend (its done.json's identity without the
  // last "-cuda" or "-cpu") is this run's where the rest matches: skipped, not refused.
  {
    json done = read_json(out / "shot_000012" / "done.json");
    const std::string id = done["identity"].get<std::string>();
    done["identity"] = id.substr(0, id.rfind('-'));
    std::ofstream(out / "shot_000012" / "done.json") << done.dump();
  }
  r = run(kSurveyBase + " --survey " + survey.string() + " -o " + out.string());
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_EQ(read_json(out / "survey.json")["shots_skipped"], 3) << r.out;
  // A shot another run left unfinished (its done.json gone) is this run's to make.
  fs::remove(out / "shot_000013" / "done.json");
  r = run(kSurveyBase + " --survey " + two.string() + " -o " + out.string());
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_EQ(read_json(out / "survey.json")["shots_skipped"], 2) << r.out;
}

TEST_F(WaveSurveyCli, AnInterruptedSurveyResumesToTheSameRecords) {
  const fs::path survey = write("survey.json", kThreeShots), whole = dir_ / "whole", cut = dir_ / "cut";
  // Longer shots (~1 s each on one thread), so the signal finds the survey
  // running.
  const std::string base =
      kSurveyModel + " --ricker 15 --steps 1500 --checkpoint-every 20 --survey " + survey.string();
  ASSERT_EQ(run(base + " -o " + whole.string()).code, 0);
  const pid_t pid = start(base + " -o " + cut.string(), dir_ / "log.txt");
  ASSERT_TRUE(wait_for(cut / "shot_000011" / "done.json", pid)) << bytes_of(dir_ / "log.txt");
  kill(pid, SIGINT);
  const int code = exit_code(pid);
  const std::string log = bytes_of(dir_ / "log.txt");
  ASSERT_EQ(code, 128 + SIGINT) << log;
  EXPECT_NE(log.find("--resume"), std::string::npos) << log;
  const Result r = run(base + " -o " + cut.string() + " --resume");
  ASSERT_EQ(r.code, 0) << r.out;
  for (const char* shot : {"shot_000011", "shot_000012", "shot_000013"})
    EXPECT_EQ(bytes_of(cut / shot / "shot.npy"), bytes_of(whole / shot / "shot.npy")) << shot;
}

// Found by fuzz/fuzz_survey.cpp: a number beyond a double's range is valid JSON that nlohmann::json
// refuses with out_of_range, not parse_error, and it escaped as an "internal error" with exit 1.
TEST_F(WaveSurveyCli, ANumberBeyondADoubleIsRefusedAsBadInput) {
  const fs::path out = dir_ / "out";
  const fs::path survey = write("huge.json", "{\"shots\": [{\"source\": [300, 150], \"ricker\": 1e999}]}");
  const Result r = run(kSurveyBase + " --survey " + survey.string() + " -o " + out.string());
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_NE(r.out.find("not valid JSON"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("number overflow parsing '1e999'"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("internal error"), std::string::npos) << r.out;
  EXPECT_FALSE(fs::exists(out));
}

// Found while writing fuzz/fuzz_survey.cpp (its inputs are too short to reach it): a shot nested
// 100000 levels deep overflowed the stack in the message that quotes it (json::dump recurses).
TEST_F(WaveSurveyCli, DeeplyNestedValuesAreRefusedWithoutACrash) {
  const fs::path out = dir_ / "out";
  const int depth = 100000;
  const fs::path survey =
      write("deep.json", "{\"shots\": [" + std::string(depth, '[') + std::string(depth, ']') + "]}");
  const Result r = run(kSurveyBase + " --survey " + survey.string() + " -o " + out.string());
  EXPECT_EQ(r.code, 2) << r.out.substr(0, 2000);
  EXPECT_NE(r.out.find("nested more than 64 levels deep"), std::string::npos) << r.out.substr(0, 2000);
  EXPECT_FALSE(fs::exists(out));
}

TEST_F(WaveSurveyCli, BadSurveysAreRefusedBeforeAnyShotRuns) {
  const fs::path out = dir_ / "out";
  const auto refused = [&](const std::string& text, const std::string& expect) {
    const fs::path survey = write("bad.json", text);
    const Result r = run(kSurveyBase + " --survey " + survey.string() + " -o " + out.string());
    EXPECT_EQ(r.code, 2) << text << "\n" << r.out;
    EXPECT_NE(r.out.find(expect), std::string::npos) << text << "\n" << r.out;
    EXPECT_FALSE(fs::exists(out)) << text;
  };
  refused("{\"shots\": [{\"id\": 1, \"source\": [300, 150]}, {\"id\": 1, \"source\": [300, 250]}]}",
          "appears twice");
  refused("{\"shots\": [{\"source\": [300, 150], \"sauce\": 1}]}", "unknown key");
  // Named by its id (issue 33: the first shot was "shot 0", by its index).
  refused("{\"shots\": [{\"source\": [300, 150], \"sauce\": 1}]}", "shot 1 \"sauce\": unknown key");
  refused("{\"shots\": [{\"id\": 7, \"source\": [300, 150], \"sauce\": 1}]}", "shot 7 \"sauce\"");
  refused("{\"shots\": []}", "non-empty");
  refused("{\"shots\": [{\"source\": [300, 150]}, {\"source\": [300, 5000]}]}", "shot 2");
  refused("{\"shots\": [{\"source\": [300, 150]}", "not valid JSON");
  refused("{\"shots\": [{\"id\": -4, \"source\": [300, 150]}]}", "\"id\"");
  const Result r = run(kSurveyBase + " --survey " + (dir_ / "missing.json").string() + " -o " + out.string());
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_NE(r.out.find("cannot open"), std::string::npos) << r.out;
  const Result b = run(kSurveyBase + " --survey " + write("ok.json", kThreeShots).string() +
                       " --batch 2 -o " + out.string());
  EXPECT_EQ(b.code, 2) << b.out;
  EXPECT_NE(b.out.find("--batch"), std::string::npos) << b.out;
  // --backend auto without a GPU takes the cpu: the batch is refused there as well (issue 33: it
  // ran, where docs/wave.md says the cpu refuses it).
  if (fdstencil::test::gpu_present()) return;
  std::string auto_base = kSurveyBase;
  auto_base.replace(auto_base.find("--backend cpu"), 13, "--backend auto");
  const Result c = run(auto_base + " --survey " + write("ok2.json", kThreeShots).string() + " --batch 2 -o " +
                       out.string());
  EXPECT_EQ(c.code, 2) << c.out;
  EXPECT_NE(c.out.find("--backend auto found no GPU"), std::string::npos) << c.out;
  EXPECT_FALSE(fs::exists(out));
}

// On the GPU a survey's later shots run on the state its first shot left (wave::Options::
// kept_state: the medium's m and the allocation kept, the rest renewed), and each record is the
// one its shot gives run alone, byte for byte: shot 13, with its own wavelet and receivers, too.
// The manifest says which shots kept the state.
TEST_F(WaveSurveyCli, LaterShotsKeepTheGpuStateAndMatchTheirRunsAlone) {
  if (!fdstencil::test::gpu_present()) GTEST_SKIP() << "no GPU";
  std::string base = kSurveyBase;
  base.replace(base.find("--backend cpu"), 13, "--backend cuda");
  const fs::path survey = write("survey.json", kThreeShots), out = dir_ / "out";
  const Result r = run(base + " --survey " + survey.string() + " -o " + out.string());
  ASSERT_EQ(r.code, 0) << r.out;
  const json manifest = read_json(out / "survey.json");
  ASSERT_EQ(manifest["shots"].size(), 3u) << manifest.dump();
  for (const json& e : manifest["shots"]) EXPECT_EQ(e["state_kept"], e["id"] != 11) << e.dump();
  const Result alone =
      run("wave --backend cuda --quiet --layered 0:1800,200:2600 --shape 61,81 --spacing 10 --no-final "
          "--source 300,650 --ricker 20 --receiver-line 30,100:30,700:4 --steps 250 -o " +
          (dir_ / "alone").string());
  ASSERT_EQ(alone.code, 0) << alone.out;
  EXPECT_EQ(bytes_of(out / "shot_000013" / "shot.npy"), bytes_of(dir_ / "alone" / "shot.npy"));
}
