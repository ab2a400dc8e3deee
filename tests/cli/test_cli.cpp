// The command-line tool as a user meets it: --help everywhere, exit code 2 and a message for
// bad input, no output file left behind on failure, apply and bench end to end.
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <string>

#include "bench/harness.hpp"
#include "fdstencil/backend.hpp"
#include "fdstencil/version.hpp"
#include "fdstencil/npy.hpp"
#include "fdstencil/tuning_cache.hpp"
#include "cli/cli_test_util.hpp"

namespace fs = std::filesystem;
using namespace fdstencil;
using test::gpu_present;
using test::Result;

namespace {

Result run(const std::string& args) { return test::run_cli(args); }

class Cli : public test::ScratchDirTest {
 protected:
  Cli() : ScratchDirTest("fdstencil_cli_") {}

  // A (nz, ny, nx) random field with the halo included, as a user would save it from NumPy.
  template <class T>
  std::vector<T> write_field(const std::string& name, int64_t nz, int64_t ny, int64_t nx) {
    std::vector<T> v(size_t(nz * ny * nx));
    uint64_t s = 12345;
    for (auto& x : v) {
      s = s * 6364136223846793005ull + 1442695040888963407ull;
      x = T(double(s >> 11) * 0x1.0p-53 - 0.5);
    }
    write_npy(path(name), dtype_of<T>(), {nz, ny, nx}, v.data(), int64_t(v.size() * sizeof(T)));
    return v;
  }

  // bench with --json into the scratch folder: the results file, or null (a failure recorded)
  // when the run did not exit 0. The run's output goes to *out when given.
  nlohmann::json bench_json(const std::string& args, Result* out = nullptr) {
    const std::string json = path("r.json");
    const Result r = run("bench " + args + " --json " + json);
    if (out != nullptr) *out = r;
    EXPECT_EQ(r.code, 0) << args << "\n" << r.out;
    if (r.code != 0) return nullptr;
    std::ifstream f(json);
    return nlohmann::json::parse(f);
  }
};

}  // namespace

TEST_F(Cli, HelpOnEverySubcommand) {
  for (const char* sub : {"", "info", "coeffs", "apply", "bench", "tune"}) {
    const Result r = run(std::string(sub) + " --help");
    EXPECT_EQ(r.code, 0) << sub << ": " << r.out;
    EXPECT_NE(r.out.find("Usage"), std::string::npos) << sub;
  }
}

TEST_F(Cli, InfoReportsBackends) {
  const Result r = run("info --json");
  ASSERT_EQ(r.code, 0) << r.out;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["version"], FDSTENCIL_VERSION);
  const auto backends = j["backends"].get<std::vector<std::string>>();
  EXPECT_NE(std::find(backends.begin(), backends.end(), "reference"), backends.end());
  EXPECT_NE(std::find(backends.begin(), backends.end(), "cpu"), backends.end());
}

TEST_F(Cli, CoeffsJsonMatchesLibrary) {
  const Result r = run("coeffs --radius 3 --derivative 2 --json");
  ASSERT_EQ(r.code, 0) << r.out;
  const auto j = nlohmann::json::parse(r.out);
  const auto w = j["weights"].get<std::vector<double>>();
  ASSERT_EQ(w.size(), 7u);
  EXPECT_DOUBLE_EQ(w[3], -49.0 / 18.0);
  EXPECT_DOUBLE_EQ(w[0], 1.0 / 90.0);
}

