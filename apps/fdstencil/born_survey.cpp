// `fdstencil born --survey` (imaging_cli.hpp): Born modelling of every shot of a survey file for
// one velocity perturbation dv, each shot's record J dv written into OUTPUT/shot_<id> as `wave
// --survey` writes its shots, so that `rtm --survey` and `gradient --survey` take the folder as
// their --observed (a least-squares migration's loop, for instance).
//
// Every shot is prepared and checked, and dv read, before the first runs. The folder is the
// survey's: its manifest (survey.json, whose format names born) is written before the first shot,
// and a folder holding a `wave --survey` run's shots (or a single run's outputs) is refused, as
// wave refuses born's, so that no record of one sits beside the other's. A shot is finished when its
// done.json (wave's format) names the identity of what made it (the run's fingerprint, dv's
// checksum, --segy) and lists its files with their checksums; the same command again verifies
// them and runs only the other shots, so that an interrupted survey continues where it stopped.
// The manifest names every shot's identity: a run into a folder holding a finished record of another
// model, survey, dv, setting or backend is refused, so that its records are never a mix of two
// runs'. A signal during the last shot lets the run finish, whole.
// --devices spreads the shots over GPUs, one worker each; a signal lets the shots in progress
// finish and starts no more.
#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <fstream>
#include <map>
#include <mutex>
#include <set>

#include "commands.hpp"
#include "device_pool.hpp"
#include "fdstencil/checksum.hpp"
#include "fdstencil/error.hpp"
#include "imaging_cli.hpp"
#include "interrupt.hpp"
#include "progress.hpp"

namespace fdstencil::cli::imaging_cli {

namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using wave_cli::SurveyShot;

[[noreturn]] void bad(const std::string& what) { throw Error(ErrorKind::invalid_argument, what); }

// The survey's shots, prepared and checked, dv, and what identifies each shot's record.
struct BornSurvey {
  std::vector<SurveyShot> shots;
  std::vector<Setup> setups;
  std::vector<std::string> ids;  // done.json's identity, per shot
  std::vector<size_t> todo;      // the shots not finished before
  std::vector<double> dv;
  uint32_t dv_crc32c = 0;          // of dv's values as read, whatever the file's dtype
  json identity;                   // every shot's id and identity: the run the folder belongs to
  std::map<int64_t, json> before;  // the manifest's entries of the shots finished before
};

// "born-" (never a `wave --survey` shot's identity), the run's fingerprint, dv's checksum, whether
// shot.sgy is among the files, and the backend (whose float bits differ).
std::string identity(const Setup& s, uint32_t dv_crc32c) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "born-%016llx-%08x-%d-",
                static_cast<unsigned long long>(wave::run_fingerprint(s.model(), s.options)), dv_crc32c,
                int(s.write_segy));
  return buf + wave::linearised_backend(s.options);
}

// An earlier run's manifest in --output (claim_survey_output found it born's): a shot it finished
// (its files verified against its done.json) whose identity is not this run's for that shot (another
// model, shot, dv, setting or backend) refuses the run, so that the folder never holds two runs'
// records; the shots it left unfinished (a failure, a signal) are this run's to make.
void read_earlier(const Flags& f, BornSurvey& p) {
  const fs::path manifest = fs::path(f.output) / wave_cli::kSurveyManifest;
  std::ifstream in(manifest);
  if (!in) return;
  const json doc = json::parse(in, nullptr, /*allow_exceptions=*/false);
  if (!doc.is_object() || !doc.contains("identity") || !doc["identity"].is_array())
    bad("--output " + f.output + ": " + manifest.string() +
        " is not a born survey's manifest this tool wrote");
  std::map<int64_t, std::string> ours;
  for (size_t i = 0; i < p.shots.size(); ++i) ours[p.shots[i].id] = p.ids[i];
  for (const json& e : doc["identity"]) {
    if (!e.is_object()) continue;
    const int64_t id = e.value("id", int64_t(-1));
    const std::string theirs = e.value("identity", std::string());
    const auto it = ours.find(id);
    if ((it == ours.end() || it->second != theirs) &&
        wave_cli::shot_unfinished(wave_cli::shot_folder(f.output, id), theirs).empty())
      bad("--output " + f.output + " holds the finished record of shot " + std::to_string(id) +
          " of another born survey (" + manifest.string() +
          ": its model, shots, perturbation, settings or backend differ): give this one a new --output");
  }
  if (doc.contains("shots") && doc["shots"].is_array())
    for (const json& e : doc["shots"])
      if (e.is_object() && e.contains("id") && e["id"].is_number_integer())
        p.before[e["id"].get<int64_t>()] = e;
}

