// `fdstencil rtm --survey` and `gradient --survey` (imaging_cli.hpp): every shot of a survey file
// imaged (or its gradient taken) against its record in the folder `fdstencil wave --survey` wrote,
// and added into one stack.
//
// Every shot is prepared and its record checked before the first runs. After each shot the stack
// is kept in --output as stack_<shots done>.npy (float64) named by stack.json, which lists the
// shots in it and the run's identity: each shot's run fingerprint, its record's CRC-32C and the
// settings. The stack file is written first and stack.json renamed over the old one after it, so
// an interruption at any point leaves a stack.json naming a whole stack that holds exactly its
// shots. --resume continues one whose identity is this run's; another run's stack is refused.
// --devices spreads the shots over GPUs, the stack still added in the survey's order. A signal
// stops the run after the shots in progress. At the end image.npy or gradient.npy (float32) and
// summary.json are written and the stack's files removed.
#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstring>
#include <fstream>

#include "commands.hpp"
#include "device_pool.hpp"
#include "fdstencil/device.hpp"
#include "fdstencil/device_field.hpp"
#include "fdstencil/checksum.hpp"
#include "fdstencil/error.hpp"
#include "fdstencil/npy.hpp"
#include "imaging_cli.hpp"
#include "interrupt.hpp"
#include "progress.hpp"

namespace fdstencil::cli::imaging_cli {

namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using wave_cli::ModelInput;
using wave_cli::SurveyShot;

constexpr const char* kStackFile = "stack.json";

[[noreturn]] void bad(const std::string& what) { throw Error(ErrorKind::invalid_argument, what); }

std::string stack_name(int64_t shots) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "stack_%06lld.npy", static_cast<long long>(shots));
  return buf;
}

// Whether a file name is a stack's, stack_<6 digits>.npy: only those are read or removed, never a
// user's own files beside them.
bool is_stack_file(const std::string& name) {
  if (name.size() != 16 || name.rfind("stack_", 0) != 0 || name.substr(12) != ".npy") return false;
  return std::all_of(name.begin() + 6, name.begin() + 12, [](char c) { return c >= '0' && c <= '9'; });
}

std::string hex(uint64_t v) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(v));
  return buf;
}

// The survey's shots, prepared and checked, with their records' folders.
struct Survey {
  std::vector<SurveyShot> shots;
  std::vector<Setup> setups;
  std::vector<fs::path> records;
  json identity;
};

Survey plan(const Flags& f, const ImagingFlags& g, Kind kind) {
  if (g.observed.empty())
    bad("--observed DIR is required with --survey: the folder `fdstencil wave --survey` wrote (shot_<id> "
        "folders)");
  if (f.output.empty()) bad("--output DIR is required: the stack and the result go there");
  budget_bytes(g.memory_budget);
  Survey p;
  p.shots = wave_cli::read_survey(f);
  const ModelInput model = wave_cli::read_model(f, {}, /*summarise=*/true);
  json shots = json::array();
  for (const SurveyShot& shot : p.shots) {
    try {
      p.setups.push_back(wave_cli::prepare(shot.flags, &model));
      wave::check(p.setups.back().model(), p.setups.back().options);  // run()'s checks, before any shot
      p.records.push_back(fs::path(g.observed) / shot.dir.filename());
      read_observed(p.records.back(), p.setups.back(), "--observed");
      shots.push_back({{"id", shot.id},
                       {"run", hex(wave::run_fingerprint(p.setups.back().model(), p.setups.back().options))},
                       {"record_crc32c", crc32c_file(observed_file(p.records.back()))}});
    } catch (const Error& e) {
      throw Error(e.kind(), "survey shot " + std::to_string(shot.id) + ": " + e.what());
    }
  }
  p.identity = {{"kind", command_name(kind)},
                {"settings", settings_json(g, kind)},
                {"backend", wave::linearised_backend(p.setups.front().options)},
                {"double_precision", p.setups.front().options.double_precision},
                {"shots", shots}};
  return p;
}

