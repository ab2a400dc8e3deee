// SEG-Y through libsegyio (include/fdstencil/segy.hpp): models written and read back in 2D and 3D,
// files of other writers (crossline-sorted, shuffled, rotated, IBM float, int16, extended textual
// headers, other line-number bytes) written here with segyio's C API directly, the spacing rules,
// every malformed file refused with a message that names the problem, and a shot record whose
// every header field is read back through segyio's C API. Without libsegyio the tests report
// skipped, except the one that checks the functions then refuse.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "fdstencil/error.hpp"
#include "fdstencil/segy.hpp"
#include "fdstencil/wave.hpp"

#if FDSTENCIL_HAVE_SEGYIO
#include <segyio/segy.h>
#endif

using namespace fdstencil;
namespace fs = std::filesystem;

namespace {

struct Thrown {
  bool threw = false;
  ErrorKind kind = ErrorKind::invalid_argument;
  std::string message;
};

Thrown thrown(const std::function<void()>& f) {
  Thrown t;
  try {
    f();
  } catch (const Error& e) {
    t = {true, e.kind(), e.what()};
  }
  return t;
}

// Asserts `f` throws Error(kind) whose message holds every one of `words`.
::testing::AssertionResult refuses(const std::function<void()>& f, ErrorKind kind,
                                   std::vector<std::string> words) {
  const Thrown t = thrown(f);
  if (!t.threw) return ::testing::AssertionFailure() << "did not throw";
  if (t.kind != kind) return ::testing::AssertionFailure() << "threw the wrong kind: \"" << t.message << "\"";
  for (const std::string& w : words)
    if (t.message.find(w) == std::string::npos)
      return ::testing::AssertionFailure() << "message \"" << t.message << "\" does not name \"" << w << "\"";
  return ::testing::AssertionSuccess() << t.message;
}

class Segy : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("fdstencil_segy_" + std::to_string(::getpid()) + "_" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override {
    if (!dir_.empty()) fs::remove_all(dir_);
  }
  fs::path path(const std::string& name) const { return dir_ / name; }
  // The names in the scratch directory: a refused write must leave none (not even a temporary).
  std::vector<std::string> files() const {
    std::vector<std::string> names;
    for (const auto& e : fs::directory_iterator(dir_)) names.push_back(e.path().filename().string());
    std::sort(names.begin(), names.end());
    return names;
  }
  fs::path dir_;
};

}  // namespace

#if FDSTENCIL_HAVE_SEGYIO

namespace {

// Velocities 1500..4500 m/s from a seeded generator (printed), no two alike in practice.
std::vector<float> velocities(size_t n, unsigned seed) {
  std::printf("[ seed ] %u\n", seed);
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> u(1500.f, 4500.f);
  std::vector<float> v(n);
  for (float& x : v) x = u(gen);
  return v;
}

// --- an independent writer: segyio's C API with every header chosen by the test -----------------

struct RawTrace {
  int32_t il = 0, xl = 0;
  int32_t cdp_x = 0, cdp_y = 0;
  int32_t scalar = 0;
  int32_t samples_field = -1;  // bytes 115-116: -1 writes the file's sample count
  std::vector<float> samples;
};

struct RawFile {
  int ns = 0;
  int interval = 4000;                  // binary header and trace headers
  int trace_interval = -1;              // -1: the same as `interval`
  int format = SEGY_IEEE_FLOAT_4_BYTE;  // 5, 1 (IBM) or 3 (int16)
  int extended = 0;                     // extended textual headers (bytes 3505-3506), each 3200 spaces
  int iline_byte = SEGY_TR_INLINE, xline_byte = SEGY_TR_CROSSLINE;
  std::vector<RawTrace> traces;
};

void write_raw(const fs::path& path, const RawFile& f) {
  segy_file* fp = segy_open(path.c_str(), "w+b");
  ASSERT_NE(fp, nullptr);
  std::string text(SEGY_TEXT_HEADER_SIZE, ' ');
  text.replace(0, 27, "C 1 WRITTEN BY TEST_SEGY.CPP");
  ASSERT_EQ(segy_write_textheader(fp, 0, text.c_str()), SEGY_OK);
  char bin[SEGY_BINARY_HEADER_SIZE] = {};
  segy_set_bfield(bin, SEGY_BIN_INTERVAL, f.interval);
  segy_set_bfield(bin, SEGY_BIN_SAMPLES, f.ns);
  segy_set_bfield(bin, SEGY_BIN_FORMAT, f.format);
  segy_set_bfield(bin, SEGY_BIN_EXT_HEADERS, f.extended);
  ASSERT_EQ(segy_write_binheader(fp, bin), SEGY_OK);
  for (int e = 0; e < f.extended; ++e) ASSERT_EQ(segy_write_textheader(fp, e + 1, text.c_str()), SEGY_OK);
  const long trace0 = SEGY_TEXT_HEADER_SIZE * (1 + f.extended) + SEGY_BINARY_HEADER_SIZE;
  const int trsize = segy_trsize(f.format, f.ns);
  for (size_t t = 0; t < f.traces.size(); ++t) {
    const RawTrace& r = f.traces[t];
    char h[SEGY_TRACE_HEADER_SIZE] = {};
    segy_set_field(h, SEGY_TR_SEQ_FILE, int32_t(t + 1));
    segy_set_field(h, f.iline_byte, r.il);
    segy_set_field(h, f.xline_byte, r.xl);
    segy_set_field(h, SEGY_TR_CDP_X, r.cdp_x);
    segy_set_field(h, SEGY_TR_CDP_Y, r.cdp_y);
    segy_set_field(h, SEGY_TR_SOURCE_GROUP_SCALAR, r.scalar);
    segy_set_field(h, SEGY_TR_SAMPLE_COUNT, r.samples_field < 0 ? f.ns : r.samples_field);
    segy_set_field(h, SEGY_TR_SAMPLE_INTER, f.trace_interval < 0 ? f.interval : f.trace_interval);
    ASSERT_EQ(segy_write_traceheader(fp, int(t), h, trace0, trsize), SEGY_OK);
    std::vector<char> buf(static_cast<size_t>(trsize));
    if (f.format == SEGY_SIGNED_SHORT_2_BYTE) {
      for (int k = 0; k < f.ns; ++k) {
        const int16_t v = int16_t(std::lround(r.samples[size_t(k)]));
        buf[size_t(2 * k)] = char((uint16_t(v) >> 8) & 0xFF);  // big-endian by hand
        buf[size_t(2 * k + 1)] = char(uint16_t(v) & 0xFF);
      }
    } else {
      std::memcpy(buf.data(), r.samples.data(), size_t(trsize));
      segy_from_native(f.format, f.ns, buf.data());
    }
    ASSERT_EQ(segy_writetrace(fp, int(t), buf.data(), trace0, trsize), SEGY_OK);
  }
  ASSERT_EQ(segy_close(fp), SEGY_OK);
}

// A 3D grid of ny inlines x nx crosslines, numbered from il0/xl0 in steps, with CDP coordinates
// (i dx, j dy) rotated by `angle` about (x0, y0), in centimetres; trace (j, i)'s samples
// v[(k ny + j) nx + i]. `crossline_sorted` writes inline numbers fastest.
struct Grid3 {
  int nz = 6, ny = 4, nx = 5;
  double dx = 12.5, dy = 12.5, angle = 0, x0 = 0, y0 = 0;
  int il0 = 100, il_step = 2, xl0 = 7, xl_step = 1;
  std::vector<float> v;
  Grid3() { v = velocities(size_t(nz * ny * nx), 11); }