BornSurvey plan(const Flags& f, const ImagingFlags& g) {
  if (f.output.empty())
    bad("--output DIR is required with --survey: the shots' records go into DIR/shot_<id>");
  if (f.overwrite)
    bad("--overwrite: a born survey's re-run keeps its finished shots and runs the rest; to start over, give "
        "it a new --output");
  wave_cli::claim_survey_output(f.output, wave_cli::kBornSurveyFormat);
  BornSurvey p;
  p.shots = wave_cli::read_survey(f);
  const wave_cli::ModelInput model = wave_cli::read_model(f, {}, /*summarise=*/true);
  for (const SurveyShot& shot : p.shots) {
    try {
      p.setups.push_back(wave_cli::prepare(shot.flags, &model));
      wave::check(p.setups.back().model(), p.setups.back().options);  // run()'s checks, before any shot
    } catch (const Error& e) {
      throw Error(e.kind(), "survey shot " + std::to_string(shot.id) + ": " + e.what());
    }
  }
  p.dv = read_perturbation(g.perturbation, p.setups.front());
  p.dv_crc32c = crc32c(p.dv.data(), p.dv.size() * sizeof(double));
  p.identity = json::array();
  for (size_t i = 0; i < p.shots.size(); ++i) {
    p.ids.push_back(identity(p.setups[i], p.dv_crc32c));
    p.identity.push_back({{"id", p.shots[i].id}, {"identity", p.ids.back()}});
  }
  read_earlier(f, p);
  for (size_t i = 0; i < p.shots.size(); ++i)
    if (!wave_cli::shot_unfinished(p.shots[i].dir, p.ids[i]).empty()) p.todo.push_back(i);
  return p;
}

// What the shots that ran report, for the manifest, by shot id.
struct Ran {
  std::mutex mutex;
  std::map<int64_t, json> entries;
  std::set<int64_t> failed;
};

// survey.json: the survey's kind (so that wave refuses the folder and born continues it), what
// made it, and each shot's status; written before the first shot and again at the end.
void write_manifest(const Flags& f, const ImagingFlags& g, const std::string& command, const BornSurvey& p,
                    const Ran& ran, double wall) {
  json m = {
      {"format", wave_cli::kBornSurveyFormat},
      {"identity", p.identity},
      {"command", command},
      {"perturbation", g.perturbation},
      {"perturbation_crc32c", p.dv_crc32c},
      {"record_of", "J dv: the traces' first-order change for the velocity change dv (m/s), Born modelling"},
      {"wall_s", wall},
      {"status", json::object()},
      {"shots", json::array()}};
  for (size_t i = 0; i < p.shots.size(); ++i) {
    const int64_t id = p.shots[i].id;
    const auto it = ran.entries.find(id);
    const bool before = std::find(p.todo.begin(), p.todo.end(), i) == p.todo.end();
    m["status"][std::to_string(id)] = it != ran.entries.end() ? "done"
                                      : ran.failed.count(id)  ? "failed"
                                      : before                ? "skipped: finished and verified"
                                                              : "not run";
    if (it != ran.entries.end())
      m["shots"].push_back(it->second);
    else if (before && p.before.count(id))
      m["shots"].push_back(p.before.at(id));
  }
  write_json_file((fs::path(f.output) / wave_cli::kSurveyManifest).string(), m);
}

// Shot i's record into its folder, then its done.json.
json born_one(const BornSurvey& p, size_t i, const ImagingFlags& g, const std::string& command, int device,
              const std::function<void(int64_t, int64_t)>& progress) {
  const Setup& s = p.setups[i];
  std::error_code ec;
  fs::create_directories(s.out_dir, ec);
  if (ec) throw Error(ErrorKind::io, "cannot create " + s.out_dir.string() + ": " + ec.message());
  fs::remove(s.out_dir / wave_cli::kShotDoneFile, ec);  // stale: the shot runs again
  const BornShot r = born_shot(s, p.dv, g, command, {}, progress);
  wave_cli::write_shot_done(s.out_dir, p.ids[i], r.outputs);
  json e = {{"id", p.shots[i].id},
            {"dir", p.shots[i].dir.filename().string()},
            {"backend", r.backend},
            {"seconds", r.seconds}};
  if (device >= 0 && r.backend == "cuda") e["gpu"] = device;
  return e;
}