TEST_F(Cli, BadInputExitsTwoWithAMessage) {
  const std::string in = path("in.npy");
  write_field<float>("in.npy", 12, 11, 10);
  const struct {
    std::string args, needle;
  } cases[] = {
      {"coeffs --radius 9", "radius 9"},
      {"coeffs --radius 0", "radius 0"},
      {"coeffs --radius 2 --derivative 3", "derivative 3"},
      {"coeffs --radius 2 --spacing 0", "spacing"},
      {"coeffs --radius 2 --spacing -1", "spacing"},
      {"apply --op d2x --radius 9 --input " + in + " --output " + path("o.npy"), "radius 9"},
      {"apply --op d2q --radius 2 --input " + in + " --output " + path("o.npy"), "unknown operator"},
      {"apply --op d2x --input " + in + " --output " + path("o.npy"), "--radius is required"},
      {"apply --op laplacian7 --radius 2 --input " + in + " --output " + path("o.npy"), "radius 1"},
      {"apply --op d2x --radius 5 --input " + in + " --output " + path("o.npy"), "smaller than 2R+1"},
      {"apply --op d2x --radius 2 --spacing 0,1,1 --input " + in + " --output " + path("o.npy"), "hx"},
      {"apply --op d2x --radius 2 --spacing nan --input " + in + " --output " + path("o.npy"), "spacing"},
      {"apply --op d2x --radius 2 --spacing 1,inf,1 --input " + in + " --output " + path("o.npy"), "hy"},
      {"apply --op d2x --radius 2 --backend gpu9 --input " + in + " --output " + path("o.npy"),
       "unknown backend"},
      {"apply --op d2x --radius 2 --input " + path("missing.npy") + " --output " + path("o.npy"),
       "missing.npy"},
      {"bench --op d2x --radius 9 --size 16,16,16", "radius 9"},
      {"bench --op d2x --size 16,0,16", "at least 1"},
      {"bench --op d2x --size 16,16", "three integers"},
      {"bench --op d2x --size 4000000000,4000000000,4000000000", "overflow"},
      {"bench --op d2x --size 100000,100000,100000 --backend cpu", "GiB"},
      {"bench --op d2x --dtype half", "unknown type"},
      {"bench --op d2x --variant nosuch --backend cpu --size 8,8,8", "no variant"},
      {"bench --op d2x --param zz=1 --backend cpu --size 8,8,8", "zz"},
      {"bench --reps 0", "reps"},
      {"frobnicate", "frobnicate"},
      {"coeffs --radius 4 --spacing 1e-200", "range"},
      {"coeffs --radius 4 --spacing 1e200", "range"},
      {"apply --op d2x --radius 2 --spacing 1e-200 --input " + in + " --output " + path("o.npy"), "hx"},
      {"apply --op d2x --radius 2 --spacing 1,1e200,1 --input " + in + " --output " + path("o.npy"), "hy"},
      {"apply --op d2z --radius 2 --spacing 1,1,1e-20 --input " + in + " --output " + path("o.npy"),
       "float range"},
      {"bench --backend cpu --op d2x --size 8,8,8 --json " + path("missing-dir/r.json"), "cannot write"},
      {"bench --backend cpu --op d2x --size 8,8,8 --profile", "needs --backend cuda"},
      {"bench --backend cpu --op d2x --size 8,8,8 --profile-child", "needs --backend cuda"},
      {"bench --backend cpu --op d2x --size 8,8,8 --profile --profile-child", "not both"},
      {"bench --backend cpu --op d2x --size 8,8,8 --same-size-copy", "needs --backend cuda"},
  };
  for (const auto& c : cases) {
    const Result r = run(c.args);
    EXPECT_EQ(r.code, 2) << c.args << "\n" << r.out;
    EXPECT_NE(r.out.find(c.needle), std::string::npos) << c.args << "\n" << r.out;
    EXPECT_FALSE(fs::exists(path("o.npy"))) << c.args;
  }
}

TEST_F(Cli, MalformedNpyLeavesNoOutput) {
  {
    std::ofstream f(path("bad.npy"), std::ios::binary);
    f << "this is not a numpy file";
  }
  write_field<double>("full.npy", 9, 9, 9);
  // Truncate a valid file.
  fs::resize_file(path("full.npy"), fs::file_size(path("full.npy")) - 100);
  // A valid file of the wrong dtype: int32.
  {
    std::vector<int32_t> v(27, 1);
    std::string header = "{'descr': '<i4', 'fortran_order': False, 'shape': (3, 3, 3), }";
    while ((10 + header.size() + 1) % 64) header += ' ';
    header += '\n';
    std::ofstream f(path("int.npy"), std::ios::binary);
    const uint16_t len = uint16_t(header.size());
    f.write("\x93NUMPY\x01\x00", 8);
    f.write(reinterpret_cast<const char*>(&len), 2);
    f << header;
    f.write(reinterpret_cast<const char*>(v.data()), 27 * 4);
  }
  {  // 2-D (9, 9) and 4-D (1, 9, 9, 9) arrays
    std::vector<float> v(729, 1.0f);
    write_npy(path("twod.npy"), DType::f32, {9, 9}, v.data(), 81 * 4);
    write_npy(path("fourd.npy"), DType::f32, {1, 9, 9, 9}, v.data(), 729 * 4);
  }
  for (const std::string bad : {"bad.npy", "full.npy", "int.npy"}) {
    const Result r = run("apply --op d2x --radius 1 --input " + path(bad) + " --output " + path("o.npy"));
    EXPECT_EQ(r.code, 2) << bad << ": " << r.out;
    EXPECT_NE(r.out.find(bad), std::string::npos) << r.out;
    EXPECT_FALSE(fs::exists(path("o.npy"))) << bad;
  }
  for (const std::string bad : {"twod.npy", "fourd.npy"}) {
    const Result r = run("apply --op d2x --radius 1 --input " + path(bad) + " --output " + path("o.npy"));
    EXPECT_EQ(r.code, 2) << r.out;
    EXPECT_NE(r.out.find("must be 3-D"), std::string::npos) << r.out;
    EXPECT_FALSE(fs::exists(path("o.npy")));
  }
}

