// fdstencil wave's inputs: the flags and files turned into a checked run (wave_cli::Setup). All
// of it happens before the solver starts and before any file is created, so a typo in the last
// flag fails at once, with exit code 2 and nothing written, rather than after an hour's run.
#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <numbers>
#include <set>

#include "commands.hpp"
#include "fdstencil/device_field.hpp"
#include "fdstencil/error.hpp"
#include "fdstencil/field.hpp"
#include "fdstencil/npy.hpp"
#include "fdstencil/segy.hpp"
#include "wave_cli.hpp"

namespace fdstencil::cli::wave_cli {

namespace fs = std::filesystem;

namespace {

constexpr int kMaxRadius = 8;  // the highest order the coefficient tables have
// A ratio that is an integer up to the rounding of the division (T/dt, the record's span over its
// interval) counts as that integer: 0.3 / 0.001 must give 300 steps, not 301.
constexpr double kRatioTolerance = 1e-9;
// More steps than this are a typo (a million years at a microsecond step), and beyond it the
// step count would lose integer precision in a double.
constexpr double kMaxSteps = 1e15;
// A wavelet outlasting a short run is sampled whole up to this many samples (8 MiB a source), not
// beyond: a --delay of hours on a run of milliseconds should not need gigabytes.
constexpr int64_t kMaxWaveletSamples = int64_t(1) << 20;

[[noreturn]] void bad(const std::string& message) { throw Error(ErrorKind::invalid_argument, message); }

std::string trim(const std::string& s) {
  size_t a = 0, b = s.size();
  while (a < b && std::isspace(static_cast<unsigned char>(s[a]))) ++a;
  while (b > a && std::isspace(static_cast<unsigned char>(s[b - 1]))) --b;
  return s.substr(a, b - a);
}

bool parses_as_number(const std::string& text, double& v) {
  const std::string t = trim(text);
  const char* first = t.data();
  if (!t.empty() && t[0] == '+') ++first;  // from_chars refuses the sign strtod and users accept
  const auto [p, ec] = std::from_chars(first, t.data() + t.size(), v);
  return !t.empty() && ec == std::errc() && p == t.data() + t.size() && std::isfinite(v);
}

double number(const std::string& text, const std::string& what) {
  double v = 0;
  if (!parses_as_number(text, v)) bad(what + ": '" + text + "' is not a finite number");
  return v;
}

double positive(const std::string& text, const std::string& what) {
  const double v = number(text, what);
  if (!(v > 0)) bad(what + ": " + trim(text) + " must be positive");
  return v;
}

int64_t integer(const std::string& text, const std::string& what, int64_t min) {
  const std::string t = trim(text);
  int64_t v = 0;
  const auto [p, ec] = std::from_chars(t.data(), t.data() + t.size(), v);
  if (t.empty() || ec != std::errc() || p != t.data() + t.size())
    bad(what + ": '" + text + "' is not an integer");
  if (v < min) bad(what + ": " + t + " must be at least " + std::to_string(min));
  return v;
}

// a * b * c bytes, or the largest int64 when that overflows, so the memory check refuses it.
int64_t bytes_of(int64_t a, int64_t b, int64_t c) {
  int64_t ab = 0, abc = 0;
  if (__builtin_mul_overflow(a, b, &ab) || __builtin_mul_overflow(ab, c, &abc))
    return std::numeric_limits<int64_t>::max();
  return abc;
}

const char* axes_text(int dim) { return dim == 3 ? "Z,Y,X" : "Z,X"; }

std::string shape_text(const std::vector<int64_t>& shape) {
  std::string t = "(";
  for (size_t i = 0; i < shape.size(); ++i) t += (i ? ", " : "") + std::to_string(shape[i]);
  return t + (shape.size() == 1 ? ",)" : ")");
}

wave::Point point_of(const double* c, int dim) {
  return dim == 3 ? wave::Point{c[0], c[1], c[2]} : wave::Point{c[0], 0, c[1]};
}

// "Z,Y,X" (3D) or "Z,X" (2D) in metres.
wave::Point parse_point(const std::string& text, int dim, const std::string& what) {
  const auto parts = split(text, ',');
  if (int(parts.size()) != dim)
    bad(what + " '" + text + "': " + std::to_string(parts.size()) + " coordinate" +
        (parts.size() == 1 ? "" : "s") + ", but the model is " + std::to_string(dim) + "D: give " +
        axes_text(dim) + " in metres");
  double c[3];
  for (int a = 0; a < dim; ++a) c[a] = number(parts[a], what + " '" + text + "'");
  return point_of(c, dim);
}

bool is_npy(const std::string& path) {
  std::string ext = fs::path(path).extension().string();
  std::transform(ext.begin(), ext.end(), ext.begin(),
                 [](unsigned char ch) { return char(std::tolower(ch)); });
  return ext == ".npy";
}

void require_file(const std::string& path, const std::string& what) {
  std::error_code ec;
  if (!fs::exists(path, ec)) throw Error(ErrorKind::io, what + ": " + path + ": no such file");
  if (fs::is_directory(path, ec))
    throw Error(ErrorKind::io, what + ": " + path + " is a directory, not a file");
}

// An .npy array's elements as doubles, whichever of float32 and float64 it holds.
std::vector<double> npy_values(const NpyArray& a) {
  const size_t n = a.bytes.size() / size_t(dtype_bytes(a.dtype));
  std::vector<double> v(n);
  for (size_t i = 0; i < n; ++i) {
    if (a.dtype == DType::f32) {
      float x;
      std::memcpy(&x, a.bytes.data() + 4 * i, 4);
      v[i] = x;
    } else {
      std::memcpy(&v[i], a.bytes.data() + 8 * i, 8);
    }
  }
  return v;
}

// Positions from a CSV (rows Z,Y,X or Z,X; '#' starts a comment; the first row may be a header)
// or an .npy array (n, 3) / (n, 2).
std::vector<wave::Point> read_positions(const std::string& path, int dim, const std::string& what) {
  require_file(path, what);
  std::vector<wave::Point> out;
  if (is_npy(path)) {
    const NpyArray a = read_npy(path);
    if (a.shape.size() != 2 || a.shape[1] != dim || a.shape[0] < 1)
      bad(what + ": " + path + ": positions must be an (n, " + std::to_string(dim) + ") array of " +
          axes_text(dim) + " in metres for a " + std::to_string(dim) + "D model, this one is " +
          shape_text(a.shape));
    const std::vector<double> v = npy_values(a);
    for (int64_t i = 0; i < a.shape[0]; ++i) {
      for (int c = 0; c < dim; ++c)
        if (!std::isfinite(v[size_t(i * dim + c)]))
          bad(what + ": " + path + ": row " + std::to_string(i) + " holds a value that is not finite");
      out.push_back(point_of(&v[size_t(i * dim)], dim));
    }
    return out;
  }
  std::ifstream in(path);
  if (!in) throw Error(ErrorKind::io, what + ": cannot read " + path);
  std::string line;
  bool first_row = true;
  for (int number_of_line = 1; std::getline(in, line); ++number_of_line) {
    line = trim(line.substr(0, line.find('#')));
    if (line.empty()) continue;
    const auto fields = split(line, ',');
    const std::string where = what + ": " + path + ":" + std::to_string(number_of_line);
    double first_value = 0;
    if (first_row && !parses_as_number(fields[0], first_value)) {  // a header such as "z,y,x"
      first_row = false;
      continue;
    }
    first_row = false;
    if (int(fields.size()) != dim)
      bad(where + ": " + std::to_string(fields.size()) + " value" + (fields.size() == 1 ? "" : "s") +
          ", but the model is " + std::to_string(dim) + "D: each row is " + axes_text(dim) + " in metres");
    double c[3];
    for (int a = 0; a < dim; ++a) c[a] = number(fields[a], where);
    out.push_back(point_of(c, dim));
  }
  if (in.bad()) throw Error(ErrorKind::io, what + ": cannot read " + path);
  if (out.empty()) bad(what + ": " + path + " holds no positions");
  return out;
}

// "Z0,Y0,X0:Z1,Y1,X1:N": N points evenly from the first to the last, both included.
std::vector<wave::Point> receiver_line(const std::string& text, int dim) {
  const std::string what = "--receiver-line '" + text + "'";
  const auto parts = split(text, ':');
  if (parts.size() != 3) bad(what + ": expected " + axes_text(dim) + ":" + axes_text(dim) + ":N");
  const wave::Point a = parse_point(parts[0], dim, what + ": first point");
  const wave::Point b = parse_point(parts[1], dim, what + ": last point");
  const int64_t n = integer(parts[2], what + ": N", 1);
  if (n > (int64_t(1) << 31))
    bad(what + ": " + std::to_string(n) + " receivers is more than a shot record holds");
  std::vector<wave::Point> out;
  for (int64_t i = 0; i < n; ++i) {
    const double w = n == 1 ? 0.0 : double(i) / double(n - 1);
    out.push_back({a.z + w * (b.z - a.z), a.y + w * (b.y - a.y), a.x + w * (b.x - a.x)});
  }
  return out;
}

// "Z:Y0,Y1,NY:X0,X1,NX": a horizontal grid at depth Z, y the slower index.
std::vector<wave::Point> receiver_grid(const std::string& text, int dim) {
  const std::string what = "--receiver-grid '" + text + "'";
  if (dim != 3) bad(what + ": a grid of receivers needs a 3D model (use --receiver-line in 2D)");
  const auto parts = split(text, ':');
  if (parts.size() != 3) bad(what + ": expected Z:Y0,Y1,NY:X0,X1,NX");
  const double z = number(parts[0], what + ": Z");
  double lo[2], hi[2];
  int64_t n[2];
  const char* axis[2] = {"Y", "X"};
  for (int a = 0; a < 2; ++a) {
    const auto r = split(parts[1 + a], ',');
    if (r.size() != 3)
      bad(what + ": expected " + axis[a] + "0," + axis[a] + "1,N" + axis[a] + ", got '" + parts[1 + a] + "'");
    lo[a] = number(r[0], what + ": " + axis[a] + "0");
    hi[a] = number(r[1], what + ": " + axis[a] + "1");
    n[a] = integer(r[2], what + ": N" + axis[a], 1);
  }
  if (bytes_of(n[0], n[1], 1) > (int64_t(1) << 31))
    bad(what + ": " + std::to_string(n[0]) + " x " + std::to_string(n[1]) +
        " receivers is more than a shot record holds");
  std::vector<wave::Point> out;
  for (int64_t j = 0; j < n[0]; ++j)
    for (int64_t i = 0; i < n[1]; ++i) {
      const double wy = n[0] == 1 ? 0.0 : double(j) / double(n[0] - 1);
      const double wx = n[1] == 1 ? 0.0 : double(i) / double(n[1] - 1);
      out.push_back({z, lo[0] + wy * (hi[0] - lo[0]), lo[1] + wx * (hi[1] - lo[1])});
    }
  return out;
}

// "D0:V0,D1:V1,...": top depth in metres and velocity in m/s, from the surface down.
std::vector<std::pair<double, float>> parse_layers(const std::string& text) {
  std::vector<std::pair<double, float>> layers;
  for (const std::string& item : split(text, ',')) {
    const std::string what = "--layered '" + text + "': layer '" + item + "'";
    const auto dv = split(item, ':');
    if (dv.size() != 2) bad(what + ": expected DEPTH:VELOCITY (metres:m/s)");
    const double depth = number(dv[0], what + ": depth");
    const double v = positive(dv[1], what + ": velocity");
    if (v > std::numeric_limits<float>::max())
      bad(what + ": velocity " + trim(dv[1]) + " is beyond float range");
    if (layers.empty() && depth != 0) bad(what + ": the first layer starts at the surface, depth 0");
    if (!layers.empty() && !(depth > layers.back().first))
      bad(what + ": depths must rise from layer to layer");
    layers.push_back({depth, float(v)});
  }
  return layers;
}

// "z=K", "y=J" or "x=I": a grid index inside the model.
Slice parse_slice(const std::string& text, const wave::Model& m) {
  const std::string what = "--snapshot-slice '" + text + "'";
  const auto parts = split(text, '=');
  const std::string axis = parts.size() == 2 ? trim(parts[0]) : "";
  if (axis != "z" && axis != "y" && axis != "x") bad(what + ": expected z=K, y=J or x=I (a grid index)");
  if (axis == "y" && m.dim == 2) bad(what + ": a 2D model has no y axis (use z=K or x=I)");
  const int64_t n = axis == "z" ? m.nz : axis == "y" ? m.ny : m.nx;
  const int64_t k = integer(parts[1], what, 0);
  if (k >= n)
    bad(what + ": index " + std::to_string(k) + " is outside the model, whose " + axis + " indices run 0.." +
        std::to_string(n - 1));
  return {axis[0], k};
}

std::vector<int64_t> snapshot_steps(const Flags& f, int64_t nt) {
  std::set<int64_t> steps;
  if (!f.snapshot_every.empty()) {
    const int64_t every = integer(f.snapshot_every, "--snapshot-every", 1);
    for (int64_t s = every; s <= nt; s += every) steps.insert(s);
    if (steps.empty())
      bad("--snapshot-every " + trim(f.snapshot_every) + ": the run has only " + std::to_string(nt) +
          " steps, so no snapshot would be taken");
  }
  if (!f.snapshot_steps.empty())
    for (const std::string& item : split(f.snapshot_steps, ',')) {
      const int64_t s = integer(item, "--snapshot-steps", 0);
      if (s > nt)
        bad("--snapshot-steps: step " + std::to_string(s) + " is beyond the run's " + std::to_string(nt) +
            " steps (0.." + std::to_string(nt) + ")");
      steps.insert(s);
    }
  return {steps.begin(), steps.end()};
}

// The file wavelet: a 1-D float32/float64 array, not all zeros.
std::vector<double> read_wavelet(const std::string& path) {
  require_file(path, "--wavelet");
  const NpyArray a = read_npy(path);
  if (a.shape.size() != 1 || a.shape[0] < 1)
    bad("--wavelet: " + path + ": a wavelet is a 1-D array of samples, this one is " + shape_text(a.shape));
  std::vector<double> w = npy_values(a);
  bool any = false;
  for (size_t i = 0; i < w.size(); ++i) {
    if (!std::isfinite(w[i])) bad("--wavelet: " + path + ": sample " + std::to_string(i) + " is not finite");
    any = any || w[i] != 0;
  }
  if (!any) bad("--wavelet: " + path + ": every sample is zero, so the run would record nothing");
  return w;
}

ModelInput build_model(const Flags& f, const ModelPlanes& planes_of, bool summarise) {
  ModelInput s;
  wave::Model model;
  const int given = int(!f.model.empty()) + int(!f.constant.empty()) + int(!f.layered.empty());
  if (given == 0)
    bad("a velocity model is required: --model FILE.npy, or --constant V or --layered SPEC with --shape");
  if (given > 1) bad("give one velocity model: --model, --constant or --layered, not several");
  const bool segy_model = !f.model.empty() && is_segy_path(f.model);
  if (!segy_model)
    for (const auto& [value, flag] :
         {std::pair{&f.segy_z_unit, "--segy-z-unit"}, std::pair{&f.segy_iline_byte, "--segy-inline-byte"},
          std::pair{&f.segy_xline_byte, "--segy-crossline-byte"}})
      if (!value->empty())
        bad(std::string(flag) + " describes a SEG-Y --model (.sgy or .segy), and none was given");
  // A SEG-Y model's headers may give the spacing; --spacing is then checked against them.
  if (f.spacing.empty() && !segy_model)
    bad("--spacing is required: the grid spacing in metres (a SEG-Y --model may take it from its headers)");
  const double h = f.spacing.empty() ? 0.0 : positive(f.spacing, "--spacing");
  nlohmann::json extra;
  std::string kind;
  if (segy_model) {
    if (!f.shape.empty())
      bad("--shape goes with --constant or --layered; a --model file's array has its own shape");
    require_file(f.model, "--model");
    const segy::ReadOptions ro =
        segy_read_options(f.spacing, f.segy_z_unit, f.segy_iline_byte, f.segy_xline_byte);
    segy::Grid g = segy::read_model(f.model, ro);
    // Headers that disagreed, and the reading chosen: said once, and kept in summary.json.
    if (!f.quiet)
      for (const std::string& w : g.warnings) std::fprintf(stderr, "fdstencil: warning: %s\n", w.c_str());
    extra["path"] = f.model;
    extra["format"] = "segy";
    extra["segy"] = segy_geometry_json(g, ro);
    try {
      model = segy::to_model(std::move(g));
    } catch (const Error& e) {
      throw Error(e.kind(), "--model " + f.model + ": " + e.what());
    }
    kind = "file";
  } else if (!f.model.empty()) {
    if (!f.shape.empty())
      bad("--shape goes with --constant or --layered; a --model file's array has its own shape");
    require_file(f.model, "--model");
    std::optional<wave::Model::Window> keep;
    if (planes_of) {
      const NpyHeader a = read_npy_header(f.model);
      if (a.shape.size() == 2 || a.shape.size() == 3)
        keep =
            planes_of(int(a.shape.size()), a.shape[0], a.shape.size() == 3 ? a.shape[1] : 1, a.shape.back());
    }
    model = wave::Model::from_npy(f.model, h, keep ? &*keep : nullptr);
    kind = "file";
    extra["path"] = f.model;
  } else {
    if (f.shape.empty())
      bad("--shape is required with --constant and --layered: NZ,NY,NX (3D) or NZ,NX (2D)");
    const auto parts = split(f.shape, ',');
    if (parts.size() != 2 && parts.size() != 3)
      bad("--shape '" + f.shape + "': expected NZ,NY,NX (3D) or NZ,NX (2D), got " +
          std::to_string(parts.size()) + " number" + (parts.size() == 1 ? "" : "s"));
    int64_t n[3];
    for (size_t a = 0; a < parts.size(); ++a) n[a] = integer(parts[a], "--shape '" + f.shape + "'", 1);
    const int dim = int(parts.size());
    const int64_t nz = n[0], ny = dim == 3 ? n[1] : 1, nx = n[dim - 1];
    const std::optional<wave::Model::Window> keep = planes_of ? planes_of(dim, nz, ny, nx) : std::nullopt;
    if (!f.constant.empty()) {
      const double v = positive(f.constant, "--constant");
      if (v > std::numeric_limits<float>::max()) bad("--constant " + f.constant + " is beyond float range");
      model = wave::Model::constant(dim, nz, ny, nx, h, float(v), keep ? &*keep : nullptr);
      kind = "constant";
      extra["velocity"] = v;
    } else {
      const auto layers = parse_layers(f.layered);
      model = wave::Model::layered(dim, nz, ny, nx, h, layers, keep ? &*keep : nullptr);
      kind = "layered";
      extra["layers"] = nlohmann::json::array();
      for (const auto& [d, v] : layers) extra["layers"].push_back({d, v});
    }
  }
  if (summarise && !model.whole)
    model.summarise();  // the checks, extremes and checksum in one pass
  else
    model.validate();
  const auto [vmin, vmax] = model.extremes();  // one pass over a model that may be large, or its summary's
  s.json = {{"kind", kind},       {"dim", model.dim}, {"shape", model_shape(model)},
            {"spacing", model.h}, {"vmin", vmin},     {"vmax", vmax}};
  s.json.update(extra);
  s.model = std::make_shared<const wave::Model>(std::move(model));
  return s;
}

void build_time(const Flags& f, Setup& s) {
  wave::Options& o = s.options;
  const wave::Model& m = s.model();
  s.dt_limit = wave::max_stable_dt(m.dim, o.radius, m.h, m.vmax());
  if (!f.dt.empty()) {
    if (!f.cfl_safety.empty())
      bad("--dt sets the step and --cfl-safety the default step's fraction of the limit: not both");
    o.dt = positive(f.dt, "--dt");  // the solver refuses a step above the limit, giving the limit
    s.dt_given = true;
  } else {
    o.cfl_safety = positive(f.cfl_safety.empty() ? kDefaultCfl : f.cfl_safety, "--cfl-safety");
    if (o.cfl_safety > 1)
      bad("--cfl-safety " + trim(f.cfl_safety) +
          ": the fraction must be in (0, 1]; above 1 the step exceeds the stability limit");
    o.dt = wave::run_dt(m, o);  // the solver's own default step, needed here for the wavelet
  }
  if (f.steps.empty() == f.time.empty())
    bad("give the run's length: --steps N or --time T (seconds), exactly one");
  if (!f.steps.empty()) {
    o.nt = integer(f.steps, "--steps", 1);
  } else {
    const double ratio = positive(f.time, "--time") / o.dt;
    if (ratio > kMaxSteps)
      bad("--time " + trim(f.time) + " needs more than 1e15 steps of " + std::to_string(o.dt) + " s");
    o.nt = std::max<int64_t>(1, int64_t(std::ceil(ratio * (1 - kRatioTolerance))));
  }
}

// The samples at the run's dt: the run's nt, or the whole wavelet when it lasts longer. The
// solver reads the wavelet's spectrum (the under-sampling warning, the CPML's frequency), and a
// pulse cut off by a short run has a spectrum smeared to high frequencies by the cut: a 10 Hz
// Ricker cut at 0.11 s was reported as reaching 282 Hz. The solver injects only the first nt.
int64_t wavelet_samples(double duration, double dt, int64_t nt) {
  const double whole = std::ceil(duration / dt) + 1;
  return std::max<int64_t>(nt, int64_t(std::min(whole, double(kMaxWaveletSamples))));
}

void build_wavelet(const Flags& f, Setup& s) {
  Wavelet& w = s.wavelet;
  const wave::Options& o = s.options;
  w.run_dt = o.dt;
  if (!f.wavelet.empty()) {
    if (!f.ricker.empty()) bad("--ricker and --wavelet: all sources share one wavelet, give one of them");
    if (!f.delay.empty()) bad("--delay shifts the Ricker wavelet; a --wavelet file carries its own timing");
    if (f.wavelet_dt.empty()) bad("--wavelet needs --wavelet-dt, the file's sample interval in seconds");
    w.kind = "file";
    w.path = f.wavelet;
    const std::vector<double> raw = read_wavelet(f.wavelet);
    w.file_dt = positive(f.wavelet_dt, "--wavelet-dt");
    const int64_t n = wavelet_samples(double(raw.size() - 1) * w.file_dt, o.dt, o.nt);
    // One copy per source (wave::Source holds its own), and the one kept for the comparison.
    ensure_host_memory(bytes_of(n, int64_t(s.sources.size()) + 1, 8), "a wavelet per source");
    w.at_run_dt = wave::resample(raw, w.file_dt, o.dt, n);
  } else {
    if (!f.wavelet_dt.empty())
      bad("--wavelet-dt is the sample interval of a --wavelet file, and none was given");
    w.kind = "ricker";
    w.f0 = positive(f.ricker.empty() ? kDefaultRicker : f.ricker, "--ricker");
    w.delay = kRickerDelayPeriods / w.f0;
    if (!f.delay.empty()) {
      w.delay = number(f.delay, "--delay");
      // A negative delay starts the run in mid-pulse: a jump that rings through the whole record.
      if (w.delay < 0) bad("--delay " + trim(f.delay) + ": the delay must be at least 0 s");
    }
    // The pulse is ~1e-8 of its peak kRickerDelayPeriods / f0 after its centre, as before it.
    const int64_t n = wavelet_samples(w.delay + kRickerDelayPeriods / w.f0, o.dt, o.nt);
    ensure_host_memory(bytes_of(n, int64_t(s.sources.size()) + 1, 8), "a wavelet per source");
    w.at_run_dt = wave::ricker(w.f0, w.delay, o.dt, n);
  }
}

// --layer-plane-cost; 0 (absent) takes the radius's default (wave::Options::layer_plane_cost).
double layer_plane_cost_of(const Flags& f) {
  if (f.layer_plane_cost.empty()) return 0;
  const double c = number(f.layer_plane_cost, "--layer-plane-cost");
  if (!(std::isfinite(c) && c >= 1))
    bad("--layer-plane-cost " + f.layer_plane_cost +
        ": an absorbing-layer plane costs at least 1 inner plane, and a finite number of them");
  return c;
}

// --overlap, with --no-overlap its older spelling of off.
wave::Options::Overlap overlap_of(const Flags& f) {
  using O = wave::Options::Overlap;
  if (f.no_overlap) {
    if (f.overlap != "auto" && f.overlap != "off")
      bad("--no-overlap and --overlap " + f.overlap + " disagree");
    return O::off;
  }
  if (f.overlap == "auto") return O::automatic;
  if (f.overlap == "on") return O::on;
  if (f.overlap == "off") return O::off;
  bad("--overlap '" + f.overlap + "': expected auto, on or off");
}

}  // namespace

nlohmann::json Wavelet::to_json() const {
  if (kind == "ricker") return {{"kind", kind}, {"f0", f0}, {"delay", delay}};
  return {{"kind", kind}, {"path", path}, {"dt", file_dt}};
}

double Wavelet::operator()(double t) const {
  if (kind == "ricker") {
    const double a = std::pow(std::numbers::pi * f0 * (t - delay), 2);
    return (1 - 2 * a) * std::exp(-a);
  }
  // The samples the source injected, joined by straight lines; zero outside them.
  if (t < 0 || at_run_dt.empty()) return 0;
  const double x = t / run_dt;
  const size_t i = size_t(x);
  if (i + 1 >= at_run_dt.size()) return i + 1 == at_run_dt.size() && x == double(i) ? at_run_dt[i] : 0;
  const double frac = x - double(i);
  return (1 - frac) * at_run_dt[i] + frac * at_run_dt[i + 1];
}

std::vector<int64_t> model_shape(const wave::Model& m) {
  return m.dim == 3 ? std::vector<int64_t>{m.nz, m.ny, m.nx} : std::vector<int64_t>{m.nz, m.nx};
}

ModelInput read_model(const Flags& f, const ModelPlanes& planes_of, bool summarise) {
  return build_model(f, planes_of, summarise);
}

std::optional<wave::Model::Window> slab_model_planes(const Flags& f, int dim, int64_t nz, int64_t ny,
                                                     int64_t nx, int rank, int ranks) {
  if (nz < 1 || ny < 1 || nx < 1) return std::nullopt;  // refused as the model is read
  try {
    wave::Boundary b;
    b.cpml_width = int(integer(f.cpml.empty() ? kDefaultCpml : f.cpml, "--cpml", 0));
    b.free_surface = f.free_surface;
    const int radius = int(integer(f.radius.empty() ? kDefaultRadius : f.radius, "--radius", 1));
    const wave::Domain d = wave::Domain::make(dim, radius, nz, ny, nx, b);
    wave::Options o;  // the solver's cut of the slabs, from the same two inputs
    o.radius = radius;
    o.layer_plane_cost = layer_plane_cost_of(f);
    return d.model_planes(d.split_z(ranks, wave::slab_layer_cost(o))[size_t(rank)]);
  } catch (const Error&) {
    return std::nullopt;  // the whole model: prepare() and the run name what is wrong
  }
}

namespace {

// --output: required, and a directory where it exists.
void read_output(const Flags& f, Setup& s) {
  if (f.output.empty()) bad("--output DIR is required: where the shot record and the summary go");
  {
    std::error_code ec;
    if (fs::exists(f.output, ec) && !fs::is_directory(f.output, ec))
      throw Error(ErrorKind::io, "--output " + f.output + " exists and is not a directory");
  }
  s.out_dir = f.output;
}

// The radius, the absorbing boundary and the interpolation of sources and receivers.
void read_numerics(const Flags& f, wave::Options& o) {
  const int64_t radius = integer(f.radius.empty() ? kDefaultRadius : f.radius, "--radius", 1);
  if (radius > kMaxRadius) bad("--radius " + trim(f.radius) + ": the radius must be 1..8");
  o.radius = int(radius);
  const int64_t cpml = integer(f.cpml.empty() ? kDefaultCpml : f.cpml, "--cpml", 0);
  if (cpml > std::numeric_limits<int>::max())
    bad("--cpml " + trim(f.cpml) + " points is more than any model holds");
  o.boundary.cpml_width = int(cpml);
  o.boundary.free_surface = f.free_surface;
  if (!f.cpml_reflection.empty()) {
    o.boundary.reflection = number(f.cpml_reflection, "--cpml-reflection");
    if (o.boundary.reflection < 0 || o.boundary.reflection >= 1)
      bad("--cpml-reflection " + trim(f.cpml_reflection) +
          ": a reflection coefficient is in [0, 1) (0: from the width)");
    if (cpml == 0 && o.boundary.reflection > 0)
      bad("--cpml-reflection needs a CPML, and --cpml 0 asks for none");
  }
  if (f.interpolation != "hicks" && f.interpolation != "trilinear")
    bad("--interpolation '" + f.interpolation + "': expected hicks or trilinear");
  o.interpolation = wave::parse_interpolation(f.interpolation);
}

// The sources (at least one) and the receivers, from the command line and from files.
void read_geometry(const Flags& f, Setup& s) {
  const int dim = s.model().dim;
  wave::Options& o = s.options;
  for (const std::string& text : f.sources) s.sources.push_back(parse_point(text, dim, "--source"));
  if (!f.sources_file.empty())
    for (const auto& p : read_positions(f.sources_file, dim, "--sources")) s.sources.push_back(p);
  if (s.sources.empty())
    bad(std::string("at least one source is required: --source ") + axes_text(dim) +
        " (metres, repeatable) or --sources FILE");
  if (!f.receivers_file.empty()) o.receivers = read_positions(f.receivers_file, dim, "--receivers");
  for (const std::string& text : f.receiver_lines)
    for (const auto& p : receiver_line(text, dim)) o.receivers.push_back(p);
  for (const std::string& text : f.receiver_grids)
    for (const auto& p : receiver_grid(text, dim)) o.receivers.push_back(p);
}

// The record's sample interval and length (resampled from the run's dt where asked, or where
// SEG-Y needs whole microseconds), and its host memory, checked before the run.
void plan_record(const Flags& f, Setup& s) {
  wave::Options& o = s.options;
  s.record_dt = f.record_dt.empty() ? o.dt : positive(f.record_dt, "--record-dt");
  bool resampled = !f.record_dt.empty();
  if (f.segy && f.record_dt.empty()) {
    // SEG-Y counts the sample interval in whole microseconds: a run's dt that is not one is
    // recorded at the whole microsecond below it, so shot.npy and shot.sgy hold the same samples.
    const double us = o.dt * 1e6;
    if (std::abs(us - std::round(us)) > kRatioTolerance * us) {
      if (us < 1)
        bad("--segy: the run's dt " + std::to_string(o.dt) +
            " s is under a microsecond, the unit of SEG-Y's sample interval: give --record-dt, a whole "
            "number of microseconds");
      s.record_dt = std::floor(us) * 1e-6;
      resampled = true;
    }
  }
  const double span = double(o.nt - 1) * o.dt / s.record_dt;
  if (span > kMaxSteps)
    bad("--record-dt " + trim(f.record_dt) + " s asks for more than 1e15 samples per trace");
  s.n_out = resampled ? int64_t(std::floor(span * (1 + kRatioTolerance))) + 1 : o.nt;
  const int64_t nrec = int64_t(o.receivers.size()), nsrc = int64_t(s.sources.size());
  // The solver's traces at dt, the resampled record and the analytic one beside it; and a wavelet
  // per source at dt in double, with the one they share (build_wavelet).
  const int64_t record = bytes_of(nrec, o.nt + 2 * s.n_out, 4), wavelets = bytes_of(nsrc + 1, o.nt, 8);
  const std::string what = "the memory for the shot record (" + std::to_string(nrec) + " receivers x " +
                           std::to_string(s.n_out) + " samples) and the wavelets (" + std::to_string(nsrc) +
                           " sources x " + std::to_string(o.nt) + " steps)";
  const int64_t most = std::numeric_limits<int64_t>::max();
  try {
    ensure_host_memory(record > most - wavelets ? most : record + wavelets, what.c_str());
  } catch (const Error& e) {
    throw Error(e.kind(),
                std::string(e.what()) +
                    ": fewer --steps or a shorter --time, fewer receivers, or a coarser --record-dt "
                    "would need less");
  }
}

// --shot-id, and what shot.sgy cannot hold: refused now, not after the run.
void check_segy_record(const Flags& f, Setup& s) {
  const wave::Options& o = s.options;
  if (!f.shot_id.empty()) {
    const int64_t id = integer(f.shot_id, "--shot-id", 1);
    if (id > std::numeric_limits<int32_t>::max())
      bad("--shot-id " + trim(f.shot_id) + ": at most 2147483647 (a 32-bit header field)");
    s.shot_id = int(id);
  }
  s.write_segy = f.segy;
  s.segy_little_endian = f.segy_little_endian;
  if (f.segy_little_endian && !f.segy)
    bad("--segy-little-endian sets shot.sgy's byte order, and --segy is not given");
  if (f.segy) {
    if (o.receivers.empty())
      bad("--segy writes the shot record as SEG-Y, and there are no receivers (--receivers, --receiver-line "
          "or --receiver-grid)");
    if (s.sources.size() > 1)
      bad("--segy: a SEG-Y trace header holds one source position, and this run fires " +
          std::to_string(s.sources.size()) +
          " sources together (run one source per shot, or leave out --segy)");
    if (s.n_out > 65535)  // the 2-byte sample count of SEG-Y
      bad("--segy: the record has " + std::to_string(s.n_out) +
          " samples per trace and a SEG-Y trace holds at most 65535: a coarser --record-dt, or fewer steps");
    segy::check_record_timing(
        s.record_dt, s.n_out,
        f.record_dt.empty() ? std::string("--segy") : "--record-dt " + trim(f.record_dt));
    // Positions are written in centimetres in 32-bit fields.
    const wave::Model& m = s.model();
    const double extent = double(std::max({m.nz, m.ny, m.nx}) - 1) * m.h;
    if (extent * 100 > double(std::numeric_limits<int32_t>::max()))
      bad("--segy: the model spans " + std::to_string(extent) +
          " m, beyond the +-21474 km a SEG-Y coordinate holds in centimetres");
  }
}

// --backend, --double, --kernel-params, --overlap and --layer-plane-cost.
void pick_backend(const Flags& f, wave::Options& o) {
  if (f.backend != "auto" && f.backend != "cuda" && f.backend != "cpu")
    bad("--backend '" + f.backend + "': expected auto, cuda or cpu");
  o.backend = f.backend;
  if (f.double_precision) {
    if (f.backend == "cuda")
      bad("--double is the cpu backend's double-precision solver: not with --backend cuda");
    o.backend = "cpu";  // auto: double precision exists only on the cpu
    o.double_precision = true;
  }
  if (o.backend == "cuda" && gpu_count() == 0)
    throw Error(ErrorKind::unsupported, "--backend cuda: " + gpu_unavailable_reason());
  if (!f.kernel_params.empty()) {
    nlohmann::json kp = nlohmann::json::parse(f.kernel_params, nullptr, false);
    if (kp.is_discarded() || !kp.is_object())
      bad("--kernel-params '" + f.kernel_params +
          "': expected a JSON object such as {\"block\": \"32x4\", \"vec\": 4}");
    if (o.backend == "cpu") bad("--kernel-params configures the GPU step kernel, and this run is on the cpu");
    o.kernel_params = f.kernel_params;
  }
  o.overlap = overlap_of(f);
  o.layer_plane_cost = layer_plane_cost_of(f);
}

// --compare-analytic needs a homogeneous model in free space, and receivers off the sources.
void check_analytic(const Flags& f, const Setup& s) {
  const wave::Options& o = s.options;
  if (s.model_json["kind"] != "constant")
    bad("--compare-analytic needs a homogeneous model (--constant V); the analytic solution of a " +
        s.model_json["kind"].get<std::string>() + " model is unknown");
  if (f.free_surface)
    bad("--compare-analytic compares with the free-space solution, which --free-surface changes by its "
        "reflection");
  if (o.receivers.empty())
    bad("--compare-analytic compares the receivers' traces, and there are no receivers");
  for (size_t r = 0; r < o.receivers.size(); ++r)
    for (size_t k = 0; k < s.sources.size(); ++k) {
      const wave::Point &a = o.receivers[r], &b = s.sources[k];
      const double d =
          std::sqrt((a.z - b.z) * (a.z - b.z) + (a.y - b.y) * (a.y - b.y) + (a.x - b.x) * (a.x - b.x));
      // The point source's field is singular at the source; the grid resolves it no closer than h.
      if (d < s.model().h)
        bad("--compare-analytic: receiver " + std::to_string(r) + " is " + std::to_string(d) +
            " m from source " + std::to_string(k) +
            ", closer than one grid spacing, where the analytic solution is singular");
    }
}

}  // namespace

Setup prepare(const Flags& f, const ModelInput* given) {
  Setup s;
  read_output(f, s);
  PhaseNotice reading(f.label, "reading the model " + f.model, !f.quiet && !given && !f.model.empty());
  // Summarised: the run's checks, default step, sampling warning and fingerprint each ask for the
  // extremes or the checksum, one pass over the model apiece without it.
  const ModelInput m = given ? *given : build_model(f, {}, /*summarise=*/true);
  reading.end();
  s.model_ptr = m.model;
  s.model_json = m.json;
  wave::Options& o = s.options;
  read_numerics(f, o);
  build_time(f, s);
  {
    // Not for a survey's shots or a split run's ranks, which share a model read once: one line a run.
    PhaseNotice positions(f.label, "reading the sources and receivers", !f.quiet && !given);
    read_geometry(f, s);
  }
  // The record's size, and the wavelets', checked before either is made (issue 33: a billion
  // steps grew 14 GB of wavelet before the record was refused).
  plan_record(f, s);
  check_segy_record(f, s);
  // The wavelet, sampled at the run's dt.
  build_wavelet(f, s);
  for (const wave::Point& p : s.sources) o.sources.push_back({p, s.wavelet.at_run_dt});
  o.snapshot_steps = snapshot_steps(f, o.nt);
  if (!f.snapshot_slice.empty()) {
    if (o.snapshot_steps.empty())
      bad("--snapshot-slice cuts the snapshots, and none were asked for (--snapshot-every N or "
          "--snapshot-steps a,b,c)");
    s.slice = parse_slice(f.snapshot_slice, s.model());
  }
  pick_backend(f, o);
  s.compare_analytic = f.compare_analytic;
  if (s.compare_analytic) check_analytic(f, s);
  if (!f.checkpoint_every.empty()) o.checkpoint_every = integer(f.checkpoint_every, "--checkpoint-every", 1);
  if (f.resume && f.overwrite)
    bad("--resume continues the run in --output and --overwrite replaces it: give one of them");
  s.resume = f.resume;
  s.overwrite = f.overwrite;
  s.write_final = !f.no_final;
  s.options.final_field = s.write_final;
  s.quiet = f.quiet;
  return s;
}

}  // namespace fdstencil::cli::wave_cli
