// fdstencil gradient, rtm and born as a user meets them: a shot recorded by `fdstencil wave`, then
// its gradient and image in another model; a record of the very model giving a misfit and a
// gradient of exactly zero; a memory budget giving the bits of the run that keeps every field;
// each refusal (a record sampled at another step, other receivers, an earlier run's outputs, a
// budget below one checkpoint, another radius or source) exiting 2 with its reason and leaving no
// folder behind; Born's record against the central difference of two `wave` runs; a survey's
// stack as the sum of its shots, stopped by SIGINT between shots and resumed to the same bytes;
// born --survey's records, each its shot's, in a folder of their own.
// Small 2D runs on the cpu backend.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include <signal.h>

#include "cli/cli_test_util.hpp"
#include "fdstencil/npy.hpp"
#include "fdstencil/segy.hpp"

namespace fs = std::filesystem;
using namespace fdstencil;
using nlohmann::json;
using test::bytes_of;
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
  // Boundary saving: the summary says so, and off the model's outer faces the gradient is every
  // field's to float's round-off of the steps back (tests/wave/test_imaging_boundary.cpp).
  r = run("gradient" + kShot + kStart + " --observed " + path("record") + " --boundary-saving --output " +
          path("strips"));
  ASSERT_EQ(r.code, 0) << r.out;
  const json strips = read_json(dir_ / "strips" / "summary.json")["storage"];
  EXPECT_TRUE(strips["boundary_saving"].get<bool>());
  EXPECT_EQ(strips["reversed_steps"].get<int64_t>(), 149);
  EXPECT_LT(strips["stored_bytes"].get<int64_t>(), sum["storage"]["stored_bytes"].get<int64_t>());
  const std::vector<float> gs = floats(dir_ / "strips" / "gradient.npy");
  double gap = 0;
  for (int k = 1; k < 40; ++k)
    for (int i = 1; i < 60; ++i)
      gap = std::max(gap, double(std::abs(gs[size_t(k * 61 + i)] - g[size_t(k * 61 + i)])));
  EXPECT_LE(gap, 1e-4 * most);
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
      {"rtm" + kShot + kStart + " --resume" + observed, "--resume continues a --survey's stack"},
      {"rtm" + kShot + kStart + " --devices all" + observed, "--devices spreads a --survey's shots"},
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

// A record given as SEG-Y (the file `wave --segy` wrote, or a folder holding only it) gives the
// bits of its .npy twin; the result as SEG-Y holds the .npy's values; a SEG-Y record of another
// source is refused by name.
TEST_F(ImagingCli, SegyRecordsInAndResultsOut) {
  Result r = run("wave" + kShot + kTrue + " --no-final --segy --output " + path("sgy"));
  ASSERT_EQ(r.code, 0) << r.out;
  fs::create_directories(dir_ / "only");
  fs::copy_file(dir_ / "sgy" / "shot.sgy", dir_ / "only" / "shot.sgy");
  r = run("gradient" + kShot + kStart + " --observed " + path("record") + " --output " + path("npy"));
  ASSERT_EQ(r.code, 0) << r.out;
  for (const std::string& observed : {path("sgy") + "/shot.sgy", path("only")}) {
    const std::string out = path("from_" + std::to_string(observed.size()));
    r = run("gradient" + kShot + kStart + " --observed " + observed + " --segy --output " + out);
    ASSERT_EQ(r.code, 0) << r.out;
    EXPECT_EQ(floats(fs::path(out) / "gradient.npy"), floats(dir_ / "npy" / "gradient.npy")) << observed;
    const segy::Grid back = segy::read_model(fs::path(out) / "gradient.sgy");
    EXPECT_EQ(back.v, floats(dir_ / "npy" / "gradient.npy"));
  }
  std::string moved = kShot;
  moved.replace(moved.find("--source 50,300"), 15, "--source 60,300");
  r = run("gradient" + moved + kStart + " --observed " + path("only") + " --output " + path("refused"));
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.out.find("trace 0's source lies at"), std::string::npos) << r.out;
  EXPECT_FALSE(fs::exists(path("refused")));
  // Another step than the record's interval, and a record that is not there.
  r = run("gradient" + shot("0.001") + kStart + " --observed " + path("only") + " --output " +
          path("refused"));
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.out.find("the record is sampled every 1500 us"), std::string::npos) << r.out;
  r = run("gradient" + kShot + kStart + " --observed " + path("nowhere") + " --output " + path("refused"));
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.out.find("no such file or folder"), std::string::npos) << r.out;
  EXPECT_FALSE(fs::exists(path("refused")));
  // An earlier run's gradient.sgy is not left beside a later --overwrite's results without --segy.
  const std::string out = path("from_" + std::to_string(path("only").size()));
  r = run("gradient" + kShot + kStart + " --observed " + path("only") + " --output " + out);
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.out.find("holds an earlier run's gradient.npy"), std::string::npos) << r.out;
  ASSERT_EQ(
      run("gradient" + kShot + kStart + " --observed " + path("only") + " --overwrite --output " + out).code,
      0);
  EXPECT_TRUE(fs::exists(fs::path(out) / "gradient.npy"));
  EXPECT_FALSE(fs::exists(fs::path(out) / "gradient.sgy"));
}