  RawTrace trace(int j, int i) const {
    RawTrace r;
    r.il = il0 + j * il_step;
    r.xl = xl0 + i * xl_step;
    const double ca = std::cos(angle), sa = std::sin(angle);
    r.cdp_x = int32_t(std::lround(100 * (x0 + ca * i * dx - sa * j * dy)));
    r.cdp_y = int32_t(std::lround(100 * (y0 + sa * i * dx + ca * j * dy)));
    r.scalar = -100;
    for (int k = 0; k < nz; ++k) r.samples.push_back(v[size_t((k * ny + j) * nx + i)]);
    return r;
  }
  RawFile file(bool crossline_sorted = false) const {
    RawFile f;
    f.ns = nz;
    f.interval = 12500;  // 12.5 m in millimetres
    if (crossline_sorted) {
      for (int i = 0; i < nx; ++i)
        for (int j = 0; j < ny; ++j) f.traces.push_back(trace(j, i));
    } else {
      for (int j = 0; j < ny; ++j)
        for (int i = 0; i < nx; ++i) f.traces.push_back(trace(j, i));
    }
    return f;
  }
};

// The first mismatch of two value arrays, or "" when equal bit for bit.
std::string first_mismatch(const std::vector<float>& got, const std::vector<float>& want) {
  if (got.size() != want.size())
    return std::to_string(got.size()) + " values instead of " + std::to_string(want.size());
  for (size_t p = 0; p < got.size(); ++p)
    if (std::memcmp(&got[p], &want[p], 4) != 0)
      return "index " + std::to_string(p) + ": " + std::to_string(got[p]) + " instead of " +
             std::to_string(want[p]);
  return "";
}

// Overwrites bytes [offset, offset + n) of a file with the big-endian value.
void patch(const fs::path& path, int64_t offset, int64_t value, int n) {
  std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
  f.seekp(offset);
  for (int b = n - 1; b >= 0; --b) f.put(char((value >> (8 * b)) & 0xFF));
  ASSERT_TRUE(f.good());
}

// Reads back what segyio sees: an int field of trace t's header.
struct Reader {
  segy_file* fp = nullptr;
  char bin[SEGY_BINARY_HEADER_SIZE] = {};
  long trace0 = 0;
  int trsize = 0, ns = 0, format = 0;
  explicit Reader(const fs::path& p) {
    fp = segy_open(p.c_str(), "rb");
    EXPECT_NE(fp, nullptr);
    if (!fp) return;
    segy_binheader(fp, bin);
    trace0 = segy_trace0(bin);
    ns = segy_samples(bin);
    format = segy_format(bin);
    trsize = segy_trsize(format, ns);
  }
  ~Reader() {
    if (fp) segy_close(fp);
  }
  int32_t binary(int which) const {
    int32_t v = 0;
    segy_get_bfield(bin, which, &v);
    return v;
  }
  int32_t field(int t, int which) const {
    char h[SEGY_TRACE_HEADER_SIZE];
    EXPECT_EQ(segy_traceheader(fp, t, h, trace0, trsize), SEGY_OK);
    int32_t v = 0;
    segy_get_field(h, which, &v);
    return v;
  }
  std::vector<float> samples(int t) const {
    std::vector<float> out(static_cast<size_t>(ns));
    EXPECT_EQ(segy_readtrace(fp, t, out.data(), trace0, trsize), SEGY_OK);
    segy_to_native(format, ns, out.data());
    return out;
  }
  std::string text() const {
    std::vector<char> buf(static_cast<size_t>(segy_textheader_size()));
    segy_read_textheader(fp, buf.data());
    return std::string(buf.data());
  }
};

}  // namespace

