// Tests for the .npy reader/writer: round trips, byte-exact agreement with np.save's header, the
// versions and header spellings NumPy produces, and one test per way a file can be rejected.
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <csignal>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>
#include <string>
#include <vector>

#include "fdstencil/error.hpp"
#include "fdstencil/npy.hpp"

namespace fdstencil {
namespace {

namespace fs = std::filesystem;

const std::string kMagicV1 = std::string("\x93NUMPY\x01\x00", 8);

// Each test gets its own directory so tests can run in parallel (ctest -j) without collisions.
class NpyTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = fs::temp_directory_path() /
           ("fdstencil_test_npy_" + std::string(info->name()) + "_" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }

  fs::path path(const std::string& name) const { return dir_ / name; }

  fs::path write_raw(const std::string& name, const std::string& content) const {
    const fs::path p = path(name);
    std::ofstream out(p, std::ios::binary);
    out.write(content.data(), static_cast<std::streamsize>(content.size()));
    out.close();
    EXPECT_TRUE(out) << "could not write test file " << p;
    return p;
  }

  // Everything in the test directory, so a leftover temporary file shows up.
  std::vector<std::string> entries() const {
    std::vector<std::string> names;
    for (const auto& entry : fs::directory_iterator(dir_)) {
      names.push_back(entry.path().filename().string());
    }
    return names;
  }