TEST_F(Cli, ApplyMatchesTheReferenceAndCopiesTheHalo) {
  const int R = 3;
  const int64_t nz = 2 * R + 5, ny = 2 * R + 7, nx = 2 * R + 9;
  std::vector<std::string> backends = {"reference", "cpu", "auto"};
  if (gpu_present()) backends.push_back("cuda");
  for (const std::string& backend : backends) {
    const auto in = write_field<double>("in.npy", nz, ny, nx);
    const Result r = run("apply --op d2xyz --radius 3 --spacing 0.5,0.25,2 --backend " + backend +
                         " --input " + path("in.npy") + " --output " + path("out.npy") + " --overwrite");
    ASSERT_EQ(r.code, 0) << r.out;
    const NpyArray out = read_npy(path("out.npy"));
    ASSERT_EQ(out.dtype, DType::f64);
    ASSERT_EQ(out.shape, (std::vector<int64_t>{nz, ny, nx}));
    const double* o = reinterpret_cast<const double*>(out.bytes.data());

    HostField<double> f({nx - 2 * R, ny - 2 * R, nz - 2 * R}, R), g(f.layout());
    for (int64_t k = 0; k < nz; ++k)
      for (int64_t j = 0; j < ny; ++j)
        for (int64_t i = 0; i < nx; ++i) f.at(i - R, j - R, k - R) = in[size_t((k * ny + j) * nx + i)];
    reference_backend().apply({Op::d2xyz, R, {0.5, 0.25, 2.0}}, f, g);
    for (int64_t k = 0; k < nz; ++k)
      for (int64_t j = 0; j < ny; ++j)
        for (int64_t i = 0; i < nx; ++i) {
          const size_t n = size_t((k * ny + j) * nx + i);
          const bool halo = i < R || i >= nx - R || j < R || j >= ny - R || k < R || k >= nz - R;
          if (halo)
            ASSERT_EQ(o[n], in[n]) << i << "," << j << "," << k;
          else
            ASSERT_NEAR(o[n], g.at(i - R, j - R, k - R), 1e-12 * 400) << i << "," << j << "," << k;
        }
  }
}

// An existing output is the user's file: refused (exit 2, the file untouched, before the input is
// read) unless --overwrite asks for it to be replaced.
TEST_F(Cli, ApplyReplacesAnExistingOutputOnlyWhenAsked) {
  write_field<float>("in.npy", 7, 8, 9);
  std::ofstream(path("out.npy")) << "a user's file";
  const std::string cmd =
      "apply --op d2x --radius 1 --backend cpu --input " + path("in.npy") + " --output " + path("out.npy");
  Result r = run(cmd);
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_NE(r.out.find("exists: give --overwrite to replace it"), std::string::npos) << r.out;
  EXPECT_EQ(test::bytes_of(path("out.npy")), "a user's file");
  r = run("apply --op d2x --radius 1 --backend cpu --input " + path("missing.npy") + " --output " +
          path("out.npy"));
  EXPECT_NE(r.out.find("exists"), std::string::npos) << "refused before the input is read: " << r.out;
  r = run(cmd + " --overwrite");
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_EQ(read_npy(path("out.npy")).shape, (std::vector<int64_t>{7, 8, 9}));
}

TEST_F(Cli, BenchWritesTheResultsFile) {
  Result r;
  const auto doc =
      bench_json("--backend cpu --op laplacian7,d2z --size 20,18,16 --dtype float,double --reps 3", &r);
  ASSERT_FALSE(doc.is_null());
  EXPECT_TRUE(doc.contains("device"));
  EXPECT_GT(doc["copy_gbps"].get<double>(), 0.0);
  // 2 ops x 2 types x the one cpu variant
  ASSERT_EQ(doc["records"].size(), 4u);
  for (const auto& rec : doc["records"]) {
    EXPECT_EQ(rec["status"], "ok") << rec.dump();
    EXPECT_TRUE(rec["verified"].get<bool>());
    EXPECT_EQ(rec["nx"], 20);
  }
  EXPECT_NE(r.out.find("% copy"), std::string::npos);
}

