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
#include <charconv>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>

#include "commands.hpp"
#include "fdstencil/checksum.hpp"
#include "fdstencil/device.hpp"
#include "fdstencil/device_field.hpp"
#include "fdstencil/error.hpp"
#include "fdstencil/imaging.hpp"
#include "fdstencil/wave_comm.hpp"
#include "interrupt.hpp"
#include "progress.hpp"
#include "wave_cli.hpp"

namespace fdstencil::cli::wave_cli {

namespace {

namespace fs = std::filesystem;
using nlohmann::json;

[[noreturn]] void bad(const std::string& what) { throw Error(ErrorKind::invalid_argument, what); }

constexpr const char* kDoneFile = kShotDoneFile;
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
          ": unknown key (valid: id, source, sources, sources_file, ricker, delay, wavelet, wavelet_dt, "
          "receivers, receiver_lines, receiver_grids, description)");
    }
  }
}

// A survey nests 5 levels deep ({"shots": [{"sources": [[z, x]]}]}). Far deeper nesting is no
// survey, and the messages that quote a value (json::dump, which recurses) overflowed the stack on
// it: a shot of 100000 nested '[' crashed the tool.
constexpr int kMaxSurveyDepth = 64;

// The survey file's JSON; throws Error(io) naming the file when it is not JSON, or nested deeper
// than a survey.
json parse_survey_file(const fs::path& file) {
  std::ifstream in(file);
  if (!in) throw Error(ErrorKind::io, "--survey " + file.string() + ": cannot open the file");
  const auto shallow = [&](int depth, json::parse_event_t, json&) {
    if (depth > kMaxSurveyDepth)
      throw Error(ErrorKind::io, "--survey " + file.string() + ": values nested more than " +
                                     std::to_string(kMaxSurveyDepth) + " levels deep: not a survey file");
    return true;
  };
  try {
    return json::parse(in, shallow);
  } catch (const json::exception& e) {
    // A parse error, or a number beyond a double's range (1e999): out_of_range.406, not a
    // parse_error, and an "internal error" when it went uncaught (found by fuzz/fuzz_survey.cpp).
    throw Error(ErrorKind::io, "--survey " + file.string() + ": not valid JSON: " + e.what());
  }
}

}  // namespace