  fs::path dir_;
};

// "h3.npy". Built by appends: GCC 12 at -O3 warns falsely (-Wrestrict, GCC bug 105329) on
// "literal" + std::string + "literal".
std::string numbered(const char* prefix, size_t i) {
  std::string name(prefix);
  name += std::to_string(i);
  name += ".npy";
  return name;
}

std::string read_all(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// A version 1.0 file around `dict`, padded like NumPy unless the test needs exact bytes.
std::string npy_v1(const std::string& dict, const std::string& data, bool pad = true) {
  std::string header = dict;
  if (pad) {
    while ((10 + header.size() + 1) % 64 != 0) header += ' ';
    header += '\n';
  }
  std::string out = kMagicV1;
  out += static_cast<char>(header.size() & 0xff);
  out += static_cast<char>((header.size() >> 8) & 0xff);
  return out + header + data;
}

std::string npy_v2(int major, const std::string& dict, const std::string& data) {
  std::string header = dict;
  while ((12 + header.size() + 1) % 64 != 0) header += ' ';
  header += '\n';
  std::string out = std::string("\x93NUMPY", 6);
  out += static_cast<char>(major);
  out += '\0';
  for (int i = 0; i < 4; ++i) out += static_cast<char>((header.size() >> (8 * i)) & 0xff);
  return out + header + data;
}

std::vector<unsigned char> bytes_of(const std::string& s) { return {s.begin(), s.end()}; }

std::string f64_bytes(const std::vector<double>& values) {
  return std::string(reinterpret_cast<const char*>(values.data()), values.size() * sizeof(double));
}

std::string dict_for(const std::string& descr, const std::string& shape,
                     const std::string& fortran = "False") {
  return "{'descr': '" + descr + "', 'fortran_order': " + fortran + ", 'shape': " + shape + ", }";
}

// Asserts that reading `p` throws Error(io) whose message names the file and contains `words`.
void expect_io_error(const fs::path& p, const std::vector<std::string>& words) {
  try {
    read_npy(p);
    ADD_FAILURE() << "read_npy(" << p << ") did not throw";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::io) << e.what();
    const std::string message = e.what();
    EXPECT_NE(message.find(p.string()), std::string::npos) << message;
    for (const auto& word : words) EXPECT_NE(message.find(word), std::string::npos) << message;
  }
}

template <class T>
void round_trip(const fs::path& p, DType dtype, const std::vector<int64_t>& shape) {
  std::mt19937_64 rng(1234);
  std::uniform_real_distribution<T> dist(-1e3, 1e3);
  std::vector<T> values(static_cast<size_t>(shape[0] * shape[1] * shape[2]));
  for (auto& v : values) v = dist(rng);
  const auto bytes = static_cast<int64_t>(values.size() * sizeof(T));
  write_npy(p, dtype, shape, values.data(), bytes);

  const NpyArray array = read_npy(p);
  EXPECT_EQ(array.dtype, dtype);
  EXPECT_EQ(array.shape, shape);
  ASSERT_EQ(static_cast<int64_t>(array.bytes.size()), bytes);
  EXPECT_EQ(std::memcmp(array.bytes.data(), values.data(), array.bytes.size()), 0);
  // NumPy aligns the data to 64 bytes; memory-mapping readers rely on it.
  EXPECT_EQ((fs::file_size(p) - static_cast<uintmax_t>(bytes)) % 64, 0u);
}

TEST_F(NpyTest, RoundTripFloat32) { round_trip<float>(path("a.npy"), DType::f32, {7, 5, 3}); }

TEST_F(NpyTest, RoundTripFloat64) { round_trip<double>(path("a.npy"), DType::f64, {4, 6, 9}); }

TEST_F(NpyTest, HeaderMatchesNumpyByteForByte) {
  // np.save(np.zeros((2, 3, 4))) writes this: the sorted-key dict, then spaces and '\n' so that
  // magic (6) + version (2) + length (2) + header is 128 bytes. Header length 118 = 0x76. NumPy
  // >= 1.24 reserves 20 of the spaces for growing axis 0 and older versions pad to 64 directly;
  // for this shape both give the same 55 spaces.
  const std::string dict = "{'descr': '<f8', 'fortran_order': False, 'shape': (2, 3, 4), }";
  const std::string expected_header =
      kMagicV1 + std::string("\x76\x00", 2) + dict + std::string(55, ' ') + "\n";
  ASSERT_EQ(expected_header.size(), 128u);

  std::vector<double> values(24);
  for (size_t i = 0; i < values.size(); ++i) values[i] = static_cast<double>(i) * 0.5;
  const fs::path p = path("exact.npy");
  write_npy(p, DType::f64, {2, 3, 4}, values.data(), 24 * 8);
  EXPECT_EQ(read_all(p), expected_header + f64_bytes(values));
}

TEST_F(NpyTest, WritesOneDimAndScalarShapesLikePython) {
  const float one[5] = {1, 2, 3, 4, 5};
  write_npy(path("v.npy"), DType::f32, {5}, one, sizeof(one));
  const std::string v = read_all(path("v.npy"));
  EXPECT_NE(v.find("{'descr': '<f4', 'fortran_order': False, 'shape': (5,), }"), std::string::npos);
  EXPECT_EQ(read_npy(path("v.npy")).shape, (std::vector<int64_t>{5}));

  const double scalar = 2.5;
  write_npy(path("s.npy"), DType::f64, {}, &scalar, sizeof(scalar));
  const std::string s = read_all(path("s.npy"));
  EXPECT_NE(s.find("'shape': (), }"), std::string::npos);
  EXPECT_EQ(s.size() % 64, 8u);
  const NpyArray array = read_npy(path("s.npy"));
  EXPECT_TRUE(array.shape.empty());
  ASSERT_EQ(array.bytes.size(), 8u);
  EXPECT_EQ(std::memcmp(array.bytes.data(), &scalar, 8), 0);
}

TEST_F(NpyTest, EmptyArrayRoundTrips) {
  write_npy(path("e.npy"), DType::f32, {0, 3, 4}, nullptr, 0);
  const NpyArray array = read_npy(path("e.npy"));
  EXPECT_EQ(array.shape, (std::vector<int64_t>{0, 3, 4}));
  EXPECT_TRUE(array.bytes.empty());
}

TEST_F(NpyTest, ReadsVersion2And3) {
  const std::vector<double> values = {1.5, -2.25, 3.0, 4.0, 5.0, 6.0};
  for (int major : {2, 3}) {
    const fs::path p = write_raw("v" + std::to_string(major) + ".npy",
                                 npy_v2(major, dict_for("<f8", "(2, 3)"), f64_bytes(values)));
    const NpyArray array = read_npy(p);
    EXPECT_EQ(array.dtype, DType::f64);
    EXPECT_EQ(array.shape, (std::vector<int64_t>{2, 3}));
    EXPECT_EQ(std::string(array.bytes.begin(), array.bytes.end()), f64_bytes(values));
  }
}

TEST_F(NpyTest, AcceptsOtherHeaderSpellings) {
  const std::string data = f64_bytes({1, 2, 3, 4, 5, 6});
  const std::vector<std::string> dicts = {
      // keys in another order, double quotes, no trailing comma, odd whitespace
      "{\"shape\":(3,2),'fortran_order':False,'descr':'<f8'}",
      "  {  'fortran_order' :\tFalse ,\n 'shape' : ( 3 , 2 , ) , 'descr' : '<f8' ,  }  ",
      // Python 2 long integers
      "{'descr': '<f8', 'fortran_order': False, 'shape': (3L, 2L), }",
  };
  for (size_t i = 0; i < dicts.size(); ++i) {
    const fs::path p = write_raw(numbered("h", i), npy_v1(dicts[i], data));
    const NpyArray array = read_npy(p);
    EXPECT_EQ(array.shape, (std::vector<int64_t>{3, 2})) << dicts[i];
  }
  // No padding or final newline at all.
  const fs::path p = write_raw("bare.npy", npy_v1(dict_for("<f8", "(6,)"), data, false));
  EXPECT_EQ(read_npy(p).shape, (std::vector<int64_t>{6}));
  // '=' is native order, which is little-endian on the hosts we build for.
  if constexpr (std::endian::native == std::endian::little) {
    const fs::path q = write_raw("native.npy", npy_v1(dict_for("=f4", "(3,)"), std::string(12, 0)));
    EXPECT_EQ(read_npy(q).dtype, DType::f32);
  }
}

// --- rejections -------------------------------------------------------------------------------

TEST_F(NpyTest, RejectsMissingFile) { expect_io_error(path("nope.npy"), {"cannot open", "No such file"}); }

TEST_F(NpyTest, RejectsDirectory) { expect_io_error(dir_, {"directory"}); }

TEST_F(NpyTest, RejectsBadMagic) {
  expect_io_error(write_raw("empty.npy", ""), {"not a .npy file", "magic"});
  expect_io_error(write_raw("text.npy", "hello, world, this is not numpy"), {"magic"});
  std::string almost = npy_v1(dict_for("<f8", "(1,)"), std::string(8, 0));
  almost[1] = 'n';
  expect_io_error(write_raw("almost.npy", almost), {"magic"});
}

TEST_F(NpyTest, RejectsUnsupportedVersion) {
  std::string file = npy_v1(dict_for("<f8", "(1,)"), std::string(8, 0));
  file[6] = 4;
  expect_io_error(write_raw("v4.npy", file), {"version 4.0"});
  file[6] = 1;
  file[7] = 1;
  expect_io_error(write_raw("v11.npy", file), {"version 1.1"});
}

TEST_F(NpyTest, RejectsTruncatedHeader) {
  expect_io_error(write_raw("magic_only.npy", "\x93NUMPY"), {"truncated header"});
  expect_io_error(write_raw("half_len.npy", kMagicV1 + "\x10"), {"truncated header"});
  const std::string full = npy_v1(dict_for("<f8", "(1,)"), "");
  expect_io_error(write_raw("cut.npy", full.substr(0, 40)), {"truncated header"});
  // A version 2.0 length field claiming 4 GiB must fail on the size check, not an allocation.
  const std::string huge = std::string("\x93NUMPY\x02\x00\xff\xff\xff\xff", 12) + "{}";
  expect_io_error(write_raw("huge_len.npy", huge), {"truncated header", "4294967295"});
}

TEST_F(NpyTest, RejectsMalformedHeader) {
  const std::string data = f64_bytes({1});
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"'descr': '<f8', 'fortran_order': False, 'shape': (1,), }", "'{'"},
      {"{'descr': '<f8', 'fortran_order': False, 'shape': (1,), ", "before the closing"},
      {"{'descr': '<f8', 'fortran_order': False, 'shape': (1,)", "expected ',' or '}'"},
      {"{'descr': '<f8', 'fortran_order': False}", "missing key 'shape'"},
      {"{'descr': '<f8', 'shape': (1,)}", "missing key 'fortran_order'"},
      {"{'fortran_order': False, 'shape': (1,)}", "missing key 'descr'"},
      {"{'descr': '<f8', 'descr': '<f8', 'fortran_order': False, 'shape': (1,)}", "duplicate"},
      {"{'descr': '<f8', 'fortran_order': False, 'shape': (1,), 'extra': 1}", "unexpected key"},
      {"{'descr': '<f8', 'fortran_order': False, 'shape': (1)}", "tuple"},
      {"{'descr': '<f8', 'fortran_order': False, 'shape': [1]}", "'shape' must be a tuple"},
      {"{'descr': '<f8', 'fortran_order': Flase, 'shape': (1,)}", "unrecognized value"},
      {"{'descr': '<f8', 'fortran_order': 0, 'shape': (1,)}", "unrecognized value"},
      {"{'descr': '<f8', 'fortran_order': (), 'shape': (1,)}", "'fortran_order' must be True"},
      {"{'descr': '<f8, 'fortran_order': False, 'shape': (1,)}", "malformed header"},
      {"{'descr': '<f8', 'fortran_order': False, 'shape': (1, x)}", "integer"},
      {"{'descr': '<f8', 'fortran_order': False, 'shape': (,)}", "integer"},
      {"{'descr': '<f8', 'fortran_order': False, 'shape': (1,)} junk", "after the closing"},
      {"{descr: '<f8', 'fortran_order': False, 'shape': (1,)}", "quoted key"},
  };
  for (size_t i = 0; i < cases.size(); ++i) {
    SCOPED_TRACE(cases[i].first);
    const fs::path p = write_raw(numbered("m", i), npy_v1(cases[i].first, data));
    expect_io_error(p, {"malformed header", cases[i].second});
  }
}

