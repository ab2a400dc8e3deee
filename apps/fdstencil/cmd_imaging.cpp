// fdstencil gradient and fdstencil rtm: the FWI gradient of one recorded shot's misfit, and its
// reverse-time migration image (fdstencil/imaging.hpp, issue 37). The run is described by `fdstencil
// wave`'s own flags (model, time, numerics, sources, receivers), so the gradient belongs to the
// very run `wave` makes; the observed record is a folder `wave` wrote (shot.npy with shot.json),
// checked against the run before any work: sampled at the run's dt, one trace per receiver at the
// same positions, one sample per step. The results go to --output: gradient.npy or image.npy (the
// model's shape, float32) and summary.json, never over an earlier run's without --overwrite.
#include <cmath>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "commands.hpp"
#include "fdstencil/error.hpp"
#include "fdstencil/imaging.hpp"
#include "fdstencil/npy.hpp"
#include "wave_cli.hpp"

namespace fdstencil::cli {

namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using namespace wave_cli;

[[noreturn]] void bad(const std::string& what) { throw Error(ErrorKind::invalid_argument, what); }

struct ImagingFlags {
  std::string observed, memory_budget, condition = "adjoint";
  bool illumination = false, laplacian = false;
};

json read_json(const fs::path& p) {
  std::ifstream f(p);
  if (!f) throw Error(ErrorKind::io, "--observed: cannot read " + p.string());
  try {
    return json::parse(f);
  } catch (const json::exception& e) {
    throw Error(ErrorKind::io, "--observed: " + p.string() + " is not JSON: " + e.what());
  }
}

// Positions as shot.json lists them (Z,Y,X or Z,X) against the run's, `what` naming them.
void check_points(const json& listed, const std::vector<wave::Point>& run, int dim, const std::string& what,
                  const std::string& dir) {
  if (listed.size() != run.size())
    bad("--observed " + dir + ": shot.json lists " + std::to_string(listed.size()) + " " + what +
        " and the run has " + std::to_string(run.size()));
  for (size_t r = 0; r < run.size(); ++r) {
    const wave::Point& p = run[r];
    const std::vector<double> want =
        dim == 3 ? std::vector<double>{p.z, p.y, p.x} : std::vector<double>{p.z, p.x};
    const std::vector<double> got = listed[r].get<std::vector<double>>();
    bool same = got.size() == want.size();
    for (size_t a = 0; same && a < got.size(); ++a) same = std::abs(got[a] - want[a]) <= 1e-6;
    if (!same)
      bad("--observed " + dir + ": " + what + " " + std::to_string(r) + " lies at " + listed[r].dump() +
          " there and elsewhere in this run");
  }
}

// The record's sampling, geometry and boundary against the run's: each mismatch refused by name.
void check_record(const json& doc, const Setup& s, const std::vector<int64_t>& shape,
                  const std::string& dir) {
  const wave::Options& o = s.options;
  const double dt = doc.at("dt").get<double>();
  if (std::abs(dt - o.dt) > 1e-9 * o.dt)
    bad("--observed " + dir + ": the record is sampled every " + std::to_string(dt) +
        " s and the run steps every " + std::to_string(o.dt) +
        " s: record it at the run's own step (no --record-dt, the same --dt or --cfl-safety)");
  const int64_t nrec = int64_t(o.receivers.size());
  if (shape.size() != 2 || shape[0] != nrec)
    bad("--observed " + dir + ": the record holds " + (shape.empty() ? "no" : std::to_string(shape[0])) +
        " traces and the run has " + std::to_string(nrec) + " receivers");
  if (shape[1] != o.nt)
    bad("--observed " + dir + ": the record holds " + std::to_string(shape[1]) +
        " samples a trace and the run " + std::to_string(o.nt) + " steps");
  const int dim = s.model().dim;
  check_points(doc.at("receivers"), o.receivers, dim, "receivers", dir);
  json sources = json::array();
  for (const json& src : doc.at("sources")) sources.push_back(src.at("position"));
  check_points(sources, s.sources, dim, "sources", dir);
  const bool same_boundary = doc.at("radius").get<int>() == o.radius &&
                             doc.at("cpml_width").get<int>() == o.boundary.cpml_width &&
                             doc.at("free_surface").get<bool>() == o.boundary.free_surface;
  if (!same_boundary)
    bad("--observed " + dir + ": recorded with radius " + doc.at("radius").dump() + ", CPML " +
        doc.at("cpml_width").dump() + " and free surface " + doc.at("free_surface").dump() +
        ", which this run does not take (--radius, --cpml, --free-surface)");
}

// The observed traces (nrec, nt) from a folder `fdstencil wave` wrote.
std::vector<double> read_observed(const std::string& dir, const Setup& s) {
  if (dir.empty()) bad("--observed DIR is required: the folder of the recorded shot (shot.npy, shot.json)");
  const json doc = read_json(fs::path(dir) / "shot.json");
  const NpyArray a = read_npy(fs::path(dir) / "shot.npy");
  try {
    check_record(doc, s, a.shape, dir);
  } catch (const json::exception& e) {  // a key missing or of another type: not a record wave wrote
    throw Error(ErrorKind::io,
                "--observed " + dir + ": shot.json is not a record fdstencil wave wrote: " + e.what());
  }
  std::vector<double> out(a.bytes.size() / size_t(dtype_bytes(a.dtype)));
  for (size_t i = 0; i < out.size(); ++i)
    out[i] = a.dtype == DType::f32 ? double(reinterpret_cast<const float*>(a.bytes.data())[i])
                                   : reinterpret_cast<const double*>(a.bytes.data())[i];
  return out;
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

// The output folder: a folder holding an earlier run's result or summary is refused unless
// --overwrite; missing folders are made, and on a failure the files this run wrote and the folders
// it made are removed again.
class Claim {
 public:
  Claim(const Setup& s, const std::string& result) : dir_(s.out_dir) {
    for (const std::string& name : {result, std::string("summary.json")})
      if (fs::exists(dir_ / name) && !s.overwrite)
        bad("--output " + dir_.string() + " holds an earlier run's " + name + " (--overwrite replaces it)");
    std::error_code ec;
    for (fs::path p = dir_; !p.empty() && !fs::exists(p, ec); p = p.parent_path()) {
      top_ = p;
      if (p == p.parent_path()) break;
    }
    fs::create_directories(dir_, ec);
    if (ec) throw Error(ErrorKind::io, "--output " + dir_.string() + ": cannot create it: " + ec.message());
    check_writable((dir_ / "summary.json").string());
  }
  ~Claim() {
    if (kept_) return;
    std::error_code ec;
    for (const fs::path& f : written_) fs::remove(f, ec);
    if (top_.empty()) return;
    for (fs::path p = dir_;; p = p.parent_path()) {  // only while empty: stops at the first with files
      if (!fs::remove(p, ec) || p == top_ || p == p.parent_path()) return;
    }
  }
  void wrote(const std::string& name) { written_.push_back(dir_ / name); }
  void keep() { kept_ = true; }

 private:
  fs::path dir_, top_;  // top_: the outermost folder this run made ("" when dir_ existed)
  std::vector<fs::path> written_;
  bool kept_ = false;
};

json storage_json(const wave::StorageReport& r) {
  return {{"backend", r.backend},         {"stored_bytes", r.stored_bytes},
          {"checkpoints", r.checkpoints}, {"recomputed_steps", r.recomputed_steps},
          {"forward_s", r.forward_s},     {"backward_s", r.backward_s},
          {"total_s", r.total_s}};
}

int run_imaging(const Flags& f, const ImagingFlags& g, bool rtm, const std::string& command) {
  if (!f.record_dt.empty()) bad("--record-dt: the observed traces are taken at the run's own step");
  if (!f.kernel_params.empty()) bad("--kernel-params: the gradient and RTM take the default launch");
  if (g.condition != "adjoint" && g.condition != "crosscorrelation")
    bad("--condition: expected adjoint or crosscorrelation, got '" + g.condition + "'");
  Setup s = prepare(f);
  const std::vector<double> observed = read_observed(g.observed, s);
  const wave::Storage storage{budget_bytes(g.memory_budget)};
  const std::string result = rtm ? "image.npy" : "gradient.npy";
  Claim claim(s, result);
  json doc = {{"format", rtm ? "fdstencil-rtm-summary-1" : "fdstencil-gradient-summary-1"},
              {"command", command},
              {"observed", g.observed},
              {"steps", s.options.nt},
              {"dt", s.options.dt},
              {"radius", s.options.radius},
              {"double_precision", s.options.double_precision},
              {"model", s.model_json}};
  std::vector<double> out;
  wave::StorageReport report;
  if (rtm) {
    wave::RtmOptions r;
    r.condition =
        g.condition == "adjoint" ? wave::ImagingCondition::adjoint : wave::ImagingCondition::crosscorrelation;
    r.illumination = g.illumination;
    r.laplacian = g.laplacian;
    r.storage = storage;
    r.report = &report;
    out = wave::rtm(s.model(), s.options, observed, r);
    doc["condition"] = g.condition;
    doc["illumination"] = g.illumination;
    doc["laplacian"] = g.laplacian;
  } else {
    wave::Gradient gr = wave::gradient(s.model(), s.options, observed, storage);
    out = std::move(gr.velocity);
    report = gr.storage;
    doc["misfit"] = gr.misfit;
    doc["gradient_of"] = "1/2 sum over receivers and steps of (modelled - observed)^2, by the velocity (m/s)";
  }
  doc["storage"] = storage_json(report);
  const std::vector<float> values(out.begin(), out.end());
  claim.wrote(result);
  write_npy(s.out_dir / result, DType::f32, model_shape(s.model()), values.data(),
            int64_t(values.size() * sizeof(float)));
  doc["outputs"] = {result, "summary.json"};
  write_json_file((s.out_dir / "summary.json").string(), doc);
  claim.keep();
  if (!f.quiet)
    std::fprintf(stderr, "fdstencil %s: %s written to %s (%s, %.2f s)\n", rtm ? "rtm" : "gradient",
                 result.c_str(), s.out_dir.string().c_str(), report.backend.c_str(), report.total_s);
  return 0;
}

void add_imaging_options(CLI::App* cmd, Flags* f, ImagingFlags* g, bool rtm) {
  const std::string group = rtm ? "RTM" : "Gradient";
  cmd->add_option(
         "--observed", g->observed,
         "The recorded shot: a folder `fdstencil wave` wrote (shot.npy, shot.json) at this run's dt, "
         "one trace per receiver of this run (required)")
      ->type_name("DIR")
      ->group(group);
  cmd->add_option("--output,-o", f->output,
                  std::string("Directory for ") + (rtm ? "image.npy" : "gradient.npy") +
                      " (the model's shape, float32) and summary.json, created if missing (required)")
      ->type_name("DIR")
      ->group(group);
  cmd->add_flag("--overwrite", f->overwrite, "Replace an earlier run's result and summary in --output")
      ->group(group);
  cmd->add_option(
         "--memory-budget", g->memory_budget,
         "MiB the kept forward run may take (default: what is free); below every step's field, binomial "
         "checkpoints with steps run again (docs/imaging.md)")
      ->type_name("MIB")
      ->group(group);
  cmd->add_option("--backend,-b", f->backend,
                  "auto (the GPU when present, else cpu), cuda or cpu (default auto)")
      ->type_name("NAME")
      ->group(group);
  cmd->add_flag("--double", f->double_precision,
                "In double precision (the cpu backend, which auto then picks)")
      ->group(group);
  cmd->add_flag("--quiet,-q", f->quiet, "No line on stderr when done")->group(group);
  if (!rtm) return;
  cmd->add_option(
         "--condition", g->condition,
         "adjoint (J^T d: the gradient's correlation over m) or crosscorrelation (the zero-lag sum of "
         "u ubar) (default adjoint)")
      ->type_name("NAME")
      ->group(group);
  cmd->add_flag("--illumination", g->illumination, "Divide by the source's illumination, the sum of u^2")
      ->group(group);
  cmd->add_flag("--laplacian", g->laplacian, "Then filter by -Laplacian against low-wavenumber noise")
      ->group(group);
}

Action add_imaging(CLI::App& app, const std::vector<std::string>& argv, bool rtm) {
  auto* cmd = app.add_subcommand(
      rtm ? "rtm" : "gradient",
      rtm ? "Reverse-time migration of one recorded shot: its image over the model's points, by the exact "
            "adjoint of `fdstencil wave`'s own run (the same flags describe it). Bad input exits 2 before "
            "any "
            "work and writes nothing."
          : "The FWI gradient of one recorded shot: d/dv of 1/2 sum (modelled - observed)^2 over the model's "
            "points, the exact adjoint of `fdstencil wave`'s own run (the same flags describe it). Bad input "
            "exits 2 before any work and writes nothing.");
  auto f = std::make_shared<Flags>();
  auto g = std::make_shared<ImagingFlags>();
  add_model_options(cmd, f.get());
  add_time_options(cmd, f.get());
  add_numerics_options(cmd, f.get());
  add_sources_options(cmd, f.get());
  add_receivers_options(cmd, f.get());
  add_imaging_options(cmd, f.get(), g.get(), rtm);
  const std::string command = command_text(argv);
  return [f, g, rtm, command] { return run_imaging(*f, *g, rtm, command); };
}

}  // namespace

Action add_gradient(CLI::App& app, const std::vector<std::string>& argv) {
  return add_imaging(app, argv, false);
}
Action add_rtm(CLI::App& app, const std::vector<std::string>& argv) { return add_imaging(app, argv, true); }

}  // namespace fdstencil::cli
