// fdstencil segy: SEG-Y velocity models on their own. `info` shows what a file holds as the
// solver would read it (the first thing to run on a model from elsewhere), `to-npy` and
// `from-npy` convert, so a SEG-Y model can be made and checked on a machine without Python's
// segyio. Every file is read and checked whole before anything is written, and written atomically.
#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <limits>
#include <memory>
#include <set>

#include "commands.hpp"
#include "fdstencil/error.hpp"
#include "fdstencil/field.hpp"
#include "fdstencil/npy.hpp"
#include "fdstencil/wave.hpp"

namespace fdstencil::cli {

namespace {

[[noreturn]] void bad(const std::string& message) { throw Error(ErrorKind::invalid_argument, message); }

double positive_number(const std::string& text, const std::string& flag) {
  double v = 0;
  const char* first = text.data() + (!text.empty() && text[0] == '+');
  const auto [p, ec] = std::from_chars(first, text.data() + text.size(), v);
  if (text.empty() || ec != std::errc() || p != text.data() + text.size() || !std::isfinite(v))
    bad(flag + ": '" + text + "' is not a finite number");
  if (!(v > 0)) bad(flag + ": " + text + " must be positive");
  return v;
}

int header_byte(const std::string& text, const std::string& flag) {
  int v = 0;
  const auto [p, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  // A trace header is 240 bytes and a 4-byte field starts at byte 237 at the latest.
  if (text.empty() || ec != std::errc() || p != text.data() + text.size() || v < 1 || v > 237)
    bad(flag + ": '" + text +
        "' is not a trace header byte position, 1..237 (SEG-Y rev 1: inline 189, crossline 193)");
  return v;
}

std::string number_text(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.6g", v);
  return buf;
}

struct Options {
  std::string file, out;
  std::string spacing, z_unit, iline_byte, xline_byte;
  bool json = false, traces = false, little_endian = false, trace_headers = false, overwrite = false;
};

void add_read_flags(CLI::App* cmd, Options& o) {
  cmd->add_option("--spacing", o.spacing,
                  "Grid spacing in metres where the headers give none (no CDP coordinates, a zero sample "
                  "interval); where they do, it must agree with them")
      ->type_name("H");
  cmd->add_option(
         "--segy-z-unit", o.z_unit,
         "Metres per unit of the sample interval field (default 0.001: depth models store millimetres there)")
      ->type_name("M");
  cmd->add_option("--segy-inline-byte", o.iline_byte, "Trace header byte of the inline number (default 189)")
      ->type_name("B");
  cmd->add_option("--segy-crossline-byte", o.xline_byte,
                  "Trace header byte of the crossline number (default 193)")
      ->type_name("B");
}

// A pre-stack file's geometry, from its trace headers: what `segy info` says of a gather.
nlohmann::json gather_json(const segy::Traces& t) {
  using nlohmann::json;
  std::set<int32_t> records;
  double lo[4] = {INFINITY, INFINITY, INFINITY, INFINITY},
         hi[4] = {-INFINITY, -INFINITY, -INFINITY, -INFINITY};
  for (const segy::TraceGeometry& g : t.geometry) {
    records.insert(g.field_record);
    const double v[4] = {g.sx, g.gx, g.offset, g.delay};
    for (int k = 0; k < 4; ++k) lo[k] = std::min(lo[k], v[k]), hi[k] = std::max(hi[k], v[k]);
  }
  const auto range = [&](int k) { return json{lo[k], hi[k]}; };
  return {{"kind", t.kind},
          {"why", t.kind_reason},
          {"traces", t.geometry.size()},
          {"samples", t.ns},
          {"sample_interval_us", t.sample_interval},
          {"field_records", records.size()},
          {"source_x", range(0)},
          {"receiver_x", range(1)},
          {"offset", range(2)},
          {"delay_s", range(3)}};
}

nlohmann::json file_json(const segy::Traces& t) {
  return {{"byte_order", t.byte_order},
          {"format", t.format},
          {"format_name", segy::sample_format_name(t.format)},
          {"revision", t.revision},
          {"extended_text_headers", t.extended_text_headers},
          {"warnings", t.warnings}};
}

int print_gather(const Options& o, const segy::Traces& t) {
  nlohmann::json j = gather_json(t);
  j.update(file_json(t));
  if (o.json) {
    std::printf("%s\n", j.dump(2).c_str());
    return 0;
  }
  std::printf("%s: a pre-stack file (%s), %zu traces of %lld samples at %lld us, %s %s (format %d)\n",
              o.file.c_str(), t.kind_reason.c_str(), t.geometry.size(), static_cast<long long>(t.ns),
              static_cast<long long>(t.sample_interval), t.byte_order.c_str(),
              segy::sample_format_name(t.format), t.format);
  std::printf("  %zu field record(s); source x %s m, receiver x %s m, offsets %s m, delay %s s\n",
              j["field_records"].get<size_t>(), j["source_x"].dump().c_str(), j["receiver_x"].dump().c_str(),
              j["offset"].dump().c_str(), j["delay_s"].dump().c_str());
  for (const std::string& w : t.warnings) std::printf("  warning: %s\n", w.c_str());
  return 0;
}

// Every trace's geometry as read (metres and seconds, the scalars applied), in file order.
int print_trace_headers(const segy::Traces& t) {
  // A row of JSON takes about a kilobyte while it is built.
  constexpr int64_t kRowBytes = 1024;
  ensure_host_memory(int64_t(t.geometry.size()) * kRowBytes, "the trace headers' JSON");
  nlohmann::json j = file_json(t), rows = nlohmann::json::array();
  for (const segy::TraceGeometry& g : t.geometry)
    rows.push_back({{"field_record", g.field_record},
                    {"channel", g.channel},
                    {"cdp", g.cdp},
                    {"inline", g.il},
                    {"crossline", g.xl},
                    {"offset", g.offset},
                    {"source_x", g.sx},
                    {"source_y", g.sy},
                    {"group_x", g.gx},
                    {"group_y", g.gy},
                    {"cdp_x", g.cdp_x},
                    {"cdp_y", g.cdp_y},
                    {"source_depth", g.source_depth},
                    {"group_elevation", g.group_elevation},
                    {"delay_s", g.delay}});
  j["kind"] = t.kind;
  j["samples"] = t.ns;
  j["sample_interval"] = t.sample_interval;
  j["trace_headers"] = rows;
  std::printf("%s\n", j.dump(1).c_str());
  return 0;
}

int run_info(const Options& o) {
  segy::ReadOptions ro = segy_read_options(o.spacing, o.z_unit, o.iline_byte, o.xline_byte);
  ro.need_spacing = false;
  if (o.trace_headers && !o.json) bad("--trace-headers lists every trace in JSON: give it with --json");
  const segy::Traces headers = segy::read_traces(o.file, ro, true);
  if (o.trace_headers) return print_trace_headers(headers);
  if (headers.kind == "pre-stack") return print_gather(o, headers);
  const segy::Grid g = segy::read_model(o.file, ro);
  nlohmann::json j = segy_geometry_json(g, ro);
  j.update(file_json(headers));
  j["kind"] = headers.kind;
  if (o.json) {
    std::printf("%s\n", j.dump(2).c_str());
    return 0;
  }
  const auto spacing = [](double h, const char* source) {
    return h > 0 ? number_text(h) + " m (" + source + ")" : std::string("unknown (give --spacing)");
  };
  std::printf("%s: %dD post-stack volume or model, %lld traces, %s, %s\n", o.file.c_str(), g.dim,
              static_cast<long long>(g.traces), g.order.c_str(), g.byte_order.c_str());
  std::printf("  sample format: %d (%s)\n", g.format, segy::sample_format_name(g.format));
  std::printf("  z: %lld samples, interval %d x %g m: dz %s\n", static_cast<long long>(g.nz),
              g.sample_interval, ro.z_unit,
              spacing(g.dz, g.sample_interval > 0 ? "sample interval" : "--spacing").c_str());
  const char* xy_source = g.coordinates ? "CDP coordinates" : "--spacing";
  if (g.dim == 3)
    std::printf("  y: %lld inlines %d..%d step %d: dy %s\n", static_cast<long long>(g.ny), g.il_first,
                g.il_last, g.il_step, spacing(g.dy, xy_source).c_str());
  if (g.il_first == 0 && g.il_last == 0 && g.xl_first == 0 && g.xl_last == 0)
    std::printf("  x: %lld traces in file order (no line numbers): dx %s\n", static_cast<long long>(g.nx),
                spacing(g.dx, xy_source).c_str());
  else if (g.dim == 2 && g.il_first != g.il_last)
    std::printf("  x: %lld inlines %d..%d step %d (crossline %d): dx %s\n", static_cast<long long>(g.nx),
                g.il_first, g.il_last, g.il_step, g.xl_first, spacing(g.dx, xy_source).c_str());
  else
    std::printf("  x: %lld crosslines %d..%d step %d%s: dx %s\n", static_cast<long long>(g.nx), g.xl_first,
                g.xl_last, g.xl_step,
                g.dim == 2 ? (" (inline " + std::to_string(g.il_first) + ")").c_str() : "",
                spacing(g.dx, xy_source).c_str());
  if (g.coordinates) std::printf("  first point at CDP (x, y) = (%g, %g) m\n", g.x0, g.y0);
  std::printf("  shape %s, values %g..%g\n", j["shape"].dump().c_str(), j["vmin"].get<double>(),
              j["vmax"].get<double>());
  for (const std::string& w : g.warnings) std::printf("  warning: %s\n", w.c_str());
  return 0;
}

// A conversion's OUT is the user's file if it exists: replaced only when asked (--overwrite), and the
// refusal comes before the input is read.
void check_output(const Options& o) {
  std::error_code ec;
  if (!o.overwrite && std::filesystem::exists(o.out, ec))
    throw Error(ErrorKind::invalid_argument,
                o.out + " exists: give --overwrite to replace it, or another OUT");
}

int run_to_npy(const Options& o) {
  check_output(o);
  segy::ReadOptions ro = segy_read_options(o.spacing, o.z_unit, o.iline_byte, o.xline_byte);
  ro.need_spacing = false;
  if (o.traces) {  // whatever the file holds, its traces as they lie
    const segy::Traces t = segy::read_traces(o.file, ro);
    const std::vector<int64_t> shape = {int64_t(t.geometry.size()), t.ns};
    write_npy(o.out, DType::f32, shape, t.samples.data(), int64_t(t.samples.size() * sizeof(float)));
    std::printf("%s: %lld traces x %lld samples, float32, file order\n", o.out.c_str(),
                static_cast<long long>(shape[0]), static_cast<long long>(shape[1]));
    return 0;
  }
  const segy::Grid g = segy::read_model(o.file, ro);
  const std::vector<int64_t> shape =
      g.dim == 3 ? std::vector<int64_t>{g.nz, g.ny, g.nx} : std::vector<int64_t>{g.nz, g.nx};
  write_npy(o.out, DType::f32, shape, g.v.data(), int64_t(g.v.size() * sizeof(float)));
  std::printf("%s: %dD, shape %s, float32\n", o.out.c_str(), g.dim, nlohmann::json(shape).dump().c_str());
  return 0;
}

int run_from_npy(const Options& o) {
  check_output(o);
  if (o.spacing.empty())
    bad("--spacing is required: the model's grid spacing in metres, the same on every axis");
  const double h = positive_number(o.spacing, "--spacing");
  const double z_unit = o.z_unit.empty() ? segy::kDefaultZUnit : positive_number(o.z_unit, "--segy-z-unit");
  const wave::Model m = wave::Model::from_npy(o.file, h);
  segy::write_model(o.out, segy::from_model(m), z_unit, o.little_endian);
  std::printf("%s: %dD, %lld x %lld x %lld (nz, ny, nx) at %g m, sample interval %.0f x %g m, IEEE float\n",
              o.out.c_str(), m.dim, static_cast<long long>(m.nz), static_cast<long long>(m.ny),
              static_cast<long long>(m.nx), h, h / z_unit, z_unit);
  return 0;
}

}  // namespace

bool is_segy_path(const std::string& path) {
  std::string ext = std::filesystem::path(path).extension().string();
  std::transform(ext.begin(), ext.end(), ext.begin(), [](unsigned char c) { return char(std::tolower(c)); });
  return ext == ".sgy" || ext == ".segy";
}

segy::ReadOptions segy_read_options(const std::string& spacing, const std::string& z_unit,
                                    const std::string& iline_byte, const std::string& xline_byte) {
  segy::ReadOptions ro;
  if (!spacing.empty()) ro.spacing = positive_number(spacing, "--spacing");
  if (!z_unit.empty()) ro.z_unit = positive_number(z_unit, "--segy-z-unit");
  if (!iline_byte.empty()) ro.iline_byte = header_byte(iline_byte, "--segy-inline-byte");
  if (!xline_byte.empty()) ro.xline_byte = header_byte(xline_byte, "--segy-crossline-byte");
  if (ro.iline_byte == ro.xline_byte)
    bad("--segy-inline-byte and --segy-crossline-byte are both " + std::to_string(ro.iline_byte) +
        ": the inline and crossline numbers are two fields");
  return ro;
}

nlohmann::json segy_geometry_json(const segy::Grid& g, const segy::ReadOptions& ro) {
  using nlohmann::json;
  const auto known = [](double h) { return h > 0 ? json(h) : json(nullptr); };
  float vmin = std::numeric_limits<float>::infinity(), vmax = -vmin;
  for (float v : g.v) vmin = std::min(vmin, v), vmax = std::max(vmax, v);
  json j = {
      {"dim", g.dim},
      {"shape", g.dim == 3 ? json{g.nz, g.ny, g.nx} : json{g.nz, g.nx}},
      {"spacing", g.dim == 3 ? json{{"z", known(g.dz)}, {"y", known(g.dy)}, {"x", known(g.dx)}}
                             : json{{"z", known(g.dz)}, {"x", known(g.dx)}}},
      {"format", g.format},
      {"format_name", segy::sample_format_name(g.format)},
      {"traces", g.traces},
      {"order", g.order},
      {"inline", {{"first", g.il_first}, {"last", g.il_last}, {"step", g.il_step}, {"byte", ro.iline_byte}}},
      {"crossline",
       {{"first", g.xl_first}, {"last", g.xl_last}, {"step", g.xl_step}, {"byte", ro.xline_byte}}},
      {"sample_interval", g.sample_interval},
      {"z_unit", ro.z_unit},
      {"coordinates", g.coordinates},
      {"origin", {g.x0, g.y0}},
      {"vmin", g.v.empty() ? json(nullptr) : json(vmin)},
      {"vmax", g.v.empty() ? json(nullptr) : json(vmax)},
      {"warnings", g.warnings}};
  return j;
}

Action add_segy(CLI::App& app) {
  auto* cmd = app.add_subcommand(
      "segy",
      "SEG-Y files: a file's geometry (a model, a post-stack volume or a pre-stack gather), and conversion "
      "to and from .npy, read and written by fdstencil's own code (both byte orders, every rev 2 sample "
      "format). Samples run along z, inlines along "
      "y, crosslines along x; "
      "the z spacing is the sample interval x --segy-z-unit, the others come from the CDP coordinates. Bad "
      "input exits 2 and writes nothing.");
  auto o = std::make_shared<Options>();

  auto* info = cmd->add_subcommand("info",
                                   "Print a SEG-Y file's geometry: for a model or post-stack volume its "
                                   "dimensions, shape, spacings, sample format, inline and crossline ranges, "
                                   "trace order and value range; for a pre-stack file (a shot gather) its "
                                   "traces, samples, field records, source and receiver x, offsets, delay");
  info->add_option("FILE", o->file, "The SEG-Y file")->required()->type_name("FILE.sgy");
  info->add_flag("--json", o->json, "Print JSON");
  info->add_flag("--trace-headers", o->trace_headers,
                 "With --json: every trace's geometry in file order (field record, channel, CDP, line "
                 "numbers, offset, source and receiver positions, CDP coordinates, depths, delay; metres and "
                 "seconds, the scalars applied)");
  add_read_flags(info, *o);

  auto* to_npy = cmd->add_subcommand(
      "to-npy",
      "Write a SEG-Y model's samples as a float32 .npy of shape (nz,ny,nx), or (nz,nx) for a 2D line");
  to_npy->add_option("IN", o->file, "The SEG-Y file")->required()->type_name("IN.sgy");
  to_npy->add_option("OUT", o->out, "The .npy to write (atomically)")->required()->type_name("OUT.npy");
  to_npy->add_flag("--overwrite", o->overwrite, "Replace OUT if it exists (refused otherwise)");
  to_npy->add_flag("--traces", o->traces,
                   "The traces in file order, shape (traces, samples), whatever the file holds (a shot "
                   "gather or any pre-stack file too)");
  add_read_flags(to_npy, *o);

  auto* from_npy =
      cmd->add_subcommand("from-npy",
                          "Write a velocity model (float32 .npy, (nz,ny,nx) or (nz,nx), m/s) as SEG-Y: IEEE "
                          "float, inline-sorted, inlines 1..ny, crosslines 1..nx, CDP coordinates from the "
                          "spacing, sample interval spacing / --segy-z-unit");
  from_npy->add_option("IN", o->file, "The velocity model")->required()->type_name("IN.npy");
  from_npy->add_option("OUT", o->out, "The SEG-Y file to write (atomically)")
      ->required()
      ->type_name("OUT.sgy");
  from_npy->add_flag("--overwrite", o->overwrite, "Replace OUT if it exists (refused otherwise)");
  from_npy->add_option("--spacing", o->spacing, "Grid spacing in metres, the same on every axis (required)")
      ->type_name("H");
  from_npy
      ->add_option("--segy-z-unit", o->z_unit,
                   "Metres per unit of the sample interval field (default 0.001: millimetres)")
      ->type_name("M");
  from_npy->add_flag(
      "--little-endian", o->little_endian,
      "Write little-endian (SEG-Y rev 2, the byte order marked at bytes 3297-3300); the default is "
      "big-endian rev 1");

  return [o, info, to_npy, from_npy] {
    if (info->parsed()) return run_info(*o);
    if (to_npy->parsed()) return run_to_npy(*o);
    if (from_npy->parsed()) return run_from_npy(*o);
    throw Error(ErrorKind::invalid_argument,
                "fdstencil segy needs a command: info FILE, to-npy IN.sgy OUT.npy or from-npy IN.npy OUT.sgy "
                "--spacing H (fdstencil segy --help)");
  };
}

}  // namespace fdstencil::cli