TEST_F(NpyTest, RejectsNegativeDimension) {
  const fs::path p = write_raw("neg.npy", npy_v1(dict_for("<f8", "(2, -3, 4)"), ""));
  expect_io_error(p, {"negative dimension -3"});
}

TEST_F(NpyTest, RejectsShapeOverflow) {
  // 2^32 * 2^32 elements overflows int64 already.
  expect_io_error(write_raw("count.npy", npy_v1(dict_for("<f4", "(4294967296, 4294967296)"), "")),
                  {"element count", "overflows"});
  // 2^61 elements fit, but 2^64 bytes of float64 do not.
  expect_io_error(write_raw("bytes.npy", npy_v1(dict_for("<f8", "(2305843009213693952,)"), "")),
                  {"byte count", "overflows"});
  // A single dimension that does not even fit in int64.
  expect_io_error(write_raw("dim.npy", npy_v1(dict_for("<f8", "(99999999999999999999,)"), "")),
                  {"overflows"});
}

TEST_F(NpyTest, RejectsHugeShapeInTinyFileWithoutAllocating) {
  // 10^15 float64 elements would be 8 PB; the size check must fire before any allocation.
  const fs::path p = write_raw("huge.npy", npy_v1(dict_for("<f8", "(1000000, 1000000000)"), "x"));
  expect_io_error(p, {"truncated: expected 8000000000000000 bytes of data, found 1"});
}