// The run without its model: Born and the finite difference take models from files.
const std::string kRun =
    " --backend cpu --quiet --spacing 10 --steps 150 --ricker 15 --source 50,300 --receiver-line "
    "20,50:20,550:6 "
    "--dt 0.0015";

void write_f64(const fs::path& p, const std::vector<double>& v) {
  write_npy(p, DType::f64, {41, 61}, v.data(), int64_t(v.size() * sizeof(double)));
}

// Born's record of dv against (d(v + dv) - d(v - dv)) / 2 from `wave`: the same to dv's second
// order (a 2 % change in a patch of the upper layer, away from the largest velocity that sets the
// CPML's profile, and from the source and receivers).
TEST_F(ImagingCli, BornIsTheFirstOrderChangeOfTheRecord) {
  std::vector<double> v(41 * 61), dv(v.size(), 0.0);
  for (int k = 0; k < 41; ++k)
    for (int i = 0; i < 61; ++i) {
      v[size_t(k * 61 + i)] = k < 20 ? 2000.0 : 2400.0;
      if (k >= 10 && k < 16 && i >= 20 && i < 45) dv[size_t(k * 61 + i)] = 40.0;
    }
  std::vector<double> up(v), down(v);
  for (size_t i = 0; i < v.size(); ++i) {
    up[i] += dv[i];
    down[i] -= dv[i];
  }
  write_f64(dir_ / "v.npy", v);
  write_f64(dir_ / "dv.npy", dv);
  write_f64(dir_ / "up.npy", up);
  write_f64(dir_ / "down.npy", down);
  Result r = run("born" + kRun + " --model " + path("v.npy") + " --perturbation " + path("dv.npy") + " -o " +
                 path("born"));
  ASSERT_EQ(r.code, 0) << r.out;
  for (const char* m : {"up", "down"}) {
    r = run("wave" + kRun + " --no-final --model " + path(std::string(m) + ".npy") + " -o " + path(m));
    ASSERT_EQ(r.code, 0) << r.out;
  }
  const auto record = [&](const char* d) {
    const NpyArray a = read_npy(dir_ / d / "shot.npy");
    std::vector<float> t(a.bytes.size() / 4);
    std::memcpy(t.data(), a.bytes.data(), a.bytes.size());
    return t;
  };
  const std::vector<float> born = record("born"), up_t = record("up"), down_t = record("down");
  ASSERT_EQ(born.size(), size_t(6 * 150));
  double num = 0, den = 0;
  for (size_t i = 0; i < born.size(); ++i) {
    const double fd = (double(up_t[i]) - double(down_t[i])) / 2;
    num += (born[i] - fd) * (born[i] - fd);
    den += fd * fd;
  }
  ASSERT_GT(den, 0.0);
  EXPECT_LE(std::sqrt(num / den), 0.02);
  EXPECT_EQ(read_json(dir_ / "born" / "summary.json")["backend"], "cpu");
  // Born's record is a record: rtm takes it.
  r = run("rtm" + kRun + " --model " + path("v.npy") + " --observed " + path("born") + " -o " +
          path("image"));
  EXPECT_EQ(r.code, 0) << r.out;
  // Refusals, nothing written.
  const std::string refused = " --model " + path("v.npy") + " -o " + path("refused");
  for (const auto& [args, says] : std::vector<std::pair<std::string, std::string>>{
           {"born" + kRun + refused, "--perturbation FILE is required"},
           {"born" + kRun + refused + " --perturbation " + path("up.npy") + " --shape 41,61",
            "--shape goes with"},
           {"born" + kRun + " --constant 2000 --shape 40,61 --perturbation " + path("dv.npy") + " -o " +
                path("refused"),
            "is not the model's"}}) {
    r = run(args);
    EXPECT_EQ(r.code, 2) << args << "\n" << r.out;
    EXPECT_NE(r.out.find(says), std::string::npos) << r.out;
    EXPECT_FALSE(fs::exists(path("refused"))) << args;
  }
}