// --- models written here and read back -----------------------------------------------------------

TEST_F(Segy, ModelRoundTrip3DIsExactAndSegyioSeesTheGeometry) {
  wave::Model m = wave::Model::constant(3, 9, 4, 6, 12.5, 1.f);
  m.v = velocities(size_t(m.points()), 1);
  segy::write_model(path("m.sgy"), segy::from_model(m));
  EXPECT_EQ(files(), std::vector<std::string>{"m.sgy"}) << "the temporary is gone";

  const segy::Grid g = segy::read_model(path("m.sgy"));
  EXPECT_EQ(g.dim, 3);
  EXPECT_EQ(g.nz, 9);
  EXPECT_EQ(g.ny, 4);
  EXPECT_EQ(g.nx, 6);
  EXPECT_DOUBLE_EQ(g.dz, 12.5);
  EXPECT_DOUBLE_EQ(g.dy, 12.5);
  EXPECT_DOUBLE_EQ(g.dx, 12.5);
  EXPECT_EQ(g.format, 5);
  EXPECT_EQ(g.traces, 24);
  EXPECT_EQ(g.order, "inline-sorted");
  EXPECT_EQ(g.il_first, 1);
  EXPECT_EQ(g.il_last, 4);
  EXPECT_EQ(g.xl_first, 1);
  EXPECT_EQ(g.xl_last, 6);
  EXPECT_TRUE(g.coordinates);
  EXPECT_EQ(first_mismatch(g.v, m.v), "");
  const wave::Model back = segy::to_model(g);
  EXPECT_DOUBLE_EQ(back.h, 12.5);
  EXPECT_EQ(first_mismatch(back.v, m.v), "");

  // As segyio reads it: inline-sorted, lines numbered from 1, coordinates in decimetres (12.5 m).
  const Reader r(path("m.sgy"));
  EXPECT_EQ(r.ns, 9);
  EXPECT_EQ(r.format, 5);
  EXPECT_EQ(r.binary(SEGY_BIN_INTERVAL), 12500);
  EXPECT_EQ(r.binary(SEGY_BIN_SEGY_REVISION), 0x0100);
  EXPECT_EQ(r.binary(SEGY_BIN_TRACE_FLAG), 1);
  EXPECT_EQ(r.binary(SEGY_BIN_MEASUREMENT_SYSTEM), 1);
  int sorting = -1;
  EXPECT_EQ(
      segy_sorting(r.fp, SEGY_TR_INLINE, SEGY_TR_CROSSLINE, SEGY_TR_OFFSET, &sorting, r.trace0, r.trsize),
      SEGY_OK);
  EXPECT_EQ(sorting, SEGY_INLINE_SORTING);
  const int t = 2 * 6 + 3;  // inline 3, crossline 4
  EXPECT_EQ(r.field(t, SEGY_TR_INLINE), 3);
  EXPECT_EQ(r.field(t, SEGY_TR_CROSSLINE), 4);
  EXPECT_EQ(r.field(t, SEGY_TR_SOURCE_GROUP_SCALAR), -10);
  EXPECT_EQ(r.field(t, SEGY_TR_CDP_X), 375);  // 3 x 12.5 m in decimetres
  EXPECT_EQ(r.field(t, SEGY_TR_CDP_Y), 250);
  EXPECT_EQ(r.field(t, SEGY_TR_SAMPLE_COUNT), 9);
  EXPECT_EQ(r.field(t, SEGY_TR_SAMPLE_INTER), 12500);
  const std::vector<float> tr = r.samples(t);
  for (int k = 0; k < 9; ++k) EXPECT_EQ(tr[size_t(k)], m.v[size_t((k * 4 + 2) * 6 + 3)]) << k;
  EXPECT_NE(r.text().find("FDSTENCIL"), std::string::npos) << r.text();
}

TEST_F(Segy, ModelRoundTrip2DIsOneInline) {
  wave::Model m = wave::Model::constant(2, 7, 1, 11, 5.0, 1.f);
  m.v = velocities(size_t(m.points()), 2);
  segy::write_model(path("m2.sgy"), segy::from_model(m));
  const segy::Grid g = segy::read_model(path("m2.sgy"));
  EXPECT_EQ(g.dim, 2);
  EXPECT_EQ(g.nz, 7);
  EXPECT_EQ(g.ny, 1);
  EXPECT_EQ(g.nx, 11);
  EXPECT_DOUBLE_EQ(g.dz, 5.0);
  EXPECT_DOUBLE_EQ(g.dx, 5.0);
  EXPECT_EQ(g.il_first, 1);
  EXPECT_EQ(g.il_last, 1);
  EXPECT_EQ(g.xl_last, 11);
  EXPECT_EQ(first_mismatch(g.v, m.v), "");
  const wave::Model back = segy::to_model(g);
  EXPECT_EQ(back.dim, 2);
  EXPECT_EQ(first_mismatch(back.v, m.v), "");
  const Reader r(path("m2.sgy"));
  EXPECT_EQ(r.field(10, SEGY_TR_INLINE), 1);
  EXPECT_EQ(r.field(10, SEGY_TR_CROSSLINE), 11);
  EXPECT_EQ(r.field(10, SEGY_TR_CDP_X), 50);  // 10 x 5 m in metres: scalar 1
  EXPECT_EQ(r.field(10, SEGY_TR_SOURCE_GROUP_SCALAR), 1);
}