TEST_F(NpyTest, RejectsTruncatedData) {
  const std::string data = f64_bytes({1, 2, 3, 4, 5, 6});
  const fs::path p = write_raw("short.npy", npy_v1(dict_for("<f8", "(2, 3)"), data.substr(0, 45)));
  expect_io_error(p, {"truncated: expected 48 bytes of data, found 45"});
}

TEST_F(NpyTest, RejectsTrailingBytes) {
  const std::string data = f64_bytes({1, 2, 3, 4, 5, 6});
  const fs::path p = write_raw("long.npy", npy_v1(dict_for("<f8", "(2, 3)"), data + "xyz"));
  expect_io_error(p, {"trailing bytes", "expected 48", "found 51"});
}

// What np.save writes for a big-endian array (issue 33: refused before): read, and handed out
// little-endian.
TEST_F(NpyTest, ReadsBigEndianAsLittle) {
  std::string be = f64_bytes({1.5, -2.25, 1e300});
  for (size_t at = 0; at < be.size(); at += 8) std::reverse(be.begin() + long(at), be.begin() + long(at) + 8);
  const NpyArray a = read_npy(write_raw("be8.npy", npy_v1(dict_for(">f8", "(3,)"), be)));
  EXPECT_EQ(a.dtype, DType::f64);
  EXPECT_EQ(a.bytes, bytes_of(f64_bytes({1.5, -2.25, 1e300})));
  const float f[2] = {3.25f, -0.5f};
  std::string be4(reinterpret_cast<const char*>(f), 8);
  for (size_t at = 0; at < be4.size(); at += 4)
    std::reverse(be4.begin() + long(at), be4.begin() + long(at) + 4);
  const NpyArray b = read_npy(write_raw("be4.npy", npy_v1(dict_for(">f4", "(2,)"), be4)));
  EXPECT_EQ(b.dtype, DType::f32);
  EXPECT_EQ(0, std::memcmp(b.bytes.data(), f, 8));
}

