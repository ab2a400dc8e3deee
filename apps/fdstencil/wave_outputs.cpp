// fdstencil wave's outputs: the shot record and its sidecar (and its SEG-Y copy), the final field,
// the snapshots, the analytic record and the run's summary, each written atomically (write_npy,
// write_json_file, segy::write_shot) so that a reader never finds half a file, and the paragraph
// that tells a person what happened.
#include <sys/resource.h>

#include <algorithm>
#include <cstdio>
#include <stdexcept>

#include "commands.hpp"
#include "fdstencil/npy.hpp"
#include "fdstencil/segy.hpp"
#include "wave_cli.hpp"

namespace fdstencil::cli::wave_cli {

namespace {

using nlohmann::json;

// "1.25 ms", "0.52 s": a time a person reads at a glance.
std::string time_text(double seconds) {
  char buf[64];
  if (seconds < 1e-3)
    std::snprintf(buf, sizeof buf, "%.4g us", seconds * 1e6);
  else if (seconds < 1)
    std::snprintf(buf, sizeof buf, "%.4g ms", seconds * 1e3);
  else
    std::snprintf(buf, sizeof buf, "%.4g s", seconds);
  return buf;
}

const char* overlap_text(wave::Options::Overlap o) {
  return o == wave::Options::Overlap::automatic ? "auto" : (o == wave::Options::Overlap::on ? "on" : "off");
}

std::string extents_text(const std::vector<int64_t>& shape) {
  std::string t;
  for (size_t i = 0; i < shape.size(); ++i) t += (i ? " x " : "") + std::to_string(shape[i]);
  return t;
}

json point_json(const wave::Point& p, int dim) { return dim == 3 ? json{p.z, p.y, p.x} : json{p.z, p.x}; }

void write_f32(const std::filesystem::path& path, const std::vector<int64_t>& shape,
               const std::vector<float>& v) {
  write_npy(path, DType::f32, shape, v.data(), int64_t(v.size() * sizeof(float)));
}

// The computational box beside the model: per axis, the absorbing points before and after it.
json domain_json(const wave::Domain& d) {
  const char* names[3] = {"x", "y", "z"};
  json absorbing = json::object();
  for (int a = 0; a < 3; ++a)
    if (a != 1 || d.dim == 3) absorbing[names[a]] = {{"lo", d.lo[a]}, {"hi", d.hi[a]}};
  const auto extents = [&](int64_t z, int64_t y, int64_t x) {
    return d.dim == 3 ? json{z, y, x} : json{z, x};
  };
  return {{"dim", d.dim},
          {"model", extents(d.model_nz, d.model_ny, d.model_nx)},
          {"computational", extents(d.nz, d.ny, d.nx)},
          {"points", d.points()},
          {"absorbing", absorbing}};
}

json timing_json(const wave::Timing& t) {
  json j = {{"loop_s", t.loop_s},
            {"total_s", t.total_s},
            {"setup_s", t.setup_s},
            {"gpts", t.gpts},
            {"bytes_per_point", t.bytes_per_point},
            {"copy_gbps", t.copy_gbps},
            {"bound_gpts", t.bound_gpts},
            {"percent_of_bound", t.percent_of_bound},
            {"device_bytes", t.device_bytes}};
  if (t.threads > 0) j["threads"] = t.threads;  // a cpu run's
  json phases = json::object();
  for (const auto& [name, s] : t.setup_phases) phases[name] = s;
  j["setup_phases_s"] = phases;
  return j;
}

}  // namespace

std::string snapshot_name(int64_t step) {
  char name[64];
  std::snprintf(name, sizeof name, "snapshot_%06lld.npy", static_cast<long long>(step));
  return name;
}

std::vector<float> slice_cut(const Setup& s, const std::vector<float>& planes, int64_t first_plane) {
  const wave::Model& m = s.model();
  const int64_t count = int64_t(planes.size()) / (m.ny * m.nx), K = s.slice.index;
  const auto at = [&](int64_t k, int64_t j, int64_t i) { return planes[size_t((k * m.ny + j) * m.nx + i)]; };
  std::vector<float> cut;
  switch (s.slice.axis) {
    case 'z':  // a horizontal plane (ny, nx), or a line (nx) in 2D: the planes' one, if they hold it
      if (K >= first_plane && K < first_plane + count)
        for (int64_t j = 0; j < m.ny; ++j)
          for (int64_t i = 0; i < m.nx; ++i) cut.push_back(at(K - first_plane, j, i));
      break;
    case 'y':  // 3D only: (nz, nx), the planes' rows
      for (int64_t k = 0; k < count; ++k)
        for (int64_t i = 0; i < m.nx; ++i) cut.push_back(at(k, K, i));
      break;
    case 'x':  // (nz, ny), or a line (nz) in 2D, the planes' columns
      for (int64_t k = 0; k < count; ++k)
        for (int64_t j = 0; j < m.ny; ++j) cut.push_back(at(k, j, K));
      break;
    default: throw std::logic_error("slice_cut without a --snapshot-slice");
  }
  return cut;
}

std::string write_snapshot(const Setup& s, const wave::Snapshot& snap) {
  const wave::Model& m = s.model();
  std::vector<int64_t> shape = model_shape(m);
  if (s.slice.axis == 'z') shape = m.dim == 3 ? std::vector<int64_t>{m.ny, m.nx} : std::vector<int64_t>{m.nx};
  if (s.slice.axis == 'y') shape = {m.nz, m.nx};
  if (s.slice.axis == 'x') shape = m.dim == 3 ? std::vector<int64_t>{m.nz, m.ny} : std::vector<int64_t>{m.nz};
  // A split run's ranks cut their planes before the gather (Options::split_snapshot_cut).
  const bool cut_here = s.slice.axis && !s.options.split_snapshot_cut;
  if (cut_here && int64_t(snap.field.size()) != m.points())
    throw std::logic_error("snapshot of step " + std::to_string(snap.step) + " holds " +
                           std::to_string(snap.field.size()) + " points, the model " +
                           std::to_string(m.points()));
  const std::vector<float> cut = cut_here ? slice_cut(s, snap.field, 0) : std::vector<float>{};
  const std::vector<float>& out = cut_here ? cut : snap.field;
  int64_t expected = 1;
  for (int64_t n : shape) expected *= n;
  if (int64_t(out.size()) != expected)
    throw std::logic_error("snapshot of step " + std::to_string(snap.step) + " holds " +
                           std::to_string(out.size()) + " values for " + std::to_string(expected));
  const std::string name = snapshot_name(snap.step);
  write_f32(s.out_dir / name, shape, out);
  return name;
}

std::vector<float> shot_record(const Setup& s, const wave::Result& r, PhaseNotice* notice) {
  const size_t nrec = s.options.receivers.size(), nt = size_t(r.nt), n_out = size_t(s.n_out);
  if (r.traces.size() != nrec * nt)
    throw std::logic_error("the solver returned " + std::to_string(r.traces.size()) + " trace samples for " +
                           std::to_string(nrec) + " receivers x " + std::to_string(nt) + " steps");
  std::vector<float> out(nrec * n_out);
  for (size_t k = 0; k < nrec; ++k) {
    const float* trace = r.traces.data() + k * nt;
    if (s.record_dt == r.dt && n_out == nt) {  // the solver's own samples, not an interpolation of them
      std::copy(trace, trace + nt, out.begin() + std::ptrdiff_t(k * n_out));
      continue;
    }
    const std::vector<double> in(trace, trace + nt);
    const std::vector<double> res = wave::resample(in, r.dt, s.record_dt, s.n_out);
    for (size_t n = 0; n < n_out && n < res.size(); ++n) out[k * n_out + n] = float(res[n]);
    if (notice) notice->advance(int64_t(k + 1), int64_t(nrec));
  }
  return out;
}

std::vector<std::string> write_shot(const Setup& s, const std::vector<float>& record) {
  const int dim = s.model().dim;
  const int64_t nrec = int64_t(s.options.receivers.size());
  write_f32(s.out_dir / "shot.npy", {nrec, s.n_out}, record);
  json receivers = json::array(), sources = json::array();
  for (const auto& p : s.options.receivers) receivers.push_back(point_json(p, dim));
  for (const auto& p : s.sources)
    sources.push_back({{"position", point_json(p, dim)}, {"wavelet", s.wavelet.to_json()}});
  // u solves u_tt = v^2 lap u + v^2 f(t) delta(x - x_s): delta is per m^dim, so u carries the
  // wavelet's units times m^(2 - dim) (wave.hpp's Green's functions say the same).
  const std::string amplitude =
      dim == 3 ? "u of u_tt = v^2 lap u + v^2 f(t) delta(x - x_s): the wavelet's units per metre (f / (4 pi "
                 "r) in a homogeneous medium)"
               : "u of u_tt = v^2 lap u + v^2 f(t) delta(x - x_s): the wavelet's units (m^0 in 2D; f "
                 "convolved with H(t - r/v) / (2 pi sqrt(t^2 - r^2/v^2)) in a homogeneous medium)";
  const json doc = {
      {"format", "fdstencil-shot-1"},
      {"shape", {nrec, s.n_out}},
      {"dt", s.record_dt},
      {"t0", 0.0},
      {"units", {{"time", "s"}, {"position", "m"}, {"amplitude", amplitude}}},
      {"receivers", receivers},
      {"sources", sources},
      {"model", s.model_json},
      {"radius", s.options.radius},
      {"interpolation", s.options.interpolation == wave::Interpolation::hicks ? "hicks" : "trilinear"},
      {"cpml_width", s.options.boundary.cpml_width},
      {"free_surface", s.options.boundary.free_surface},
      {"run_dt", s.options.dt},
      {"shot_id", s.shot_id}};
  write_json_file((s.out_dir / "shot.json").string(), doc);
  if (!s.write_segy) return {"shot.npy", "shot.json"};
  // The same samples as shot.npy; prepare() checked that SEG-Y can hold them (one source, a whole
  // number of microseconds, at most 65535 samples).
  segy::ShotRecord sgy;
  sgy.field_record = s.shot_id;
  sgy.dt = s.record_dt;
  sgy.ns = s.n_out;
  sgy.traces = record;
  sgy.source = s.sources.front();
  sgy.receivers = s.options.receivers;
  sgy.dim = dim;
  sgy.little_endian = s.segy_little_endian;
  segy::write_shot(s.out_dir / "shot.sgy", sgy);
  return {"shot.npy", "shot.json", "shot.sgy"};
}

std::string write_final(const Setup& s, const wave::Result& r) {
  if (!s.options.split_final_file.empty()) return "final.npy";  // the split run's ranks wrote it
  if (int64_t(r.final_field.size()) != s.model().points())
    throw std::logic_error("the solver's final field holds " + std::to_string(r.final_field.size()) +
                           " points, the model " + std::to_string(s.model().points()));
  write_f32(s.out_dir / "final.npy", model_shape(s.model()), r.final_field);
  return "final.npy";
}

std::string write_analytic(const Setup& s, const std::vector<float>& analytic) {
  write_f32(s.out_dir / "analytic.npy", {int64_t(s.options.receivers.size()), s.n_out}, analytic);
  return "analytic.npy";
}

void write_summary(const Setup& s, const wave::Result& r, const std::string& command, const json& analytic,
                   const std::vector<std::string>& outputs) {
  const wave::Timing& t = r.timing;
  json doc = {{"format", "fdstencil-wave-summary-1"},
              {"command", command},
              {"steps", r.nt},
              {"dt", r.dt},
              {"dt_limit", r.dt_limit},
              {"cfl_safety", s.dt_given ? json(nullptr) : json(s.options.cfl_safety)},
              {"dt_fraction_of_limit", r.dt / r.dt_limit},
              {"backend", r.backend},
              {"double_precision", s.options.double_precision},
              {"kernel", r.kernel},
              {"launch_from", s.launch_from.empty() ? json(nullptr) : json(s.launch_from)},
              {"radius", s.options.radius},
              {"model", s.model_json},
              {"domain", domain_json(r.domain)},
              {"sources", s.sources.size()},
              {"receivers", s.options.receivers.size()},
              {"record_dt", s.record_dt},
              {"record_samples", s.n_out},
              {"timing", timing_json(t)},
              {"bytes_per_grid_point",
               r.domain.points() > 0 ? double(t.device_bytes) / double(r.domain.points()) : 0.0},
              {"reflection", r.reflection},
              {"warnings", r.warnings},
              {"outputs", outputs}};
  if (!s.options.snapshot_steps.empty()) doc["snapshot_steps"] = s.options.snapshot_steps;
  if (s.slice.axis)
    doc["snapshot_slice"] = {{"axis", std::string(1, s.slice.axis)}, {"index", s.slice.index}};
  // Checkpoints: how many this process wrote, their cost outside the loop's time, and where a
  // resumed run started.
  doc["checkpoint"] = {{"every", s.options.checkpoint_every}, {"count", t.checkpoints},
                       {"seconds", t.checkpoint_s},           {"write_seconds", t.checkpoint_write_s},
                       {"bytes", t.checkpoint_bytes},         {"resumed_from_step", r.first_step}};
  if (!analytic.is_null()) doc["analytic"] = analytic;
  // This process's resident host memory at its peak so far (Linux counts ru_maxrss in KiB): a
  // split run's ranks report theirs under "ranks".
  rusage usage{};
  doc["host_peak_bytes"] = getrusage(RUSAGE_SELF, &usage) == 0 ? int64_t(usage.ru_maxrss) * 1024 : int64_t(0);
  // A run across ranks (mpirun): the slabs, and on the GPUs the path the exchange took, rank 0's
  // exchange per step (medians, GPU events) and the inner planes' update, and where the path was
  // chosen by timing both, each path's fastest per-step time and what the overlap saved.
  if (r.ranks > 1) {
    doc["ranks"] = {{"count", r.ranks},
                    {"overlap_asked", overlap_text(s.options.overlap)},
                    {"overlap", t.overlap.empty() ? json(nullptr) : json(t.overlap)},
                    {"exchange_ms", t.exchange_ms},
                    {"inside_ms", t.inside_ms},
                    {"device_bytes", r.rank_device_bytes},
                    {"host_peak_bytes", r.rank_host_peak_bytes}};
    if (t.probe_on_ms > 0)
      doc["ranks"]["probe"] = {{"on_ms_per_step", t.probe_on_ms},
                               {"off_ms_per_step", t.probe_off_ms},
                               {"saved_ms_per_step", t.probe_off_ms - t.probe_on_ms}};
  }
  write_json_file((s.out_dir / "summary.json").string(), doc);
}

std::string human_summary(const Setup& s, const wave::Result& r, const json& analytic, size_t files_written) {
  const wave::Timing& t = r.timing;
  const wave::Domain& d = r.domain;
  char buf[1024];
  std::string text =
      "fdstencil wave: " + std::to_string(s.model().dim) + "D model " + extents_text(model_shape(s.model()));
  std::snprintf(
      buf, sizeof buf, " at h = %g m (v %g..%g m/s), %s points computed with the absorbing layers; ",
      s.model().h, double(s.model().vmin()), double(s.model().vmax()),
      extents_text(d.dim == 3 ? std::vector<int64_t>{d.nz, d.ny, d.nx} : std::vector<int64_t>{d.nz, d.nx})
          .c_str());
  text += buf;
  std::snprintf(buf, sizeof buf, "%lld steps of dt = %s (%.0f %% of the stability limit %s) to t = %s",
                static_cast<long long>(r.nt), time_text(r.dt).c_str(), 100 * r.dt / r.dt_limit,
                time_text(r.dt_limit).c_str(), time_text(double(r.nt) * r.dt).c_str());
  text += buf;
  text +=
      " on " + r.backend + (s.options.double_precision ? " in double precision" : "") + " (" + r.kernel +
      (t.threads > 0 ? ", " + std::to_string(t.threads) + (t.threads == 1 ? " thread" : " threads") : "") +
      "). ";
  std::snprintf(buf, sizeof buf, "Time loop %s, total %s: %.3g GPts/s", time_text(t.loop_s).c_str(),
                time_text(t.total_s).c_str(), t.gpts);
  text += buf;
  if (t.bound_gpts > 0) {
    std::snprintf(buf, sizeof buf,
                  ", %.0f %% of the bandwidth bound %.3g GPts/s (%.4g GB/s copy / %.3g B per point)",
                  t.percent_of_bound, t.bound_gpts, t.copy_gbps, t.bytes_per_point);
    text += buf;
  }
  text += ". ";
  if (r.ranks > 1) {
    std::snprintf(buf, sizeof buf, "Split along z across %d ranks", r.ranks);
    text += buf;
    if (t.exchange_ms > 0) {
      std::snprintf(buf, sizeof buf, ": halo exchange %.3g ms per step %s the inner planes' %.3g ms",
                    t.exchange_ms, t.overlap == "on" ? "beside" : "before", t.inside_ms);
      text += buf;
      if (t.probe_on_ms > 0) {
        std::snprintf(buf, sizeof buf, " (chosen by timing both: %.3g ms per step beside, %.3g before)",
                      t.probe_on_ms, t.probe_off_ms);
        text += buf;
      }
    }
    text += ". ";
  }
  if (!s.options.receivers.empty()) {
    std::snprintf(buf, sizeof buf, "%zu receivers x %lld samples at %s. ", s.options.receivers.size(),
                  static_cast<long long>(s.n_out), time_text(s.record_dt).c_str());
    text += buf;
  }
  if (!analytic.is_null()) {
    std::snprintf(buf, sizeof buf, "Misfit against the analytic solution %.3g %% up to t = %s. ",
                  100 * analytic["misfit"].get<double>(),
                  time_text(analytic["window_end_s"].get<double>()).c_str());
    text += buf;
  }
  text += "Wrote " + std::to_string(files_written) + " files to " + s.out_dir.string() + ".";
  return text;
}

}  // namespace fdstencil::cli::wave_cli