// The stack: the sum over the shots done of their results, with their summary entries.
struct Stack {
  std::vector<double> values;
  std::vector<int64_t> done;  // the shots' ids
  json entries = json::array();
  double misfit = 0;
  std::string file;  // the stack_<n>.npy holding `values`, "" before the first shot
};

// An interrupted run's stack from `dir`, checked to be this run's and whole.
Stack load_stack(const fs::path& dir, const Survey& p, int64_t points) {
  Stack st;
  st.values.assign(size_t(points), 0.0);
  const fs::path doc_path = dir / kStackFile;
  std::ifstream in(doc_path);
  if (!in) return st;  // nothing to resume: start
  json doc;
  try {
    doc = json::parse(in);
    if (doc.at("identity") != p.identity)
      bad("--resume: " + doc_path.string() +
          " is the stack of another run (its model, shots, records, settings or backend differ): --overwrite "
          "starts over");
    st.done = doc.at("done").get<std::vector<int64_t>>();
    st.entries = doc.at("entries");
    st.misfit = doc.at("misfit").get<double>();
    st.file = doc.at("file").get<std::string>();
    const uint32_t crc = doc.at("crc32c").get<uint32_t>();
    if (!is_stack_file(st.file) || crc32c_file(dir / st.file) != crc)
      throw Error(ErrorKind::io, "--resume: " + (dir / st.file).string() + " is not the stack " +
                                     doc_path.string() +
                                     " names (changed or missing): --overwrite starts over");
  } catch (const json::exception& e) {
    throw Error(ErrorKind::io,
                "--resume: " + doc_path.string() + " is not a stack this tool wrote: " + e.what());
  }
  const NpyArray a = read_npy(dir / st.file);
  if (a.dtype != DType::f64 || a.bytes.size() != size_t(points) * sizeof(double))
    throw Error(ErrorKind::io, "--resume: " + st.file + " is not the stack of this model");
  std::memcpy(st.values.data(), a.bytes.data(), a.bytes.size());
  return st;
}

// Writes the stack after a shot: its file first, then stack.json naming it, then the old file
// removed.
void save_stack(const fs::path& dir, Stack& st, const Survey& p, const Setup& s) {
  const std::string file = stack_name(int64_t(st.done.size()));
  write_npy(dir / file, DType::f64, wave_cli::model_shape(s.model()), st.values.data(),
            int64_t(st.values.size() * sizeof(double)));
  const json doc = {{"format", "fdstencil-stack-1"},
                    {"identity", p.identity},
                    {"done", st.done},
                    {"entries", st.entries},
                    {"misfit", st.misfit},
                    {"file", file},
                    {"crc32c", crc32c_file(dir / file)}};
  write_json_file((dir / kStackFile).string(), doc);
  std::error_code ec;
  if (!st.file.empty() && st.file != file) fs::remove(dir / st.file, ec);
  st.file = file;
}

// stack.json first: without it a stack file is an orphan, never read.
void remove_stack(const fs::path& dir) {
  std::error_code ec;
  fs::remove(dir / kStackFile, ec);
  for (const auto& e : fs::directory_iterator(dir, ec))
    if (is_stack_file(e.path().filename().string())) fs::remove(e.path(), ec);
}

bool is_done(const Stack& st, int64_t id) {
  return std::find(st.done.begin(), st.done.end(), id) != st.done.end();
}

// The result and summary once every shot is in the stack, then the stack's files removed.
void finish(const fs::path& dir, const Flags& f, const ImagingFlags& g, Kind kind, const std::string& command,
            const Survey& p, const Stack& st, double seconds, OutputClaim& claim) {
  const Setup& first = p.setups.front();
  json doc = {{"format",
               kind == Kind::rtm ? "fdstencil-rtm-survey-summary-1" : "fdstencil-gradient-survey-summary-1"},
              {"command", command},
              {"survey", f.survey},
              {"observed", g.observed},
              {"shots", st.entries},
              {"model", first.model_json},
              {"seconds_this_invocation", seconds}};
  doc.update(settings_json(g, kind));
  if (kind == Kind::gradient) doc["misfit"] = st.misfit;
  write_result(dir, first, f, g, kind, st.values, claim);
  std::vector<std::string> outputs = result_files(kind, g);
  outputs.push_back("summary.json");
  doc["outputs"] = outputs;
  claim.wrote("summary.json");
  write_json_file((dir / "summary.json").string(), doc);
  remove_stack(dir);
  claim.keep();
}