TEST_F(NpyTest, RejectsOtherDtypes) {
  for (const std::string descr : {"<i4", "<f2", "<c8", "|u1", "O", "|f8", "<f16", "f8", ""}) {
    SCOPED_TRACE(descr);
    const fs::path p = write_raw("dt.npy", npy_v1(dict_for(descr, "(1,)"), std::string(8, 0)));
    expect_io_error(p, {"dtype '" + descr + "' is not supported", "'<f4'", "'<f8'"});
  }
  // Structured dtypes use a list of fields as 'descr'.
  const std::string dict = "{'descr': [('x', '<f8')], 'fortran_order': False, 'shape': (1,), }";
  expect_io_error(write_raw("rec.npy", npy_v1(dict, std::string(8, 0))),
                  {"dtype [('x', '<f8')] is not supported"});
}

// np.save of a transposed array writes Fortran order (issue 33: refused before): read, and handed
// out in C order. A (2, 3, 2) array whose C-order elements are 0..11, stored first index fastest.
TEST_F(NpyTest, ReadsFortranOrderAsC) {
  const int64_t n0 = 2, n1 = 3, n2 = 2;
  std::vector<double> fortran;
  for (int64_t k = 0; k < n2; ++k)
    for (int64_t j = 0; j < n1; ++j)
      for (int64_t i = 0; i < n0; ++i) fortran.push_back(double((i * n1 + j) * n2 + k));
  const NpyArray a =
      read_npy(write_raw("f.npy", npy_v1(dict_for("<f8", "(2, 3, 2)", "True"), f64_bytes(fortran))));
  EXPECT_EQ(a.shape, (std::vector<int64_t>{2, 3, 2}));
  EXPECT_EQ(a.bytes, bytes_of(f64_bytes({0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11})));
  // Big-endian and Fortran together, and a 1-D array (the same in either order).
  std::string be = f64_bytes(fortran);
  for (size_t at = 0; at < be.size(); at += 8) std::reverse(be.begin() + long(at), be.begin() + long(at) + 8);
  EXPECT_EQ(read_npy(write_raw("fb.npy", npy_v1(dict_for(">f8", "(2, 3, 2)", "True"), be))).bytes, a.bytes);
  EXPECT_EQ(
      read_npy(write_raw("f1.npy", npy_v1(dict_for("<f8", "(3,)", "True"), f64_bytes({4, 5, 6})))).bytes,
      bytes_of(f64_bytes({4, 5, 6})));
}

