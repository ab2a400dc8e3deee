// fdstencil wave --survey FILE: many shots through one model, each into its own
// directory.
//
// The order of work is the single shot's (cmd_wave.cpp): the survey file and
// every shot are parsed and checked before the first runs, so a bad shot 97
// costs nothing. A shot is finished when its done.json lists its outputs with
// their sizes and CRC-32C checksums and the identity of the run that made them;
// a re-run verifies those and skips the shots that pass, so an interrupted
// survey continues where it stopped (with --resume, the shot that was running
// continues from its checkpoint). --batch K runs K shots side by side on the
// GPU, each on its own stream.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <thread>

#include "commands.hpp"
#include "fdstencil/checksum.hpp"
#include "fdstencil/error.hpp"
#include "interrupt.hpp"
#include "progress.hpp"
#include "wave_cli.hpp"

namespace fdstencil::cli::wave_cli {

namespace {

namespace fs = std::filesystem;
using nlohmann::json;

[[noreturn]] void bad(const std::string& what) { throw Error(ErrorKind::invalid_argument, what); }

constexpr const char* kDoneFile = "done.json";
constexpr const char* kManifest = "survey.json";
// SEG-Y's field record number is a 32-bit integer: shot ids stay within it.
constexpr int64_t kMaxShotId = 2147483647;

// The text a flag would have held: numbers printed so they read back exactly.
std::string text_of(const json& v, const std::string& where) {
  if (v.is_string()) return v.get<std::string>();
  if (v.is_number()) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.17g", v.get<double>());
    return buf;
  }
  bad(where + ": expected a number or a string, got " + v.dump());
}

// A position: [z, y, x] / [z, x] in metres, or the flag's text "Z,Y,X".
std::string point_text(const json& v, const std::string& where) {
  if (!v.is_array()) return text_of(v, where);
  std::string t;
  for (const json& c : v) {
    if (!c.is_number()) bad(where + ": a position's coordinates are numbers in metres, got " + c.dump());
    t += (t.empty() ? "" : ",") + text_of(c, where);
  }
  return t;
}

std::vector<std::string> texts(const json& v, const std::string& where) {
  std::vector<std::string> out;
  if (v.is_array())
    for (const json& e : v) out.push_back(text_of(e, where));
  else
    out.push_back(text_of(v, where));
  return out;
}

// A path in the survey file is relative to the file's own directory.
std::string path_of(const json& v, const fs::path& base, const std::string& where) {
  if (!v.is_string()) bad(where + ": expected a file name, got " + v.dump());
  const fs::path p = v.get<std::string>();
  return (p.is_absolute() ? p : base / p).string();
}

// One entry's keys applied to the flags: a group given replaces the command
// line's whole group (sources, wavelet, receivers), so a shot never mixes its
// own receivers with the defaults'.
void apply(const json& entry, Flags& f, const fs::path& base, const std::string& where) {
  if (!entry.is_object()) bad(where + ": expected a JSON object, got " + entry.dump());
  bool sources = false, wavelet = false, receivers = false;
  for (const auto& [key, v] : entry.items()) {
    const std::string at = where + " \"" + key + "\"";
    if (key == "id" || key == "description") continue;
    if (key == "source" || key == "sources" || key == "sources_file") {
      if (!sources) f.sources.clear(), f.sources_file.clear();
      sources = true;
      if (key == "source") f.sources.push_back(point_text(v, at));
      if (key == "sources") {
        if (!v.is_array()) bad(at + ": expected a list of positions");
        for (const json& p : v) f.sources.push_back(point_text(p, at));
      }
      if (key == "sources_file") f.sources_file = path_of(v, base, at);
    } else if (key == "ricker" || key == "delay" || key == "wavelet" || key == "wavelet_dt") {
      if (!wavelet) f.ricker.clear(), f.delay.clear(), f.wavelet.clear(), f.wavelet_dt.clear();
      wavelet = true;
      if (key == "ricker") f.ricker = text_of(v, at);
      if (key == "delay") f.delay = text_of(v, at);
      if (key == "wavelet") f.wavelet = path_of(v, base, at);
      if (key == "wavelet_dt") f.wavelet_dt = text_of(v, at);
    } else if (key == "receivers" || key == "receiver_lines" || key == "receiver_grids") {
      if (!receivers) f.receivers_file.clear(), f.receiver_lines.clear(), f.receiver_grids.clear();
      receivers = true;
      if (key == "receivers") f.receivers_file = path_of(v, base, at);
      if (key == "receiver_lines") f.receiver_lines = texts(v, at);
      if (key == "receiver_grids") f.receiver_grids = texts(v, at);
    } else {
      bad(at +
          ": unknown key (valid: id, source, sources, sources_file, "
          "ricker, delay, wavelet, wavelet_dt, "
          "receivers, receiver_lines, receiver_grids, description)");
    }
  }
}

struct Shot {
  int64_t id = 0;
  Flags flags;
  fs::path dir;
};

std::vector<Shot> read_survey(const Flags& base) {
  const fs::path file = base.survey;
  std::ifstream in(file);
  if (!in) throw Error(ErrorKind::io, "--survey " + file.string() + ": cannot open the file");
  json doc;
  try {
    doc = json::parse(in);
  } catch (const json::parse_error& e) {
    throw Error(ErrorKind::io, "--survey " + file.string() + ": not valid JSON: " + e.what());
  }
  const std::string where = "--survey " + file.string();
  if (!doc.is_object()) bad(where + ": expected an object {\"shots\": [...]}");
  for (const auto& [key, v] : doc.items())
    if (key != "shots" && key != "defaults" && key != "description")
      bad(where + ": unknown key \"" + key + "\" (valid: shots, defaults, description)");
  if (!doc.contains("shots") || !doc["shots"].is_array() || doc["shots"].empty())
    bad(where + ": \"shots\" must be a non-empty list of shots");
  const fs::path dir = file.has_parent_path() ? file.parent_path() : fs::path(".");
  Flags defaults = base;
  if (doc.contains("defaults")) apply(doc["defaults"], defaults, dir, where + " defaults");
  std::vector<Shot> shots;
  std::vector<int64_t> ids;
  for (size_t i = 0; i < doc["shots"].size(); ++i) {
    const json& e = doc["shots"][i];
    const std::string at = where + " shot " + std::to_string(i);
    Shot s;
    s.id = int64_t(i) + 1;
    if (e.is_object() && e.contains("id")) {
      if (!e["id"].is_number_integer() || e["id"].get<int64_t>() < 1 || e["id"].get<int64_t>() > kMaxShotId)
        bad(at + ": \"id\" must be an integer in 1.." + std::to_string(kMaxShotId) + ", got " + e["id"].dump());
      s.id = e["id"].get<int64_t>();
    }
    s.flags = defaults;
    apply(e, s.flags, dir, at);
    char name[32];
    std::snprintf(name, sizeof name, "shot_%06lld", static_cast<long long>(s.id));
    s.dir = fs::path(base.output) / name;
    s.flags.output = s.dir.string();
    s.flags.shot_id = std::to_string(s.id);
    ids.push_back(s.id);
    shots.push_back(std::move(s));
  }
  std::sort(ids.begin(), ids.end());
  if (const auto d = std::adjacent_find(ids.begin(), ids.end()); d != ids.end())
    bad(where + ": shot id " + std::to_string(*d) + " appears twice");
  return shots;
}

// What makes a shot's outputs what they are: the run's own fingerprint and
// every output setting.
std::string identity(const Setup& s) {
  const json outputs = {s.record_dt,
                        s.n_out,
                        s.write_final,
                        s.compare_analytic,
                        s.write_segy,
                        s.options.snapshot_steps,
                        std::string(1, s.slice.axis ? s.slice.axis : '-'),
                        s.slice.index};
  char buf[48];
  std::snprintf(buf, sizeof buf, "%016llx-%08x",
                static_cast<unsigned long long>(wave::run_fingerprint(s.model(), s.options)),
                crc32c(outputs.dump().data(), outputs.dump().size()));
  return buf;
}

// Whether the shot's directory holds its finished outputs: done.json for this
// identity, and every file it lists there with its size and checksum. Returns
// why not, or "" when it does.
std::string unfinished(const fs::path& dir, const std::string& id) {
  const fs::path done = dir / kDoneFile;
  std::error_code ec;
  if (!fs::exists(done, ec)) return "not run";
  json d;
  try {
    std::ifstream in(done);
    d = json::parse(in);
    if (d.at("identity").get<std::string>() != id) return "its inputs changed since it ran";
    for (const json& f : d.at("files")) {
      const fs::path p = dir / f.at("name").get<std::string>();
      if (!fs::exists(p, ec)) return f.at("name").get<std::string>() + " is missing";
      if (int64_t(fs::file_size(p, ec)) != f.at("bytes").get<int64_t>())
        return f.at("name").get<std::string>() + " has the wrong size";
      if (crc32c_file(p) != f.at("crc32c").get<uint32_t>())
        return f.at("name").get<std::string>() + " fails its checksum";
    }
  } catch (const std::exception& e) {
    return std::string("done.json is unreadable: ") + e.what();
  }
  return "";
}

void write_done(const fs::path& dir, const std::string& id, const std::vector<std::string>& outputs) {
  json d = {{"identity", id}, {"files", json::array()}};
  for (const std::string& name : outputs) {
    const fs::path p = dir / name;
    d["files"].push_back({{"name", name}, {"bytes", int64_t(fs::file_size(p))}, {"crc32c", crc32c_file(p)}});
  }
  write_json_file((dir / kDoneFile).string(), d);
}

}  // namespace

