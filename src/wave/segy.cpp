// SEG-Y velocity models and shot records through libsegyio. segyio does the byte work (headers,
// field positions, EBCDIC, IBM floats, byte order); this file decides what a model is: it reads
// every trace header first, places each trace on the grid by its line numbers, checks the grid is
// whole and regular and the spacings agree with the user's, and only then reads the samples, so a
// bad file is refused before a large model is read. Writing goes to a temporary name, renamed
// into place when complete.
#include "fdstencil/segy.hpp"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <climits>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <system_error>
#include <utility>

#include "fdstencil/error.hpp"
#include "fdstencil/field.hpp"
#include "fdstencil/version.hpp"

#if FDSTENCIL_HAVE_SEGYIO
#include <segyio/segy.h>
#endif

namespace fdstencil::segy {

namespace fs = std::filesystem;

namespace {

// Spacings that agree to 1e-3 (relative) are the same spacing: a coordinate stored in centimetres
// or a sample interval in whole units cannot do better for a spacing of metres, and a real
// disagreement (a model meant at 10 m read at 12.5 m) is far larger.
constexpr double kSpacingTolerance = 1e-3;
// A time or interval within 1e-9 (relative) of a whole number of units is that number: 0.0005 s
// is 500.00000000000006 microseconds in double.
constexpr double kWholeTolerance = 1e-9;
// The sample count and sample interval are 2-byte fields; SEG-Y rev 2 reads them unsigned.
constexpr int64_t kMaxU16 = 65535;
// Positions are written in centimetres (scalar -100): finer than any grid a wave solver runs on,
// and +-21474 km within the 32-bit fields.
constexpr int kCentimetres = 100;

[[noreturn]] void bad(const std::string& what) { throw Error(ErrorKind::invalid_argument, what); }

std::string num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.6g", v);
  return buf;
}

bool agree(double a, double b) {
  return std::abs(a - b) <= kSpacingTolerance * std::max(std::abs(a), std::abs(b));
}

// The whole number x is within kWholeTolerance of, or -1. Beyond 9e15 (~2^53) a double has no
// fraction left to judge.
int64_t whole(double x) {
  if (!std::isfinite(x) || x < 0 || x > 9e15) return -1;
  const double r = std::round(x);
  return std::abs(x - r) <= kWholeTolerance * std::max(1.0, x) ? int64_t(r) : -1;
}

}  // namespace

// --- what works without libsegyio: conversions and checks ----------------------------------------

wave::Model to_model(Grid g) {
  if (g.dim != 2 && g.dim != 3) bad("a SEG-Y model is 2D or 3D, not " + std::to_string(g.dim) + "D");
  const bool same = g.dim == 2 ? agree(g.dz, g.dx) : agree(g.dz, g.dx) && agree(g.dz, g.dy);
  if (!(g.dz > 0) || !(g.dx > 0) || (g.dim == 3 && !(g.dy > 0)) || !same) {
    const std::string spacings =
        g.dim == 3 ? "dz = " + num(g.dz) + " m, dy = " + num(g.dy) + " m, dx = " + num(g.dx) + " m"
                   : "dz = " + num(g.dz) + " m, dx = " + num(g.dx) + " m";
    bad("the model's spacings are " + spacings +
        "; the solver needs one spacing on every axis (resample the model, or check the z unit, "
        "--segy-z-unit)");
  }
  wave::Model m;
  m.dim = g.dim;
  m.nz = g.nz;
  m.ny = g.dim == 3 ? g.ny : 1;
  m.nx = g.nx;
  // The sample interval is exact where coordinates are rounded to their scalar's unit.
  m.h = g.dz;
  m.v = std::move(g.v);
  m.validate();
  return m;
}

Grid from_model(const wave::Model& m) {
  m.validate();
  if (m.z0 != 0 || m.planes() != m.nz)
    throw Error(ErrorKind::invalid_argument,
                "a SEG-Y file holds a whole model, and this one holds planes " + std::to_string(m.z0) + ".." +
                    std::to_string(m.z0 + m.planes() - 1) + " of " + std::to_string(m.nz));
  Grid g;
  g.dim = m.dim;
  g.nz = m.nz;
  g.ny = m.ny;
  g.nx = m.nx;
  g.dz = g.dy = g.dx = m.h;
  g.v = m.v;
  g.traces = m.ny * m.nx;
  return g;
}

void check_record_timing(double dt, int64_t ns, const std::string& what) {
  const int64_t us = whole(dt * 1e6);
  if (us < 1)
    bad(what +
        ": a SEG-Y sample interval is a whole number of microseconds (bytes 3217-3218 and 117-118), and " +
        num(dt) + " s is " + num(dt * 1e6) + " us");
  if (us > kMaxU16)
    bad(what + ": a SEG-Y sample interval is at most 65535 microseconds (a 2-byte field), and " + num(dt) +
        " s is " + std::to_string(us) + " us");
  if (ns < 1 || ns > kMaxU16)
    bad(what + ": a SEG-Y trace holds 1 to 65535 samples (a 2-byte field), and the record has " +
        std::to_string(ns));
}

#if !FDSTENCIL_HAVE_SEGYIO

namespace {
[[noreturn]] void unsupported() {
  throw Error(ErrorKind::unsupported,
              "this fdstencil was built without SEG-Y support (install libsegyio-dev and rebuild)");
}
}  // namespace

bool available() { return false; }
Grid read_model(const fs::path&, const ReadOptions&) { unsupported(); }
void write_model(const fs::path&, const Grid&, double) { unsupported(); }
void write_shot(const fs::path&, const ShotRecord&) { unsupported(); }

#else

bool available() { return true; }