std::vector<SurveyShot> read_survey(const Flags& base) {
  const fs::path file = base.survey;
  json doc = parse_survey_file(file);
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
  std::vector<SurveyShot> shots;
  std::vector<int64_t> ids;
  for (size_t i = 0; i < doc["shots"].size(); ++i) {
    const json& e = doc["shots"][i];
    SurveyShot s;
    s.id = int64_t(i) + 1;  // a shot without an id is numbered by its place, from 1
    if (e.is_object() && e.contains("id")) {
      if (!e["id"].is_number_integer() || e["id"].get<int64_t>() < 1 || e["id"].get<int64_t>() > kMaxShotId)
        bad(where + " shots[" + std::to_string(i) + "]: \"id\" must be an integer in 1.." +
            std::to_string(kMaxShotId) + ", got " + e["id"].dump());
      s.id = e["id"].get<int64_t>();
    }
    // Named by its id, as the user wrote it (issue 33: by its index, so the first was shot 0).
    const std::string at = where + " shot " + std::to_string(s.id);
    s.flags = defaults;
    apply(e, s.flags, dir, at);
    s.dir = shot_folder(base.output, s.id);
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

namespace {

// What makes a shot's outputs what they are: the run's own fingerprint, every output setting and
// the backend (whose float bits differ).
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
  return std::string(buf) + "-" + wave::linearised_backend(s.options);
}

}  // namespace

fs::path shot_folder(const std::string& output, int64_t id) {
  char name[32];
  std::snprintf(name, sizeof name, "shot_%06lld", static_cast<long long>(id));
  return fs::path(output) / name;
}

std::string shot_unfinished(const fs::path& dir, const std::string& id) {
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

void write_shot_done(const fs::path& dir, const std::string& id, const std::vector<std::string>& outputs) {
  json d = {{"identity", id}, {"files", json::array()}};
  for (const std::string& name : outputs) {
    const fs::path p = dir / name;
    d["files"].push_back({{"name", name}, {"bytes", int64_t(fs::file_size(p))}, {"crc32c", crc32c_file(p)}});
  }
  write_json_file((dir / kDoneFile).string(), d);
}

namespace {

void make_output_directory(const std::string& dir) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) throw Error(ErrorKind::io, "--output " + dir + ": cannot create the directory: " + ec.message());
}

int64_t parse_batch(const Flags& flags) {
  if (flags.batch.empty()) return 1;
  size_t used = 0;
  int64_t batch = 0;
  try {
    batch = std::stoll(flags.batch, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used != flags.batch.size() || batch < 1)
    bad("--batch '" + flags.batch + "': expected a whole number of shots, at least 1");
  return batch;
}

// A survey's work, found before any shot runs: every shot parsed and checked against the model
// (read once), and which of them are finished already (their done.json verified).
struct Plan {
  int64_t batch = 1;
  std::vector<SurveyShot> shots;
  std::vector<Setup> setups;
  std::vector<std::string> ids, status;
  std::vector<size_t> todo;  // the unfinished shots, in the survey's order
  int64_t skipped = 0, total_steps = 0;
};

// The identity a shot folder's done.json names, or "" where there is none to read.
std::string recorded_identity(const fs::path& dir) {
  std::ifstream in(dir / kDoneFile);
  const json d = json::parse(in, nullptr, /*allow_exceptions=*/false);
  return d.is_object() && d.contains("identity") && d["identity"].is_string()
             ? d["identity"].get<std::string>()
             : "";
}

// A shot's identity as done.json named it before the identity named the backend (the fingerprint
// and the output settings alone): a shot so named is this run's where the rest is.
std::string without_backend(const std::string& id) { return id.substr(0, id.rfind('-')); }

bool same_run(const std::string& ours, const std::string& theirs) {
  return theirs == ours || theirs == without_backend(ours);
}

// A shot folder in --output whose record another run finished (its files verified against its
// done.json, whose identity is not this run's shot's, or a shot this survey does not have)
// refuses the run before any shot: re-running it would leave the folder a mix of two runs'
// records, or replace a finished one unasked. Folders a run left unfinished are this run's.
void refuse_another_runs_shots(const std::string& output, const Plan& p) {
  std::map<int64_t, std::string> ours;
  for (size_t i = 0; i < p.shots.size(); ++i) ours[p.shots[i].id] = p.ids[i];
  for (const std::string& name : earlier_outputs(output)) {
    int64_t id = 0;
    if (name.rfind("shot_", 0) != 0 ||
        std::from_chars(name.data() + 5, name.data() + name.size(), id).ec != std::errc())
      continue;  // not a shot folder, or a number no survey's id reaches
    const fs::path dir = fs::path(output) / name;
    const std::string theirs = recorded_identity(dir);
    const auto it = ours.find(id);
    if (theirs.empty() || (it != ours.end() && same_run(it->second, theirs)) ||
        !shot_unfinished(dir, theirs).empty())
      continue;
    bad("--output " + output + " holds the finished record of shot " + std::to_string(id) +
        (it == ours.end() ? ", which this survey does not have,"
                          : " of another run (its model, shot, settings or backend differ),") +
        " in " + dir.string() + ": a survey's folder holds one run's shots. Give this run a new --output");
  }
}

Plan plan_survey(const Flags& flags) {
  if (flags.output.empty()) bad("--output DIR is required: the survey's shots go into DIR/shot_<id>");
  if (flags.overwrite)
    bad("--overwrite replaces one run's outputs, and a survey's re-run keeps its finished shots and runs the "
        "rest: to start a survey over, give it a new --output");
  Plan p;
  claim_survey_output(flags.output);
  p.batch = parse_batch(flags);
  p.shots = read_survey(flags);
  const ModelInput model = read_model(flags, {}, /*summarise=*/true);
  p.setups.reserve(p.shots.size());
  for (const SurveyShot& shot : p.shots) {
    try {
      p.setups.push_back(prepare(shot.flags, &model));
      wave::check(p.setups.back().model(), p.setups.back().options);
    } catch (const Error& e) {
      throw Error(e.kind(), "survey shot " + std::to_string(shot.id) + ": " + e.what());
    }
  }
  // auto takes the cpu where there is no GPU: a batch is refused there too (issue 33: it ran).
  const std::string& backend = p.setups.front().options.backend;
  if (p.batch > 1 && (backend == "cpu" || (backend == "auto" && gpu_count() == 0)))
    bad("--batch runs shots side by side on one GPU, and this run is on the cpu" +
        std::string(backend == "auto" ? " (--backend auto found no GPU)" : "") +
        ", where each shot already takes every core");
  p.ids.resize(p.shots.size());
  p.status.assign(p.shots.size(), "not run");
  for (size_t i = 0; i < p.shots.size(); ++i) {
    p.ids[i] = identity(p.setups[i]);
    const std::string theirs = recorded_identity(p.shots[i].dir);
    if (same_run(p.ids[i], theirs) && shot_unfinished(p.shots[i].dir, theirs).empty()) {
      p.status[i] = "skipped: finished and verified";
      ++p.skipped;
    } else {
      p.todo.push_back(i);
      p.total_steps += p.setups[i].options.nt;
    }
  }
  refuse_another_runs_shots(flags.output, p);
  return p;
}

// What one process ran of the survey: its shots' statuses and manifest entries, the bandwidth
// its first shot measured, and its first failure.
struct Share {
  std::map<size_t, std::string> status;  // by the shot's index
  std::map<int64_t, json> entries;       // by the shot's id
  int64_t done = 0;
  double copy_gbps = 0;
  std::exception_ptr failure;
};

// Where a process's shots come from: next() gives the plan index of its next shot, or nothing
// once none is left for it (safe from several threads unless `one_thread`); its bar expects
// `steps` steps and, where known ahead, `count` shots.
struct Deal {
  std::function<std::optional<size_t>()> next;
  int64_t steps = 0;
  std::optional<size_t> count;
  bool one_thread = false;
};

// The shots `from` (indices into the plan) in order, to whichever of the process's threads asks.
Deal deal_in_order(const Plan& p, std::vector<size_t> from) {
  Deal d;
  for (size_t i : from) d.steps += p.setups[i].options.nt;
  d.count = from.size();
  auto at = std::make_shared<std::atomic<size_t>>(0);
  d.next = [at, from = std::move(from)]() -> std::optional<size_t> {
    const size_t t = at->fetch_add(1);
    return t < from.size() ? std::optional<size_t>(from[t]) : std::nullopt;
  };
  return d;
}

// The unfinished shots dealt as the ranks ask (`tickets`, shared by every rank): a rank whose
// shots run faster, or whose first shot made its context sooner, takes more of them, and the
// survey ends within about one shot of its ranks' mean.
Deal deal_as_asked(const Plan& p, wave::Comm::Tickets& tickets, int ranks) {
  Deal d;
  d.steps = p.total_steps / ranks;  // the bar's guess: an even share
  d.one_thread = true;
  d.next = [&p, &tickets]() -> std::optional<size_t> {
    const int64_t t = tickets.take();
    return t < int64_t(p.todo.size()) ? std::optional<size_t>(p.todo[size_t(t)]) : std::nullopt;
  };
  return d;
}

// Runs the shots `deal` gives, `batch` at a time, each into its directory, on GPU `gpu` (-1: the
// thread's own); the bar on `show` only.
Share run_shots(Plan& p, const Deal& deal, const std::string& command, int rank, int gpu, bool show) {
  Share out;
  ProgressBar bar("fdstencil survey", show);
  std::mutex mu;  // the bar, the share
  std::map<size_t, int64_t> steps_of;
  const std::string of = deal.count ? "/" + std::to_string(*deal.count) : "";
  // Runs shot i, on the GPU state its thread kept from its last shot where the medium is the same
  // (wave::Options::kept_state: only the first shot of a thread builds m and allocates); false when
  // the survey must stop (a failure or a signal).
  const auto run_one = [&](size_t i, bool first, const std::shared_ptr<wave::KeptState>& kept) {
    Setup& s = p.setups[i];
    s.options.kept_state = kept;
    struct Unkeep {  // the state stays with its worker, not with the shot's setup
      Setup& s;
      ~Unkeep() { s.options.kept_state.reset(); }
    } unkeep{s};
    RunControl ctl;
    ctl.quiet = true;
    // One bandwidth figure for the survey: rank 0's first shot's (or the one process's), measured
    // while nothing else of its own runs; the manifest reports one.
    ctl.measure_bandwidth = first && rank <= 0;
    ctl.progress = [&, i](int64_t done, int64_t) {
      std::lock_guard lock(mu);
      steps_of[i] = done;
      int64_t sum = 0;
      for (const auto& [k, v] : steps_of) sum += v;
      bar.set_label("fdstencil survey: " + std::to_string(out.done) + of + " shots" +
                    (rank >= 0 ? " of rank 0" : ""));
      bar.update(std::min(sum, deal.steps), deal.steps);
    };
    const auto began = std::chrono::steady_clock::now();
    try {
      if (gpu >= 0) select_gpu(gpu);  // per thread: a batch's workers are threads of their own
      fs::create_directories(s.out_dir);
      std::error_code ec;
      fs::remove(s.out_dir / kDoneFile, ec);  // stale: the shot runs again
      const ShotRun r = run_shot(s, command, ctl);
      // The checksums outside the lock: the shots beside this one report progress under it.
      if (!r.result.interrupted) write_shot_done(s.out_dir, p.ids[i], r.outputs);
      const double shot_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - began).count();
      std::lock_guard lock(mu);
      if (r.result.interrupted) {
        out.status[i] = "interrupted at step " + std::to_string(r.result.steps_done);
        return false;
      }
      if (r.result.timing.copy_gbps > 0) out.copy_gbps = r.result.timing.copy_gbps;
      out.status[i] = "done";
      ++out.done;
      json e = {{"id", p.shots[i].id},
                {"dir", p.shots[i].dir.filename().string()},
                {"loop_s", r.result.timing.loop_s},
                {"total_s", r.result.timing.total_s},
                {"setup_s", r.result.timing.setup_s},
                // the shot's whole time here: its checks, its run, its outputs and their checksums
                {"shot_s", shot_s},
                {"gpts", r.result.timing.gpts},
                {"state_kept", r.result.timing.state_kept},
                {"first_step", r.result.first_step}};
      if (rank >= 0) e["rank"] = rank;
      if (gpu >= 0) e["gpu"] = gpu;
      out.entries[p.shots[i].id] = e;
    } catch (...) {
      std::lock_guard lock(mu);
      if (!out.failure) out.failure = std::current_exception();
      out.status[i] = "failed";
      return false;
    }
    return !InterruptGuard::requested();
  };
  // Each worker keeps its own GPU state between its shots; the first worker's is the first shot's.
  const auto worker = [&](std::shared_ptr<wave::KeptState> kept) {
    while (!InterruptGuard::requested()) {
      const std::optional<size_t> i = deal.next();
      if (!i || !run_one(*i, false, kept)) return;
      std::lock_guard lock(mu);
      if (out.failure) return;
    }
  };
  // The first shot alone (it measures the copy bandwidth), then `batch` workers for the rest.
  const std::optional<size_t> first = deal.next();
  std::shared_ptr<wave::KeptState> kept = wave::make_kept_state();
  if (first && run_one(*first, true, kept)) {
    std::vector<std::thread> workers;
    const int64_t threads =
        deal.one_thread ? 1 : std::min<int64_t>(p.batch, int64_t(deal.count.value_or(1)) - 1);
    for (int64_t w = 1; w < threads; ++w) workers.emplace_back(worker, wave::make_kept_state());
    worker(kept);
    for (auto& w : workers) w.join();
  }
  bar.finish();
  return out;
}

// The manifest's entries of the shots that ran before (a skipped shot keeps the entry of the run
// that made it) and the bandwidth figure of the run that measured one.
void read_old_manifest(const Flags& flags, std::map<int64_t, json>& entries, double& copy_gbps) {
  std::ifstream in(fs::path(flags.output) / kSurveyManifest);
  const json old = in ? json::parse(in, nullptr, false) : json();
  if (old.is_object() && old.contains("copy_gbps") && old["copy_gbps"].is_number())
    copy_gbps = old["copy_gbps"];
  if (old.is_object() && old.contains("shots") && old["shots"].is_array())
    for (const json& e : old["shots"])
      if (e.is_object() && e.contains("id") && e["id"].is_number_integer())
        entries[e["id"].get<int64_t>()] = e;
}

// A share as JSON text and back: what a rank sends rank 0 for the manifest.
json share_json(const Share& s) {
  json j = {
      {"done", s.done}, {"copy_gbps", s.copy_gbps}, {"status", json::object()}, {"entries", json::array()}};
  for (const auto& [i, st] : s.status) j["status"][std::to_string(i)] = st;
  for (const auto& [id, e] : s.entries) j["entries"].push_back(e);
  return j;
}

void merge(Share& into, const json& j) {
  into.done += j["done"].get<int64_t>();
  if (j["copy_gbps"].get<double>() > 0 && into.copy_gbps == 0) into.copy_gbps = j["copy_gbps"];
  for (const auto& [i, st] : j["status"].items()) into.status[size_t(std::stoull(i))] = st.get<std::string>();
  for (const json& e : j["entries"]) into.entries[e["id"].get<int64_t>()] = e;
}

// Every rank's share on rank 0 (rank 0's own included); the others keep their own.
Share gather_shares(wave::Comm& comm, const Share& mine) {
  const std::string text = share_json(mine).dump();
  const std::vector<int64_t> sizes = wave::gather_to_root(comm, std::vector<int64_t>{int64_t(text.size())});
  const std::vector<char> all = comm.gather_bytes(text.data(), int64_t(text.size()));
  if (comm.rank() != 0) return mine;
  Share whole;
  whole.failure = mine.failure;
  size_t at = 0;
  for (int64_t n : sizes) {
    merge(whole, json::parse(all.begin() + std::ptrdiff_t(at), all.begin() + std::ptrdiff_t(at + size_t(n))));
    at += size_t(n);
  }
  return whole;
}

void write_manifest(const Flags& flags, const std::string& command, const Plan& p, const Share& ran,
                    int ranks, double wall) {
  std::map<int64_t, json> entries;
  double copy_gbps = 0;
  read_old_manifest(flags, entries, copy_gbps);
  if (ran.copy_gbps > 0) copy_gbps = ran.copy_gbps;
  for (const auto& [id, e] : ran.entries) entries[id] = e;
  json m = {{"command", command},
            {"batch", p.batch},
            {"wall_s", wall},
            {"shots_run", ran.done},
            {"shots_skipped", p.skipped},
            {"shots_per_s", ran.done > 0 ? double(ran.done) / wall : 0.0},
            {"copy_gbps", copy_gbps},
            {"status", json::object()},
            {"shots", json::array()}};
  if (ranks > 1) m["ranks"] = ranks;
  for (size_t i = 0; i < p.shots.size(); ++i) {
    const auto it = ran.status.find(i);
    const std::string st = it != ran.status.end() ? it->second : p.status[i];
    m["status"][std::to_string(p.shots[i].id)] = st;
    const bool finished = st == "done" || st.rfind("skipped", 0) == 0;
    if (finished && entries.count(p.shots[i].id)) m["shots"].push_back(entries[p.shots[i].id]);
  }
  write_json_file((fs::path(flags.output) / kSurveyManifest).string(), m);
}

// What identifies the list of unfinished shots: every rank must find the same one (one file
// system, the same done.json files), since the ranks deal its shots by their place in it.
uint64_t todo_fingerprint(const Plan& p) {
  std::string ids;
  for (size_t i : p.todo) ids += std::to_string(p.shots[i].id) + " ";
  return std::hash<std::string>{}(ids);
}

// Everything before the first shot runs, on every rank of a survey across ranks, then rank 0's
// directory: a refusal on any rank stops every rank (SurveyRanks::agree) with nothing run.
Plan agreed_plan(const Flags& flags, const SurveyRanks& ranks) {
  Plan p;
  std::optional<Error> failed;
  try {
    p = plan_survey(flags);
  } catch (const Error& e) {
    failed = e;
  } catch (const std::exception& e) {  // every rank must reach the vote, whatever went wrong
    failed = Error(ErrorKind::io, e.what());
  }
  ranks.agree(failed);
  if (!ranks.comm->same(todo_fingerprint(p)))
    throw Error(
        ErrorKind::invalid_argument,
        "the ranks found different unfinished shots in " + flags.output +
            " (a directory the ranks do not see alike?): a survey across ranks needs one they all see");
  try {
    if (ranks.comm->rank() == 0) make_output_directory(flags.output);
  } catch (const Error& e) {
    failed = e;
  } catch (const std::exception& e) {
    failed = Error(ErrorKind::io, e.what());
  }
  ranks.agree(failed);
  return p;
}

// The process's GPU selected, and with it its CUDA context made, before the survey's clock starts
// (as the launcher's start and the model's read are before it): a shot's time is then its own on
// 1 GPU as on P, where P processes make their contexts at once. Nothing on the cpu.
void ready_gpu(const Plan& p, int gpu) {
  const wave::Options& o = p.setups.front().options;
  const bool on_gpu = o.backend == "cuda" || (o.backend == "auto" && gpu_count() > 0 && !o.double_precision);
  if (on_gpu && gpu_count() > 0) select_gpu(gpu >= 0 ? gpu : cuda::current_device());
}

}  // namespace