TEST_F(Cli, ApplyOnGpuWithoutOneIsAClearError) {
  if (gpu_present()) GTEST_SKIP() << "a GPU is present";
  const Result r = run("bench --backend cuda --op d2x --size 8,8,8");
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_NE(r.out.find("cuda"), std::string::npos) << r.out;
}

// fdstencil tune refuses nonsense before it looks for a GPU: each case exits 2 naming the problem.
TEST_F(Cli, TuneRefusesNonsense) {
  const struct {
    std::string args, needle;
  } cases[] = {
      {"tune --op d2q --radius 4 --size 64,64,64", "unknown operator"},
      {"tune --op d2z --radius 4 --size 0,64,64", "at least 1"},
      {"tune --op d2z --radius 4 --size 64,64", "three integers"},
      {"tune --op d2z --radius 4 --size 100000000,100000000,100000000", "overflow"},
      {"tune --op d2z --radius 4 --size 64,64,64 --budget 0", "budget"},
      {"tune --op d2z --radius 4 --size 64,64,64 --budget -3", "budget"},
      {"tune --op d2z --radius 4", "--size"},
      {"tune --radius 4 --size 64,64,64", "--op"},
      {"tune --op d2z --size 64,64,64", "--radius is required"},
      {"tune --op d2z --radius 9 --size 64,64,64", "radius 9"},
      {"tune --op laplacian7 --radius 2 --size 64,64,64", "laplacian7"},
      {"tune --op d2z --radius 4 --size 64,64,64 --dtype half", "half"},
  };
  for (const auto& c : cases) {
    const Result r = run(c.args + " --cache " + path("never.json"));
    EXPECT_EQ(r.code, 2) << c.args << ": " << r.out;
    EXPECT_NE(r.out.find(c.needle), std::string::npos) << c.args << ": " << r.out;
  }
  EXPECT_FALSE(fs::exists(path("never.json")));
}

TEST_F(Cli, TuneWithoutAGpuSaysSo) {
  if (gpu_present()) GTEST_SKIP() << "a GPU is present";
  const Result r = run("tune --op d2z --radius 4 --size 64,64,64 --cache " + path("c.json"));
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_NE(r.out.find("needs a GPU"), std::string::npos) << r.out;
  EXPECT_FALSE(fs::exists(path("c.json")));
}

// tune --show prints the cache; a corrupt one is a warning naming the file, not a failure.
TEST_F(Cli, TuneShowPrintsTheCacheAndWarnsOnACorruptOne) {
  const std::string file = path("tuning.json");
  Result r = run("tune --show --cache " + file);
  EXPECT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("0 entries"), std::string::npos) << r.out;
  TuningEntry e;
  e.key = {"NVIDIA Test GPU", "9.0", 13000, 13000, Op::d2z, 4, DType::f32, {512, 512, 512}};
  e.variant = "window_vec";
  e.params = {{"nw", 8}};
  e.median_ms = 0.3712;
  e.pct_of_copy = 97.0;
  TuningCache::store(file, e, nullptr);
  r = run("tune --show --cache " + file);
  EXPECT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("1 entries"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("window_vec"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("512x512x512"), std::string::npos) << r.out;
  r = run("tune --show-json --cache " + file);
  ASSERT_EQ(r.code, 0) << r.out;
  const auto j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j["entries"].size(), 1u);
  EXPECT_EQ(j["entries"][0]["params"]["nw"], 8);
  std::ofstream(file) << "{ not json";
  r = run("tune --show --cache " + file);
  EXPECT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("warning"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find(file), std::string::npos) << r.out;
}

TEST_F(Cli, PlanFlagsOfBenchAreTheCudaBackends) {
  EXPECT_EQ(run("bench --backend cpu --tuned --op d2x --size 8,8,8").code, 2);
  EXPECT_EQ(run("bench --backend cpu --no-cache --op d2x --size 8,8,8").code, 2);
  const Result r = run("bench --tuned --no-cache --op d2x --size 8,8,8");
  EXPECT_EQ(r.code, 2) << r.out;
  const Result a = run("apply --op d2x --radius 1 --backend fpga --input x.npy --output y.npy");
  EXPECT_EQ(a.code, 2) << a.out;
  EXPECT_NE(a.out.find("fpga"), std::string::npos) << a.out;
}