namespace {

// --- reading -------------------------------------------------------------------------------------

struct Closer {
  void operator()(segy_file* f) const { segy_close(f); }
};
using File = std::unique_ptr<segy_file, Closer>;

const char* format_name(int code) {
  switch (code) {
    case SEGY_IBM_FLOAT_4_BYTE: return "IBM float";
    case SEGY_SIGNED_INTEGER_4_BYTE: return "int32";
    case SEGY_SIGNED_SHORT_2_BYTE: return "int16";
    case SEGY_FIXED_POINT_WITH_GAIN_4_BYTE: return "fixed point with gain, obsolete";
    case SEGY_IEEE_FLOAT_4_BYTE: return "IEEE float";
    case SEGY_SIGNED_CHAR_1_BYTE: return "int8";
    default: return nullptr;
  }
}

// The formats whose samples segy_to_native turns into native numbers.
bool readable_format(int code) {
  return code == SEGY_IBM_FLOAT_4_BYTE || code == SEGY_SIGNED_INTEGER_4_BYTE ||
         code == SEGY_SIGNED_SHORT_2_BYTE || code == SEGY_IEEE_FLOAT_4_BYTE ||
         code == SEGY_SIGNED_CHAR_1_BYTE;
}

constexpr const char* kReadableFormats = "1 (IBM float), 2 (int32), 3 (int16), 5 (IEEE float) and 8 (int8)";

int32_t field(const char* header, int which) {
  int32_t v = 0;
  segy_get_field(header, which, &v);
  return v;
}

int32_t bfield(const char* bin, int which) {
  int32_t v = 0;
  segy_get_bfield(bin, which, &v);
  return v;
}

// A 2-byte field read unsigned (segyio 1.8 sign-extends them).
int64_t u16(int32_t v) { return int64_t(v) & 0xFFFF; }

std::string bytes_text(int first, int size) {
  return std::to_string(first) + "-" + std::to_string(first + size - 1);
}

// What the headers of one trace say about where it belongs.
struct TraceInfo {
  int il = 0, xl = 0;
  double x = 0, y = 0;  // CDP coordinates, metres
  double unit = 1;      // metres per coordinate unit (the scalar's)
  bool has_xy = false;
};

// A coordinate scalar (byte 71): positive multiplies, negative divides, 0 means 1.
double scalar_unit(int32_t s) { return s == 0 ? 1.0 : s > 0 ? double(s) : 1.0 / double(-s); }

// The evenly stepped, ascending line numbers of one axis, or an error naming the gap. The steps are
// taken in 64 bits: two 32-bit numbers differ by up to 2^32 - 1, which overflowed an int (found by
// fuzz/fuzz_segy.cpp).
std::vector<int> line_numbers(std::vector<int> all, const std::string& where, const char* which, int byte) {
  std::sort(all.begin(), all.end());
  all.erase(std::unique(all.begin(), all.end()), all.end());
  const int64_t step = all.size() > 1 ? int64_t(all[1]) - all[0] : 0;
  if (step > INT_MAX)  // Grid::il_step and xl_step are ints
    bad(where + std::string(which) + " numbers (bytes " + bytes_text(byte, 4) + ") step by " +
        std::to_string(step) + ", from " + std::to_string(all[0]) + " to " + std::to_string(all[1]) +
        ": more than 2^31 - 1 between neighbouring lines");
  for (size_t k = 2; k < all.size(); ++k)
    if (int64_t(all[k]) - all[k - 1] != step)
      bad(where + std::string(which) + " numbers (bytes " + bytes_text(byte, 4) +
          ") are not evenly stepped: " + std::to_string(all[k - 1]) + " is followed by " +
          std::to_string(all[k]) + " where the step is " + std::to_string(step) + " (a missing " + which +
          "?)");
  return all;
}

int64_t rank(const std::vector<int>& sorted, int value) {
  return int64_t(std::lower_bound(sorted.begin(), sorted.end(), value) - sorted.begin());
}

// The grid's shape and each trace's cell (j nx + i), from the line numbers.
struct Placement {
  int dim = 2;
  int64_t ny = 1, nx = 0;
  std::vector<int64_t> cell;
  std::string order;
  std::vector<int> ils, xls;
  bool along_inlines = false;  // a 2D line of one crossline: x runs along the inline numbers
};

Placement place(const std::vector<TraceInfo>& tr, const std::string& where, const ReadOptions& o) {
  Placement p;
  const int64_t n = int64_t(tr.size());
  const bool numbered =
      std::any_of(tr.begin(), tr.end(), [](const TraceInfo& t) { return t.il != 0 || t.xl != 0; });
  if (!numbered) {  // a 2D line without line numbers: its traces in file order
    p.nx = n;
    for (int64_t t = 0; t < n; ++t) p.cell.push_back(t);
    p.order = "file order";
    return p;
  }
  std::vector<int> il(static_cast<size_t>(n)), xl(static_cast<size_t>(n));
  for (int64_t t = 0; t < n; ++t) il[size_t(t)] = tr[size_t(t)].il, xl[size_t(t)] = tr[size_t(t)].xl;
  p.ils = line_numbers(il, where, "inline", o.iline_byte);
  p.xls = line_numbers(xl, where, "crossline", o.xline_byte);
  const int64_t nil = int64_t(p.ils.size()), nxl = int64_t(p.xls.size());
  if (nil > 1 && nxl > 1) {
    p.dim = 3;
    p.ny = nil;
    p.nx = nxl;
  } else {
    p.along_inlines = nil > 1;
    p.nx = std::max(nil, nxl);
  }
  std::vector<int64_t> owner(size_t(p.ny * p.nx), -1);
  for (int64_t t = 0; t < n; ++t) {
    const int64_t j = p.dim == 3 ? rank(p.ils, tr[size_t(t)].il) : 0;
    const int64_t i = p.dim == 3        ? rank(p.xls, tr[size_t(t)].xl)
                      : p.along_inlines ? rank(p.ils, tr[size_t(t)].il)
                                        : rank(p.xls, tr[size_t(t)].xl);
    const int64_t c = j * p.nx + i;
    if (owner[size_t(c)] >= 0)
      bad(where + "traces " + std::to_string(owner[size_t(c)]) + " and " + std::to_string(t) +
          " both have inline " + std::to_string(tr[size_t(t)].il) + ", crossline " +
          std::to_string(tr[size_t(t)].xl) + " (bytes " + bytes_text(o.iline_byte, 4) + " and " +
          bytes_text(o.xline_byte, 4) + "): a trace is duplicated");
    owner[size_t(c)] = t;
    p.cell.push_back(c);
  }
  for (int64_t c = 0; c < p.ny * p.nx; ++c)
    if (owner[size_t(c)] < 0) {
      const int il_missing = p.dim == 3        ? p.ils[size_t(c / p.nx)]
                             : p.along_inlines ? p.ils[size_t(c)]
                                               : p.ils[0];
      const int xl_missing = p.dim == 3        ? p.xls[size_t(c % p.nx)]
                             : p.along_inlines ? p.xls[0]
                                               : p.xls[size_t(c)];
      bad(where + "no trace has inline " + std::to_string(il_missing) + ", crossline " +
          std::to_string(xl_missing) + ": " + std::to_string(nil) + " inlines x " + std::to_string(nxl) +
          " crosslines need " + std::to_string(nil * nxl) + " traces, the file has " + std::to_string(n) +
          " (a missing trace?)");
    }
  bool in_order = true, transposed = p.dim == 3;
  for (int64_t t = 0; t < n; ++t) {
    in_order = in_order && p.cell[size_t(t)] == t;
    transposed = transposed && p.cell[size_t(t)] == (t % p.ny) * p.nx + t / p.ny;
  }
  p.order = p.dim == 2   ? (in_order ? "line order" : "unsorted")
            : in_order   ? "inline-sorted"
            : transposed ? "crossline-sorted"
                         : "unsorted";
  return p;
}

// The mean distance between neighbours along one axis of the grid (step = 1 along x, nx along y),
// measured end to end on each line so rounded coordinates average out; every neighbour distance
// must agree with it. 0 when the axis has a single point.
double axis_spacing(const std::vector<const TraceInfo*>& at, int64_t lines, int64_t points,
                    int64_t line_stride, int64_t step, const char* neighbours, const std::string& where) {
  if (points < 2) return 0;
  double sum = 0;
  for (int64_t l = 0; l < lines; ++l) {
    const TraceInfo &a = *at[size_t(l * line_stride)],
                    &b = *at[size_t(l * line_stride + (points - 1) * step)];
    sum += std::hypot(b.x - a.x, b.y - a.y) / double(points - 1);
  }
  const double h = sum / double(lines);
  if (!(h > 0))
    bad(where + "neighbouring " + std::string(neighbours) +
        " share the same CDP coordinates (bytes 181-188)");
  for (int64_t l = 0; l < lines; ++l)
    for (int64_t k = 0; k + 1 < points; ++k) {
      const TraceInfo &a = *at[size_t(l * line_stride + k * step)],
                      &b = *at[size_t(l * line_stride + (k + 1) * step)];
      const double d = std::hypot(b.x - a.x, b.y - a.y);
      // A coordinate rounded to its unit moves a distance by up to sqrt(2) units.
      const double tol = std::max(kSpacingTolerance * h, std::sqrt(2.0) * std::max(a.unit, b.unit));
      if (std::abs(d - h) > tol) {
        const auto name = [](const TraceInfo& t) {
          char text[96];
          if (t.il || t.xl)
            std::snprintf(text, sizeof text, "inline %d, crossline %d", t.il, t.xl);
          else
            std::snprintf(text, sizeof text, "the trace at (%.6g, %.6g)", t.x, t.y);
          return std::string(text);
        };
        bad(where + "irregular CDP coordinates (bytes 181-188, scaled by byte 71): " + name(a) + " and " +
            name(b) + " are " + num(d) + " m apart, neighbouring " + neighbours + " " + num(h) +
            " m on average");
      }
    }
  return h;
}

// The file's spacing on one axis reconciled with the user's: the header's value, checked against
// ReadOptions::spacing when both are known; the user's where the header has none.
double settle(double from_header, const std::string& axis, const std::string& source,
              const std::string& why_unknown, const std::string& where, const ReadOptions& o) {
  if (o.spacing > 0) {
    if (from_header > 0 && !agree(from_header, o.spacing))
      bad(where + "--spacing " + num(o.spacing) + " m contradicts the file: its " + source + " gives d" +
          axis + " = " + num(from_header) + " m");
    return o.spacing;
  }
  if (from_header > 0) return from_header;
  if (o.need_spacing)
    bad(where + "the " + axis + " spacing (d" + axis + ") is unknown: " + why_unknown +
        "; give it with --spacing H");
  return 0;
}

void to_floats(int format, const char* raw, int64_t ns, float* out) {
  for (int64_t k = 0; k < ns; ++k) switch (format) {
      case SEGY_IBM_FLOAT_4_BYTE:
      case SEGY_IEEE_FLOAT_4_BYTE: std::memcpy(&out[k], raw + 4 * k, 4); break;
      case SEGY_SIGNED_INTEGER_4_BYTE: {
        int32_t v;
        std::memcpy(&v, raw + 4 * k, 4);
        out[k] = float(v);
        break;
      }
      case SEGY_SIGNED_SHORT_2_BYTE: {
        int16_t v;
        std::memcpy(&v, raw + 2 * k, 2);
        out[k] = float(v);
        break;
      }
      default: out[k] = float(static_cast<signed char>(raw[k]));
    }
}

// --- writing -------------------------------------------------------------------------------------

// A temporary file's name, removed when the owner goes (a constructor that throws included)
// unless kept: what makes a failed write leave nothing.
class TempFile {
 public:
  explicit TempFile(const fs::path& target) {
    // pid keeps concurrent processes apart; the counter keeps threads of one process apart.
    static std::atomic<uint64_t> counter{0};
    path_ = target;
    path_ += ".tmp." + std::to_string(::getpid()) + "." + std::to_string(counter++);
  }
  ~TempFile() {
    if (armed_) {
      std::error_code ec;
      fs::remove(path_, ec);
    }
  }
  TempFile(const TempFile&) = delete;
  TempFile& operator=(const TempFile&) = delete;
  const fs::path& path() const { return path_; }
  void arm() { armed_ = true; }
  void keep() { armed_ = false; }