const char* const kSources[] = {"100", "250", "400", "550"};  // the survey's x, m

class ImagingSurveyCli : public test::ScratchDirTest {
 protected:
  ImagingSurveyCli() : ScratchDirTest("fdstencil_imaging_survey_cli_") {}
  // Four shots along the line (kSources), recorded by `wave --survey` in the layered model; `steps`
  // long.
  void record(const std::string& steps) {
    std::ofstream(dir_ / "survey.json") << R"({"shots": [{"id": 1, "source": [50, 100]},
      {"id": 2, "source": [50, 250]}, {"id": 3, "source": [50, 400]}, {"id": 4, "source": [50, 550]}]})";
    const Result r = run("wave" + base(steps) + kTrue + " --no-final --survey " + path("survey.json") +
                         " -o " + path("records"));
    ASSERT_EQ(r.code, 0) << r.out;
  }
  static std::string base(const std::string& steps) {
    return " --backend cpu --quiet --shape 41,61 --spacing 10 --ricker 15 --receiver-line 20,50:20,550:6 "
           "--dt "
           "0.0015 --steps " +
           steps;
  }
  // The same with another --backend than base()'s cpu.
  std::string stack_on(const std::string& backend, const std::string& kind, const std::string& steps,
                       const std::string& out) const {
    std::string cmd = stack(kind, steps, out);
    const std::string cpu = " --backend cpu ";
    return cmd.replace(cmd.find(cpu), cpu.size(), " --backend " + backend + " ");
  }
  std::string stack(const std::string& kind, const std::string& steps, const std::string& out) const {
    return kind + base(steps) + kStart + " --survey " + path("survey.json") + " --observed " +
           path("records") + " -o " + path(out);
  }
};

// The survey's gradient is the sum of its shots' (in double, then float), and its misfit theirs.
TEST_F(ImagingSurveyCli, TheStackIsTheSumOfItsShots) {
  record("150");
  fs::create_directories(dir_ / "stack");
  std::ofstream(dir_ / "stack" / "stack_mine.npy") << "the user's own";  // not a stack's name: kept
  Result r = run(stack("gradient", "150", "stack"));
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_EQ(bytes_of(dir_ / "stack" / "stack_mine.npy"), "the user's own");
  const json sum = read_json(dir_ / "stack" / "summary.json");
  ASSERT_EQ(sum["shots"].size(), 4u);
  EXPECT_FALSE(fs::exists(dir_ / "stack" / "stack.json"))
      << "the stack's files go once the result is written";
  std::vector<double> total(41 * 61, 0.0);
  double misfit = 0;
  for (int shot = 1; shot <= 4; ++shot) {
    const std::string one = "one" + std::to_string(shot);
    r = run("gradient" + base("150") + kStart + " --source 50," + kSources[shot - 1] + " --observed " +
            path("records") + "/shot_00000" + std::to_string(shot) + " -o " + path(one));
    ASSERT_EQ(r.code, 0) << r.out;
    misfit += read_json(dir_ / one / "summary.json")["misfit"].get<double>();
    const std::vector<float> g = floats(dir_ / one / "gradient.npy");
    for (size_t i = 0; i < g.size(); ++i) total[i] += g[i];
  }
  EXPECT_NEAR(sum["misfit"].get<double>(), misfit, 1e-12 * misfit);
  const std::vector<float> stacked = floats(dir_ / "stack" / "gradient.npy");
  double most = 0;
  for (double x : total) most = std::max(most, std::abs(x));
  ASSERT_GT(most, 0.0);
  for (size_t i = 0; i < total.size(); ++i) ASSERT_NEAR(stacked[i], total[i], 1e-6 * most) << i;
  // A shot without its record is refused by its id before any shot runs, and nothing is written.
  fs::rename(dir_ / "records" / "shot_000004", dir_ / "records" / "moved");
  r = run(stack("gradient", "150", "refused"));
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.out.find("survey shot 4: --observed"), std::string::npos) << r.out;
  EXPECT_FALSE(fs::exists(dir_ / "refused"));
  // So is a shot that run() refuses (a source on the free surface), by run()'s own reason, found
  // before its record is read (whose radius, CPML and free surface would be refused next).
  std::ofstream(dir_ / "bad.json") << R"({"shots": [{"id": 3, "source": [0, 400]}]})";
  std::string on_surface = stack("gradient", "150", "refused") + " --free-surface";
  on_surface.replace(on_surface.find(path("survey.json")), path("survey.json").size(), path("bad.json"));
  r = run(on_surface);
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.out.find("survey shot 3: source 0 lies on the free surface"), std::string::npos) << r.out;
  EXPECT_FALSE(fs::exists(dir_ / "refused"));
}

