// SEG-Y from the command line: `fdstencil segy info | to-npy | from-npy`, `fdstencil wave` reading a
// SEG-Y model and writing shot.sgy (--segy, --shot-id), `fdstencil info` saying whether the build
// has libsegyio, and every refusal exiting 2 with a message that names the problem and leaving no
// file behind. Without libsegyio only the refusals of a build without it run; the rest report
// skipped. tests/scripts/test_segy.py checks the same files against Python's segyio.
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cli/cli_test_util.hpp"
#include "fdstencil/npy.hpp"
#include "fdstencil/segy.hpp"

#if FDSTENCIL_HAVE_SEGYIO
#include <segyio/segy.h>
#endif

namespace fs = std::filesystem;
using namespace fdstencil;
using nlohmann::json;
using test::Result;

namespace {

// Sleeping OpenMP waiters keep the small runs quick while other tests hold the cores
// (test_wave_cli.cpp measured 0.6 s against 7 s).
Result run(const std::string& args) {
  return test::run_cli(args, "OMP_WAIT_POLICY=${OMP_WAIT_POLICY:-passive} OMP_NUM_THREADS=1 ");
}

json read_json(const fs::path& p) {
  std::ifstream f(p);
  return json::parse(f);
}

std::vector<float> floats(const NpyArray& a) {
  std::vector<float> v(a.bytes.size() / 4);
  std::memcpy(v.data(), a.bytes.data(), a.bytes.size());
  return v;
}

class SegyCli : public test::ScratchDirTest {
 protected:
  SegyCli() : ScratchDirTest("fdstencil_segy_cli_") {}
  void SetUp() override { ScratchDirTest::SetUp(); }
  // A (7, 3, 6) model of distinct velocities as .npy, and as SEG-Y at 12.5 m.
  void make_model() {
    for (size_t p = 0; p < 7 * 3 * 6; ++p) model_.push_back(1500.f + 7.f * float(p));
    write_npy(path("m.npy"), DType::f32, {7, 3, 6}, model_.data(), int64_t(model_.size() * 4));
    const Result r = run("segy from-npy " + path("m.npy") + " " + path("m.sgy") + " --spacing 12.5");
    ASSERT_EQ(r.code, 0) << r.out;
  }
  void expect_refused(const std::string& args, const std::vector<std::string>& words,
                      const std::string& not_written) {
    const Result r = run(args);
    EXPECT_EQ(r.code, 2) << args << "\n" << r.out;
    for (const std::string& w : words) EXPECT_NE(r.out.find(w), std::string::npos) << w << " in: " << r.out;
    EXPECT_FALSE(fs::exists(not_written)) << not_written << " after: " << args;
  }
  std::vector<float> model_;
};

const std::string kSmall2D =
    "wave --backend cpu --quiet --constant 2000 --shape 41,61 --spacing 10 --source 200,300 --steps 60 ";

}  // namespace

TEST(SegyCliBuild, HelpListsTheSegyCommandAndFlags) {
  const Result wave = run("wave --help");
  ASSERT_EQ(wave.code, 0) << wave.out;
  for (const char* flag : {"--segy", "--shot-id", "--segy-z-unit", "--segy-inline-byte",
                           "--segy-crossline-byte", ".sgy", "default 0.001", "default 189", "default 193"})
    EXPECT_NE(wave.out.find(flag), std::string::npos) << flag;
  const Result segy = run("segy --help");
  ASSERT_EQ(segy.code, 0) << segy.out;
  for (const char* sub : {"info", "to-npy", "from-npy"})
    EXPECT_NE(segy.out.find(sub), std::string::npos) << sub;
  for (const char* sub : {"info", "to-npy", "from-npy"}) {
    const Result r = run(std::string("segy ") + sub + " --help");
    EXPECT_EQ(r.code, 0) << sub;
    EXPECT_NE(r.out.find("--spacing"), std::string::npos) << sub;
  }
  EXPECT_NE(run("--help").out.find("segy"), std::string::npos);
}

// Every build reads and writes SEG-Y (issue 34: no libsegyio needed), and info says so.
TEST(SegyCliBuild, InfoSaysTheBuildReadsAndWritesSegy) {
  const Result j = run("info --json");
  ASSERT_EQ(j.code, 0) << j.out;
  EXPECT_TRUE(json::parse(j.out)["build"]["segy"].get<bool>());
  const Result t = run("info");
  EXPECT_NE(t.out.find("SEG-Y: on"), std::string::npos) << t.out;
}

