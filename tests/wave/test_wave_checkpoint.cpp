// Checkpoint and restart on the cpu: a run resumed from any checkpoint (in
// memory or through a file) ends with the same traces and field, bit for bit,
// as the run that was never stopped; a stop request ends a run at a step
// boundary with its state; and a checkpoint that is not this run's, or a file
// that is damaged, is refused with a message naming the problem.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "fdstencil/checksum.hpp"
#include "fdstencil/error.hpp"
#include "fdstencil/wave.hpp"
#include "wave/checkpoint_test_util.hpp"

using namespace fdstencil;
using test::checkpoint_case;
using test::first_difference;
using test::same_bits;

namespace {

namespace fs = std::filesystem;

// The run whole, and again with a checkpoint every `every` steps kept in
// memory.
struct Runs {
  wave::Result whole;
  std::vector<wave::Checkpoint> checkpoints;
};

Runs run_with_checkpoints(const test::CheckpointCase& c, int64_t every) {
  Runs r;
  r.whole = wave::run(c.model, c.options);
  wave::Options o = c.options;
  o.checkpoint_every = every;
  o.on_checkpoint = [&r](const wave::Checkpoint& k) { r.checkpoints.push_back(k); };
  const wave::Result again = wave::run(c.model, o);
  EXPECT_TRUE(same_bits(again.traces, r.whole.traces)) << "checkpointing changed the run itself";
  return r;
}

void expect_resumes_bit_for_bit(const test::CheckpointCase& c, const Runs& r) {
  for (const wave::Checkpoint& k : r.checkpoints) {
    wave::Options o = c.options;
    o.resume = &k;
    const wave::Result resumed = wave::run(c.model, o);
    EXPECT_EQ(resumed.first_step, k.step);
    EXPECT_FALSE(resumed.interrupted);
    EXPECT_TRUE(same_bits(resumed.traces, r.whole.traces))
        << "from step " << k.step << ": traces differ first at element "
        << first_difference(resumed.traces, r.whole.traces);
    EXPECT_TRUE(same_bits(resumed.final_field, r.whole.final_field))
        << "from step " << k.step << ": the final field differs first at "
        << first_difference(resumed.final_field, r.whole.final_field);
  }
}

class CheckpointFile : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("fdstencil_ckpt_" + std::to_string(::getpid()) + "_" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path dir_;
};

TEST(Checksum, Crc32cMatchesThePublishedCheckValue) {
  const char digits[] = "123456789";
  EXPECT_EQ(crc32c(digits, 9), 0xE3069283u);
  // Continuing from a partial checksum equals the checksum of the whole.
  EXPECT_EQ(crc32c(digits + 4, 5, crc32c(digits, 4)), 0xE3069283u);
  // The byte-wise tail after the 8-byte words: lengths 0..16 agree with a split
  // at every point.
  std::vector<unsigned char> b(17);
  for (size_t i = 0; i < b.size(); ++i) b[i] = static_cast<unsigned char>(37 * i + 11);
  for (size_t n = 0; n <= b.size(); ++n)
    for (size_t cut = 0; cut <= n; ++cut)
      EXPECT_EQ(crc32c(b.data() + cut, n - cut, crc32c(b.data(), cut)), crc32c(b.data(), n))
          << n << " " << cut;
}

// The checksum of a whole from its two parts' checksums, at lengths that take every bit of the
// squaring (0, 1, odd, a power of two, past 2^20) and over zeros (a sparse file's holes).
TEST(Checksum, Crc32cCombinesTwoPartsChecksums) {
  std::vector<unsigned char> b(3 * 1024 * 1024 + 7);
  uint32_t x = 12345;
  for (auto& v : b) v = static_cast<unsigned char>((x = x * 1103515245u + 12345u) >> 24);
  for (size_t cut :
       {size_t(0), size_t(1), size_t(9), size_t(4096), size_t(1) << 20, b.size() - 1, b.size()}) {
    const uint32_t a = crc32c(b.data(), cut), c = crc32c(b.data() + cut, b.size() - cut);
    EXPECT_EQ(crc32c_combine(a, c, b.size() - cut), crc32c(b.data(), b.size())) << cut;
  }
  const std::vector<unsigned char> zeros(100000, 0);
  EXPECT_EQ(crc32c_combine(crc32c(b.data(), 5), crc32c(zeros.data(), zeros.size()), zeros.size()),
            crc32c(zeros.data(), zeros.size(), crc32c(b.data(), 5)));
  EXPECT_NE(crc32c_combine(1u, 2u, 3), crc32c_combine(1u, 2u, 4)) << "the length must count";
}

// Many equal pieces and a shorter last one (a GPU's per-thread checksums of a model), one piece,
// and a last piece as long as the others: each gives the whole's checksum.
TEST(Checksum, Crc32cConcatenatesEqualPieces) {
  std::vector<unsigned char> b(1000003);
  uint32_t x = 777;
  for (auto& v : b) v = static_cast<unsigned char>((x = x * 1103515245u + 12345u) >> 24);
  for (size_t piece : {size_t(1000003), size_t(4096), size_t(1000), size_t(7)}) {
    const size_t count = (b.size() + piece - 1) / piece, last = b.size() - (count - 1) * piece;
    std::vector<uint32_t> crc(count);
    for (size_t i = 0; i < count; ++i) crc[i] = crc32c(b.data() + i * piece, i + 1 < count ? piece : last);
    EXPECT_EQ(crc32c_concat(crc.data(), count, piece, last), crc32c(b.data(), b.size())) << piece;
  }
  const std::vector<unsigned char> even(4 * 256, 3);
  const uint32_t quarter = crc32c(even.data(), 256), four[4] = {quarter, quarter, quarter, quarter};
  EXPECT_EQ(crc32c_concat(four, 4, 256, 256), crc32c(even.data(), even.size()));
  EXPECT_EQ(crc32c_concat(nullptr, 0, 256, 0), crc32c(nullptr, 0));
}

TEST(Checkpoint, Resumes2DBitForBitFromEveryCheckpoint) {
  const auto c = checkpoint_case(2, false, "cpu");
  const Runs r = run_with_checkpoints(c, 97);  // not a divisor of nt: the last interval is short
  ASSERT_EQ(r.checkpoints.size(), 4u);         // steps 97, 194, 291, 388 of 400
  EXPECT_EQ(r.checkpoints[0].step, 97);
  expect_resumes_bit_for_bit(c, r);
}

TEST(Checkpoint, Resumes2DWithAFreeSurfaceBitForBit) {
  const auto c = checkpoint_case(2, true, "cpu");
  expect_resumes_bit_for_bit(c, run_with_checkpoints(c, 150));
}

TEST(Checkpoint, Resumes3DBitForBit) {
  const auto c = checkpoint_case(3, false, "cpu");
  const Runs r = run_with_checkpoints(c, 60);
  ASSERT_EQ(r.checkpoints.size(), 2u);
  expect_resumes_bit_for_bit(c, r);
}

TEST(Checkpoint, ResumesInDoublePrecision) {
  auto c = checkpoint_case(2, false, "cpu");
  c.options.double_precision = true;
  const Runs r = run_with_checkpoints(c, 200);
  ASSERT_EQ(r.checkpoints.size(), 1u);
  EXPECT_EQ(r.checkpoints[0].element_bytes, 8);
  expect_resumes_bit_for_bit(c, r);
}

// The disk check's estimate of a checkpoint is the checkpoint's own size, in 2D and 3D and in
// either precision: the taps and wavelets a run rebuilds from its inputs are not in it.
TEST(Checkpoint, CheckpointBytesIsTheSizeOfTheCheckpoint) {
  for (const int dim : {2, 3})
    for (const bool dp : {false, true}) {
      auto c = checkpoint_case(dim, false, "cpu");
      c.options.double_precision = dp;
      const Runs r = run_with_checkpoints(c, c.options.nt / 2 + 1);
      ASSERT_EQ(r.checkpoints.size(), 1u);
      const wave::Domain d =
          wave::Domain::make(dim, c.options.radius, c.model.nz, c.model.ny, c.model.nx, c.options.boundary);
      EXPECT_EQ(wave::checkpoint_bytes(d, c.options, false), r.checkpoints[0].bytes())
          << dim << "D, dp " << dp;
      EXPECT_LT(wave::checkpoint_bytes(d, c.options, false), wave::state_bytes(d, c.options, false));
    }
}

TEST(Checkpoint, NoCheckpointAfterTheLastStep) {
  const auto c = checkpoint_case(2, false, "cpu");
  const Runs r = run_with_checkpoints(c, 100);  // 100, 200, 300; not 400 = nt
  ASSERT_EQ(r.checkpoints.size(), 3u);
  EXPECT_EQ(r.checkpoints.back().step, 300);
}

TEST(Checkpoint, AStopRequestEndsTheRunAtAStepBoundaryWithItsState) {
  const auto c = checkpoint_case(2, false, "cpu");
  const wave::Result whole = wave::run(c.model, c.options);
  wave::Options o = c.options;
  int64_t polls = 0;
  o.stop_requested = [&polls] { return ++polls > 137; };  // true at the 138th boundary: after 137 steps
  std::unique_ptr<wave::Checkpoint> kept;
  o.on_checkpoint = [&kept](const wave::Checkpoint& k) { kept = std::make_unique<wave::Checkpoint>(k); };
  const wave::Result stopped = wave::run(c.model, o);
  EXPECT_TRUE(stopped.interrupted);
  EXPECT_EQ(stopped.steps_done, 137);
  EXPECT_TRUE(stopped.traces.empty());
  EXPECT_TRUE(stopped.final_field.empty());
  ASSERT_TRUE(kept);
  EXPECT_EQ(kept->step, 137);
  wave::Options again = c.options;
  again.resume = kept.get();
  EXPECT_TRUE(same_bits(wave::run(c.model, again).traces, whole.traces));
}

TEST_F(CheckpointFile, ResumesBitForBitThroughAFile) {
  const auto c = checkpoint_case(2, false, "cpu");
  const Runs r = run_with_checkpoints(c, 250);
  ASSERT_EQ(r.checkpoints.size(), 1u);
  const fs::path path = dir_ / "run.ckpt";
  wave::save_checkpoint(path, r.checkpoints[0]);
  const wave::Checkpoint loaded = wave::load_checkpoint(path);
  EXPECT_EQ(loaded.step, 250);
  EXPECT_EQ(loaded.fingerprint, r.checkpoints[0].fingerprint);
  EXPECT_EQ(loaded.arrays, r.checkpoints[0].arrays);
  wave::Options o = c.options;
  o.resume = &loaded;
  EXPECT_TRUE(same_bits(wave::run(c.model, o).traces, r.whole.traces));
  // Saving over it leaves one file and no temporary behind.
  wave::save_checkpoint(path, r.checkpoints[0]);
  EXPECT_EQ(std::distance(fs::directory_iterator(dir_), fs::directory_iterator()), 1);
}

// The error `f` throws: its kind and message.
template <class F>
std::pair<ErrorKind, std::string> error_of(F&& f) {
  try {
    f();
  } catch (const Error& e) {
    return {e.kind(), e.what()};
  }
  ADD_FAILURE() << "no error thrown";
  return {ErrorKind::verification, ""};
}

TEST(Checkpoint, AnotherRunsCheckpointIsRefused) {
  const auto c = checkpoint_case(2, false, "cpu");
  const Runs r = run_with_checkpoints(c, 250);
  ASSERT_EQ(r.checkpoints.size(), 1u);
  const wave::Checkpoint& k = r.checkpoints[0];
  const auto refused = [&](wave::Model m, wave::Options o, const std::string& expect) {
    o.resume = &k;
    const auto [kind, what] = error_of([&] { wave::run(m, o); });
    EXPECT_EQ(kind, ErrorKind::invalid_argument) << what;
    EXPECT_NE(what.find(expect), std::string::npos) << what;
  };
  wave::Options moved = c.options;
  moved.sources[0].at.x += 1.0;
  refused(c.model, moved, "different run");
  wave::Model slower = c.model;
  slower.v[0] *= 0.999f;
  refused(slower, c.options, "different run");
  wave::Options longer = c.options;
  longer.nt += 1;
  longer.sources[0].wavelet.push_back(0.0);
  refused(c.model, longer, "different run");
  wave::Options wider = c.options;
  wider.boundary.cpml_width = 12;
  refused(c.model, wider, "different run");
  // The same run, but the file says another backend wrote it.
  wave::Checkpoint other = k;
  other.backend = "cuda";
  wave::Options o = c.options;
  o.resume = &other;
  const auto [kind, what] = error_of([&] { wave::run(c.model, o); });
  EXPECT_EQ(kind, ErrorKind::invalid_argument);
  EXPECT_NE(what.find("--backend cuda"), std::string::npos) << what;
}

TEST_F(CheckpointFile, DamagedFilesAreRefusedNamingTheProblem) {
  const auto c = checkpoint_case(2, false, "cpu");
  const Runs r = run_with_checkpoints(c, 250);
  ASSERT_EQ(r.checkpoints.size(), 1u);
  const fs::path good = dir_ / "good.ckpt";
  wave::save_checkpoint(good, r.checkpoints[0]);
  std::string bytes;
  {
    std::ifstream f(good, std::ios::binary);
    bytes.assign(std::istreambuf_iterator<char>(f), {});
  }
  const auto written = [&](const std::string& name, const std::string& content) {
    const fs::path p = dir_ / name;
    std::ofstream(p, std::ios::binary) << content;
    return p;
  };
  const auto expect_io = [](const fs::path& p, const std::string& expect) {
    const auto [kind, what] = error_of([&] { wave::load_checkpoint(p); });
    EXPECT_EQ(kind, ErrorKind::io) << what;
    EXPECT_NE(what.find(expect), std::string::npos) << what;
    EXPECT_NE(what.find(p.string()), std::string::npos) << what;
  };
  expect_io(dir_ / "missing.ckpt", "cannot open");
  expect_io(written("truncated.ckpt", bytes.substr(0, bytes.size() - 100)), "truncated");
  expect_io(written("short.ckpt", bytes.substr(0, 12)), "truncated");
  expect_io(written("long.ckpt", bytes + "x"), "trailing bytes");
  std::string flipped = bytes;
  flipped[flipped.size() - 7] ^= 0x10;  // in the traces, the last array
  expect_io(written("flipped.ckpt", flipped), "traces does not match its checksum");
  std::string step = bytes;  // "step":250 in the header becomes "step":350
  const size_t at = step.find("\"step\":250");
  ASSERT_NE(at, std::string::npos);
  step[at + 7] = '3';
  expect_io(written("step.ckpt", step), "header does not match its checksum");
  std::string magic = bytes;
  magic[0] = 'X';
  expect_io(written("magic.ckpt", magic), "not an fdstencil checkpoint");
  expect_io(written("npy.ckpt", "\x93NUMPY" + std::string(40, ' ')), "not an fdstencil checkpoint");
}

// A checkpoint file of this header text and no array bytes, the header's checksum right: a damaged
// header that passes its checksum.
std::string with_header(const std::string& text) {
  const uint64_t length = text.size();
  const uint32_t crc = crc32c(text.data(), text.size());
  std::string out("FDSCKPT1");
  out.append(reinterpret_cast<const char*>(&length), sizeof length);
  out.append(reinterpret_cast<const char*>(&crc), sizeof crc);
  return out + text;
}

// Found by fuzz/fuzz_checkpoint.cpp under UBSan ("format": 23454842345484.36, in
// fuzz/regressions/checkpoint/): header numbers an integer field cannot hold were converted anyway
// (a double beyond the range is undefined behaviour, a larger integer wrapped). Found beside it by
// reading: the other integer fields alike, and array sizes whose sum passes 2^63, which overflowed
// before the comparison with the file's size.
TEST_F(CheckpointFile, HeaderNumbersAnIntegerCannotHoldAreRefused) {
  const auto header = [](const std::string& format, const std::string& element_bytes,
                         const std::string& arrays) {
    return with_header(R"({"format":)" + format + R"(,"step":1,"nt":2,"fingerprint":"0f","backend":"cpu",)" +
                       R"("element_bytes":)" + element_bytes + R"(,"arrays":[)" + arrays + "]}");
  };
  const auto refused = [&](const std::string& content, const std::string& expect) {
    const fs::path p = dir_ / "bad.ckpt";
    std::ofstream(p, std::ios::binary) << content;
    const auto [kind, what] = error_of([&] { wave::load_checkpoint(p); });
    EXPECT_EQ(kind, ErrorKind::io) << what;
    EXPECT_NE(what.find(expect), std::string::npos) << what;
  };
  refused(header("1e300", "4", ""), "format is 1e+300, not an integer");
  refused(header("1.5", "4", ""), "format is 1.5, not an integer");
  refused(header("1", "4294967300", ""), "element_bytes is 4294967300, not an integer in");
  refused(header("1", "4", R"({"name":"u","bytes":1e30,"crc32c":0})"), "array u's bytes is 1e+30");
  refused(header("1", "4", R"({"name":"u","bytes":18446744073709551615,"crc32c":0})"),
          "array u's bytes is 18446744073709551615");
  refused(header("1", "4", R"({"name":"u","bytes":0,"crc32c":-1})"), "array u's crc32c is -1");
  refused(header("1", "4", R"({"name":"u","bytes":0,"crc32c":"x"})"), "array u's crc32c is string");
  const std::string huge = R"({"name":"u","bytes":9223372036854775807,"crc32c":0})";
  refused(header("1", "4", huge + "," + huge), "array sizes add up to more than 2^63 bytes");
}

}  // namespace