// --devices spreads the shots over GPUs: refused by name where the survey runs on the cpu, or a GPU
// does not exist or is named twice, with nothing written. On the GPUs (skipped without one) the
// stack made on every visible GPU holds the bits of the one made on one, the shots added in the
// survey's order whatever GPU ran each, and the summary names each shot's GPU.
TEST_F(ImagingSurveyCli, ShotsSpreadOverTheGpusGiveTheBitsOfOneGpu) {
  record("150");
  const struct {
    std::string backend, extra, says;
  } cases[] = {
      {"cpu", " --devices 0", "this survey runs on the cpu (--backend cpu, --double, or no GPU)"},
      {"auto", " --double --devices all", "this survey runs on the cpu"},
  };
  for (const auto& c : cases) {
    const Result r = run(stack_on(c.backend, "gradient", "150", "refused") + c.extra);
    EXPECT_EQ(r.code, 2) << c.extra << "\n" << r.out;
    EXPECT_NE(r.out.find(c.says), std::string::npos) << r.out;
    EXPECT_FALSE(fs::exists(path("refused"))) << c.extra;
  }
  if (!test::gpu_present()) GTEST_SKIP() << "no GPU";
  for (const char* bad : {" --devices 99", " --devices 0,0", " --devices 0,x", " --devices ,",
                          " --devices 0,", " --devices +0", " --devices -0", " --devices ' 0'"}) {
    const Result r = run(stack_on("cuda", "gradient", "150", "refused") + bad);
    EXPECT_EQ(r.code, 2) << bad << "\n" << r.out;
    EXPECT_NE(r.out.find("--devices: "), std::string::npos) << r.out;
    EXPECT_FALSE(fs::exists(path("refused"))) << bad;
  }
  for (const char* kind : {"gradient", "rtm"}) {
    const std::string k = kind;
    ASSERT_EQ(run(stack_on("cuda", k, "150", k + "-one") + " --devices 0").code, 0);
    const Result r = run(stack_on("cuda", k, "150", k + "-all") + " --devices all");
    ASSERT_EQ(r.code, 0) << r.out;
    const std::string result = k == "rtm" ? "image.npy" : "gradient.npy";
    EXPECT_EQ(bytes_of(dir_ / (k + "-all") / result), bytes_of(dir_ / (k + "-one") / result)) << k;
    const json shots = read_json(dir_ / (k + "-all") / "summary.json")["shots"];
    ASSERT_EQ(shots.size(), 4u);
    for (size_t i = 0; i < 4; ++i) {
      EXPECT_EQ(shots[i]["id"], int(i) + 1) << "the shots in the survey's order";
      EXPECT_TRUE(shots[i]["gpu"].is_number_integer()) << shots[i];
    }
  }
  // born --survey: every shot's record the same bytes on one GPU and on all.
  std::vector<double> dv(41 * 61, 0.0);
  for (int k = 10; k < 16; ++k)
    for (int i = 20; i < 45; ++i) dv[size_t(k * 61 + i)] = 40.0;
  write_npy(dir_ / "dv.npy", DType::f64, {41, 61}, dv.data(), int64_t(dv.size() * sizeof(double)));
  for (const char* devices : {"0", "all"}) {
    const Result r =
        run("born" + base("150").replace(base("150").find("--backend cpu"), 13, "--backend cuda") + kStart +
            " --survey " + path("survey.json") + " --perturbation " + path("dv.npy") + " --devices " +
            devices + " -o " + path(std::string("born-") + devices));
    ASSERT_EQ(r.code, 0) << r.out;
  }
  for (int shot = 1; shot <= 4; ++shot) {
    const std::string d = "shot_00000" + std::to_string(shot);
    EXPECT_EQ(bytes_of(dir_ / "born-all" / d / "shot.npy"), bytes_of(dir_ / "born-0" / d / "shot.npy"))
        << shot;
  }
}