int run_survey(const Flags& flags, const std::string& command, const SurveyRanks& ranks) {
  wave::Comm* comm = ranks.comm;
  const int rank = comm ? comm->rank() : 0, size = comm ? comm->size() : 1;
  Plan p = comm ? agreed_plan(flags, ranks) : plan_survey(flags);
  if (!comm) make_output_directory(flags.output);
  // One rank's shots at a time are dealt as the ranks ask; a rank's batch is dealt ahead, every
  // size-th unfinished shot from its rank on (its threads would each call MPI, which a process
  // made MPI_THREAD_FUNNELED may not).
  std::unique_ptr<wave::Comm::Tickets> tickets;
  Deal deal;
  if (comm && p.batch == 1) {
    tickets = comm->make_tickets();
    deal = deal_as_asked(p, *tickets, size);
  } else {
    std::vector<size_t> mine;
    for (size_t t = size_t(rank); t < p.todo.size(); t += size_t(size)) mine.push_back(p.todo[t]);
    deal = deal_in_order(p, std::move(mine));
  }
  const bool quiet = flags.quiet, lead = rank == 0;
  if (!quiet && lead)
    std::fprintf(stderr, "fdstencil survey: %zu shots, %lld finished before (verified), %zu to run%s%s\n",
                 p.shots.size(), static_cast<long long>(p.skipped), p.todo.size(),
                 p.batch > 1 ? (", " + std::to_string(p.batch) + " at a time").c_str() : "",
                 size > 1 ? (" across " + std::to_string(size) + " ranks").c_str() : "");
  InterruptGuard interrupts;
  // A GPU that cannot be made ready fails this rank's share, voted on below with the shots' (a
  // rank leaving here would leave the others waiting in the collectives).
  std::exception_ptr not_ready;
  try {
    ready_gpu(p, ranks.gpu);
  } catch (...) {
    not_ready = std::current_exception();
  }
  const auto start = std::chrono::steady_clock::now();
  Share share;
  if (not_ready)
    share.failure = not_ready;
  else
    share = run_shots(p, deal, command, comm ? rank : -1, ranks.gpu, !quiet && lead);
  tickets.reset();  // every rank together (MPI_Win_free): run_shots returns on every rank
  const Share ran = comm ? gather_shares(*comm, share) : share;
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  // Rank 0's manifest: a failure to write it is its rank's failure, voted on with the shots' (a
  // rank leaving before the vote would leave the others waiting in it).
  if (lead) {
    try {
      write_manifest(flags, command, p, ran, size, wall);
    } catch (...) {
      if (!comm) throw;
      if (!share.failure) share.failure = std::current_exception();
    }
  }
  // Every rank's shots are over: the ranks agree on whether any failed.
  const bool all_passed = comm ? comm->all(!share.failure) : !share.failure;
  if (share.failure) std::rethrow_exception(share.failure);
  if (!all_passed) throw Error(ErrorKind::io, "a shot failed on another rank (its own error says which)");
  if (InterruptGuard::requested()) {
    if (lead)
      std::fprintf(stderr,
                   "fdstencil: survey interrupted by %s: %lld of %zu shots finished; the running shots kept "
                   "their checkpoints. Resume with:\n  %s\n",
                   InterruptGuard::name(), static_cast<long long>(ran.done + p.skipped), p.shots.size(),
                   resume_command(command).c_str());
    return 128 + InterruptGuard::signal();
  }
  if (!quiet && lead)
    std::fprintf(stderr, "fdstencil survey: %lld shots run, %lld skipped, in %.1f s (%.3g shots/s); %s\n",
                 static_cast<long long>(ran.done), static_cast<long long>(p.skipped), wall,
                 ran.done > 0 ? double(ran.done) / wall : 0.0,
                 (fs::path(flags.output) / kSurveyManifest).c_str());
  return 0;
}

}  // namespace fdstencil::cli::wave_cli