 private:
  fs::path path_;
  bool armed_ = false;
};

// A SEG-Y file written to a temporary name beside its target and renamed over it by commit().
class Writer {
 public:
  Writer(const fs::path& path, const std::string& text, const char* bin, int64_t ns)
      : path_(path), temp_(path) {
    // "x" refuses an existing file, so we never write through someone else's temporary; segyio
    // then opens the empty file for update.
    FILE* f = std::fopen(temp_.path().c_str(), "wbx");
    if (!f) fail("cannot create the temporary file " + temp_.path().string() + ": " + std::strerror(errno));
    std::fclose(f);
    temp_.arm();
    file_.reset(segy_open(temp_.path().c_str(), "r+b"));
    if (!file_) fail("cannot open " + temp_.path().string() + " for writing: " + std::strerror(errno));
    trsize_ = segy_trsize(SEGY_IEEE_FLOAT_4_BYTE, int(ns));
    ns_ = ns;
    check(segy_write_textheader(file_.get(), 0, text.c_str()), "the textual header");
    check(segy_write_binheader(file_.get(), bin), "the binary header");
    buffer_.resize(size_t(trsize_));
  }

  void trace(int64_t t, const char* header, const float* samples) {
    const long trace0 = SEGY_TEXT_HEADER_SIZE + SEGY_BINARY_HEADER_SIZE;
    check(segy_write_traceheader(file_.get(), int(t), header, trace0, trsize_),
          "trace " + std::to_string(t) + "'s header");
    std::memcpy(buffer_.data(), samples, size_t(ns_) * sizeof(float));
    segy_from_native(SEGY_IEEE_FLOAT_4_BYTE, ns_, buffer_.data());
    check(segy_writetrace(file_.get(), int(t), buffer_.data(), trace0, trsize_),
          "trace " + std::to_string(t));
  }