// A survey's bar counts every shot's steps (rtm: the forward sweep and the backward, 300 a shot;
// born: 150), in a log a line at each 10 %, without carriage returns; --quiet has none.
TEST_F(ImagingSurveyCli, ASurveysBarCountsTheStepsOfEveryShot) {
  record("150");
  std::string rtm = stack("rtm", "150", "image");
  rtm.replace(rtm.find(" --quiet"), 8, "");
  Result r = run(rtm);
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("fdstencil rtm (4/4 shots): 100 % (1200/1200 steps)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("50 % (600/1200 steps)"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find('\r'), std::string::npos) << r.out;
  std::vector<double> dv(41 * 61, 0.0);
  dv[size_t(12 * 61 + 30)] = 40.0;
  write_npy(dir_ / "dv.npy", DType::f64, {41, 61}, dv.data(), int64_t(dv.size() * sizeof(double)));
  const std::string born = "born" + base("150") + kStart + " --survey " + path("survey.json") +
                           " --perturbation " + path("dv.npy") + " -o ";
  std::string loud = born + path("born");
  loud.replace(loud.find(" --quiet"), 8, "");
  r = run(loud);
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("100 % (600/600 steps)"), std::string::npos) << r.out;
  r = run(born + path("born-quiet"));
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_EQ(r.out.find("steps)"), std::string::npos) << r.out;
}