TEST_F(Segy, AnotherZUnitAndAnIrrationalSpacingRoundTrip) {
  // dz 2.5 m as 25 decimetres; dx = 1/3 m is no whole number of 0.1 mm: the finest scalar that fits.
  wave::Model m = wave::Model::constant(3, 5, 3, 4, 2.5, 1.f);
  m.v = velocities(size_t(m.points()), 3);
  segy::write_model(path("dm.sgy"), segy::from_model(m), 0.1);
  segy::ReadOptions o;
  o.z_unit = 0.1;
  const segy::Grid g = segy::read_model(path("dm.sgy"), o);
  EXPECT_EQ(g.sample_interval, 25);
  EXPECT_DOUBLE_EQ(g.dz, 2.5);
  EXPECT_NEAR(g.dx, 2.5, 1e-12);
  EXPECT_EQ(first_mismatch(g.v, m.v), "");
  // Read with the default (millimetre) unit, the same file is a 25 mm grid in z: to_model refuses it.
  const segy::Grid mm = segy::read_model(path("dm.sgy"));
  EXPECT_DOUBLE_EQ(mm.dz, 0.025);
  EXPECT_TRUE(refuses([&] { segy::to_model(mm); }, ErrorKind::invalid_argument,
                      {"dz = 0.025 m", "dx = 2.5 m", "--segy-z-unit"}));

  segy::Grid third = segy::from_model(wave::Model::constant(3, 3, 2, 3, 1.0, 2000.f));
  third.dx = third.dy = 1.0 / 3.0;
  segy::write_model(path("third.sgy"), third);
  const segy::Grid t = segy::read_model(path("third.sgy"));
  EXPECT_NEAR(t.dx, 1.0 / 3.0, 1e-4);
  EXPECT_NEAR(t.dy, 1.0 / 3.0, 1e-4);
}

// --- files of other writers ----------------------------------------------------------------------

TEST_F(Segy, InlineCrosslineAndShuffledOrdersGiveTheSameGrid) {
  const Grid3 grid;
  RawFile shuffled = grid.file();
  std::mt19937 gen(5);
  std::shuffle(shuffled.traces.begin(), shuffled.traces.end(), gen);
  const std::pair<RawFile, const char*> cases[] = {
      {grid.file(false), "inline-sorted"}, {grid.file(true), "crossline-sorted"}, {shuffled, "unsorted"}};
  for (const auto& [file, order] : cases) {
    write_raw(path("g.sgy"), file);
    const segy::Grid g = segy::read_model(path("g.sgy"));
    EXPECT_EQ(g.order, order);
    EXPECT_EQ(g.dim, 3);
    EXPECT_EQ(g.ny, grid.ny);
    EXPECT_EQ(g.nx, grid.nx);
    EXPECT_EQ(g.il_first, 100);
    EXPECT_EQ(g.il_last, 106);
    EXPECT_EQ(g.il_step, 2);
    EXPECT_EQ(g.xl_first, 7);
    EXPECT_EQ(g.xl_last, 11);
    EXPECT_NEAR(g.dx, 12.5, 1e-9) << order;
    EXPECT_NEAR(g.dy, 12.5, 1e-9) << order;
    EXPECT_DOUBLE_EQ(g.dz, 12.5);
    EXPECT_EQ(first_mismatch(g.v, grid.v), "") << order;
  }
}

TEST_F(Segy, ARotatedGridWithItsOriginFarAwayHasItsSpacings) {
  Grid3 grid;
  grid.angle = 0.5236;  // 30 degrees
  grid.x0 = 512345.67;  // UTM-like coordinates
  grid.y0 = 6712345.89;
  grid.dy = 25.0;
  grid.dx = 25.0;
  RawFile f = grid.file();
  f.interval = 25000;
  write_raw(path("rot.sgy"), f);
  const segy::Grid g = segy::read_model(path("rot.sgy"));
  EXPECT_NEAR(g.dx, 25.0, 0.01);
  EXPECT_NEAR(g.dy, 25.0, 0.01);
  EXPECT_NEAR(g.x0, 512345.67, 0.01);
  EXPECT_NEAR(g.y0, 6712345.89, 0.01);
  EXPECT_NO_THROW(segy::to_model(g));
}