  void commit() {
    // segy_close flushes and closes: a deferred write error surfaces here.
    const int rc = segy_close(file_.release());
    if (rc != SEGY_OK)
      fail("closing the file failed (segyio error " + std::to_string(rc) + "): " + std::strerror(errno));
    std::error_code ec;
    fs::rename(temp_.path(), path_, ec);
    if (ec) fail("cannot rename " + temp_.path().string() + " into place: " + ec.message());
    temp_.keep();
  }

 private:
  [[noreturn]] void fail(const std::string& what) const {
    throw Error(ErrorKind::io, path_.string() + ": " + what);
  }
  void check(int rc, const std::string& what) const {
    if (rc != SEGY_OK)
      fail("writing " + what + " failed (segyio error " + std::to_string(rc) + "): " + std::strerror(errno));
  }

  fs::path path_;
  TempFile temp_;  // declared before file_: the file is closed before its name is removed
  File file_;
  int trsize_ = 0;
  int64_t ns_ = 0;
  std::vector<char> buffer_;
};

// The 3200-byte textual header: 40 card images "C nn ..." of 80 characters, ASCII here (segyio
// writes EBCDIC), the last two as SEG-Y rev 1 asks.
std::string text_header(std::vector<std::string> lines) {
  lines.resize(38);
  lines.push_back("SEG Y REV1");
  lines.push_back("END TEXTUAL HEADER");
  std::string text;
  for (size_t l = 0; l < lines.size(); ++l) {
    std::string card = (l + 1 < 10 ? "C " : "C") + std::to_string(l + 1) + " " + lines[l];
    card.resize(80, ' ');
    for (char& c : card)
      if (static_cast<unsigned char>(c) > 126 || static_cast<unsigned char>(c) < 32) c = '?';
    text += card;
  }
  return text;
}

void set(char* header, int which, int64_t value) { segy_set_field(header, which, int32_t(value)); }
void bset(char* bin, int which, int64_t value) { segy_set_bfield(bin, which, int32_t(value)); }

// The binary header both kinds of file share: big-endian IEEE float, metres, rev 1, fixed length.
void common_binary(char* bin, int64_t interval_units, int64_t ns) {
  bset(bin, SEGY_BIN_INTERVAL, interval_units);
  bset(bin, SEGY_BIN_INTERVAL_ORIG, interval_units);
  bset(bin, SEGY_BIN_SAMPLES, ns);
  bset(bin, SEGY_BIN_SAMPLES_ORIG, ns);
  bset(bin, SEGY_BIN_FORMAT, SEGY_IEEE_FLOAT_4_BYTE);
  bset(bin, SEGY_BIN_MEASUREMENT_SYSTEM, 1);  // metres
  bset(bin, SEGY_BIN_SEGY_REVISION, 0x0100);  // rev 1.0: major in the high byte, minor in the low
  bset(bin, SEGY_BIN_TRACE_FLAG, 1);          // every trace has the binary header's sample count
  bset(bin, SEGY_BIN_EXT_HEADERS, 0);
}

// A position in centimetres, or an error naming it: the 32-bit fields hold +-21474 km.
int32_t centimetres(double metres, const std::string& what) {
  const double v = std::round(metres * kCentimetres);
  if (!std::isfinite(v) || std::abs(v) > double(INT32_MAX))
    bad(what + " = " + num(metres) +
        " m is beyond what a SEG-Y coordinate holds at centimetre precision (|x| < 21474836 m)");
  return int32_t(v);
}

}  // namespace

// The options' own checks, before the file is touched.
void check_read_options(const ReadOptions& o) {
  if (!(std::isfinite(o.z_unit) && o.z_unit > 0))
    bad("the SEG-Y z unit must be finite and positive, got " + num(o.z_unit));
  if (!(std::isfinite(o.spacing) && o.spacing >= 0))
    bad("--spacing must be finite and positive, got " + num(o.spacing));
  {
    char probe[SEGY_TRACE_HEADER_SIZE] = {};
    int32_t v = 0;
    for (const auto& [byte, flag] : {std::pair{o.iline_byte, "inline"}, std::pair{o.xline_byte, "crossline"}})
      if (segy_get_field(probe, byte, &v) != SEGY_OK)
        bad(std::string("the ") + flag + " byte " + std::to_string(byte) +
            " is not where a trace header field starts (the standard positions: inline 189, crossline 193)");
  }
}