TEST_F(SegyCli, FromNpyInfoAndToNpyRoundTrip) {
  make_model();
  const Result info = run("segy info " + path("m.sgy"));
  ASSERT_EQ(info.code, 0) << info.out;
  for (const char* words : {"3D post-stack volume or model", "18 traces", "inline-sorted", "IEEE float",
                            "dz 12.5 m", "3 inlines 1..3", "6 crosslines 1..6", "values 1500..2375"})
    EXPECT_NE(info.out.find(words), std::string::npos) << words << " in:\n" << info.out;
  const Result j = run("segy info --json " + path("m.sgy"));
  ASSERT_EQ(j.code, 0) << j.out;
  const json doc = json::parse(j.out);
  EXPECT_EQ(doc["shape"], json({7, 3, 6}));
  EXPECT_EQ(doc["spacing"], json({{"z", 12.5}, {"y", 12.5}, {"x", 12.5}}));
  EXPECT_EQ(doc["sample_interval"], 12500);

  const Result back = run("segy to-npy " + path("m.sgy") + " " + path("back.npy"));
  ASSERT_EQ(back.code, 0) << back.out;
  const NpyArray a = read_npy(path("back.npy"));
  EXPECT_EQ(a.shape, (std::vector<int64_t>{7, 3, 6}));
  EXPECT_EQ(floats(a), model_);
  // A z unit of 0.1 m stores 12.5 m as 125; reading it as millimetres gives dz 0.125 m.
  ASSERT_EQ(
      run("segy from-npy " + path("m.npy") + " " + path("dm.sgy") + " --spacing 12.5 --segy-z-unit 0.1").code,
      0);
  const json dm = json::parse(run("segy info --json " + path("dm.sgy")).out);
  EXPECT_EQ(dm["sample_interval"], 125);
  EXPECT_EQ(dm["spacing"]["z"], 0.125);
  EXPECT_EQ(json::parse(run("segy info --json --segy-z-unit 0.1 " + path("dm.sgy")).out)["spacing"]["z"],
            12.5);
}

// A conversion never replaces an existing file unless asked: refused by name, the file untouched;
// --overwrite replaces it.
TEST_F(SegyCli, ConversionsRefuseAnExistingOutputWithoutOverwrite) {
  make_model();
  for (const auto& [cmd, out] : {std::pair{"segy from-npy " + path("m.npy") + " ", path("keep.sgy")},
                                 std::pair{"segy to-npy " + path("m.sgy") + " ", path("keep.npy")}}) {
    std::ofstream(out) << "mine";
    const std::string args = cmd + out + " --spacing 12.5";
    const Result r = run(args);
    EXPECT_EQ(r.code, 2) << args << "\n" << r.out;
    EXPECT_NE(r.out.find(out + " exists: give --overwrite"), std::string::npos) << r.out;
    std::ifstream in(out);
    EXPECT_EQ(std::string(std::istreambuf_iterator<char>(in), {}), "mine");
    EXPECT_EQ(run(args + " --overwrite").code, 0) << args;
    EXPECT_GT(fs::file_size(out), 4u);
  }
}

TEST_F(SegyCli, WaveReadsASegyModelAndChecksTheSpacing) {
  make_model();
  const std::string base =
      "wave --backend cpu --quiet --steps 5 --source 40,12,30 --no-final --model " + path("m.sgy");
  const Result r = run(base + " -o " + path("out"));
  ASSERT_EQ(r.code, 0) << r.out;
  const json model = read_json(dir_ / "out" / "summary.json")["model"];
  EXPECT_EQ(model["kind"], "file");
  EXPECT_EQ(model["format"], "segy");
  EXPECT_EQ(model["spacing"], 12.5);
  EXPECT_EQ(model["segy"]["order"], "inline-sorted");
  EXPECT_EQ(run(base + " --spacing 12.5 -o " + path("agree")).code, 0);
  expect_refused(base + " --spacing 10 -o " + path("bad"), {"--spacing 10", "contradicts", "dz = 12.5"},
                 path("bad"));
  expect_refused(base + " --segy-z-unit 0.002 -o " + path("bad"),
                 {"dz = 25 m", "dx = 12.5 m", "--segy-z-unit"}, path("bad"));
  expect_refused(base + " --segy-inline-byte 190 -o " + path("bad"), {"190", "inline"}, path("bad"));
  expect_refused(base + " --segy-inline-byte 193 -o " + path("bad"), {"both 193"}, path("bad"));
  expect_refused(kSmall2D + "--segy-z-unit 0.01 -o " + path("bad"), {"--segy-z-unit", "SEG-Y --model"},
                 path("bad"));
}