// One GPU index of --devices: digits only, naming a visible GPU.
int device_index(const std::string& item, const std::string& all, int count) {
  const bool digits = !item.empty() && item.size() <= 9 &&
                      std::all_of(item.begin(), item.end(), [](char c) { return c >= '0' && c <= '9'; });
  if (!digits) bad("--devices: \"all\" or GPU indices separated by commas, got '" + all + "'");
  const int d = std::stoi(item);
  if (d >= count)
    bad("--devices: GPU " + item + " does not exist (this machine has " + std::to_string(count) +
        " visible)");
  return d;
}

// A shot's result on its way into the stack.
struct Imaged {
  ShotImage img;
  int device = -1;
};

// Shot i's result added into the stack, which is then kept on the disk.
void stack_shot(const fs::path& dir, Kind kind, const Survey& p, size_t i, const Imaged& r, Stack& st) {
  for (size_t k = 0; k < st.values.size(); ++k) st.values[k] += r.img.values[k];
  st.misfit += r.img.misfit;
  st.done.push_back(p.shots[i].id);
  json entry = {{"id", p.shots[i].id}, {"storage", storage_json(r.img.report)}};
  if (kind == Kind::gradient) entry["misfit"] = r.img.misfit;
  if (r.device >= 0 && r.img.report.backend == "cuda") entry["gpu"] = r.device;
  st.entries.push_back(entry);
  try {
    save_stack(dir, st, p, p.setups[i]);
  } catch (const Error& e) {
    throw Error(e.kind(),
                "survey shot " + std::to_string(p.shots[i].id) + ": its stack was not kept: " + e.what());
  }
}

// The shots not yet in the stack, spread over `devices`, one worker each taking the next shot. A
// shot's result goes into the stack once every shot before it in the survey is in (InOrder): the
// stack is always a prefix of the survey's shots, added in their order, so it has the same bits
// whatever GPUs made it; a worker runs at most two shots a GPU past the oldest one not stacked.
// A signal lets the shots in progress finish and starts no more (results still waiting for an
// earlier shot are dropped, and --resume runs them again); a failing shot lets the others finish,
// and its error is the run's. One bar over the shots' steps, its label the count of shots done.
void stack_shots(const fs::path& dir, const ImagingFlags& g, Kind kind, const Survey& p, Stack& st,
                 const std::vector<size_t>& todo, const std::vector<int>& devices, bool quiet) {
  InOrder<Imaged> in_order(2 * devices.size());
  DevicePool pool(
      todo.size(), [] { return false; }, std::chrono::milliseconds(100));
  const auto stop = [&pool] { return pool.stop_requested() || InterruptGuard::requested(); };
  const auto stack = [&](size_t k, Imaged& r) { stack_shot(dir, kind, p, todo[k], r, st); };
  SurveyProgress bar(std::string("fdstencil ") + command_name(kind), todo.size(), !quiet);
  const struct End {
    SurveyProgress& bar;
    ~End() { bar.finish(); }
  } end{bar};
  // Each worker keeps its GPU buffer from shot to shot (wave::Options::kept_state), freed with it.
  const auto worker = [&](int device) {
    return [&, device, kept = wave::make_kept_state()](size_t k) {
      if (InterruptGuard::requested() || !in_order.wait_turn(k, stop)) return;  // stop between shots
      const size_t i = todo[k];
      Imaged r{{}, device};
      try {
        r.img = image_shot(p.setups[i], g, kind, read_observed(p.records[i], p.setups[i], "--observed"), kept,
                           bar.shot(k));
      } catch (const Error& e) {
        throw Error(e.kind(), "survey shot " + std::to_string(p.shots[i].id) + ": " + e.what());
      }
      bar.finished(k);
      in_order.put(k, std::move(r), stack);
    };
  };
  pool.run(devices, worker);
}

