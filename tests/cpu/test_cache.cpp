// The tuning cache as a file: a round trip, the mapping of an untuned size to a tuned one, where
// the file lives, and every way a file can be bad (corrupt, not a cache, another version, a
// malformed entry), each a warning that names the file and never a crash. Two processes storing
// at once keep both their entries. Host-side: CI runs these. Plans reading the cache on a GPU:
// tests/cuda/test_plan.cpp.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>

#include "fdstencil/error.hpp"
#include "fdstencil/tuning_cache.hpp"
#include "fdstencil/version.hpp"
#include "test_util.hpp"

using namespace fdstencil;
namespace fs = std::filesystem;

namespace {

// A folder of this test's own: CTest runs the tests in parallel.
class Cache : public ::testing::Test {
 protected:
  void SetUp() override {
    for (const char* name : {"FDSTENCIL_TUNING_CACHE", "XDG_CACHE_HOME", "HOME"})
      if (const char* v = std::getenv(name))
        saved_.emplace_back(name, v);
      else
        saved_.emplace_back(name, std::nullopt);
    dir_ = fs::temp_directory_path() / ("fds-cache-" + std::to_string(getpid()) + "-" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override {
    fs::remove_all(dir_);
    for (const auto& [name, value] : saved_)  // the environment as the test found it
      if (value)
        ::setenv(name.c_str(), value->c_str(), 1);
      else
        ::unsetenv(name.c_str());
  }
  fs::path file() const { return dir_ / "tuning.json"; }
  void write(const std::string& text) const { std::ofstream(file()) << text; }
  fs::path dir_;
  std::vector<std::pair<std::string, std::optional<std::string>>> saved_;
};

TuningEntry entry(Op op, int radius, Extents n, const std::string& variant, nlohmann::json params) {
  TuningEntry e;
  e.key = {"NVIDIA Test GPU", "9.0", 13000, 13000, op, radius, DType::f32, n};
  e.variant = variant;
  e.params = std::move(params);
  e.median_ms = 1.25;
  e.effective_gbps = 2900;
  e.copy_gbps = 3000;
  e.pct_of_copy = 96.7;
  e.candidates = 17;
  e.seconds = 12.5;
  return e;
}

struct Warnings {
  std::vector<std::string> lines;
  Warn sink() {
    return [this](const std::string& w) { lines.push_back(w); };
  }
  bool any_names(const fs::path& f) const {
    for (const auto& l : lines)
      if (l.find(f.string()) != std::string::npos) return true;
    return false;
  }
};

}  // namespace

TEST_F(Cache, RoundTripKeepsEveryField) {
  const TuningEntry e = entry(Op::d2z, 4, {1024, 1024, 1024}, "window_vec", {{"nw", 8}, {"order", "zxy"}});
  Warnings w;
  TuningCache::store(file(), e, w.sink());
  const TuningCache c = TuningCache::load(file(), w.sink());
  EXPECT_TRUE(w.lines.empty());
  ASSERT_EQ(c.entries().size(), 1u);
  const TuningEntry* got = c.find(e.key);
  ASSERT_NE(got, nullptr);
  EXPECT_EQ(got->variant, "window_vec");
  EXPECT_EQ(got->params, e.params);
  EXPECT_EQ(got->median_ms, 1.25);
  EXPECT_EQ(got->pct_of_copy, 96.7);
  EXPECT_EQ(got->copy_gbps, 3000);
  EXPECT_EQ(got->candidates, 17);
  EXPECT_FALSE(got->tuned_at.empty());
  // The file says which version wrote it.
  std::ifstream f(file());
  const nlohmann::json doc = nlohmann::json::parse(f);
  EXPECT_EQ(doc["library_version"], kVersion);
  // Another key is not found; the same case on another driver is another key.
  TuningKey other = e.key;
  other.driver = 12040;
  EXPECT_EQ(c.find(other), nullptr);
  EXPECT_EQ(c.nearest(other), nullptr);
}

TEST_F(Cache, StoringTheSameCaseReplacesItsEntry) {
  TuningCache::store(file(), entry(Op::d2x, 1, {64, 64, 64}, "vec4", {{"block", "64x4x1"}}), nullptr);
  TuningCache::store(file(), entry(Op::d2x, 1, {64, 64, 64}, "vec2", {{"block", "32x8x1"}}), nullptr);
  TuningCache::store(file(), entry(Op::d2x, 2, {64, 64, 64}, "vec4", {{"block", "64x4x1"}}), nullptr);
  const TuningCache c = TuningCache::load(file(), nullptr);
  ASSERT_EQ(c.entries().size(), 2u);
  EXPECT_EQ(c.find(entry(Op::d2x, 1, {64, 64, 64}, "", {}).key)->variant, "vec2");
}

TEST_F(Cache, AMissingFileIsAnEmptyCacheWithoutWarning) {
  Warnings w;
  const TuningCache c = TuningCache::load(dir_ / "nothing-here.json", w.sink());
  EXPECT_TRUE(c.entries().empty());
  EXPECT_TRUE(w.lines.empty());
}

TEST_F(Cache, ACorruptFileWarnsNamingItAndIsEmpty) {
  for (const std::string text : {"{\"format\": \"fdstencil-tuning-cache\", \"entr", "", "\x01\x02garbage"}) {
    write(text);
    Warnings w;
    const TuningCache c = TuningCache::load(file(), w.sink());
    EXPECT_TRUE(c.entries().empty());
    ASSERT_EQ(w.lines.size(), 1u) << text;
    EXPECT_TRUE(w.any_names(file())) << w.lines[0];
    EXPECT_NE(w.lines[0].find("defaults"), std::string::npos) << w.lines[0];
  }
  // Storing over a corrupt file replaces it, and says so.
  Warnings w;
  TuningCache::store(file(), entry(Op::d2y, 4, {64, 64, 64}, "vec", {{"block", "32x8x1"}}), w.sink());
  EXPECT_TRUE(w.any_names(file()));
  EXPECT_EQ(TuningCache::load(file(), nullptr).entries().size(), 1u);
}

TEST_F(Cache, AFileThatIsNotACacheWarns) {
  write(R"({"records": [1, 2, 3]})");
  Warnings w;
  EXPECT_TRUE(TuningCache::load(file(), w.sink()).entries().empty());
  ASSERT_EQ(w.lines.size(), 1u);
  EXPECT_TRUE(w.any_names(file()));
  EXPECT_NE(w.lines[0].find("not an fdstencil tuning cache"), std::string::npos) << w.lines[0];
  // A folder where the file should be.
  fs::create_directories(dir_ / "folder.json");
  Warnings v;
  EXPECT_TRUE(TuningCache::load(dir_ / "folder.json", v.sink()).entries().empty());
  EXPECT_TRUE(v.any_names(dir_ / "folder.json"));
}

// The right shape with the wrong types: still a warning naming the file, never an exception.
TEST_F(Cache, HeaderFieldsOfTheWrongTypeWarn) {
  for (
      const std::string text :
      {R"({"format": 1, "entries": []})",
       R"({"format": "fdstencil-tuning-cache", "format_version": "1", "library_version": "x", "entries": []})",
       R"({"format": "fdstencil-tuning-cache", "format_version": 1, "library_version": 2, "entries": []})",
       R"({"format": "fdstencil-tuning-cache", "format_version": 1, "library_version": "0.2.0", "entries": {}})"}) {
    write(text);
    Warnings w;
    TuningCache c;
    EXPECT_NO_THROW(c = TuningCache::load(file(), w.sink())) << text;
    EXPECT_TRUE(c.entries().empty()) << text;
    ASSERT_EQ(w.lines.size(), 1u) << text;
    EXPECT_TRUE(w.any_names(file())) << w.lines[0];
  }
}

TEST_F(Cache, AnotherVersionsCacheIsIgnoredWithAWarning) {
  TuningCache::store(file(), entry(Op::d2z, 4, {512, 512, 512}, "window_vec", {{"nw", 8}}), nullptr);
  std::ifstream f(file());
  nlohmann::json doc = nlohmann::json::parse(f);
  f.close();
  doc["library_version"] = "0.0.1";
  write(doc.dump());
  Warnings w;
  EXPECT_TRUE(TuningCache::load(file(), w.sink()).entries().empty());
  ASSERT_EQ(w.lines.size(), 1u);
  EXPECT_TRUE(w.any_names(file()));
  EXPECT_NE(w.lines[0].find("0.0.1"), std::string::npos) << w.lines[0];
  EXPECT_NE(w.lines[0].find(kVersion), std::string::npos) << w.lines[0];
  doc["library_version"] = kVersion;
  doc["format_version"] = 99;
  write(doc.dump());
  EXPECT_TRUE(TuningCache::load(file(), nullptr).entries().empty());
}

TEST_F(Cache, AMalformedEntryIsSkippedAndTheOthersKept) {
  TuningCache::store(file(), entry(Op::d2z, 4, {512, 512, 512}, "window_vec", {{"nw", 8}}), nullptr);
  TuningCache::store(file(), entry(Op::d2z, 8, {512, 512, 512}, "window_vec", {{"nw", 32}}), nullptr);
  std::ifstream f(file());
  nlohmann::json doc = nlohmann::json::parse(f);
  f.close();
  doc["entries"][0]["op"] = "d2w";
  doc["entries"].push_back({{"device", "x"}});
  write(doc.dump());
  Warnings w;
  const TuningCache c = TuningCache::load(file(), w.sink());
  ASSERT_EQ(c.entries().size(), 1u);
  EXPECT_EQ(c.entries()[0].key.radius, 8);
  EXPECT_EQ(w.lines.size(), 2u);
  EXPECT_TRUE(w.any_names(file()));
}

// An untuned size borrows the tuned entry nearest to it, within a factor of 2 on every axis.
TEST_F(Cache, AnUntunedSizeMapsToTheNearestTunedOne) {
  TuningCache::store(file(), entry(Op::d2z, 4, {512, 512, 512}, "window_vec", {{"nw", 8}}), nullptr);
  TuningCache::store(file(), entry(Op::d2z, 4, {1024, 1024, 1024}, "window_vec", {{"nw", 16}}), nullptr);
  TuningCache::store(file(), entry(Op::d2z, 8, {256, 256, 256}, "window_vec", {{"nw", 32}}), nullptr);
  const TuningCache c = TuningCache::load(file(), nullptr);
  const auto near = [&](Extents n, int radius) {
    const TuningEntry* e = c.nearest(entry(Op::d2z, radius, n, "", {}).key);
    return e ? e->key.interior : Extents{0, 0, 0};
  };
  EXPECT_EQ(near({600, 600, 600}, 4), (Extents{512, 512, 512}));
  EXPECT_EQ(near({900, 900, 900}, 4), (Extents{1024, 1024, 1024}));
  EXPECT_EQ(near({1000, 600, 300}, 4), (Extents{512, 512, 512}));  // 1024^3 is 3.4x off along z
  EXPECT_EQ(near({64, 64, 64}, 4), (Extents{0, 0, 0}));            // 8x off: the defaults serve it
  EXPECT_EQ(near({512, 512, 512}, 2), (Extents{0, 0, 0}));         // no entry for R = 2
  EXPECT_EQ(near({300, 300, 300}, 8), (Extents{256, 256, 256}));
}

TEST_F(Cache, TheFileComesFromTheEnvironment) {
  ::setenv("FDSTENCIL_TUNING_CACHE", (dir_ / "mine.json").c_str(), 1);
  EXPECT_EQ(default_cache_file(), dir_ / "mine.json");
  ::unsetenv("FDSTENCIL_TUNING_CACHE");
  ::setenv("XDG_CACHE_HOME", dir_.c_str(), 1);
  EXPECT_EQ(default_cache_file(), dir_ / "fdstencil" / "tuning.json");
  ::unsetenv("XDG_CACHE_HOME");
  ::setenv("HOME", dir_.c_str(), 1);
  EXPECT_EQ(default_cache_file(), dir_ / ".cache" / "fdstencil" / "tuning.json");
}

TEST_F(Cache, AnUnwritableCacheIsAnIoError) {
  write("x");
  // A regular file where the cache's folder should be.
  EXPECT_TRUE(test::throws_error(
      [&] {
        TuningCache::store(file() / "sub" / "tuning.json", entry(Op::d2x, 1, {8, 8, 8}, "vec4", {}), nullptr);
      },
      ErrorKind::io, {"tuning cache"}));
}

// Two processes storing at once, each many entries: under the lock every store re-reads the
// file, so neither loses the other's entries, and the file is valid JSON throughout.
TEST_F(Cache, TwoConcurrentWritersKeepEveryEntry) {
  constexpr int kPerWriter = 40;
  pid_t children[2];
  for (int w = 0; w < 2; ++w) {
    children[w] = fork();
    ASSERT_GE(children[w], 0);
    if (children[w] == 0) {
      int rc = 0;
      try {
        for (int i = 0; i < kPerWriter; ++i)
          TuningCache::store(file(), entry(Op::d2xyz, 1 + w, {64 + i, 64, 64}, "l1march", {{"nw", 16}}),
                             nullptr);
      } catch (...) {
        rc = 3;
      }
      std::_Exit(rc);
    }
  }
  for (pid_t c : children) {
    int status = 0;
    ASSERT_EQ(waitpid(c, &status, 0), c);
    ASSERT_TRUE(WIFEXITED(status));
    EXPECT_EQ(WEXITSTATUS(status), 0);
  }
  Warnings w;
  const TuningCache c = TuningCache::load(file(), w.sink());
  EXPECT_TRUE(w.lines.empty());
  EXPECT_EQ(c.entries().size(), size_t(2 * kPerWriter));
  for (int wr = 0; wr < 2; ++wr)
    for (int i = 0; i < kPerWriter; ++i)
      EXPECT_NE(c.find(entry(Op::d2xyz, 1 + wr, {64 + i, 64, 64}, "", {}).key), nullptr) << wr << " " << i;
  // No temporary file is left behind.
  for (const auto& e : fs::directory_iterator(dir_))
    EXPECT_EQ(e.path().filename().string().find(".tmp"), std::string::npos) << e.path();
}