TEST_F(Segy, IbmFloatAndInt16SamplesAndOtherLineBytesAndExtendedHeaders) {
  Grid3 grid;
  for (float& x : grid.v) x = std::round(x);  // whole numbers: exact in IBM float and int16
  {
    RawFile f = grid.file();
    f.format = SEGY_IBM_FLOAT_4_BYTE;
    write_raw(path("ibm.sgy"), f);
    const segy::Grid g = segy::read_model(path("ibm.sgy"));
    EXPECT_EQ(g.format, 1);
    EXPECT_EQ(first_mismatch(g.v, grid.v), "");
  }
  {
    RawFile f = grid.file();
    f.format = SEGY_SIGNED_SHORT_2_BYTE;
    write_raw(path("i16.sgy"), f);
    const segy::Grid g = segy::read_model(path("i16.sgy"));
    EXPECT_EQ(g.format, 3);
    EXPECT_EQ(first_mismatch(g.v, grid.v), "");
  }
  {
    RawFile f = grid.file();
    f.iline_byte = SEGY_TR_FIELD_RECORD;  // byte 9
    f.xline_byte = SEGY_TR_ENSEMBLE;      // byte 21
    write_raw(path("bytes.sgy"), f);
    // At the standard bytes the line numbers are all zero: a 2D line in file order of 20 traces,
    // whose neighbours' coordinates then jump between inlines.
    EXPECT_TRUE(
        refuses([&] { segy::read_model(path("bytes.sgy")); }, ErrorKind::invalid_argument, {"irregular"}));
    segy::ReadOptions o;
    o.iline_byte = 9;
    o.xline_byte = 21;
    const segy::Grid g = segy::read_model(path("bytes.sgy"), o);
    EXPECT_EQ(g.dim, 3);
    EXPECT_EQ(first_mismatch(g.v, grid.v), "");
  }
  {
    RawFile f = grid.file();
    f.extended = 2;
    write_raw(path("ext.sgy"), f);
    const segy::Grid g = segy::read_model(path("ext.sgy"));
    EXPECT_EQ(first_mismatch(g.v, grid.v), "");
  }
}

TEST_F(Segy, A2DLineWithoutNumbersOrCoordinatesNeedsTheSpacing) {
  RawFile f;
  f.ns = 4;
  f.interval = 10000;
  std::vector<float> v = velocities(4 * 6, 6);
  for (int i = 0; i < 6; ++i) {
    RawTrace t;
    for (int k = 0; k < 4; ++k) t.samples.push_back(v[size_t(k * 6 + i)]);
    f.traces.push_back(t);
  }
  write_raw(path("line.sgy"), f);
  EXPECT_TRUE(refuses([&] { segy::read_model(path("line.sgy")); }, ErrorKind::invalid_argument,
                      {"line.sgy", "x spacing", "CDP coordinates", "--spacing"}));
  segy::ReadOptions o;
  o.spacing = 10;
  const segy::Grid g = segy::read_model(path("line.sgy"), o);
  EXPECT_EQ(g.dim, 2);
  EXPECT_EQ(g.order, "file order");
  EXPECT_EQ(g.nx, 6);
  EXPECT_DOUBLE_EQ(g.dx, 10);
  EXPECT_EQ(first_mismatch(g.v, v), "");
  o.need_spacing = false;
  o.spacing = 0;
  EXPECT_DOUBLE_EQ(segy::read_model(path("line.sgy"), o).dx, 0) << "unknown, not refused";

  // The sample interval zero everywhere: dz from --spacing, or refused naming it.
  f.interval = 0;
  write_raw(path("nodt.sgy"), f);
  o = {};
  EXPECT_TRUE(refuses([&] { segy::read_model(path("nodt.sgy"), o); }, ErrorKind::invalid_argument,
                      {"z spacing", "sample interval is 0", "--spacing"}));
  o.spacing = 10;
  EXPECT_DOUBLE_EQ(segy::read_model(path("nodt.sgy"), o).dz, 10);
}

TEST_F(Segy, ASpacingThatContradictsTheHeadersIsRefusedNamingBoth) {
  const Grid3 grid;
  write_raw(path("g.sgy"), grid.file());
  segy::ReadOptions o;
  o.spacing = 10;
  EXPECT_TRUE(refuses([&] { segy::read_model(path("g.sgy"), o); }, ErrorKind::invalid_argument,
                      {"--spacing 10", "12.5", "contradicts"}));
  o.spacing = 12.5 * (1 + 5e-4);  // within 1e-3: the same spacing
  EXPECT_DOUBLE_EQ(segy::read_model(path("g.sgy"), o).dx, o.spacing);
  // dz from the sample interval agrees, dx from the coordinates does not.
  Grid3 wide;
  wide.dx = 20;
  write_raw(path("wide.sgy"), wide.file());
  o.spacing = 12.5;
  EXPECT_TRUE(refuses([&] { segy::read_model(path("wide.sgy"), o); }, ErrorKind::invalid_argument,
                      {"--spacing 12.5", "dx = 20", "crosslines"}));
  o.spacing = 0;
  const segy::Grid g = segy::read_model(path("wide.sgy"), o);
  EXPECT_TRUE(refuses([&] { segy::to_model(g); }, ErrorKind::invalid_argument,
                      {"dz = 12.5 m", "dy = 12.5 m", "dx = 20 m", "one spacing"}));
}

// --- malformed files -----------------------------------------------------------------------------

TEST_F(Segy, MissingShortAndTruncatedFilesAreIoErrorsSayingWhatIsWrong) {
  EXPECT_TRUE(
      refuses([&] { segy::read_model(path("none.sgy")); }, ErrorKind::io, {"none.sgy", "no such file"}));
  std::ofstream(path("short.sgy")) << "hello";
  EXPECT_TRUE(refuses([&] { segy::read_model(path("short.sgy")); }, ErrorKind::io, {"5 bytes", "3600"}));
  const Grid3 grid;
  write_raw(path("cut.sgy"), grid.file());
  const int64_t trace_bytes = 240 + 4 * grid.nz;
  fs::resize_file(path("cut.sgy"), fs::file_size(path("cut.sgy")) - 100);
  EXPECT_TRUE(
      refuses([&] { segy::read_model(path("cut.sgy")); }, ErrorKind::io,
              {"truncated", std::to_string(trace_bytes - 100) + " bytes are left over", "19 whole traces"}));
}

