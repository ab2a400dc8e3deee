// What `fdstencil gradient`, `rtm` and `born` write (imaging_cli.hpp): the output folder's claim,
// the result's files, the summary's storage report.
#include <algorithm>
#include <cmath>

#include "commands.hpp"
#include "fdstencil/error.hpp"
#include "fdstencil/npy.hpp"
#include "fdstencil/segy.hpp"
#include "imaging_cli.hpp"

namespace fdstencil::cli::imaging_cli {

namespace fs = std::filesystem;
using nlohmann::json;
using wave_cli::model_shape;

const char* result_name(Kind k) { return k == Kind::rtm ? "image.npy" : "gradient.npy"; }
const char* command_name(Kind k) { return k == Kind::rtm ? "rtm" : "gradient"; }

json storage_json(const wave::StorageReport& r) {
  return {{"backend", r.backend},          {"stored_bytes", r.stored_bytes},
          {"checkpoints", r.checkpoints},  {"recomputed_steps", r.recomputed_steps},
          {"boundary_saving", r.boundary}, {"reversed_steps", r.reversed_steps},
          {"forward_s", r.forward_s},      {"backward_s", r.backward_s},
          {"total_s", r.total_s}};
}

OutputClaim::OutputClaim(const fs::path& dir, const std::vector<std::string>& names, bool overwrite)
    : dir_(dir) {
  for (const std::string& name : names) {
    if (!fs::exists(dir_ / name)) continue;
    if (!overwrite)
      throw Error(ErrorKind::invalid_argument, "--output " + dir_.string() + " holds an earlier run's " +
                                                   name + " (--overwrite replaces it)");
    earlier_.push_back(dir_ / name);
  }
  std::error_code ec;
  for (fs::path p = dir_; !p.empty() && !fs::exists(p, ec); p = p.parent_path()) {
    top_ = p;
    if (p == p.parent_path()) break;
  }
  fs::create_directories(dir_, ec);
  if (ec) throw Error(ErrorKind::io, "--output " + dir_.string() + ": cannot create it: " + ec.message());
  try {
    check_writable((dir_ / "summary.json").string());
  } catch (...) {
    remove_made_folders();
    throw;
  }
}

OutputClaim::~OutputClaim() {
  if (kept_) return;
  std::error_code ec;
  for (const fs::path& f : written_) fs::remove(f, ec);
  remove_made_folders();
}

void OutputClaim::remove_made_folders() {
  if (top_.empty()) return;
  std::error_code ec;
  for (fs::path p = dir_;; p = p.parent_path()) {  // only while empty: stops at the first with files
    if (!fs::remove(p, ec) || p == top_ || p == p.parent_path()) return;
  }
}

void OutputClaim::wrote(const std::string& name) { written_.push_back(dir_ / name); }

void OutputClaim::keep() {
  kept_ = true;
  std::error_code ec;
  for (const fs::path& f : earlier_)
    if (std::find(written_.begin(), written_.end(), f) == written_.end()) fs::remove(f, ec);
}

std::vector<std::string> result_files(Kind kind, const ImagingFlags& g) {
  std::vector<std::string> names = {result_name(kind)};
  if (g.segy) names.push_back(result_segy_name(kind));
  return names;
}

const char* result_segy_name(Kind k) { return k == Kind::rtm ? "image.sgy" : "gradient.sgy"; }

namespace {

// A SEG-Y --model's own z unit where given, else the finest of millimetres, centimetres, decimetres
// and metres in which the sample interval is a whole number that its 2-byte field holds.
double result_z_unit(const Setup& s, const Flags& f) {
  if (!f.segy_z_unit.empty()) return segy_read_options("", f.segy_z_unit, "", "").z_unit;
  for (double unit : {1e-3, 1e-2, 1e-1, 1.0}) {
    const double interval = s.model().h / unit;
    if (std::abs(interval - std::round(interval)) <= 1e-9 * interval && interval <= 65535) return unit;
  }
  return segy::kDefaultZUnit;  // none: check_result_files refuses, naming the spacing
}

segy::Grid result_grid(const Setup& s) {
  segy::Grid grid = segy::from_model(s.model());
  grid.v.clear();
  return grid;
}

}  // namespace

void check_result_files(const Setup& s, const Flags& f, const ImagingFlags& g) {
  if (g.segy) segy::check_model_layout(result_grid(s), result_z_unit(s, f), "--segy");
}

void write_result(const std::filesystem::path& dir, const Setup& s, const Flags& f, const ImagingFlags& g,
                  Kind kind, const std::vector<double>& values, OutputClaim& claim) {
  const std::vector<float> v(values.begin(), values.end());
  claim.wrote(result_name(kind));
  write_npy(dir / result_name(kind), DType::f32, model_shape(s.model()), v.data(),
            int64_t(v.size() * sizeof(float)));
  if (!g.segy) return;
  segy::Grid grid = result_grid(s);
  grid.v = v;
  const std::string name = result_files(kind, g).back();
  claim.wrote(name);
  segy::write_model(dir / name, grid, result_z_unit(s, f), false,
                    kind == Kind::rtm ? "RTM IMAGE" : "FWI GRADIENT, D MISFIT / D VELOCITY");
}

}  // namespace fdstencil::cli::imaging_cli