// A SEG-Y file's fixed-length layout as its binary header gives it: the sample format, the
// extended textual headers, the samples per trace, and the trace count the file's size holds.
struct Layout {
  int format = 0;
  int64_t size = 0, trace0 = 0, ns = 0, traces = 0;
  int trsize = 0;  // a trace's sample bytes
  char bin[SEGY_BINARY_HEADER_SIZE] = {};
};

// Opens the file and reads its layout; throws naming what does not fit a readable SEG-Y file.
File open_layout(const fs::path& path, const std::string& where, Layout& l) {
  std::error_code ec;
  if (!fs::exists(path, ec)) throw Error(ErrorKind::io, where + "no such file");
  if (fs::is_directory(path, ec)) throw Error(ErrorKind::io, where + "a directory, not a SEG-Y file");
  const int64_t size = l.size = int64_t(fs::file_size(path, ec));
  if (ec) throw Error(ErrorKind::io, where + "cannot read: " + ec.message());
  const int64_t headers = SEGY_TEXT_HEADER_SIZE + SEGY_BINARY_HEADER_SIZE;
  if (size < headers)
    throw Error(ErrorKind::io,
                where + std::to_string(size) + " bytes, fewer than the " + std::to_string(headers) +
                    " of a SEG-Y file's textual and binary headers: not a SEG-Y file, or truncated");
  File file(segy_open(path.c_str(), "rb"));
  if (!file) throw Error(ErrorKind::io, where + "cannot open: " + std::strerror(errno));
  segy_file* fp = file.get();
  char* bin = l.bin;
  if (segy_binheader(fp, bin) != SEGY_OK) throw Error(ErrorKind::io, where + "cannot read the binary header");

  l.format = int(bfield(bin, SEGY_BIN_FORMAT));
  if (!readable_format(l.format)) {
    const int swapped = ((l.format & 0xFF) << 8) | ((l.format >> 8) & 0xFF);
    if (readable_format(swapped))
      bad(where + "the sample format code (bytes 3225-3226) reads " + std::to_string(l.format) +
          ", which is " + std::to_string(swapped) +
          " byte-swapped: a little-endian file, and only big-endian SEG-Y is read");
    const char* name = format_name(l.format);
    bad(where + "sample format code " + std::to_string(l.format) +
        (name ? std::string(" (") + name + ")" : "") +
        " in the binary header (bytes 3225-3226) is not supported; supported: " + kReadableFormats);
  }
  const int32_t extended = bfield(bin, SEGY_BIN_EXT_HEADERS);
  if (extended < 0)
    bad(where + "a variable number of extended textual headers (bytes 3505-3506 = " +
        std::to_string(extended) + ") is not supported: only a count of them is");
  const int64_t trace0 = l.trace0 = headers + int64_t(extended) * SEGY_TEXT_HEADER_SIZE;
  const std::string after = extended ? " and " + std::to_string(extended) + " extended textual headers" : "";
  if (size < trace0)
    throw Error(ErrorKind::io,
                where + "the binary header announces " + std::to_string(extended) +
                    " extended textual headers (bytes 3505-3506) of 3200 bytes, and the file ends at byte " +
                    std::to_string(size));
  const int64_t ns = l.ns = u16(bfield(bin, SEGY_BIN_SAMPLES));
  if (ns == 0) bad(where + "the binary header (bytes 3221-3222) says 0 samples per trace");
  const int trsize = l.trsize = segy_trsize(l.format, int(ns));
  const int64_t trace_bytes = SEGY_TRACE_HEADER_SIZE + int64_t(trsize);
  const int64_t data = size - trace0, n = l.traces = data / trace_bytes, left = data % trace_bytes;
  if (left != 0)
    throw Error(ErrorKind::io, where + "truncated, or not fixed-length: after the " + std::to_string(trace0) +
                                   "-byte headers" + after + ", " + std::to_string(data) + " bytes hold " +
                                   std::to_string(n) + " whole traces of 240 + " + std::to_string(trsize) +
                                   " bytes (" + std::to_string(ns) + " samples of format " +
                                   std::to_string(l.format) + ") and " + std::to_string(left) +
                                   " bytes are left over");
  if (n == 0) bad(where + "the file holds no traces");
  if (n > INT_MAX) bad(where + std::to_string(n) + " traces, more than segyio numbers (2^31 - 1)");

  return file;
}