// Codes outside rev 2's formats, and the obsolete 4, are refused by their code; every other
// format is read (test_segy_read.cpp).
TEST_F(Segy, SampleFormatsOutsideRev2AreRefusedNamingTheCode) {
  const Grid3 grid;
  for (const auto& [code, words] : std::vector<std::pair<int, std::vector<std::string>>>{
           {4, {"sample format code 4", "obsolete", "3225-3226", "rev 2 defines"}},
           {13, {"sample format code 13", "rev 2 defines 1-3, 5-12, 15 and 16"}},
           {0, {"sample format code 0", "no SEG-Y format"}}}) {
    write_raw(path("f.sgy"), grid.file());
    patch(path("f.sgy"), 3224, code, 2);
    EXPECT_TRUE(refuses([&] { segy::read_model(path("f.sgy")); }, ErrorKind::invalid_argument, words))
        << code;
  }
}

// Headers that disagree are read as segyio reads them (issue 34): another trace's sample count is
// not looked at, a sample interval the binary header and trace 0 disagree on is the binary
// header's with a warning; a variable count of extended headers without its EndText stanza is a
// file cut short.
TEST_F(Segy, HeadersThatDisagreeAreResolvedWithAWarning) {
  const Grid3 grid;
  {
    RawFile f = grid.file();
    f.traces[7].samples_field = grid.nz + 1;
    write_raw(path("ns.sgy"), f);
    const segy::Grid g = segy::read_model(path("ns.sgy"));
    EXPECT_EQ(g.nz, grid.nz);
    EXPECT_TRUE(g.warnings.empty());
  }
  {
    RawFile f = grid.file();
    f.trace_interval = 4000;
    write_raw(path("dt.sgy"), f);
    const segy::Grid g = segy::read_model(path("dt.sgy"), {.spacing = 12.5});
    ASSERT_EQ(g.warnings.size(), 1u);
    for (const char* word : {"12500", "4000", "3217-3218", "117-118", "read 12500"})
      EXPECT_NE(g.warnings[0].find(word), std::string::npos) << word << " in " << g.warnings[0];
  }
  {
    write_raw(path("ext.sgy"), grid.file());
    patch(path("ext.sgy"), 3504, -1, 2);
    EXPECT_TRUE(refuses([&] { segy::read_model(path("ext.sgy")); }, ErrorKind::io,
                        {"extended textual header", "EndText", "truncated"}));
  }
}

TEST_F(Segy, InconsistentGeometryIsRefusedNamingTheTraces) {
  const Grid3 grid;
  {  // trace 6's crossline patched to trace 5's: a duplicate, and a hole where it was
    write_raw(path("dup.sgy"), grid.file());
    const int64_t header6 = 3600 + 6 * (240 + 4 * grid.nz);
    patch(path("dup.sgy"), header6 + 192, grid.xl0, 4);  // crossline of (j, i) = (1, 1) -> (1, 0)
    EXPECT_TRUE(refuses([&] { segy::read_model(path("dup.sgy")); }, ErrorKind::invalid_argument,
                        {"pre-stack", "inline 102, crossline 7", "one trace per grid column"}));
  }
  {  // a trace left out
    RawFile f = grid.file();
    f.traces.erase(f.traces.begin() + 13);  // (j, i) = (2, 3): inline 104, crossline 10
    write_raw(path("hole.sgy"), f);
    EXPECT_TRUE(refuses([&] { segy::read_model(path("hole.sgy")); }, ErrorKind::invalid_argument,
                        {"no trace has inline 104, crossline 10", "20 traces", "19"}));
  }
  {  // a whole inline missing: 100, 102, 106
    RawFile f = grid.file();
    f.traces.erase(f.traces.begin() + 10, f.traces.begin() + 15);
    write_raw(path("gap.sgy"), f);
    EXPECT_TRUE(refuses([&] { segy::read_model(path("gap.sgy")); }, ErrorKind::invalid_argument,
                        {"inline numbers", "not evenly stepped", "102", "106"}));
  }
  {  // one coordinate 3 m off
    RawFile f = grid.file();
    f.traces[8].cdp_x += 300;
    write_raw(path("bent.sgy"), f);
    EXPECT_TRUE(refuses([&] { segy::read_model(path("bent.sgy")); }, ErrorKind::invalid_argument,
                        {"irregular CDP coordinates", "inline 102, crossline 10", "12.5"}));
  }
  {  // every trace at the same place
    RawFile f = grid.file();
    for (RawTrace& t : f.traces) t.cdp_x = 500, t.cdp_y = 700;
    write_raw(path("same.sgy"), f);
    EXPECT_TRUE(refuses([&] { segy::read_model(path("same.sgy")); }, ErrorKind::invalid_argument,
                        {"share the same CDP coordinates"}));
  }
}

