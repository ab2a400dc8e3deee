// SEG-Y models and shot records as fdstencil writes them (the layout of their headers; the bytes
// are segy_write_file's), and the conversions between a Grid and the solver's Model. Reading is
// segy_read.cpp's.
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
#include "wave/segy_common.hpp"
#include "wave/segy_write_file.hpp"

namespace fdstencil::segy {

namespace fs = std::filesystem;

namespace {

// A time or interval within 1e-9 (relative) of a whole number of units is that number: 0.0005 s
// is 500.00000000000006 microseconds in double.
constexpr double kWholeTolerance = 1e-9;
// The sample count and sample interval are 2-byte fields; SEG-Y rev 2 reads them unsigned.
constexpr int64_t kMaxU16 = 65535;
// Positions are written in centimetres (scalar -100): finer than any grid a wave solver runs on,
// and +-21474 km within the 32-bit fields.
constexpr int kCentimetres = 100;

using detail::agree;
using detail::bad;
using detail::num;

// The whole number x is within kWholeTolerance of, or -1. Beyond 9e15 (~2^53) a double has no
// fraction left to judge.
int64_t whole(double x) {
  if (!std::isfinite(x) || x < 0 || x > 9e15) return -1;
  const double r = std::round(x);
  return std::abs(x - r) <= kWholeTolerance * std::max(1.0, x) ? int64_t(r) : -1;
}

}  // namespace

// --- conversions and checks ---------------------------------------------------------------------

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
  g.v.assign(m.values().begin(), m.values().end());
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

namespace {

using detail::BinaryHeaderBytes;
using detail::ByteOrder;
using detail::TraceHeaderBytes;
namespace tr = detail::tr;
namespace bin = detail::bin;

// The binary header both kinds of file share: IEEE float, metres, fixed length. Big-endian files
// are rev 1; a little-endian one is rev 2, which allows that byte order and marks it with the
// constant 16909060 at bytes 3297-3300.
BinaryHeaderBytes common_binary(int64_t interval_units, int64_t ns, ByteOrder order) {
  BinaryHeaderBytes b;
  b.order = order;
  b.set(bin::interval, interval_units);
  b.set(bin::interval_original, interval_units);
  b.set(bin::samples, ns);
  b.set(bin::samples_original, ns);
  b.set(bin::format, 5);              // IEEE float
  b.set(bin::measurement_system, 1);  // metres
  b.set(bin::revision_major, order == ByteOrder::little ? 2 : 1);
  b.set(bin::fixed_length, 1);  // every trace has the binary header's sample count
  b.set(bin::extended_text, 0);
  if (order == ByteOrder::little) b.set(bin::byte_order_constant, 0x01020304);
  return b;
}

ByteOrder order_of(bool little_endian) { return little_endian ? ByteOrder::little : ByteOrder::big; }

// A position in centimetres, or an error naming it: the 32-bit fields hold +-21474 km.
int32_t centimetres(double metres, const std::string& what) {
  const double v = std::round(metres * kCentimetres);
  if (!std::isfinite(v) || std::abs(v) > double(INT32_MAX))
    bad(what + " = " + num(metres) +
        " m is beyond what a SEG-Y coordinate holds at centimetre precision (|x| < 21474836 m)");
  return int32_t(v);
}

}  // namespace

namespace {

// How write_model lays a grid out: the sample interval in z units, and the coordinates' scale (units
// a metre) and scalar (bytes 71-72). Throws Error(invalid_argument), `where` first, for a grid
// SEG-Y cannot hold.
struct ModelLayout {
  int64_t interval = 0, scale = 0, scalar = 0;
};

ModelLayout model_layout(const Grid& g, double z_unit, const std::string& where) {
  if (g.dim != 2 && g.dim != 3) bad(where + "a model is 2D or 3D, not " + std::to_string(g.dim) + "D");
  if (g.nz < 1 || g.nx < 1 || g.ny < 1 || (g.dim == 2 && g.ny != 1))
    bad(where + "bad model extents (nz, ny, nx) = (" + std::to_string(g.nz) + ", " + std::to_string(g.ny) +
        ", " + std::to_string(g.nx) + ")");
  for (const auto& [h, axis] :
       {std::pair{g.dz, "dz"}, std::pair{g.dx, "dx"}, std::pair{g.dim == 3 ? g.dy : 1.0, "dy"}})
    if (!(std::isfinite(h) && h > 0))
      bad(where + std::string(axis) + " = " + num(h) + " m: spacings must be finite and positive");
  if (!(std::isfinite(z_unit) && z_unit > 0))
    bad(where + "the z unit must be finite and positive, got " + num(z_unit));
  ModelLayout l;
  l.interval = whole(g.dz / z_unit);
  if (l.interval < 1 || l.interval > kMaxU16)
    bad(where + "dz = " + num(g.dz) + " m is " + num(g.dz / z_unit) + " units of " + num(z_unit) +
        " m, and the SEG-Y sample interval holds a whole number 1..65535 of them (choose another z unit, "
        "--segy-z-unit)");
  if (g.nz > kMaxU16)
    bad(where + "nz = " + std::to_string(g.nz) + ", and a SEG-Y trace holds at most 65535 samples");
  if (g.ny * g.nx > INT_MAX)
    bad(where + std::to_string(g.ny * g.nx) + " traces, more than SEG-Y readers number (2^31 - 1)");

  // Coordinates in the finest of metres, decimetres, ... 0.1 mm that holds both spacings exactly
  // (12.5 m needs decimetres) and the far corner within 32 bits.
  const double extent = std::max(double(g.nx - 1) * g.dx, g.dim == 3 ? double(g.ny - 1) * g.dy : 0.0);
  for (int64_t s = 1; s <= 10000; s *= 10) {
    if (extent * double(s) > double(INT32_MAX)) break;
    l.scale = s;
    if (whole(g.dx * double(s)) >= 0 && (g.dim == 2 || whole(g.dy * double(s)) >= 0)) break;
  }
  if (l.scale == 0)
    bad(where + "the model spans " + num(extent) + " m, beyond what SEG-Y's 32-bit coordinates hold");
  l.scalar = l.scale == 1 ? 1 : -l.scale;
  return l;
}

}  // namespace

void check_model_layout(const Grid& grid, double z_unit, const std::string& what) {
  model_layout(grid, z_unit, what + ": ");
}

void write_model(const fs::path& path, const Grid& g, double z_unit, bool little_endian,
                 const std::string& title) {
  const std::string where = path.string() + ": ";
  if (int64_t(g.v.size()) != g.nz * g.ny * g.nx)
    bad(where + "the grid has " + std::to_string(g.v.size()) + " values for " +
        std::to_string(g.nz * g.ny * g.nx) + " points");
  const ModelLayout l = model_layout(g, z_unit, where);
  const int64_t interval = l.interval, scale = l.scale, scalar = l.scalar;

  char buf[128];
  std::vector<std::string> lines;
  lines.push_back(title + " WRITTEN BY FDSTENCIL " + FDSTENCIL_VERSION);
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
  BinaryHeaderBytes b = common_binary(interval, g.nz, order_of(little_endian));
  if (g.nx <= kMaxU16) b.set(bin::ensemble_traces, g.nx);  // traces per ensemble: one inline's

  detail::SegyWriter w(path, detail::ebcdic_text_header(lines, little_endian ? 2 : 1), b, g.nz);
  std::vector<float> trace(static_cast<size_t>(g.nz));
  for (int64_t j = 0; j < g.ny; ++j)
    for (int64_t i = 0; i < g.nx; ++i) {
      const int64_t t = j * g.nx + i;
      TraceHeaderBytes h;
      h.order = order_of(little_endian);
      h.set(tr::seq_line, i + 1);
      h.set(tr::seq_file, t + 1);
      h.set(tr::ensemble, t + 1);
      h.set(tr::coordinate_scalar, scalar);
      h.set(tr::coordinate_units, 1);  // length (metres, the binary header says)
      h.set(tr::samples, g.nz);
      h.set(tr::interval, interval);
      h.set(tr::cdp_x, std::llround(double(i) * g.dx * double(scale)));
      h.set(tr::cdp_y, g.dim == 3 ? std::llround(double(j) * g.dy * double(scale)) : 0);
      h.set(tr::inline_number, j + 1);
      h.set(tr::crossline_number, i + 1);
      for (int64_t k = 0; k < g.nz; ++k) trace[size_t(k)] = g.v[size_t((k * g.ny + j) * g.nx + i)];
      w.trace(h, trace.data());
    }
  w.commit();
}

void write_shot(const fs::path& path, const ShotRecord& r) {
  const std::string where = path.string() + ": ";
  check_record_timing(r.dt, r.ns, where + "the shot record");
  const int64_t nrec = int64_t(r.receivers.size());
  if (nrec < 1) bad(where + "a shot record needs at least one receiver");
  if (nrec > INT_MAX)
    bad(where + std::to_string(nrec) + " receivers, more than SEG-Y readers number (2^31 - 1)");
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
  const ByteOrder order = order_of(r.little_endian);
  BinaryHeaderBytes b = common_binary(us, r.ns, order);
  // Traces per ensemble: the 2-byte field holds up to 65535; a larger spread writes 0, unknown.
  if (nrec <= kMaxU16) b.set(bin::ensemble_traces, nrec);
  b.set(bin::ensemble_fold, 1);
  b.set(bin::sorting, 1);  // as recorded

  detail::SegyWriter w(path, detail::ebcdic_text_header(lines, r.little_endian ? 2 : 1), b, r.ns);
  for (int64_t k = 0; k < nrec; ++k) {
    const wave::Point& p = r.receivers[size_t(k)];
    TraceHeaderBytes h;
    h.order = order;
    h.set(tr::seq_line, k + 1);
    h.set(tr::seq_file, k + 1);
    h.set(tr::field_record, r.field_record);
    h.set(tr::channel, k + 1);
    h.set(tr::trace_id, 1);  // seismic data
    const double ox = p.x - r.source.x, oy = y_of(p) - y_of(r.source);
    const double offset = std::hypot(ox, oy);
    h.set(tr::offset, std::llround(r.dim == 2 && ox < 0 ? -offset : offset));
    h.set(tr::group_elevation, -int64_t(at[size_t(k)].z));
    h.set(tr::source_depth, sz);
    h.set(tr::elevation_scalar, -kCentimetres);
    h.set(tr::coordinate_scalar, -kCentimetres);
    h.set(tr::source_x, sx);
    h.set(tr::source_y, sy);
    h.set(tr::group_x, at[size_t(k)].x);
    h.set(tr::group_y, at[size_t(k)].y);
    h.set(tr::coordinate_units, 1);  // length (metres, the binary header says)
    h.set(tr::samples, r.ns);
    h.set(tr::interval, us);
    h.set(tr::cdp_x, at[size_t(k)].mid_x);
    h.set(tr::cdp_y, at[size_t(k)].mid_y);
    w.trace(h, r.traces.data() + k * r.ns);
  }
  w.commit();
}

}  // namespace fdstencil::segy