// The shots to run, spread over `devices`, with one bar over their steps; false when a signal
// stopped the survey between shots.
bool run_shots(const BornSurvey& p, const ImagingFlags& g, const std::string& command,
               const std::vector<int>& devices, Ran& ran, bool quiet) {
  DevicePool pool(
      p.todo.size(), [] { return false; }, std::chrono::milliseconds(100));
  SurveyProgress bar("fdstencil born", p.todo.size(), !quiet);
  const struct End {
    SurveyProgress& bar;
    ~End() { bar.finish(); }
  } end{bar};
  const auto worker = [&](int device) {
    return [&, device](size_t k) {
      if (InterruptGuard::requested() || pool.stop_requested()) return;  // stop between shots
      const size_t i = p.todo[k];
      json e;
      const auto failed = [&] {
        const std::lock_guard<std::mutex> lock(ran.mutex);
        ran.failed.insert(p.shots[i].id);
      };
      try {
        e = born_one(p, i, g, command, device, bar.shot(k));
      } catch (const Error& err) {
        failed();
        throw Error(err.kind(), "survey shot " + std::to_string(p.shots[i].id) + ": " + err.what());
      } catch (const std::exception& err) {  // the file system's own, while the shot is written
        failed();
        throw Error(ErrorKind::io, "survey shot " + std::to_string(p.shots[i].id) + ": " + err.what());
      }
      bar.finished(k);
      const std::lock_guard<std::mutex> lock(ran.mutex);
      ran.entries[p.shots[i].id] = e;
    };
  };
  pool.run(devices, worker);
  return ran.entries.size() == p.todo.size();
}

}  // namespace

int run_born_survey(const Flags& f, const ImagingFlags& g, const std::string& command) {
  const BornSurvey p = plan(f, g);
  std::vector<int> devices = survey_devices(g, wave::linearised_backend(p.setups.front().options) == "cuda");
  if (!p.todo.empty() && p.todo.size() < devices.size()) devices.resize(p.todo.size());
  std::error_code ec;
  fs::create_directories(f.output, ec);
  if (ec)
    throw Error(ErrorKind::io, "--output " + f.output + ": cannot create the directory: " + ec.message());
  Ran ran;
  write_manifest(f, g, command, p, ran, 0);  // the folder is born's before any shot is in it
  if (!f.quiet)
    std::fprintf(stderr, "fdstencil born: %zu shots, %zu finished before (verified), %zu to run\n",
                 p.shots.size(), p.shots.size() - p.todo.size(), p.todo.size());
  InterruptGuard guard("stopping after the shots in progress; the same command again runs the rest");
  const auto start = std::chrono::steady_clock::now();
  bool whole = p.todo.empty();
  try {
    if (!whole) whole = run_shots(p, g, command, devices, ran, f.quiet);
  } catch (...) {
    write_manifest(f, g, command, p, ran, 0);  // the shots that did finish stay known
    throw;
  }
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  write_manifest(f, g, command, p, ran, wall);
  if (!whole) {
    const int sig = InterruptGuard::signal() != 0 ? InterruptGuard::signal() : SIGTERM;
    std::fprintf(stderr,
                 "fdstencil born: interrupted by %s: %zu of %zu shots are finished in %s. Run the same "
                 "command again to run the rest:\n  %s\n",
                 InterruptGuard::name(), p.shots.size() - p.todo.size() + ran.entries.size(), p.shots.size(),
                 f.output.c_str(), command.c_str());
    return 128 + sig;
  }
  if (!f.quiet)
    std::fprintf(stderr, "fdstencil born: %zu shots' records written to %s (%.1f s)\n", p.todo.size(),
                 f.output.c_str(), wall);
  return 0;
}

}  // namespace fdstencil::cli::imaging_cli
