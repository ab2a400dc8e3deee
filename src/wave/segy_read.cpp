// SEG-Y read without libsegyio: the file layer (segy_file.hpp) gives the layout and the traces in
// either byte order and every sample format; this file decides what they are. A model: every
// trace header is read first, each trace placed on the grid by its line numbers, the grid checked
// whole and regular and its spacings against the user's, and only then the samples read, so a bad
// file is refused before a large model is read. A gather (read_traces): the traces in file order
// with the geometry their headers give.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "fdstencil/field.hpp"
#include "fdstencil/segy.hpp"
#include "wave/segy_common.hpp"
#include "wave/segy_file.hpp"

namespace fdstencil::segy {

namespace fs = std::filesystem;
using detail::agree;
using detail::bad;
using detail::kSpacingTolerance;
using detail::num;
using detail::TraceFile;

namespace {

// Trace header fields: position, size (the standard's, rev 1).
constexpr int kTrFieldRecord = 9, kTrChannel = 13, kTrCdp = 21, kTrOffset = 37, kTrGroupElevation = 41;
constexpr int kTrSourceDepth = 49, kTrElevationScalar = 69, kTrCoordinateScalar = 71, kTrSourceX = 73;
constexpr int kTrSourceY = 77, kTrGroupX = 81, kTrGroupY = 85, kTrDelay = 109, kTrCdpX = 181, kTrCdpY = 185;
constexpr int kTrTimeScalar = 215;
// Where rev 1's 4-byte trace header fields start: line numbers are read from one of them, as
// segyio reads a field only where the standard puts one.
constexpr int kFourByteFields[] = {1,  5,  9,  13, 17, 21,  25,  37,  41,  45,  49,  53,  57,  61,
                                   65, 73, 77, 81, 85, 169, 181, 185, 189, 193, 197, 205, 219, 225};

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

// A scalar (bytes 69, 71, 215): positive multiplies, negative divides, 0 means 1.
double scalar_unit(int64_t s) { return s == 0 ? 1.0 : s > 0 ? double(s) : 1.0 / double(-s); }

// The evenly stepped, ascending line numbers of one axis, or an error naming the gap.
std::vector<int> line_numbers(std::vector<int> all, const std::string& where, const char* which, int byte) {
  std::sort(all.begin(), all.end());
  all.erase(std::unique(all.begin(), all.end()), all.end());
  // Differences in 64 bits: line numbers are any 32-bit values.
  const auto step = [&](size_t k) { return int64_t(all[k]) - int64_t(all[k - 1]); };
  // Grid::il_step and xl_step are ints, as the numbers are.
  if (all.size() > 1 && step(1) > INT32_MAX)
    bad(where + std::string(which) + " numbers (bytes " + bytes_text(byte, 4) + ") step by " +
        std::to_string(step(1)) + ", from " + std::to_string(all[0]) + " to " + std::to_string(all[1]) +
        ": more than a 32-bit step (are the line numbers at other bytes?)");
  for (size_t k = 2; k < all.size(); ++k)
    if (step(k) != step(1))
      bad(where + std::string(which) + " numbers (bytes " + bytes_text(byte, 4) +
          ") are not evenly stepped: " + std::to_string(all[k - 1]) + " is followed by " +
          std::to_string(all[k]) + " where the step is " + std::to_string(step(1)) + " (a missing " + which +
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
  // A grid far larger than the traces is no model (numbers that both grow along a line, such as a
  // CDP and a shotpoint): refused before a cell per (inline, crossline) pair is allocated.
  if (nil > 1 && nxl > 1 && nil * nxl > 2 * n)
    bad(where + std::to_string(nil) + " inline numbers x " + std::to_string(nxl) +
        " crossline numbers (bytes " + bytes_text(o.iline_byte, 4) + ", " + bytes_text(o.xline_byte, 4) +
        ") make " + std::to_string(nil * nxl) + " grid columns for " + std::to_string(n) +
        " traces: not an inline x crossline grid (are the line numbers at other bytes? --segy-inline-byte, "
        "--segy-crossline-byte)");
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
          bytes_text(o.xline_byte, 4) +
          "): a duplicated trace, or a pre-stack file, and a model has one trace "
          "per (inline, crossline); `fdstencil segy info` shows the file's geometry");
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
            " m on average: a velocity model is a regular grid (resample it onto one and give it as .npy, or "
            "write that with `fdstencil segy from-npy`)");
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

// The geometry trace header `h` gives (TraceGeometry), with the line numbers at the user's bytes.
TraceGeometry geometry_of(const TraceFile& f, const unsigned char* h, const ReadOptions& o) {
  TraceGeometry g;
  const auto get = [&](int position, int size) { return f.field(h, position, size); };
  g.field_record = int32_t(get(kTrFieldRecord, 4));
  g.channel = int32_t(get(kTrChannel, 4));
  g.cdp = int32_t(get(kTrCdp, 4));
  g.il = int32_t(get(o.iline_byte, 4));
  g.xl = int32_t(get(o.xline_byte, 4));
  g.offset = double(get(kTrOffset, 4));
  const double xy = scalar_unit(get(kTrCoordinateScalar, 2)), z = scalar_unit(get(kTrElevationScalar, 2));
  g.sx = double(get(kTrSourceX, 4)) * xy;
  g.sy = double(get(kTrSourceY, 4)) * xy;
  g.gx = double(get(kTrGroupX, 4)) * xy;
  g.gy = double(get(kTrGroupY, 4)) * xy;
  g.cdp_x = double(get(kTrCdpX, 4)) * xy;
  g.cdp_y = double(get(kTrCdpY, 4)) * xy;
  g.source_depth = double(get(kTrSourceDepth, 4)) * z;
  g.group_elevation = double(get(kTrGroupElevation, 4)) * z;
  g.delay = double(get(kTrDelay, 2)) * scalar_unit(get(kTrTimeScalar, 2)) * 1e-3;
  g.coordinate_unit = xy;
  return g;
}

// Post-stack (one trace per (inline, crossline), or a line in file order) or pre-stack (line
// numbers shared by several traces, or traces whose source and receiver positions differ), with
// the reason a person can check.
std::pair<std::string, std::string> classify(const std::vector<TraceGeometry>& tr) {
  const bool numbered =
      std::any_of(tr.begin(), tr.end(), [](const TraceGeometry& t) { return t.il || t.xl; });
  if (numbered) {
    std::set<std::pair<int32_t, int32_t>> seen;
    for (const TraceGeometry& t : tr)
      if (!seen.insert({t.il, t.xl}).second)
        return {"pre-stack",
                "traces share inline " + std::to_string(t.il) + ", crossline " + std::to_string(t.xl)};
    return {"post-stack", "one trace per (inline, crossline)"};
  }
  for (const TraceGeometry& t : tr)
    if (t.offset != 0 || t.sx != t.gx || t.sy != t.gy)
      return {"pre-stack",
              "no line numbers, and the traces' source and receiver positions (bytes 73-88) or "
              "offsets (bytes 37-40) differ"};
  return {"post-stack", "no line numbers, one trace per position in file order"};
}

void check_read_options(const ReadOptions& o) {
  if (!(std::isfinite(o.z_unit) && o.z_unit > 0))
    bad("the SEG-Y z unit must be finite and positive, got " + num(o.z_unit));
  if (!(std::isfinite(o.spacing) && o.spacing >= 0))
    bad("--spacing must be finite and positive, got " + num(o.spacing));
  for (const auto& [byte, flag] : {std::pair{o.iline_byte, "inline"}, std::pair{o.xline_byte, "crossline"}})
    if (std::find(std::begin(kFourByteFields), std::end(kFourByteFields), byte) == std::end(kFourByteFields))
      bad(std::string("the ") + flag + " byte " + std::to_string(byte) +
          " is not where a 4-byte trace header field starts (1, 5, 9, 13, 17, 21, 25, 37-65 by 4, 73-85 by "
          "4, "
          "169, 181-197 by 4, 205, 219, 225; the standard positions: inline 189, crossline 193)");
}

const char* order_name(detail::ByteOrder o) {
  return o == detail::ByteOrder::big ? "big-endian" : "little-endian";
}

// Every trace's header, in file order.
std::vector<TraceGeometry> read_geometry(TraceFile& f, const ReadOptions& o) {
  const int64_t n = f.layout().traces;
  ensure_host_memory(n * int64_t(sizeof(TraceGeometry)), "the SEG-Y file's trace headers");
  std::vector<TraceGeometry> out(static_cast<size_t>(n));
  unsigned char h[detail::kTraceHeaderBytes];
  for (int64_t t = 0; t < n; ++t) {
    f.header(t, h);
    out[size_t(t)] = geometry_of(f, h, o);
  }
  return out;
}

// The grid: its shape, each trace's place, the spacings from the headers and the options.
Placement place_grid(const std::vector<TraceInfo>& traces, const detail::FileLayout& l,
                     const std::string& where, const ReadOptions& o, Grid& g) {
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
    g.il_step = p.ils.size() > 1 ? int(int64_t(p.ils[1]) - p.ils[0]) : 0;
    g.xl_first = p.xls.front(), g.xl_last = p.xls.back(),
    g.xl_step = p.xls.size() > 1 ? int(int64_t(p.xls[1]) - p.xls[0]) : 0;
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
void read_samples(TraceFile& f, const Placement& p, Grid& g) {
  const int64_t n = f.layout().traces, ns = f.layout().ns;
  ensure_host_memory(g.nz * g.ny * g.nx * int64_t(sizeof(float)), "the SEG-Y model");
  g.v.assign(size_t(g.nz * g.ny * g.nx), 0.f);
  std::vector<float> samples(static_cast<size_t>(ns));
  for (int64_t t = 0; t < n; ++t) {
    f.samples(t, samples.data());
    const int64_t c = p.cell[size_t(t)];
    for (int64_t k = 0; k < ns; ++k) g.v[size_t(k * g.ny * g.nx + c)] = samples[size_t(k)];
  }
}

std::vector<TraceInfo> infos_of(const std::vector<TraceGeometry>& geometry) {
  std::vector<TraceInfo> out;
  out.reserve(geometry.size());
  for (const TraceGeometry& t : geometry)
    out.push_back({t.il, t.xl, t.cdp_x, t.cdp_y, t.coordinate_unit, t.cdp_x != 0 || t.cdp_y != 0});
  return out;
}

}  // namespace

Grid read_model(const fs::path& path, const ReadOptions& o) {
  const std::string where = path.string() + ": ";
  check_read_options(o);
  TraceFile f(path, where);
  const detail::FileLayout& l = f.layout();
  const std::vector<TraceGeometry> geometry = read_geometry(f, o);
  const auto [kind, why] = classify(geometry);
  if (kind == "pre-stack")
    bad(where + "a pre-stack file (" + why +
        "), not a velocity model: a model has one trace per grid column, placed by its inline and "
        "crossline numbers (bytes " +
        bytes_text(o.iline_byte, 4) + ", " + bytes_text(o.xline_byte, 4) +
        ") or in file order. `fdstencil segy info` shows the file's geometry; if its line numbers sit at "
        "other "
        "bytes, give them with --segy-inline-byte and --segy-crossline-byte, else convert the model to a "
        "regular grid as .npy (`fdstencil segy from-npy` writes it back as SEG-Y)");
  Grid g;
  g.format = l.format;
  g.sample_interval = int(l.sample_interval);
  g.byte_order = order_name(l.order);
  g.revision = l.revision;
  g.warnings = l.warnings;
  const Placement p = place_grid(infos_of(geometry), l, where, o, g);
  read_samples(f, p, g);
  return g;
}

const char* sample_format_name(int code) {
  const detail::SampleFormat* f = detail::sample_format(code);
  return f ? f->name : "";
}

Traces read_traces(const fs::path& path, const ReadOptions& o, bool headers_only) {
  const std::string where = path.string() + ": ";
  check_read_options(o);
  TraceFile f(path, where);
  const detail::FileLayout& l = f.layout();
  Traces r;
  r.format = l.format;
  r.byte_order = order_name(l.order);
  r.revision = l.revision;
  r.ns = l.ns;
  r.sample_interval = l.sample_interval;
  r.extended_text_headers = l.extended_text;
  r.warnings = l.warnings;
  r.geometry = read_geometry(f, o);
  std::tie(r.kind, r.kind_reason) = classify(r.geometry);
  if (headers_only) return r;
  ensure_host_memory(l.traces * l.ns * int64_t(sizeof(float)), "the SEG-Y file's samples");
  r.samples.resize(size_t(l.traces * l.ns));
  for (int64_t t = 0; t < l.traces; ++t) f.samples(t, r.samples.data() + t * l.ns);
  return r;
}

}  // namespace fdstencil::segy
