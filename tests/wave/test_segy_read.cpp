// SEG-Y as the field writes it (issue 34), read without libsegyio: files built byte by byte here,
// in both byte orders and every sample format of rev 2, with extended textual headers,
// additional trace headers, headers that disagree, and pre-stack gathers.
#include <gtest/gtest.h>
#include <unistd.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "fdstencil/error.hpp"
#include "fdstencil/segy.hpp"
#include "fdstencil/wave.hpp"
#include "wave/segy_encoding.hpp"

using namespace fdstencil;
using segy::detail::ByteOrder;
using segy::detail::write_bytes;

namespace {

namespace fs = std::filesystem;

// A file as bytes: the headers' fields set where the standard puts them (1-based positions).
struct Bytes {
  ByteOrder order = ByteOrder::big;
  std::vector<unsigned char> data;
  void set(int64_t position, int size, int64_t value) {
    write_bytes(data.data() + position - 1, size, uint64_t(value), order);
  }
};

// One trace's header fields besides the sample count and interval.
struct TraceFields {
  int32_t il = 0, xl = 0, offset = 0, sx = 0, gx = 0, field_record = 0;
  int16_t scalar = 0, delay_ms = 0, time_scalar = 0;
};

struct FileSpec {
  ByteOrder order = ByteOrder::big;
  bool constant = true;  // the byte-order constant at 3297 (rev 2); false: 0, as older files
  int format = 5, revision = 1, extra_headers = 0;
  int bin_ns = 3, trace_ns = 3, bin_interval = 2000, trace_interval = 2000;
  std::vector<std::string> extended;  // extended textual headers' first bytes; the rest spaces
  int extended_field = -2;            // bytes 3505-3506; -2: extended.size()
  std::vector<TraceFields> traces;
  std::vector<std::vector<unsigned char>> samples;  // each trace's encoded samples
};

Bytes build(const FileSpec& f) {
  Bytes b;
  b.order = f.order;
  b.data.assign(3600, 0);
  for (int k = 0; k < 3200; ++k) b.data[size_t(k)] = 0x40;  // EBCDIC spaces
  b.set(3217, 2, f.bin_interval);
  b.set(3221, 2, f.bin_ns);
  b.set(3225, 2, f.format);
  if (f.constant) b.set(3297, 4, 0x01020304);
  b.set(3501, 1, f.revision);
  b.set(3505, 2, f.extended_field == -2 ? int64_t(f.extended.size()) : f.extended_field);
  b.set(3507, 2, f.extra_headers);
  for (const std::string& text : f.extended) {
    std::string record(3200, ' ');
    record.replace(0, text.size(), text);
    b.data.insert(b.data.end(), record.begin(), record.end());
  }
  for (size_t t = 0; t < f.traces.size(); ++t) {
    const size_t at = b.data.size();
    b.data.resize(at + 240 * size_t(1 + f.extra_headers), 0);
    const TraceFields& r = f.traces[t];
    const auto put = [&](int position, int size, int64_t value) {
      b.set(int64_t(at) + position, size, value);
    };
    put(9, 4, r.field_record);
    put(37, 4, r.offset);
    put(71, 2, r.scalar);
    put(73, 4, r.sx);
    put(81, 4, r.gx);
    put(109, 2, r.delay_ms);
    put(115, 2, f.trace_ns);
    put(117, 2, f.trace_interval);
    put(189, 4, r.il);
    put(193, 4, r.xl);
    put(215, 2, r.time_scalar);
    b.data.insert(b.data.end(), f.samples[t].begin(), f.samples[t].end());
  }
  return b;
}

// Samples of `format` in `order` for the values given (each representable in the format).
std::vector<unsigned char> encode(int format, ByteOrder order, const std::vector<double>& values) {
  const int bytes = segy::detail::sample_format(format)->bytes;
  std::vector<unsigned char> out(values.size() * size_t(bytes));
  for (size_t k = 0; k < values.size(); ++k) {
    uint64_t bits = 0;
    if (format == 5)
      bits = std::bit_cast<uint32_t>(float(values[k]));
    else if (format == 6)
      bits = std::bit_cast<uint64_t>(values[k]);
    else
      bits = uint64_t(int64_t(values[k]));  // two's complement; write_bytes keeps the low bytes
    write_bytes(out.data() + k * size_t(bytes), bytes, bits, order);
  }
  return out;
}

class SegyRead : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("fdstencil_segy_read_" + std::to_string(::getpid()) + "_" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string write(const std::string& name, const FileSpec& f) {
    const Bytes b = build(f);
    std::ofstream(dir_ / name, std::ios::binary)
        .write(reinterpret_cast<const char*>(b.data.data()), std::streamsize(b.data.size()));
    return (dir_ / name).string();
  }
  fs::path dir_;
};

// Two traces of three samples each: a line in file order with no line numbers.
FileSpec two_traces(int format, ByteOrder order, const std::vector<double>& a, const std::vector<double>& b) {
  FileSpec f;
  f.order = order;
  f.format = format;
  f.traces = {TraceFields{}, TraceFields{}};
  f.samples = {encode(format, order, a), encode(format, order, b)};
  return f;
}

bool mentions(const std::string& text, const std::vector<std::string>& words) {
  for (const std::string& w : words)
    if (text.find(w) == std::string::npos) return false;
  return true;
}

template <class F>
std::string message_of(F f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(SegyEncoding, IbmFloatsConvertExactlyWithUnderAndOverflow) {
  using segy::detail::ibm_to_ieee;
  EXPECT_EQ(ibm_to_ieee(0x41100000u), 1.0f);
  EXPECT_EQ(ibm_to_ieee(0xC276A000u), -118.625f);  // the standard's own example
  EXPECT_EQ(ibm_to_ieee(0x42640000u), 100.0f);
  EXPECT_EQ(ibm_to_ieee(0x40800000u), 0.5f);
  EXPECT_EQ(std::bit_cast<uint32_t>(ibm_to_ieee(0x80000000u)), 0x80000000u);  // -0 stays negative
  EXPECT_EQ(ibm_to_ieee(0x00000000u), 0.0f);
  EXPECT_TRUE(std::isinf(ibm_to_ieee(0x7FFFFFFFu)));  // 16^63: beyond float
  EXPECT_EQ(ibm_to_ieee(0x00100000u), 0.0f);          // 16^-65: below every float
  // 0x.1 x 16^-32 = 2^-132: a float subnormal, exact
  EXPECT_EQ(ibm_to_ieee(0x20100000u), std::ldexp(1.0f, -132));
}

TEST(SegyEncoding, FieldsReadInEitherByteOrder) {
  unsigned char b[4];
  for (const ByteOrder o : {ByteOrder::big, ByteOrder::little}) {
    write_bytes(b, 4, uint64_t(int64_t(-123456)), o);
    EXPECT_EQ(segy::detail::read_signed(b, 4, o), -123456);
    write_bytes(b, 2, 0xFFFE, o);
    EXPECT_EQ(segy::detail::read_signed(b, 2, o), -2);
    EXPECT_EQ(segy::detail::read_unsigned(b, 2, o), 0xFFFEu);
    write_bytes(b, 3, 0x800001, o);
    EXPECT_EQ(segy::detail::read_signed(b, 3, o), -8388607);
  }
}

// Every format of rev 2 in both byte orders, the order told by the constant at 3297 and, where
// it is 0, by the format code: the same values every time.
TEST_F(SegyRead, EveryRev2FormatInBothByteOrdersReadsTheSameValues) {
  const std::vector<int> signed_formats = {2, 3, 5, 6, 7, 8, 9}, unsigned_formats = {10, 11, 12, 15, 16};
  const std::vector<double> a = {-100, 0, 17}, b = {127, -128, 5};
  const std::vector<double> ua = {0, 100, 17}, ub = {255, 1, 5};
  for (const ByteOrder o : {ByteOrder::big, ByteOrder::little})
    for (const bool constant : {true, false}) {
      for (const int format : signed_formats) {
        FileSpec f = two_traces(format, o, a, b);
        f.constant = constant;
        const segy::Traces t = segy::read_traces(write("f.sgy", f));
        EXPECT_EQ(t.byte_order, o == ByteOrder::big ? "big-endian" : "little-endian") << format;
        EXPECT_EQ(t.samples, (std::vector<float>{-100, 0, 17, 127, -128, 5})) << "format " << format;
      }
      for (const int format : unsigned_formats) {
        FileSpec f = two_traces(format, o, ua, ub);
        f.constant = constant;
        EXPECT_EQ(segy::read_traces(write("u.sgy", f)).samples, (std::vector<float>{0, 100, 17, 255, 1, 5}))
            << "format " << format;
      }
      FileSpec ibm = two_traces(2, o, {0, 0, 0}, {0, 0, 0});  // then IBM's bits by hand
      ibm.format = 1;
      ibm.constant = constant;
      for (auto& s : ibm.samples) {
        s.assign(12, 0);
        write_bytes(s.data(), 4, 0xC276A000u, o);
        write_bytes(s.data() + 8, 4, 0x41100000u, o);
      }
      EXPECT_EQ(segy::read_traces(write("ibm.sgy", ibm)).samples,
                (std::vector<float>{-118.625f, 0, 1, -118.625f, 0, 1}));
    }
}

TEST_F(SegyRead, FormatsOutsideRev2AreRefusedByTheirCode) {
  for (const int format : {4, 13, 14, 17}) {
    FileSpec f = two_traces(2, ByteOrder::big, {1, 2, 3}, {4, 5, 6});
    f.format = format;
    const std::string m = message_of([&] { segy::read_traces(write("f.sgy", f)); });
    EXPECT_TRUE(mentions(m, {"sample format code " + std::to_string(format), "3225-3226"})) << m;
  }
}

// F3's case: the binary header says 3 samples, the trace headers 462; the file's size fits 3, so 3
// are read, as segyio reads them, with a warning naming both. Where only trace 0's count fits the
// size, that one is read.
TEST_F(SegyRead, SampleCountsThatDisagreeAreResolvedByTheFilesSize) {
  FileSpec f = two_traces(5, ByteOrder::big, {1, 2, 3}, {4, 5, 6});
  f.trace_ns = 462;
  segy::Traces t = segy::read_traces(write("a.sgy", f));
  EXPECT_EQ(t.ns, 3);
  ASSERT_EQ(t.warnings.size(), 1u);
  EXPECT_TRUE(mentions(t.warnings[0], {"462", "115-116", "3221-3222", "read 3"})) << t.warnings[0];
  f.trace_ns = 3;
  f.bin_ns = 5;
  t = segy::read_traces(write("b.sgy", f));
  EXPECT_EQ(t.ns, 3);
  EXPECT_EQ(t.samples, (std::vector<float>{1, 2, 3, 4, 5, 6}));
  ASSERT_EQ(t.warnings.size(), 1u);
  EXPECT_TRUE(mentions(t.warnings[0], {"binary header says 5", "read 3, trace 0's"})) << t.warnings[0];
}

// Extended textual headers: a count, or -1 ended by the EndText stanza (ASCII or EBCDIC), and
// rev 2's additional trace headers skipped before each trace's samples.
TEST_F(SegyRead, ExtendedTextualAndAdditionalTraceHeadersAreSkipped) {
  FileSpec f = two_traces(5, ByteOrder::little, {1, 2, 3}, {4, 5, 6});
  f.extended = {"((SEG: Anything))", "more"};
  EXPECT_EQ(segy::read_traces(write("count.sgy", f)).samples, (std::vector<float>{1, 2, 3, 4, 5, 6}));
  f.extended = {"((SEG: Anything))", "more", "((  seg: endTEXt  ))"};
  f.extended_field = -1;
  f.revision = 2;
  f.extra_headers = 1;
  const segy::Traces t = segy::read_traces(write("variable.sgy", f));
  EXPECT_EQ(t.extended_text_headers, 3);
  EXPECT_EQ(t.samples, (std::vector<float>{1, 2, 3, 4, 5, 6}));
  FileSpec ebcdic = f;
  ebcdic.extended = {std::string("\x4D\x4D\xE2\xC5\xC7\x7A\x40\xC5\x95\x84\xE3\x85\xA7\xA3\x5D\x5D")};
  EXPECT_EQ(segy::read_traces(write("ebcdic.sgy", ebcdic)).extended_text_headers, 1);
  f.extended = {"no stanza"};
  const std::string m = message_of([&] { segy::read_traces(write("none.sgy", f)); });
  EXPECT_TRUE(mentions(m, {"EndText", "truncated"})) << m;
}

// A shot gather: one field record, no line numbers, receivers along x. It reads as a pre-stack
// file with its geometry scaled (coordinates in cm by scalar -100, a delay of 40 ms x 10^-1... by
// the time scalar), and a model read of it is refused saying what it is.
TEST_F(SegyRead, AShotGatherReadsAsAPreStackFileAndIsNoModel) {
  FileSpec f = two_traces(5, ByteOrder::big, {1, 2, 3}, {4, 5, 6});
  for (int k = 0; k < 2; ++k) {
    TraceFields& r = f.traces[size_t(k)];
    r.field_record = 7;
    r.scalar = -100;
    r.sx = 50000;              // 500 m
    r.gx = 10000 + 25000 * k;  // 100 m and 350 m
    r.offset = r.gx / 100 - 500;
    r.delay_ms = 40;
    r.time_scalar = -10;  // 4 ms
  }
  const std::string path = write("shot.sgy", f);
  const segy::Traces t = segy::read_traces(path);
  EXPECT_EQ(t.kind, "pre-stack");
  ASSERT_EQ(t.geometry.size(), 2u);
  EXPECT_DOUBLE_EQ(t.geometry[1].gx, 350.0);
  EXPECT_DOUBLE_EQ(t.geometry[0].sx, 500.0);
  EXPECT_DOUBLE_EQ(t.geometry[0].offset, -400.0);
  EXPECT_NEAR(t.geometry[0].delay, 0.004, 1e-12);
  EXPECT_EQ(t.geometry[0].field_record, 7);
  const std::string m = message_of([&] { segy::read_model(path, {.spacing = 10}); });
  EXPECT_TRUE(
      mentions(m, {"pre-stack", "not a velocity model", "segy info", "--segy-inline-byte", "from-npy"}))
      << m;
  // Line numbers shared by traces of different offsets: pre-stack too.
  FileSpec ps = two_traces(5, ByteOrder::big, {1, 2, 3}, {4, 5, 6});
  ps.traces[0].il = ps.traces[1].il = 1;
  ps.traces[0].xl = ps.traces[1].xl = 1;
  EXPECT_EQ(segy::read_traces(write("ps.sgy", ps)).kind, "pre-stack");
}

// A little-endian model reads as its big-endian twin.
TEST_F(SegyRead, ALittleEndianModelReadsAsItsBigEndianTwin) {
  for (const ByteOrder o : {ByteOrder::big, ByteOrder::little}) {
    FileSpec f = two_traces(5, o, {1500, 1600, 1700}, {1550, 1650, 1750});
    f.bin_interval = f.trace_interval = 10000;  // 10 m in millimetres
    f.traces[0].xl = 1;
    f.traces[1].xl = 2;
    f.traces[0].il = f.traces[1].il = 1;
    const segy::Grid g = segy::read_model(write("m.sgy", f), {.spacing = 10});
    EXPECT_EQ(g.dim, 2);
    EXPECT_EQ(g.nx, 2);
    EXPECT_EQ(g.v, (std::vector<float>{1500, 1550, 1600, 1650, 1700, 1750}));
  }
}

// What fdstencil writes, in either byte order, it reads back bit for bit: a model and a shot record;
// the little-endian file is rev 2 with the byte-order constant, and differs from its big-endian twin.
TEST_F(SegyRead, ModelsAndShotsWrittenInEitherByteOrderReadBackBitForBit) {
  wave::Model m = wave::Model::constant(3, 5, 3, 4, 12.5, 2000.f);
  for (size_t k = 0; k < m.v.size(); ++k) m.v[k] = 1500.f + 0.37f * float(k);
  segy::ShotRecord r;
  r.dt = 2e-3;
  r.ns = 4;
  r.source = {10, 20, 30};
  r.receivers = {{5, 6, 7}, {5, 6, 57}};
  r.traces = {1, -2.5f, 3, 4, 5, 6, -7.25f, 8};
  for (const bool little : {false, true}) {
    const std::string tag = little ? "le" : "be";
    const std::string model = (dir_ / ("m-" + tag + ".sgy")).string(),
                      shot = (dir_ / ("s-" + tag + ".sgy")).string();
    segy::write_model(model, segy::from_model(m), segy::kDefaultZUnit, little);
    const segy::Grid g = segy::read_model(model);
    EXPECT_EQ(g.v, m.v) << tag;
    EXPECT_EQ(g.byte_order, little ? "little-endian" : "big-endian");
    EXPECT_EQ(g.revision, little ? 2 : 1);
    EXPECT_TRUE(g.warnings.empty()) << g.warnings.front();
    r.little_endian = little;
    segy::write_shot(shot, r);
    const segy::Traces t = segy::read_traces(shot);
    EXPECT_EQ(t.samples, r.traces) << tag;
    EXPECT_EQ(t.kind, "pre-stack");
    EXPECT_DOUBLE_EQ(t.geometry[1].gx, 57.0);
    EXPECT_DOUBLE_EQ(t.geometry[0].sx, 30.0);
    EXPECT_EQ(t.sample_interval, 2000);
  }
  std::ifstream be(dir_ / "m-be.sgy", std::ios::binary), le(dir_ / "m-le.sgy", std::ios::binary);
  const std::string a((std::istreambuf_iterator<char>(be)), {}), b((std::istreambuf_iterator<char>(le)), {});
  EXPECT_EQ(a.size(), b.size());
  EXPECT_NE(a.substr(3200), b.substr(3200));
}

}  // namespace