// Found by fuzz/fuzz_segy.cpp under UBSan (fuzz/regressions/segy/): line numbers 2^31 or more apart
// overflowed an int in their steps, undefined behaviour, before they were compared. They are
// refused by name.
TEST_F(Segy, LineNumbersFarApartAreRefusedWithoutOverflow) {
  segy::Grid g;
  g.dim = 2, g.nz = 4, g.ny = 1, g.nx = 3, g.dz = g.dy = g.dx = 10;
  g.v = velocities(12, 5);
  const auto with_crosslines = [&](const std::string& name, std::vector<int64_t> crosslines) {
    segy::write_model(path(name), g);
    for (size_t t = 0; t < crosslines.size(); ++t)  // byte 193 of trace t's header
      patch(path(name), 3600 + int64_t(t) * (240 + 4 * g.nz) + 192, crosslines[t], 4);
    return path(name);
  };
  const fs::path wide = with_crosslines("wide.sgy", {INT32_MIN, 0, INT32_MAX});
  EXPECT_TRUE(refuses([&] { segy::read_model(wide); }, ErrorKind::invalid_argument,
                      {"crossline numbers (bytes 193-196) step by 2147483648", "-2147483648 to 0"}));
  const fs::path uneven = with_crosslines("uneven.sgy", {INT32_MIN, INT32_MIN + 5, INT32_MAX});
  EXPECT_TRUE(refuses([&] { segy::read_model(uneven); }, ErrorKind::invalid_argument,
                      {"not evenly stepped", "-2147483643 is followed by 2147483647", "step is 5"}));
}

// --- writing: what SEG-Y cannot hold ------------------------------------------------------------

TEST_F(Segy, WriteModelRefusesWhatSegyCannotHoldAndLeavesNothing) {
  const segy::Grid g = segy::from_model(wave::Model::constant(2, 4, 1, 5, 2.5, 2000.f));
  EXPECT_TRUE(refuses([&] { segy::write_model(path("a.sgy"), g, 1.0); }, ErrorKind::invalid_argument,
                      {"dz = 2.5 m", "whole number", "--segy-z-unit"}));
  EXPECT_TRUE(refuses([&] { segy::write_model(path("a.sgy"), g, 1e-6); }, ErrorKind::invalid_argument,
                      {"2.5e+06", "65535"}));
  segy::Grid deep = segy::from_model(wave::Model::constant(2, 65536, 1, 1, 1.0, 2000.f));
  EXPECT_TRUE(refuses([&] { segy::write_model(path("a.sgy"), deep); }, ErrorKind::invalid_argument,
                      {"65536", "65535 samples"}));
  EXPECT_TRUE(refuses([&] { segy::write_model(path("no/such/dir/a.sgy"), g); }, ErrorKind::io,
                      {"no/such/dir/a.sgy", "temporary"}));
  EXPECT_TRUE(files().empty()) << files().front();
}

// --- shot records --------------------------------------------------------------------------------

TEST_F(Segy, ShotRecordHeadersReadBackThroughSegyio) {
  segy::ShotRecord r;
  r.dim = 3;
  r.field_record = 42;
  r.dt = 0.0005;  // 500 us: 500.00000000000006 in double
  r.ns = 37;
  r.source = {12.34, 250.0, 301.5};
  r.receivers = {{5.0, 100.0, 0.0}, {5.0, 100.0, 412.25}, {7.5, 400.0, 301.5}};
  r.traces = velocities(size_t(3 * r.ns), 7);
  segy::write_shot(path("shot.sgy"), r);
  EXPECT_EQ(files(), std::vector<std::string>{"shot.sgy"});

  const Reader rd(path("shot.sgy"));
  EXPECT_EQ(rd.binary(SEGY_BIN_INTERVAL), 500);
  EXPECT_EQ(rd.binary(SEGY_BIN_INTERVAL_ORIG), 500);
  EXPECT_EQ(rd.binary(SEGY_BIN_SAMPLES), 37);
  EXPECT_EQ(rd.binary(SEGY_BIN_FORMAT), SEGY_IEEE_FLOAT_4_BYTE);
  EXPECT_EQ(rd.binary(SEGY_BIN_TRACES), 3);
  EXPECT_EQ(rd.binary(SEGY_BIN_MEASUREMENT_SYSTEM), 1);
  EXPECT_EQ(rd.binary(SEGY_BIN_SEGY_REVISION), 0x0100);
  EXPECT_EQ(rd.binary(SEGY_BIN_TRACE_FLAG), 1);
  EXPECT_EQ(rd.binary(SEGY_BIN_EXT_HEADERS), 0);
  int traces = 0;
  ASSERT_EQ(segy_traces(rd.fp, &traces, rd.trace0, rd.trsize), SEGY_OK);
  ASSERT_EQ(traces, 3);
  const std::string text = rd.text();
  for (const char* words :
       {"FDSTENCIL", "FIELD RECORD 42", "3 TRACES", "37 SAMPLES AT 500 US", "SCALAR -100"})
    EXPECT_NE(text.find(words), std::string::npos) << words << " in\n" << text;

  for (int t = 0; t < 3; ++t) {
    SCOPED_TRACE("trace " + std::to_string(t));
    const wave::Point& p = r.receivers[size_t(t)];
    EXPECT_EQ(rd.field(t, SEGY_TR_SEQ_LINE), t + 1);
    EXPECT_EQ(rd.field(t, SEGY_TR_SEQ_FILE), t + 1);
    EXPECT_EQ(rd.field(t, SEGY_TR_FIELD_RECORD), 42);
    EXPECT_EQ(rd.field(t, SEGY_TR_NUMBER_ORIG_FIELD), t + 1);
    EXPECT_EQ(rd.field(t, SEGY_TR_SOURCE_GROUP_SCALAR), -100);
    EXPECT_EQ(rd.field(t, SEGY_TR_SOURCE_X), 30150);
    EXPECT_EQ(rd.field(t, SEGY_TR_SOURCE_Y), 25000);
    EXPECT_EQ(rd.field(t, SEGY_TR_SOURCE_DEPTH), 1234);
    EXPECT_EQ(rd.field(t, SEGY_TR_ELEV_SCALAR), -100);
    EXPECT_EQ(rd.field(t, SEGY_TR_GROUP_X), std::lround(p.x * 100));
    EXPECT_EQ(rd.field(t, SEGY_TR_GROUP_Y), std::lround(p.y * 100));
    EXPECT_EQ(rd.field(t, SEGY_TR_RECV_GROUP_ELEV), -std::lround(p.z * 100));
    EXPECT_EQ(rd.field(t, SEGY_TR_OFFSET), std::lround(std::hypot(p.x - 301.5, p.y - 250.0)));
    EXPECT_EQ(rd.field(t, SEGY_TR_CDP_X), std::lround((p.x + 301.5) * 50));
    EXPECT_EQ(rd.field(t, SEGY_TR_CDP_Y), std::lround((p.y + 250.0) * 50));
    EXPECT_EQ(rd.field(t, SEGY_TR_SAMPLE_COUNT), 37);
    EXPECT_EQ(rd.field(t, SEGY_TR_SAMPLE_INTER), 500);
    EXPECT_EQ(rd.field(t, SEGY_TR_TRACE_ID), 1);
    const std::vector<float> want(r.traces.begin() + t * 37, r.traces.begin() + (t + 1) * 37);
    EXPECT_EQ(first_mismatch(rd.samples(t), want), "");
  }
}