// On a GPU: --same-size-copy adds a cudaMemcpy of each record's output bytes, and the record's
// effective bandwidth against it.
TEST_F(Cli, BenchSameSizeCopyOnTheGpu) {
  if (!gpu_present()) GTEST_SKIP() << "no GPU";
  Result r;
  const auto doc = bench_json(
      "--op d2x,laplacian7 --radius 1 --size 70,50,40 --dtype float --variant plan --reps 3 --same-size-copy",
      &r);
  ASSERT_FALSE(doc.is_null());
  EXPECT_NE(r.out.find("same-size copy"), std::string::npos) << r.out;  // the table says it too
  const Result overhead = run("bench --op d2x --radius 1 --size 16,16,16 --overhead --same-size-copy");
  EXPECT_EQ(overhead.code, 2) << overhead.out;
  EXPECT_NE(overhead.out.find("not to --overhead"), std::string::npos) << overhead.out;
  ASSERT_EQ(doc["records"].size(), 2u);
  for (const auto& rec : doc["records"]) {
    ASSERT_EQ(rec["status"], "ok") << rec.dump();
    // The output's bytes: d2x writes every point, the Laplacian the points inside its 1-point rim.
    const int64_t out_points = rec["op"] == "d2x" ? int64_t(70) * 50 * 40 : int64_t(68) * 48 * 38;
    EXPECT_EQ(rec["copy_same_size_bytes"].get<int64_t>(), out_points * 4) << rec.dump();
    const double copy = rec["copy_same_size_gbps"].get<double>();
    EXPECT_GT(copy, 0) << rec.dump();
    EXPECT_NEAR(rec["pct_of_same_size_copy"].get<double>(), 100 * rec["effective_gbps"].get<double>() / copy,
                1e-9);
  }
}

// On a GPU: bench's plan row says which variant the plan chose and from where; --tuned on an
// empty cache reports each case untuned rather than guessing.
// The Laplacian's kernels by their names before issue 32 too, and both names of one kernel at
// once: one set of records, under its current name, and neither name refused.
TEST_F(Cli, BenchTakesAKernelsFormerNameOnTheGpu) {
  if (!gpu_present()) GTEST_SKIP() << "no GPU";
  const std::string json = path("r.json");
  const Result r =
      run("bench --op laplacian7 --size 40,30,20 --variant k9,pipelined,k8 --reps 2 --json " + json);
  ASSERT_EQ(r.code, 0) << r.out;
  std::ifstream f(json);
  // Named, not a temporary: a range-for over parse(f)["records"] would outlive the parsed document.
  const nlohmann::json doc = nlohmann::json::parse(f);
  std::multiset<std::string> variants;
  for (const auto& rec : doc["records"]) variants.insert(rec["variant"].get<std::string>());
  EXPECT_EQ(variants.count("pipelined"), 1u);
  EXPECT_EQ(variants.count("bulk_ring"), 1u);
  EXPECT_EQ(variants.size(), 2u);
}

TEST_F(Cli, BenchPlanRowsOnTheGpu) {
  if (!gpu_present()) GTEST_SKIP() << "no GPU";
  const std::string json = path("r.json"), cache = path("empty-cache.json");
  Result r = run("bench --op d2z,d2xyz --radius 4 --size 70,50,40 --variant plan --reps 3 --cache " + cache +
                 " --json " + json);
  ASSERT_EQ(r.code, 0) << r.out;
  std::ifstream f(json);
  const auto doc = nlohmann::json::parse(f);
  ASSERT_EQ(doc["records"].size(), 2u);
  for (const auto& rec : doc["records"]) {
    EXPECT_EQ(rec["variant"], "plan");
    EXPECT_EQ(rec["status"], "ok") << rec.dump();
    EXPECT_TRUE(rec["verified"].get<bool>());
    EXPECT_NE(rec["plan_source"].get<std::string>().find("defaults"), std::string::npos) << rec.dump();
    EXPECT_FALSE(rec["plan_variant"].get<std::string>().empty());
  }
  r = run("bench --op d2z --radius 4 --size 70,50,40 --tuned --reps 3 --cache " + cache);
  EXPECT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("untuned"), std::string::npos) << r.out;
}