// --- writer failures --------------------------------------------------------------------------

TEST_F(NpyTest, WriteRejectsSizeMismatchAsInvalidArgument) {
  const double values[6] = {};
  const fs::path p = path("w.npy");
  try {
    write_npy(p, DType::f64, {2, 3}, values, 40);
    ADD_FAILURE() << "write_npy did not throw";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::invalid_argument);
    EXPECT_NE(std::string(e.what()).find("needs 48"), std::string::npos) << e.what();
  }
  EXPECT_THROW(write_npy(p, DType::f64, {-2, 3}, values, 48), Error);
  EXPECT_TRUE(entries().empty());
}

TEST_F(NpyTest, WriteIntoMissingDirectoryThrowsAndLeavesNothing) {
  const double values[2] = {1, 2};
  const fs::path p = path("no_such_dir") / "out.npy";
  try {
    write_npy(p, DType::f64, {2}, values, sizeof(values));
    ADD_FAILURE() << "write_npy did not throw";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::io);
    EXPECT_NE(std::string(e.what()).find(p.string()), std::string::npos) << e.what();
  }
  EXPECT_FALSE(fs::exists(p));
  EXPECT_TRUE(entries().empty());
}

TEST_F(NpyTest, WriteReplacesExistingFileAndLeavesNoTemporary) {
  const double old_values[2] = {1, 2};
  const double new_values[3] = {7, 8, 9};
  const fs::path p = path("out.npy");
  write_npy(p, DType::f64, {2}, old_values, sizeof(old_values));
  write_npy(p, DType::f64, {3}, new_values, sizeof(new_values));
  EXPECT_EQ(read_npy(p).shape, (std::vector<int64_t>{3}));
  EXPECT_EQ(entries(), (std::vector<std::string>{"out.npy"}));
}

TEST_F(NpyTest, FailedRenameDoesNotClobberTarget) {
  // The target is a non-empty directory, so the final rename fails after the data is written.
  const fs::path p = path("target.npy");
  fs::create_directories(p / "child");
  const double values[2] = {1, 2};
  try {
    write_npy(p, DType::f64, {2}, values, sizeof(values));
    ADD_FAILURE() << "write_npy did not throw";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::io);
    EXPECT_NE(std::string(e.what()).find("rename"), std::string::npos) << e.what();
  }
  EXPECT_TRUE(fs::is_directory(p / "child"));
  EXPECT_EQ(entries(), (std::vector<std::string>{"target.npy"}));
}

TEST_F(NpyTest, FailedWriteDoesNotClobberExistingFile) {
  const fs::path p = path("keep.npy");
  const double old_values[2] = {1, 2};
  write_npy(p, DType::f64, {2}, old_values, sizeof(old_values));
  const std::string before = read_all(p);

  // A file-size limit makes the write itself fail part-way (EFBIG), as a full disk would.
  rlimit saved{};
  ASSERT_EQ(getrlimit(RLIMIT_FSIZE, &saved), 0);
  auto* old_handler = std::signal(SIGXFSZ, SIG_IGN);
  rlimit limited = saved;
  limited.rlim_cur = 4096;
  ASSERT_EQ(setrlimit(RLIMIT_FSIZE, &limited), 0);

  const std::vector<double> big(1 << 16, 3.0);
  bool threw_io = false;
  try {
    write_npy(p, DType::f64, {static_cast<int64_t>(big.size())}, big.data(),
              static_cast<int64_t>(big.size() * sizeof(double)));
  } catch (const Error& e) {
    threw_io = e.kind() == ErrorKind::io;
    EXPECT_NE(std::string(e.what()).find(p.string()), std::string::npos) << e.what();
  }
  setrlimit(RLIMIT_FSIZE, &saved);
  std::signal(SIGXFSZ, old_handler);

  EXPECT_TRUE(threw_io);
  EXPECT_EQ(read_all(p), before);
  EXPECT_EQ(entries(), (std::vector<std::string>{"keep.npy"}));
}

}  // namespace
}  // namespace fdstencil