TEST_F(SegyCli, WaveWritesShotSgyWithTheSamplesOfShotNpy) {
  const Result r =
      run(kSmall2D + "--dt 0.001 --receiver-line 100,100:100,500:5 --segy --shot-id 9 -o " + path("out"));
  ASSERT_EQ(r.code, 0) << r.out;
  const fs::path out = dir_ / "out";
  const json sum = read_json(out / "summary.json");
  EXPECT_NE(std::find(sum["outputs"].begin(), sum["outputs"].end(), "shot.sgy"), sum["outputs"].end());
  EXPECT_EQ(read_json(out / "shot.json")["shot_id"], 9);
  const std::vector<float> record = floats(read_npy(out / "shot.npy"));
  ASSERT_EQ(record.size(), 5u * 60u);
#if FDSTENCIL_HAVE_SEGYIO
  segy_file* fp = segy_open((out / "shot.sgy").c_str(), "rb");
  ASSERT_NE(fp, nullptr);
  char bin[SEGY_BINARY_HEADER_SIZE];
  ASSERT_EQ(segy_binheader(fp, bin), SEGY_OK);
  EXPECT_EQ(segy_samples(bin), 60);
  int32_t interval = 0;
  segy_get_bfield(bin, SEGY_BIN_INTERVAL, &interval);
  EXPECT_EQ(interval, 1000);
  const long trace0 = segy_trace0(bin);
  const int trsize = segy_trsize(SEGY_IEEE_FLOAT_4_BYTE, 60);
  for (int t = 0; t < 5; ++t) {
    char h[SEGY_TRACE_HEADER_SIZE];
    ASSERT_EQ(segy_traceheader(fp, t, h, trace0, trsize), SEGY_OK);
    int32_t v = 0;
    segy_get_field(h, SEGY_TR_FIELD_RECORD, &v);
    EXPECT_EQ(v, 9);
    segy_get_field(h, SEGY_TR_GROUP_X, &v);
    EXPECT_EQ(v, 10000 * (t + 1));  // x = 100, 200, ... 500 m in centimetres
    std::vector<float> samples(60);
    ASSERT_EQ(segy_readtrace(fp, t, samples.data(), trace0, trsize), SEGY_OK);
    segy_to_native(SEGY_IEEE_FLOAT_4_BYTE, 60, samples.data());
    EXPECT_EQ(0, std::memcmp(samples.data(), record.data() + 60 * t, 60 * 4)) << "trace " << t;
  }
  segy_close(fp);
#endif
}

TEST_F(SegyCli, WhatShotSgyCannotHoldIsRefusedBeforeTheRun) {
  const std::string rec = "--receiver-line 100,100:100,500:3 ";
  expect_refused(kSmall2D + rec + "--segy --record-dt 0.0012345 -o " + path("o"),
                 {"--record-dt 0.0012345", "whole number of microseconds"}, path("o"));
  expect_refused(kSmall2D + rec + "--segy --record-dt 0.1 -o " + path("o"), {"--record-dt 0.1", "65535"},
                 path("o"));
  expect_refused(
      "wave --backend cpu --constant 2000 --shape 11,11 --spacing 10 --source 50,50 --steps 70000 " + rec +
          "--segy -o " + path("o"),
      {"--segy", "65535", "--record-dt"}, path("o"));
  expect_refused(kSmall2D + "--segy -o " + path("o"), {"--segy", "no receivers"}, path("o"));
  expect_refused(kSmall2D + rec + "--source 200,200 --segy -o " + path("o"), {"--segy", "2 sources"},
                 path("o"));
  expect_refused(kSmall2D + rec + "--shot-id 0 -o " + path("o"), {"--shot-id", "at least 1"}, path("o"));
  expect_refused(kSmall2D + rec + "--shot-id 3000000000 -o " + path("o"), {"--shot-id", "2147483647"},
                 path("o"));
}

TEST_F(SegyCli, BadSegyInputExits2AndWritesNothing) {
  make_model();
  std::ofstream(path("junk.sgy")) << "not a SEG-Y file";
  expect_refused("segy to-npy " + path("junk.sgy") + " " + path("o.npy"), {"junk.sgy", "3600"},
                 path("o.npy"));
  expect_refused("segy to-npy " + path("none.sgy") + " " + path("o.npy"), {"none.sgy", "no such file"},
                 path("o.npy"));
  fs::copy_file(path("m.sgy"), path("cut.sgy"));
  fs::resize_file(path("cut.sgy"), fs::file_size(path("cut.sgy")) - 1);
  expect_refused("segy info " + path("cut.sgy"), {"truncated", "267 bytes are left over"}, path("o.npy"));
  expect_refused(
      "wave --backend cpu --model " + path("cut.sgy") + " --steps 5 --source 40,12,30 -o " + path("o"),
      {"truncated"}, path("o"));
  expect_refused("segy from-npy " + path("m.npy") + " " + path("o.sgy"), {"--spacing is required"},
                 path("o.sgy"));
  expect_refused("segy from-npy " + path("m.npy") + " " + path("o.sgy") + " --spacing 0.0000001",
                 {"whole number", "--segy-z-unit"}, path("o.sgy"));
  expect_refused("segy from-npy " + path("m.sgy") + " " + path("o.sgy") + " --spacing 10", {"m.sgy"},
                 path("o.sgy"));
  expect_refused("segy", {"needs a command", "info FILE", "to-npy", "from-npy"}, path("o.sgy"));
}