int run_survey(const Flags& flags, const std::string& command) {
  if (flags.output.empty()) bad("--output DIR is required: the survey's shots go into DIR/shot_<id>");
  int64_t batch = 1;
  if (!flags.batch.empty()) {
    size_t used = 0;
    try {
      batch = std::stoll(flags.batch, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used != flags.batch.size() || batch < 1)
      bad("--batch '" + flags.batch + "': expected a whole number of shots, at least 1");
  }
  // Everything before the first shot runs: the model once, then every shot
  // against it.
  std::vector<Shot> shots = read_survey(flags);
  const ModelInput model = read_model(flags);
  std::vector<Setup> setups;
  setups.reserve(shots.size());
  for (const Shot& shot : shots) {
    try {
      setups.push_back(prepare(shot.flags, &model));
      wave::check(setups.back().model(), setups.back().options);
    } catch (const Error& e) {
      throw Error(e.kind(), "survey shot " + std::to_string(shot.id) + ": " + e.what());
    }
  }
  if (batch > 1 && setups.front().options.backend == "cpu")
    bad("--batch runs shots side by side on one GPU; the cpu backend already "
        "gives each shot every core");

  fs::create_directories(flags.output);
  std::vector<size_t> todo;
  std::vector<std::string> ids(shots.size()), status(shots.size(), "not run");
  int64_t skipped = 0, total_steps = 0;
  for (size_t i = 0; i < shots.size(); ++i) {
    ids[i] = identity(setups[i]);
    const std::string why = unfinished(shots[i].dir, ids[i]);
    if (why.empty()) {
      status[i] = "skipped: finished and verified";
      ++skipped;
    } else {
      todo.push_back(i);
      total_steps += setups[i].options.nt;
    }
  }
  const bool quiet = flags.quiet;
  if (!quiet)
    std::fprintf(stderr,
                 "fdstencil survey: %zu shots, %lld finished before (verified), %zu to "
                 "run%s\n",
                 shots.size(), static_cast<long long>(skipped), todo.size(),
                 batch > 1 ? (", " + std::to_string(batch) + " at a time").c_str() : "");

  InterruptGuard interrupts;
  ProgressBar bar("fdstencil survey", !quiet);
  std::mutex mu;  // the bar, the counters, the manifest
  std::vector<int64_t> steps_of(shots.size(), 0);
  int64_t shots_done = 0;
  double copy_gbps = 0;
  std::atomic<size_t> next{0};
  std::exception_ptr failure;
  // The manifest: every finished shot's timing (a skipped shot keeps the entry of the run that made
  // it), and this invocation's figures.
  json manifest = {{"command", command}};
  std::map<int64_t, json> entries;
  {
    std::ifstream in(fs::path(flags.output) / kManifest);
    const json old = in ? json::parse(in, nullptr, false) : json();
    // A run that measures no bandwidth (every shot it runs is a later one) keeps the figure of the
    // run that did.
    if (old.is_object() && old.contains("copy_gbps") && old["copy_gbps"].is_number()) copy_gbps = old["copy_gbps"];
    if (old.is_object() && old.contains("shots") && old["shots"].is_array())
      for (const json& e : old["shots"])
        if (e.is_object() && e.contains("id") && e["id"].is_number_integer()) entries[e["id"].get<int64_t>()] = e;
  }
  const auto start = std::chrono::steady_clock::now();

  // Runs todo[t]; false when the survey must stop (a failure or a signal).
  const auto run_one = [&](size_t t) {
    const size_t i = todo[t];
    Setup& s = setups[i];
    RunControl ctl;
    ctl.quiet = true;
    // One bandwidth figure for the survey: the first shot's, measured while
    // nothing else runs.
    ctl.measure_bandwidth = t == 0;
    ctl.progress = [&, i](int64_t done, int64_t) {
      std::lock_guard lock(mu);
      steps_of[i] = done;
      int64_t sum = 0;
      for (int64_t v : steps_of) sum += v;
      bar.set_label("fdstencil survey: " + std::to_string(shots_done) + "/" + std::to_string(todo.size()) + " shots");
      bar.update(sum, total_steps);
    };
    try {
      fs::create_directories(s.out_dir);
      std::error_code ec;
      fs::remove(s.out_dir / kDoneFile, ec);  // stale: the shot runs again
      const ShotRun r = run_shot(s, command, ctl);
      // The checksums outside the lock: the shots beside this one report progress under it.
      if (!r.result.interrupted) write_done(s.out_dir, ids[i], r.outputs);
      std::lock_guard lock(mu);
      if (r.result.interrupted) {
        status[i] = "interrupted at step " + std::to_string(r.result.steps_done);
        return false;
      }
      if (r.result.timing.copy_gbps > 0) copy_gbps = r.result.timing.copy_gbps;
      status[i] = "done";
      ++shots_done;
      entries[shots[i].id] = json({{"id", shots[i].id},
                                   {"dir", shots[i].dir.filename().string()},
                                   {"loop_s", r.result.timing.loop_s},
                                   {"total_s", r.result.timing.total_s},
                                   {"gpts", r.result.timing.gpts},
                                   {"first_step", r.result.first_step}});
    } catch (...) {
      std::lock_guard lock(mu);
      if (!failure) failure = std::current_exception();
      status[i] = "failed";
      return false;
    }
    return !InterruptGuard::requested();
  };
  const auto worker = [&] {
    for (size_t t; !InterruptGuard::requested() && (t = next.fetch_add(1)) < todo.size();) {
      if (!run_one(t)) return;
      std::lock_guard lock(mu);
      if (failure) return;
    }
  };
  // The first shot alone (it measures the copy bandwidth), then `batch` workers
  // for the rest.
  if (!todo.empty() && run_one(next.fetch_add(1))) {
    std::vector<std::thread> workers;
    for (int64_t w = 1; w < std::min<int64_t>(batch, int64_t(todo.size()) - 1); ++w) workers.emplace_back(worker);
    worker();
    for (auto& w : workers) w.join();
  }
  bar.finish();
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();

  manifest["batch"] = batch;
  manifest["wall_s"] = wall;
  manifest["shots_run"] = shots_done;
  manifest["shots_skipped"] = skipped;
  manifest["shots_per_s"] = shots_done > 0 ? double(shots_done) / wall : 0.0;
  manifest["copy_gbps"] = copy_gbps;
  manifest["status"] = json::object();
  manifest["shots"] = json::array();
  for (size_t i = 0; i < shots.size(); ++i) {
    manifest["status"][std::to_string(shots[i].id)] = status[i];
    const bool finished = status[i] == "done" || status[i].rfind("skipped", 0) == 0;
    if (finished && entries.count(shots[i].id)) manifest["shots"].push_back(entries[shots[i].id]);
  }
  write_json_file((fs::path(flags.output) / kManifest).string(), manifest);
  if (failure) std::rethrow_exception(failure);
  if (InterruptGuard::requested()) {
    std::fprintf(stderr,
                 "fdstencil: survey interrupted by %s: %lld of %zu shots "
                 "finished; the running shots kept their "
                 "checkpoints. Resume with:\n  %s\n",
                 InterruptGuard::name(), static_cast<long long>(shots_done + skipped), shots.size(),
                 resume_command(command).c_str());
    return 128 + InterruptGuard::signal();
  }
  if (!quiet)
    std::fprintf(stderr,
                 "fdstencil survey: %lld shots run, %lld skipped, in %.1f s "
                 "(%.3g shots/s); %s\n",
                 static_cast<long long>(shots_done), static_cast<long long>(skipped), wall,
                 shots_done > 0 ? double(shots_done) / wall : 0.0, (fs::path(flags.output) / kManifest).c_str());
  return 0;
}

}  // namespace fdstencil::cli::wave_cli