// Every trace header, before any sample: each trace's line numbers and CDP coordinates, checked
// against the binary header; the sample interval they agree on into g.
std::vector<TraceInfo> read_trace_headers(segy_file* fp, const Layout& l, const std::string& where,
                                          const ReadOptions& o, Grid& g) {
  const int64_t n = l.traces, ns = l.ns, trace0 = l.trace0;
  const int trsize = l.trsize;
  const char* bin = l.bin;
  std::vector<TraceInfo> traces(static_cast<size_t>(n));
  int64_t trace_interval = 0, interval_trace = -1;
  char header[SEGY_TRACE_HEADER_SIZE];
  for (int64_t t = 0; t < n; ++t) {
    if (segy_traceheader(fp, int(t), header, long(trace0), trsize) != SEGY_OK)
      throw Error(ErrorKind::io, where + "cannot read the header of trace " + std::to_string(t));
    const int64_t tr_ns = u16(field(header, SEGY_TR_SAMPLE_COUNT));
    if (tr_ns != 0 && tr_ns != ns)
      bad(where + "trace " + std::to_string(t) + "'s header says " + std::to_string(tr_ns) +
          " samples (bytes 115-116), the binary header " + std::to_string(ns) + " (bytes 3221-3222)");
    const int64_t tr_dt = u16(field(header, SEGY_TR_SAMPLE_INTER));
    if (tr_dt != 0) {
      if (interval_trace >= 0 && tr_dt != trace_interval)
        bad(where + "trace " + std::to_string(t) + "'s sample interval is " + std::to_string(tr_dt) +
            ", trace " + std::to_string(interval_trace) + "'s " + std::to_string(trace_interval) +
            " (bytes 117-118)");
      if (interval_trace < 0) trace_interval = tr_dt, interval_trace = t;
    }
    TraceInfo& info = traces[size_t(t)];
    info.il = field(header, o.iline_byte);
    info.xl = field(header, o.xline_byte);
    info.unit = scalar_unit(field(header, SEGY_TR_SOURCE_GROUP_SCALAR));
    const int32_t cx = field(header, SEGY_TR_CDP_X), cy = field(header, SEGY_TR_CDP_Y);
    info.has_xy = cx != 0 || cy != 0;
    info.x = double(cx) * info.unit;
    info.y = double(cy) * info.unit;
  }
  const int64_t bin_interval = u16(bfield(bin, SEGY_BIN_INTERVAL));
  if (bin_interval != 0 && trace_interval != 0 && bin_interval != trace_interval)
    bad(where + "the sample interval is " + std::to_string(bin_interval) +
        " in the binary header (bytes 3217-3218) and " + std::to_string(trace_interval) +
        " in the trace headers (bytes 117-118)");
  g.sample_interval = int(bin_interval ? bin_interval : trace_interval);

  return traces;
}

// The grid: its shape, each trace's place, the spacings from the headers and the options.
Placement place_grid(const std::vector<TraceInfo>& traces, const Layout& l, const std::string& where,
                     const ReadOptions& o, Grid& g) {
  const int64_t n = l.traces, ns = l.ns;
  const Placement p = place(traces, where, o);
  g.dim = p.dim;
  g.nz = ns;
  g.ny = p.ny;
  g.nx = p.nx;
  g.traces = n;
  g.order = p.order;
  if (!p.ils.empty()) {
    g.il_first = p.ils.front(), g.il_last = p.ils.back(),
    g.il_step = p.ils.size() > 1 ? p.ils[1] - p.ils[0] : 0;
    g.xl_first = p.xls.front(), g.xl_last = p.xls.back(),
    g.xl_step = p.xls.size() > 1 ? p.xls[1] - p.xls[0] : 0;
  }
  std::vector<const TraceInfo*> at(static_cast<size_t>(g.ny * g.nx));
  for (int64_t t = 0; t < n; ++t) at[size_t(p.cell[size_t(t)])] = &traces[size_t(t)];
  g.coordinates = std::any_of(traces.begin(), traces.end(), [](const TraceInfo& t) { return t.has_xy; });
  g.x0 = at[0]->x;
  g.y0 = at[0]->y;
  const std::string z_source = "sample interval " + std::to_string(g.sample_interval) +
                               " (bytes 3217-3218, 117-118) x z unit " + num(o.z_unit) + " m";
  g.dz = settle(
      double(g.sample_interval) * o.z_unit, "z", z_source,
      "the sample interval is 0 in the binary header (bytes 3217-3218) and the trace headers (bytes 117-118)",
      where, o);
  const char* x_neighbours = p.dim == 3 || !p.along_inlines ? "crosslines" : "inlines";
  const double hx = g.coordinates ? axis_spacing(at, g.ny, g.nx, g.nx, 1, x_neighbours, where) : 0;
  const double hy = g.coordinates && g.dim == 3 ? axis_spacing(at, g.nx, g.ny, 1, g.nx, "inlines", where) : 0;
  const std::string no_xy =
      g.coordinates ? "" : "the CDP coordinates (bytes 181-188) are zero in every trace";
  if (g.nx == 1) {  // a single trace: no neighbour to measure, and no horizontal extent to need one
    g.dx = o.spacing > 0 ? o.spacing : g.dz;
  } else {
    g.dx = settle(hx, "x", std::string("CDP coordinates (bytes 181-188) of neighbouring ") + x_neighbours,
                  no_xy, where, o);
  }
  g.dy = g.dim == 3
             ? settle(hy, "y", "CDP coordinates (bytes 181-188) of neighbouring inlines", no_xy, where, o)
             : g.dx;

  return p;
}

// The samples, each trace into its column of g.v.
void read_samples(segy_file* fp, const Layout& l, const Placement& p, const std::string& where, Grid& g) {
  const int64_t n = l.traces, ns = l.ns, trace0 = l.trace0;
  const int trsize = l.trsize;
  ensure_host_memory(g.nz * g.ny * g.nx * int64_t(sizeof(float)), "the SEG-Y model");
  g.v.assign(size_t(g.nz * g.ny * g.nx), 0.f);
  std::vector<char> raw(static_cast<size_t>(trsize));
  std::vector<float> samples(static_cast<size_t>(ns));
  for (int64_t t = 0; t < n; ++t) {
    if (segy_readtrace(fp, int(t), raw.data(), long(trace0), trsize) != SEGY_OK)
      throw Error(ErrorKind::io, where + "cannot read trace " + std::to_string(t));
    segy_to_native(g.format, ns, raw.data());
    to_floats(g.format, raw.data(), ns, samples.data());
    const int64_t c = p.cell[size_t(t)];
    for (int64_t k = 0; k < ns; ++k) g.v[size_t(k * g.ny * g.nx + c)] = samples[size_t(k)];
  }
}

Grid read_model(const fs::path& path, const ReadOptions& o) {
  const std::string where = path.string() + ": ";
  check_read_options(o);
  Layout l;
  File file = open_layout(path, where, l);
  Grid g;
  g.format = l.format;
  const std::vector<TraceInfo> traces = read_trace_headers(file.get(), l, where, o, g);
  const Placement p = place_grid(traces, l, where, o, g);
  read_samples(file.get(), l, p, where, g);
  return g;
}