// born --survey: each shot's record J dv in OUTPUT/shot_<id>, the bytes of that shot's born run
// alone, and a folder that rtm --survey takes as its --observed. The same command again verifies and
// keeps the finished shots and runs a damaged one again, to the same bytes; a folder holding
// another dv's finished records, or `wave --survey`'s (and wave into born's), or shot folders
// without a manifest, or a damaged manifest, is refused and left as it was; so are a shot run()
// refuses, --overwrite, --resume and --devices on the cpu, with nothing written.
TEST_F(ImagingSurveyCli, BornOfASurveyWritesEachShotsRecordInAFolderOfItsOwn) {
  record("150");
  std::vector<double> dv(41 * 61, 0.0), dv2(dv.size(), 0.0);
  for (int k = 10; k < 16; ++k)
    for (int i = 20; i < 45; ++i) dv[size_t(k * 61 + i)] = 40.0, dv2[size_t(k * 61 + i)] = 20.0;
  write_npy(dir_ / "dv.npy", DType::f64, {41, 61}, dv.data(), int64_t(dv.size() * sizeof(double)));
  write_npy(dir_ / "dv2.npy", DType::f64, {41, 61}, dv2.data(), int64_t(dv2.size() * sizeof(double)));
  const auto born = [&](const std::string& out, const std::string& dv_file = "dv.npy") {
    return "born" + base("150") + kStart + " --survey " + path("survey.json") + " --perturbation " +
           path(dv_file) + " -o " + path(out);
  };
  Result r = run(born("born"));
  ASSERT_EQ(r.code, 0) << r.out;
  for (int shot : {1, 4}) {
    const std::string one = "one" + std::to_string(shot);
    r = run("born" + base("150") + kStart + " --source 50," + kSources[shot - 1] + " --perturbation " +
            path("dv.npy") + " -o " + path(one));
    ASSERT_EQ(r.code, 0) << r.out;
    EXPECT_EQ(bytes_of(dir_ / "born" / ("shot_00000" + std::to_string(shot)) / "shot.npy"),
              bytes_of(dir_ / one / "shot.npy"))
        << shot;
  }
  EXPECT_EQ(run(stack("rtm", "150", "image")
                    .replace(stack("rtm", "150", "image").find(path("records")), path("records").size(),
                             path("born")))
                .code,
            0);
  // Again: every shot verified and kept; then shot 3's record damaged, and run again alone.
  const std::string shot3 = bytes_of(dir_ / "born" / "shot_000003" / "shot.npy");
  r = run(born("born"));
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_EQ(read_json(dir_ / "born" / "survey.json")["status"]["3"], "skipped: finished and verified");
  std::ofstream(dir_ / "born" / "shot_000003" / "shot.npy", std::ios::app) << "x";
  r = run(born("born"));
  ASSERT_EQ(r.code, 0) << r.out;
  const json manifest = read_json(dir_ / "born" / "survey.json");
  EXPECT_EQ(manifest["status"]["3"], "done");
  EXPECT_EQ(manifest["status"]["1"], "skipped: finished and verified");
  EXPECT_EQ(manifest["shots"].size(), 4u) << "the shots kept keep their entries";
  EXPECT_EQ(bytes_of(dir_ / "born" / "shot_000003" / "shot.npy"), shot3);
  // Refusals: a folder of another run's records either way, one holding shot folders without a
  // manifest or an unreadable manifest, a shot that run() refuses (found before any shot runs),
  // and options a born survey does not take.
  const std::string record4 = bytes_of(dir_ / "records" / "shot_000004" / "shot.npy");
  fs::create_directories(dir_ / "orphan" / "shot_000001");
  fs::create_directories(dir_ / "damaged");
  std::ofstream(dir_ / "damaged" / "survey.json") << "{";
  std::ofstream(dir_ / "bad.json")
      << R"({"shots": [{"id": 1, "source": [50, 100]}, {"id": 3, "source": [0, 400]}]})";
  std::string on_surface = born("refused") + " --free-surface";
  on_surface.replace(on_surface.find(path("survey.json")), path("survey.json").size(), path("bad.json"));
  const struct {
    std::string args, says;
  } cases[] = {
      {born("born", "dv2.npy"), "holds the finished record of shot 1 of another born survey"},
      {born("records"), "holds the shots of `fdstencil wave --survey`"},
      {"wave" + base("150") + kTrue + " --no-final --survey " + path("survey.json") + " -o " + path("born"),
       "holds the shots of `fdstencil born --survey`"},
      {born("orphan"), "holds shot folders of a survey without its manifest"},
      {born("damaged"), "is unreadable"},
      {on_surface, "survey shot 3: source 0 lies on the free surface"},
      {born("refused") + " --overwrite", "--overwrite: a born survey's re-run keeps"},
      {born("refused") + " --resume", "not expected: --resume"},  // the same command continues
      {born("refused") + " --devices 0", "this survey runs on the cpu"},
  };
  for (const auto& c : cases) {
    r = run(c.args);
    EXPECT_EQ(r.code, 2) << c.args << "\n" << r.out;
    EXPECT_NE(r.out.find(c.says), std::string::npos) << r.out;
  }
  EXPECT_FALSE(fs::exists(path("refused")));
  EXPECT_EQ(bytes_of(dir_ / "records" / "shot_000004" / "shot.npy"), record4);
  EXPECT_EQ(bytes_of(dir_ / "born" / "shot_000003" / "shot.npy"), shot3);
  EXPECT_EQ(bytes_of(dir_ / "damaged" / "survey.json"), "{");
  // A folder whose run finished no shot (every done.json gone, as after a failure in its first
  // shots) is the next run's, of another dv too: nothing finished would be mixed.
  for (int shot = 1; shot <= 4; ++shot)
    fs::remove(dir_ / "born" / ("shot_00000" + std::to_string(shot)) / "done.json");
  r = run(born("born", "dv2.npy"));
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_EQ(read_json(dir_ / "born" / "survey.json")["status"]["1"], "done");
}