TEST_F(Segy, A2DShotHasNoYAndSignedOffsets) {
  segy::ShotRecord r;
  r.dim = 2;
  r.dt = 0.002;
  r.ns = 5;
  r.source = {10.0, 999.0, 200.0};  // y is ignored in 2D
  r.receivers = {{0.0, 0, 150.0}, {0.0, 0, 260.4}};
  r.traces.assign(10, 1.f);
  segy::write_shot(path("s2.sgy"), r);
  const Reader rd(path("s2.sgy"));
  EXPECT_EQ(rd.field(0, SEGY_TR_OFFSET), -50);
  EXPECT_EQ(rd.field(1, SEGY_TR_OFFSET), 60);
  EXPECT_EQ(rd.field(0, SEGY_TR_SOURCE_Y), 0);
  EXPECT_EQ(rd.field(1, SEGY_TR_GROUP_Y), 0);
  EXPECT_EQ(rd.field(1, SEGY_TR_GROUP_X), 26040);
}

TEST_F(Segy, ShotRecordsSegyCannotHoldAreRefusedBeforeAnythingIsWritten) {
  segy::ShotRecord r;
  r.dim = 2;
  r.dt = 0.001;
  r.ns = 4;
  r.receivers = {{0, 0, 10.0}};
  r.traces.assign(4, 0.f);
  segy::write_shot(path("ok.sgy"), r);
  fs::remove(path("ok.sgy"));

  segy::ShotRecord b = r;
  b.dt = 0.0012345;
  EXPECT_TRUE(refuses([&] { segy::write_shot(path("b.sgy"), b); }, ErrorKind::invalid_argument,
                      {"whole number of microseconds", "1234.5 us"}));
  b = r;
  b.dt = 0.07;
  EXPECT_TRUE(refuses([&] { segy::write_shot(path("b.sgy"), b); }, ErrorKind::invalid_argument,
                      {"70000 us", "65535"}));
  b = r;
  b.ns = 65536;
  b.traces.assign(65536, 0.f);
  EXPECT_TRUE(
      refuses([&] { segy::write_shot(path("b.sgy"), b); }, ErrorKind::invalid_argument, {"65536", "65535"}));
  b = r;
  b.receivers[0].x = 3e7;
  EXPECT_TRUE(refuses([&] { segy::write_shot(path("b.sgy"), b); }, ErrorKind::invalid_argument,
                      {"receiver 0's x", "3e+07", "centimetre"}));
  b = r;
  b.traces.pop_back();
  EXPECT_TRUE(refuses([&] { segy::write_shot(path("b.sgy"), b); }, ErrorKind::invalid_argument,
                      {"3 samples", "1 receivers x 4"}));
  b = r;
  b.receivers.clear();
  b.traces.clear();
  EXPECT_TRUE(refuses([&] { segy::write_shot(path("b.sgy"), b); }, ErrorKind::invalid_argument,
                      {"at least one receiver"}));
  EXPECT_TRUE(files().empty()) << files().front();
}

#else

// The tests above check fdstencil's files with segyio's C API, a second reader; in this build they
// are not compiled, and this one stands for them in the summary (tests/wave/test_segy_read.cpp and
// the corpus test check the reader and writer without it).
TEST(Segy, CheckedWithSegyiosCApiToo) { GTEST_SKIP() << "built without libsegyio, the second reader"; }

#endif  // FDSTENCIL_HAVE_SEGYIO