void write_model(const fs::path& path, const Grid& g, double z_unit) {
  const std::string where = path.string() + ": ";
  if (g.dim != 2 && g.dim != 3) bad(where + "a model is 2D or 3D, not " + std::to_string(g.dim) + "D");
  if (g.nz < 1 || g.nx < 1 || g.ny < 1 || (g.dim == 2 && g.ny != 1))
    bad(where + "bad model extents (nz, ny, nx) = (" + std::to_string(g.nz) + ", " + std::to_string(g.ny) +
        ", " + std::to_string(g.nx) + ")");
  if (int64_t(g.v.size()) != g.nz * g.ny * g.nx)
    bad(where + "the grid has " + std::to_string(g.v.size()) + " values for " +
        std::to_string(g.nz * g.ny * g.nx) + " points");
  for (const auto& [h, axis] :
       {std::pair{g.dz, "dz"}, std::pair{g.dx, "dx"}, std::pair{g.dim == 3 ? g.dy : 1.0, "dy"}})
    if (!(std::isfinite(h) && h > 0))
      bad(where + std::string(axis) + " = " + num(h) + " m: spacings must be finite and positive");
  if (!(std::isfinite(z_unit) && z_unit > 0))
    bad(where + "the z unit must be finite and positive, got " + num(z_unit));
  const int64_t interval = whole(g.dz / z_unit);
  if (interval < 1 || interval > kMaxU16)
    bad(where + "dz = " + num(g.dz) + " m is " + num(g.dz / z_unit) + " units of " + num(z_unit) +
        " m, and the SEG-Y sample interval holds a whole number 1..65535 of them (choose another z unit, "
        "--segy-z-unit)");
  if (g.nz > kMaxU16)
    bad(where + "nz = " + std::to_string(g.nz) + ", and a SEG-Y trace holds at most 65535 samples");
  if (g.ny * g.nx > INT_MAX)
    bad(where + std::to_string(g.ny * g.nx) + " traces, more than segyio numbers (2^31 - 1)");

  // Coordinates in the finest of metres, decimetres, ... 0.1 mm that holds both spacings exactly
  // (12.5 m needs decimetres) and the far corner within 32 bits.
  const double extent = std::max(double(g.nx - 1) * g.dx, g.dim == 3 ? double(g.ny - 1) * g.dy : 0.0);
  int64_t scale = 0;
  for (int64_t s = 1; s <= 10000; s *= 10) {
    if (extent * double(s) > double(INT32_MAX)) break;
    scale = s;
    if (whole(g.dx * double(s)) >= 0 && (g.dim == 2 || whole(g.dy * double(s)) >= 0)) break;
  }
  if (scale == 0)
    bad(where + "the model spans " + num(extent) + " m, beyond what SEG-Y's 32-bit coordinates hold");
  const int64_t scalar = scale == 1 ? 1 : -scale;

  char buf[128];
  std::vector<std::string> lines;
  lines.push_back(std::string("VELOCITY MODEL (M/S) WRITTEN BY FDSTENCIL ") + FDSTENCIL_VERSION);
  std::snprintf(buf, sizeof buf, "%dD, (NZ, NY, NX) = (%lld, %lld, %lld), IEEE FLOAT", g.dim,
                static_cast<long long>(g.nz), static_cast<long long>(g.ny), static_cast<long long>(g.nx));
  lines.push_back(buf);
  std::snprintf(buf, sizeof buf, "Z: DEPTH, DZ = %g M = SAMPLE INTERVAL %lld X %g M", g.dz,
                static_cast<long long>(interval), z_unit);
  lines.push_back(buf);
  std::snprintf(buf, sizeof buf, "Y: INLINES 1..%lld (BYTES 189-192), DY = %g M",
                static_cast<long long>(g.ny), g.dim == 3 ? g.dy : 0.0);
  lines.push_back(buf);
  std::snprintf(buf, sizeof buf, "X: CROSSLINES 1..%lld (BYTES 193-196), DX = %g M",
                static_cast<long long>(g.nx), g.dx);
  lines.push_back(buf);
  std::snprintf(buf, sizeof buf, "CDP X, Y (BYTES 181-188) = (I DX, J DY) M, SCALAR %lld (BYTES 71-72)",
                static_cast<long long>(scalar));
  lines.push_back(buf);
  const std::string text = text_header(lines);

  char bin[SEGY_BINARY_HEADER_SIZE] = {};
  common_binary(bin, interval, g.nz);
  if (g.nx <= kMaxU16) bset(bin, SEGY_BIN_TRACES, g.nx);  // traces per ensemble: one inline's

  Writer w(path, text, bin, g.nz);
  std::vector<float> trace(static_cast<size_t>(g.nz));
  for (int64_t j = 0; j < g.ny; ++j)
    for (int64_t i = 0; i < g.nx; ++i) {
      const int64_t t = j * g.nx + i;
      char h[SEGY_TRACE_HEADER_SIZE] = {};
      set(h, SEGY_TR_SEQ_LINE, i + 1);
      set(h, SEGY_TR_SEQ_FILE, t + 1);
      set(h, SEGY_TR_ENSEMBLE, t + 1);
      set(h, SEGY_TR_SOURCE_GROUP_SCALAR, scalar);
      set(h, SEGY_TR_COORD_UNITS, 1);  // length (metres, the binary header says)
      set(h, SEGY_TR_SAMPLE_COUNT, g.nz);
      set(h, SEGY_TR_SAMPLE_INTER, interval);
      set(h, SEGY_TR_CDP_X, std::llround(double(i) * g.dx * double(scale)));
      set(h, SEGY_TR_CDP_Y, g.dim == 3 ? std::llround(double(j) * g.dy * double(scale)) : 0);
      set(h, SEGY_TR_INLINE, j + 1);
      set(h, SEGY_TR_CROSSLINE, i + 1);
      for (int64_t k = 0; k < g.nz; ++k) trace[size_t(k)] = g.v[size_t((k * g.ny + j) * g.nx + i)];
      w.trace(t, h, trace.data());
    }
  w.commit();
}