// SIGINT once born --survey's first shot is finished: the shots in progress finish, the run exits
// 130 saying to run the same command again, and that finishes the survey with the bytes of a run
// never stopped.
TEST_F(ImagingSurveyCli, AnInterruptedBornSurveyFinishesByTheSameCommand) {
  record("10");  // the survey file (born reads no record); long shots, so that the signal beats the last
  std::vector<double> dv(41 * 61, 0.0);
  for (int k = 10; k < 16; ++k)
    for (int i = 20; i < 45; ++i) dv[size_t(k * 61 + i)] = 40.0;
  write_npy(dir_ / "dv.npy", DType::f64, {41, 61}, dv.data(), int64_t(dv.size() * sizeof(double)));
  const auto born = [&](const std::string& out) {
    return "born" + base("6000") + kStart + " --survey " + path("survey.json") + " --perturbation " +
           path("dv.npy") + " -o " + path(out);
  };
  ASSERT_EQ(run(born("whole")).code, 0);
  const pid_t pid =
      test::start_cli(born("cut"), dir_ / "log.txt", "OMP_WAIT_POLICY=${OMP_WAIT_POLICY:-passive} ");
  ASSERT_TRUE(test::wait_for(dir_ / "cut" / "shot_000001" / "done.json", pid)) << bytes_of(dir_ / "log.txt");
  kill(pid, SIGINT);
  const int code = test::exit_code(pid);
  const std::string log = bytes_of(dir_ / "log.txt");
  ASSERT_EQ(code, 128 + SIGINT) << log;
  EXPECT_NE(log.find("Run the same command again"), std::string::npos) << log;
  EXPECT_FALSE(fs::exists(dir_ / "cut" / "shot_000004" / "done.json")) << log;
  const Result r = run(born("cut"));
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_EQ(read_json(dir_ / "cut" / "survey.json")["status"]["1"], "skipped: finished and verified");
  for (int shot = 1; shot <= 4; ++shot) {
    const std::string d = "shot_00000" + std::to_string(shot);
    EXPECT_EQ(bytes_of(dir_ / "cut" / d / "shot.npy"), bytes_of(dir_ / "whole" / d / "shot.npy")) << shot;
  }
}

// SIGINT once the first shot is stacked: the run stops after the shot in progress (the second, or
// the first when the signal beats the check for it), exits 130 naming --resume, and keeps that
// stack; a run without --resume, or of other settings (boundary saving among them), is refused;
// --resume finishes with the bytes of the run never stopped. Four long shots, so that the signal arrives before the last.
TEST_F(ImagingSurveyCli, AnInterruptedStackResumesToTheSameBytes) {
  record("1500");
  ASSERT_EQ(run(stack("rtm", "1500", "whole")).code, 0);
  const pid_t pid = test::start_cli(stack("rtm", "1500", "cut"), dir_ / "log.txt",
                                    "OMP_WAIT_POLICY=${OMP_WAIT_POLICY:-passive} ");
  ASSERT_TRUE(test::wait_for(dir_ / "cut" / "stack.json", pid)) << bytes_of(dir_ / "log.txt");
  kill(pid, SIGINT);
  const int code = test::exit_code(pid);
  const std::string log = bytes_of(dir_ / "log.txt");
  ASSERT_EQ(code, 128 + SIGINT) << log;
  EXPECT_NE(log.find("--resume"), std::string::npos) << log;
  const json done = read_json(dir_ / "cut" / "stack.json")["done"];
  EXPECT_TRUE(done == json({1}) || done == json({1, 2}) || done == json({1, 2, 3})) << done << log;
  EXPECT_FALSE(fs::exists(dir_ / "cut" / "image.npy"));
  Result r = run(stack("rtm", "1500", "cut"));
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.out.find("holds an interrupted survey's stack"), std::string::npos) << r.out;
  for (const char* other : {" --illumination", " --boundary-saving"}) {
    r = run(stack("rtm", "1500", "cut") + other + " --resume");
    EXPECT_EQ(r.code, 2) << other;
    EXPECT_NE(r.out.find("is the stack of another run"), std::string::npos) << r.out;
  }
  r = run(stack("rtm", "1500", "cut") + " --resume");
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_EQ(bytes_of(dir_ / "cut" / "image.npy"), bytes_of(dir_ / "whole" / "image.npy"));
  EXPECT_FALSE(fs::exists(dir_ / "cut" / "stack.json"));
}

}  // namespace
