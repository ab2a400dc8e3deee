// What `fdstencil gradient`, `rtm` and `born` read beside `wave`'s flags (imaging_cli.hpp): a
// recorded shot (`wave`'s shot.npy with shot.json, or a SEG-Y shot record) checked against the
// run, a memory budget, a velocity perturbation.
#include <cmath>
#include <fstream>

#include "commands.hpp"
#include "fdstencil/error.hpp"
#include "fdstencil/npy.hpp"
#include "fdstencil/segy.hpp"
#include "imaging_cli.hpp"

namespace fdstencil::cli::imaging_cli {

namespace {

namespace fs = std::filesystem;
using nlohmann::json;

[[noreturn]] void bad(const std::string& what) { throw Error(ErrorKind::invalid_argument, what); }

json read_json(const fs::path& p, const std::string& flag) {
  std::ifstream f(p);
  if (!f) throw Error(ErrorKind::io, flag + ": cannot read " + p.string());
  try {
    return json::parse(f);
  } catch (const json::exception& e) {
    throw Error(ErrorKind::io, flag + ": " + p.string() + " is not JSON: " + e.what());
  }
}

// Positions as shot.json lists them (Z,Y,X or Z,X) against the run's, `what` naming them.
void check_points(const json& listed, const std::vector<wave::Point>& run, int dim, const std::string& what,
                  const std::string& where) {
  if (listed.size() != run.size())
    bad(where + ": shot.json lists " + std::to_string(listed.size()) + " " + what + " and the run has " +
        std::to_string(run.size()));
  for (size_t r = 0; r < run.size(); ++r) {
    const wave::Point& p = run[r];
    const std::vector<double> want =
        dim == 3 ? std::vector<double>{p.z, p.y, p.x} : std::vector<double>{p.z, p.x};
    const std::vector<double> got = listed[r].get<std::vector<double>>();
    bool same = got.size() == want.size();
    for (size_t a = 0; same && a < got.size(); ++a) same = std::abs(got[a] - want[a]) <= 1e-6;
    if (!same)
      bad(where + ": " + what + " " + std::to_string(r) + " lies at " + listed[r].dump() +
          " there and elsewhere in this run");
  }
}

// The record's sampling, geometry and boundary against the run's: each mismatch refused by name.
void check_record(const json& doc, const Setup& s, const std::vector<int64_t>& shape,
                  const std::string& where) {
  const wave::Options& o = s.options;
  const double dt = doc.at("dt").get<double>();
  if (std::abs(dt - o.dt) > 1e-9 * o.dt)
    bad(where + ": the record is sampled every " + std::to_string(dt) + " s and the run steps every " +
        std::to_string(o.dt) +
        " s: record it at the run's own step (no --record-dt, the same --dt or --cfl-safety)");
  const int64_t nrec = int64_t(o.receivers.size());
  if (shape.size() != 2 || shape[0] != nrec)
    bad(where + ": the record holds " + (shape.empty() ? "no" : std::to_string(shape[0])) +
        " traces and the run has " + std::to_string(nrec) + " receivers");
  if (shape[1] != o.nt)
    bad(where + ": the record holds " + std::to_string(shape[1]) + " samples a trace and the run " +
        std::to_string(o.nt) + " steps");
  const int dim = s.model().dim;
  check_points(doc.at("receivers"), o.receivers, dim, "receivers", where);
  json sources = json::array();
  for (const json& src : doc.at("sources")) sources.push_back(src.at("position"));
  check_points(sources, s.sources, dim, "sources", where);
  const bool same_boundary = doc.at("radius").get<int>() == o.radius &&
                             doc.at("cpml_width").get<int>() == o.boundary.cpml_width &&
                             doc.at("free_surface").get<bool>() == o.boundary.free_surface;
  if (!same_boundary)
    bad(where + ": recorded with radius " + doc.at("radius").dump() + ", CPML " +
        doc.at("cpml_width").dump() + " and free surface " + doc.at("free_surface").dump() +
        ", which this run does not take (--radius, --cpml, --free-surface)");
}

// read_npy takes float32 and float64 only (DType), and refuses other files naming their type.
std::vector<double> as_doubles(const NpyArray& a) {
  std::vector<double> out(a.bytes.size() / size_t(dtype_bytes(a.dtype)));
  for (size_t i = 0; i < out.size(); ++i)
    out[i] = a.dtype == DType::f32 ? double(reinterpret_cast<const float*>(a.bytes.data())[i])
                                   : reinterpret_cast<const double*>(a.bytes.data())[i];
  return out;
}

// A point's distance to a SEG-Y header's position: the file holds centimetres, so half of one,
// with a little room for the rounding of large coordinates.
bool near_cm(double a, double b) { return std::abs(a - b) <= 0.005 + 1e-9 * std::abs(b); }

std::string at(const wave::Point& p, int dim) {
  std::string s = "(z " + std::to_string(p.z);
  if (dim == 3) s += ", y " + std::to_string(p.y);
  return s + ", x " + std::to_string(p.x) + ") m";
}

// A SEG-Y shot record's samples against the run: its interval, traces and samples, and each
// trace's receiver and source positions (bytes 41, 49, 73-88, as `wave --segy` writes them).
std::vector<double> read_segy_record(const fs::path& file, const Setup& s, const std::string& where) {
  const segy::Traces t = segy::read_traces(file);
  const wave::Options& o = s.options;
  const double dt = double(t.sample_interval) * 1e-6;
  if (std::abs(dt - o.dt) > 1e-9 * o.dt)
    bad(where + ": the record is sampled every " + std::to_string(t.sample_interval) +
        " us and the run steps every " + std::to_string(o.dt) +
        " s: SEG-Y holds whole microseconds, so run at the record's interval (--dt)");
  const int64_t nrec = int64_t(o.receivers.size()), traces = int64_t(t.geometry.size());
  if (traces != nrec)
    bad(where + ": the record holds " + std::to_string(traces) + " traces and the run has " +
        std::to_string(nrec) + " receivers");
  if (t.ns != o.nt)
    bad(where + ": the record holds " + std::to_string(t.ns) + " samples a trace and the run " +
        std::to_string(o.nt) + " steps");
  if (s.sources.size() != 1)
    bad(where + ": a SEG-Y record has one source a trace, and this run fires " +
        std::to_string(s.sources.size()));
  const int dim = s.model().dim;
  const wave::Point& src = s.sources.front();
  for (int64_t r = 0; r < traces; ++r) {
    const segy::TraceGeometry& g = t.geometry[size_t(r)];
    const wave::Point& rec = o.receivers[size_t(r)];
    const wave::Point got_rec{-g.group_elevation, g.gy, g.gx}, got_src{g.source_depth, g.sy, g.sx};
    if (!near_cm(got_rec.z, rec.z) || !near_cm(got_rec.y, rec.y) || !near_cm(got_rec.x, rec.x))
      bad(where + ": trace " + std::to_string(r) + "'s receiver lies at " + at(got_rec, dim) +
          " there and at " + at(rec, dim) + " in this run");
    if (!near_cm(got_src.z, src.z) || !near_cm(got_src.y, src.y) || !near_cm(got_src.x, src.x))
      bad(where + ": trace " + std::to_string(r) + "'s source lies at " + at(got_src, dim) +
          " there and at " + at(src, dim) + " in this run");
  }
  return {t.samples.begin(), t.samples.end()};
}

}  // namespace

fs::path observed_file(const fs::path& path) {
  if (is_segy_path(path.string()) || !fs::is_directory(path)) return path;
  return fs::exists(path / "shot.npy") || !fs::exists(path / "shot.sgy") ? path / "shot.npy"
                                                                         : path / "shot.sgy";
}

std::vector<double> read_observed(const fs::path& dir, const Setup& s, const std::string& flag) {
  const std::string where = flag + " " + dir.string();
  const fs::path file = observed_file(dir);
  if (is_segy_path(file.string())) return read_segy_record(file, s, where);
  if (!fs::exists(dir)) bad(where + ": no such file or folder");
  if (!fs::is_directory(dir))
    bad(where +
        ": expected a folder `fdstencil wave` wrote (shot.npy and shot.json) or a SEG-Y shot record "
        "(.sgy, .segy)");
  const json doc = read_json(dir / "shot.json", flag);
  const NpyArray a = read_npy(dir / "shot.npy");
  try {
    check_record(doc, s, a.shape, where);
  } catch (const json::exception& e) {  // a key missing or of another type: not a record wave wrote
    throw Error(ErrorKind::io, where + ": shot.json is not a record fdstencil wave wrote: " + e.what());
  }
  return as_doubles(a);
}

int64_t budget_bytes(const std::string& mib) {
  if (mib.empty()) return 0;
  double v = 0;
  try {
    size_t used = 0;
    v = std::stod(mib, &used);
    if (used != mib.size()) throw std::invalid_argument(mib);
  } catch (const std::exception&) {
    bad("--memory-budget: expected MiB, a number > 0, got '" + mib + "'");
  }
  // Below a byte it would read as 0, no limit; above 2^40 MiB (an exbibyte) it would overflow.
  if (!(v * double(1 << 20) >= 1) || !(v <= double(int64_t(1) << 40)))
    bad("--memory-budget: expected MiB, a number from 1 byte to 2^40 MiB, got '" + mib + "'");
  return int64_t(v * double(1 << 20));
}

std::vector<double> read_perturbation(const std::string& path, const Setup& s) {
  if (path.empty()) bad("--perturbation FILE is required: dv in m/s over the model's points (.npy)");
  const NpyArray a = read_npy(path);
  const std::vector<int64_t> want = wave_cli::model_shape(s.model());
  if (a.shape != want)
    bad("--perturbation " + path + ": its shape " + json(a.shape).dump() + " is not the model's " +
        json(want).dump());
  return as_doubles(a);
}

}  // namespace fdstencil::cli::imaging_cli