void write_shot(const fs::path& path, const ShotRecord& r) {
  const std::string where = path.string() + ": ";
  check_record_timing(r.dt, r.ns, where + "the shot record");
  const int64_t nrec = int64_t(r.receivers.size());
  if (nrec < 1) bad(where + "a shot record needs at least one receiver");
  if (nrec > INT_MAX) bad(where + std::to_string(nrec) + " receivers, more than segyio numbers (2^31 - 1)");
  if (int64_t(r.traces.size()) != nrec * r.ns)
    bad(where + "the record has " + std::to_string(r.traces.size()) + " samples for " + std::to_string(nrec) +
        " receivers x " + std::to_string(r.ns));
  const int64_t us = whole(r.dt * 1e6);
  const auto y_of = [&](const wave::Point& p) { return r.dim == 3 ? p.y : 0.0; };
  // Every position checked before the file is created.
  const int32_t sx = centimetres(r.source.x, where + "the source's x");
  const int32_t sy = centimetres(y_of(r.source), where + "the source's y");
  const int32_t sz = centimetres(r.source.z, where + "the source's depth");
  struct Position {
    int32_t x, y, z, mid_x, mid_y;
  };
  std::vector<Position> at;
  for (int64_t k = 0; k < nrec; ++k) {
    const wave::Point& p = r.receivers[size_t(k)];
    const std::string what = where + "receiver " + std::to_string(k) + "'s ";
    at.push_back({centimetres(p.x, what + "x"), centimetres(y_of(p), what + "y"),
                  centimetres(p.z, what + "depth"), centimetres((p.x + r.source.x) / 2, what + "midpoint x"),
                  centimetres((y_of(p) + y_of(r.source)) / 2, what + "midpoint y")});
  }

  char buf[128];
  std::vector<std::string> lines;
  lines.push_back(std::string("SHOT RECORD WRITTEN BY FDSTENCIL ") + FDSTENCIL_VERSION +
                  " (ACOUSTIC FINITE DIFFERENCES)");
  std::snprintf(buf, sizeof buf, "FIELD RECORD %d: %lld TRACES, %lld SAMPLES AT %lld US, IEEE FLOAT",
                r.field_record, static_cast<long long>(nrec), static_cast<long long>(r.ns),
                static_cast<long long>(us));
  lines.push_back(buf);
  std::snprintf(buf, sizeof buf, "%dD. SOURCE AT Z %g, Y %g, X %g M", r.dim, r.source.z, y_of(r.source),
                r.source.x);
  lines.push_back(buf);
  lines.push_back("POSITIONS: METRES FROM THE MODEL'S FIRST GRID POINT, Z DOWN");
  lines.push_back("SOURCE X,Y BYTES 73,77; GROUP X,Y 81,85; MIDPOINT CDP X,Y 181,185");
  lines.push_back("  IN CM: SCALAR -100 AT BYTE 71");
  lines.push_back("SOURCE DEPTH 49, GROUP ELEVATION 41 (= -DEPTH) IN CM: SCALAR -100 AT 69");
  lines.push_back("OFFSET 37: HORIZONTAL, WHOLE METRES (2D: NEGATIVE WHERE X < SOURCE X)");
  lines.push_back("CHANNEL 13 AND TRACE SEQUENCE 1, 5: 1..N IN RECEIVER ORDER");
  lines.push_back("AMPLITUDE: U OF U_TT = V^2 LAP U + V^2 F(T) DELTA(X - XS)");
  const std::string text = text_header(lines);

  char bin[SEGY_BINARY_HEADER_SIZE] = {};
  common_binary(bin, us, r.ns);
  // Traces per ensemble: the 2-byte field holds up to 65535; a larger spread writes 0, unknown.
  if (nrec <= kMaxU16) bset(bin, SEGY_BIN_TRACES, nrec);
  bset(bin, SEGY_BIN_ENSEMBLE_FOLD, 1);
  bset(bin, SEGY_BIN_SORTING_CODE, 1);  // as recorded

  Writer w(path, text, bin, r.ns);
  for (int64_t k = 0; k < nrec; ++k) {
    const wave::Point& p = r.receivers[size_t(k)];
    char h[SEGY_TRACE_HEADER_SIZE] = {};
    set(h, SEGY_TR_SEQ_LINE, k + 1);
    set(h, SEGY_TR_SEQ_FILE, k + 1);
    set(h, SEGY_TR_FIELD_RECORD, r.field_record);
    set(h, SEGY_TR_NUMBER_ORIG_FIELD, k + 1);
    set(h, SEGY_TR_TRACE_ID, 1);  // seismic data
    const double ox = p.x - r.source.x, oy = y_of(p) - y_of(r.source);
    const double offset = std::hypot(ox, oy);
    set(h, SEGY_TR_OFFSET, std::llround(r.dim == 2 && ox < 0 ? -offset : offset));
    set(h, SEGY_TR_RECV_GROUP_ELEV, -int64_t(at[size_t(k)].z));
    set(h, SEGY_TR_SOURCE_DEPTH, sz);
    set(h, SEGY_TR_ELEV_SCALAR, -kCentimetres);
    set(h, SEGY_TR_SOURCE_GROUP_SCALAR, -kCentimetres);
    set(h, SEGY_TR_SOURCE_X, sx);
    set(h, SEGY_TR_SOURCE_Y, sy);
    set(h, SEGY_TR_GROUP_X, at[size_t(k)].x);
    set(h, SEGY_TR_GROUP_Y, at[size_t(k)].y);
    set(h, SEGY_TR_COORD_UNITS, 1);  // length (metres, the binary header says)
    set(h, SEGY_TR_SAMPLE_COUNT, r.ns);
    set(h, SEGY_TR_SAMPLE_INTER, us);
    set(h, SEGY_TR_CDP_X, at[size_t(k)].mid_x);
    set(h, SEGY_TR_CDP_Y, at[size_t(k)].mid_y);
    w.trace(k, h, r.traces.data() + k * r.ns);
  }
  w.commit();
}

#endif  // FDSTENCIL_HAVE_SEGYIO

}  // namespace fdstencil::segy