// The message and exit status of a run stopped between shots.
int stopped(Kind kind, const fs::path& dir, const Survey& p, const Stack& st, const std::string& command) {
  const int sig = InterruptGuard::signal() != 0 ? InterruptGuard::signal() : SIGTERM;
  if (st.done.empty()) {
    std::fprintf(stderr, "fdstencil %s: interrupted by %s before the first shot: nothing was written\n",
                 command_name(kind), InterruptGuard::name());
    return 128 + sig;
  }
  std::fprintf(stderr, "fdstencil %s: interrupted by %s: %zu of %zu shots are in %s. Continue with:\n  %s\n",
               command_name(kind), InterruptGuard::name(), st.done.size(), p.shots.size(),
               (dir / kStackFile).string().c_str(), wave_cli::resume_command(command).c_str());
  return 128 + sig;
}

}  // namespace

std::vector<int> survey_devices(const ImagingFlags& g, bool gpu) {
  if (g.devices.empty()) return {gpu ? cuda::current_device() : -1};
  if (!gpu)
    bad("--devices: this survey runs on the cpu (--backend cpu, --double, or no GPU); leave --devices out");
  const int count = gpu_count();
  std::vector<int> out;
  if (g.devices == "all") {
    for (int d = 0; d < count; ++d) out.push_back(d);
  } else {
    for (size_t start = 0;;) {  // every item, the empty ones too ("0,", ",1")
      const size_t comma = g.devices.find(',', start);
      const std::string item = g.devices.substr(start, comma == std::string::npos ? comma : comma - start);
      const int d = device_index(item, g.devices, count);
      if (std::find(out.begin(), out.end(), d) != out.end())
        bad("--devices: GPU " + item + " is named twice");
      out.push_back(d);
      if (comma == std::string::npos) break;
      start = comma + 1;
    }
  }
  return out;
}

int run_survey_stack(const Flags& f, const ImagingFlags& g, Kind kind, const std::string& command) {
  const Survey p = plan(f, g, kind);
  std::vector<int> devices = survey_devices(g, wave::linearised_backend(p.setups.front().options) == "cuda");
  const Setup& first = p.setups.front();
  const fs::path dir = f.output;  // the shots' own out_dir are OUTPUT/shot_<id>, wave's folders
  if (fs::exists(dir / kStackFile) && !f.resume && !f.overwrite)
    bad("--output " + dir.string() +
        " holds an interrupted survey's stack (stack.json): --resume continues it, --overwrite starts over");
  check_result_files(first, f, g);
  const std::vector<std::string> all = {result_name(kind), result_segy_name(kind), "summary.json"};
  OutputClaim claim(dir, all, f.overwrite);
  if (!f.resume) remove_stack(dir);  // --overwrite's: the earlier stack, started over
  if (f.overwrite) {  // and the earlier result, which an interruption would leave beside the new stack
    std::error_code ec;
    for (const std::string& name : all) fs::remove(dir / name, ec);
  }
  Stack st = load_stack(dir, p, first.model().points());
  std::vector<size_t> todo;  // the shots not yet in the stack
  for (size_t i = 0; i < p.shots.size(); ++i)
    if (!is_done(st, p.shots[i].id)) todo.push_back(i);
  if (!todo.empty() && todo.size() < devices.size()) devices.resize(todo.size());  // no GPU without a shot
  // A signal during the last shot lets the run finish: its result is whole by then.
  InterruptGuard guard("stopping after the shots in progress, the stack kept for --resume");
  const auto start = std::chrono::steady_clock::now();
  stack_shots(dir, g, kind, p, st, todo, devices, f.quiet);
  if (st.done.size() < p.shots.size()) {  // a signal stopped the run between shots
    if (!st.done.empty()) claim.keep();   // the stack stays for --resume
    return stopped(kind, dir, p, st, command);
  }
  finish(dir, f, g, kind, command, p, st,
         std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(), claim);
  if (!f.quiet)
    std::fprintf(stderr, "fdstencil %s: %s of %zu shots written to %s\n", command_name(kind),
                 result_name(kind), p.shots.size(), dir.string().c_str());
  return 0;
}

}  // namespace fdstencil::cli::imaging_cli
