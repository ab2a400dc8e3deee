// fdstencil wave: one shot of the acoustic solver from the command line. The order of work is
// the point of this file: every input is parsed and checked (wave_inputs.cpp) and the output
// directory made and probed before the solver starts, so bad input costs nothing and leaves
// nothing; snapshots are written as they arrive, and everything else only after a run succeeded.
#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <chrono>
#include <csignal>
#include <filesystem>
#include <memory>
#include <optional>
#include <string_view>
#include <vector>

#include "commands.hpp"
#include "fdstencil/device_field.hpp"
#include "fdstencil/error.hpp"
#include "fdstencil/wave_comm.hpp"
#include "checkpoint_writer.hpp"
#include "interrupt.hpp"
#include "progress.hpp"
#include "tune_wave.hpp"
#include "wave_cli.hpp"
#ifdef FDSTENCIL_HAVE_CUDA
#include "fdstencil/device.hpp"
#endif
#if FDSTENCIL_HAVE_MPI
#include "mpi/mpi_comm.hpp"
#endif
#if FDSTENCIL_HAVE_NCCL
#include "nccl/nccl_comm.hpp"
#endif

namespace fdstencil::cli {

namespace {

namespace fs = std::filesystem;
using namespace wave_cli;

// The output directory for one run: made when missing, probed for writing, and removed again
// (with the parents this run made) when the run fails before anything was written into it, so
// a refused run leaves no trace. A directory that existed before is never removed.
class OutputDir {
 public:
  explicit OutputDir(const fs::path& dir) : dir_(dir) {
    std::error_code ec;
    for (fs::path p = dir; !p.empty() && !fs::exists(p, ec); p = p.parent_path()) {
      top_ = p;
      if (p == p.parent_path()) break;
    }
    if (!top_.empty()) {
      fs::create_directories(dir, ec);
      if (ec)
        throw Error(ErrorKind::io,
                    "--output " + dir.string() + ": cannot create the directory: " + ec.message());
    }
    try {
      check_writable((dir / "summary.json").string());
    } catch (...) {
      remove_if_empty();
      throw;
    }
  }
  ~OutputDir() {
    if (!kept_) remove_if_empty();
  }
  void keep() { kept_ = true; }

 private:
  void remove_if_empty() {
    if (top_.empty()) return;
    std::error_code ec;
    for (fs::path p = dir_;; p = p.parent_path()) {
      if (!fs::remove(p, ec)) return;  // removes only an empty directory: stops at the first with files
      if (p == top_ || p == p.parent_path()) return;
    }
  }
  fs::path dir_, top_;  // top_: the outermost directory this run created, empty when none
  bool kept_ = false;
};

// A size in the unit a person reads it in: KiB below a MiB, MiB below a GiB, GiB below a TiB.
std::string size_text(double bytes) {
  static constexpr const char* kUnits[] = {"KiB", "MiB", "GiB", "TiB"};
  double v = bytes / 1024;
  int u = 0;
  while (u < 3 && v >= 1024) v /= 1024, ++u;
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.3g %s", v, kUnits[u]);
  return buf;
}

// One kind of file the run writes, its bytes, and what would make it smaller.
struct OutputPart {
  std::string what;
  double bytes;
  std::string smaller;
};

std::vector<OutputPart> output_parts(const Setup& s) {
  const wave::Model& m = s.model();
  double snapshot_points = double(m.points());
  if (s.slice.axis == 'z') snapshot_points = double(m.ny * m.nx);
  if (s.slice.axis == 'y') snapshot_points = double(m.nz * m.nx);
  if (s.slice.axis == 'x') snapshot_points = double(m.nz * m.ny);
  const double receivers = double(s.options.receivers.size()), record = 4 * receivers * double(s.n_out);
  std::vector<OutputPart> parts = {
      {"snapshots", 4 * double(s.options.snapshot_steps.size()) * snapshot_points,
       "fewer --snapshot-steps, a larger --snapshot-every, or a --snapshot-slice"},
      {"the shot record", record, "fewer receivers, or a larger --record-dt"},
      {"analytic.npy", s.compare_analytic ? record : 0, "no --compare-analytic"},
      {"the final field", s.write_final ? 4 * double(m.points()) : 0, "--no-final"},
      // shot.sgy: the samples again, a 240-byte header per trace, 3600 bytes of file headers
      {"shot.sgy", s.write_segy ? record + 240 * receivers + 3600 : 0, "no --segy"}};
  std::erase_if(parts, [](const OutputPart& p) { return p.bytes <= 0; });
  std::sort(parts.begin(), parts.end(),
            [](const OutputPart& a, const OutputPart& b) { return a.bytes > b.bytes; });
  return parts;
}

// "snapshots 231 GiB (fewer ...); the shot record 764 MiB (...)", the largest first.
std::string parts_text(const std::vector<OutputPart>& parts) {
  std::string out;
  for (const OutputPart& p : parts)
    out += (out.empty() ? "" : "; ") + p.what + " " + size_text(p.bytes) + " (" + p.smaller + ")";
  return out;
}

// The files the run will write must fit on the disk: a full-volume snapshot every few steps of a
// large model fills a disk quickly, and finding that out after the run would waste it. The message
// lists the outputs largest first, each with what would shrink it.
// Checkpoints take their size twice over (the one on the disk and its successor's temporary): with
// --checkpoint-every they must fit too; without it only a stop by a signal writes one, so a run
// whose checkpoint is larger than the disk still runs, warned that such a stop could not keep its
// state.
void check_disk_space(const Setup& s) {
  const std::vector<OutputPart> parts = output_parts(s);
  double outputs = 0;
  for (const OutputPart& p : parts) outputs += p.bytes;
  const wave::Model& m = s.model();
  const wave::Domain d = wave::Domain::make(m.dim, s.options.radius, m.nz, m.ny, m.nx, s.options.boundary);
  const double checkpoints = 2 * double(wave::checkpoint_bytes(d, s.options, false));
  std::error_code ec;
  const fs::space_info space = fs::space(s.out_dir, ec);
  if (ec) return;
  const double free = double(space.available);
  if (outputs > free)
    throw Error(ErrorKind::io, "not enough disk space: the outputs need " + size_text(outputs) + " but " +
                                   s.out_dir.string() + " has only " + size_text(free) +
                                   " free: " + parts_text(parts));
  if (outputs + checkpoints <= free) return;
  if (s.options.checkpoint_every > 0)
    throw Error(ErrorKind::io,
                "not enough disk space for --checkpoint-every: the outputs and two checkpoints (the one on "
                "the disk and its successor's temporary) need " +
                    size_text(outputs + checkpoints) + " but " + s.out_dir.string() + " has only " +
                    size_text(free) + " free; the checkpoints " + size_text(checkpoints) +
                    " (without --checkpoint-every only a stop by a signal writes one), " + parts_text(parts));
  std::fprintf(
      stderr,
      "fdstencil: warning: %s has %s free, enough for the outputs (%s) but not for two checkpoints as "
      "well (%s, the one on the disk and its successor's temporary): a stop by SIGINT or SIGTERM "
      "could not write its checkpoint\n",
      s.out_dir.string().c_str(), size_text(free).c_str(), size_text(outputs).c_str(),
      size_text(checkpoints).c_str());
}

}  // namespace

std::string wave_cli::command_text(const std::vector<std::string>& argv) {
  std::string out;
  for (const std::string& a : argv) {
    constexpr std::string_view kShellSafe = "_-./:=,@%+";  // characters no shell interprets
    bool plain = !a.empty();
    for (char c : a)
      if (!std::isalnum(static_cast<unsigned char>(c)) && kShellSafe.find(c) == std::string_view::npos)
        plain = false;
    std::string q = a;
    if (!plain) {
      q = "'";
      for (char c : a) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
      q += "'";
    }
    out += (out.empty() ? "" : " ") + q;
  }
  return out;
}

namespace {

// An interrupted run's exit status: 128 + its signal (130 SIGINT, 143 SIGTERM); a rank of a split
// run stopped by another rank's signal alone reports SIGTERM's, the launcher's usual one.
int interrupted_status() {
  return 128 + (InterruptGuard::signal() != 0 ? InterruptGuard::signal() : SIGTERM);
}

// An interrupted run's message (where its state is, how to resume) and its exit status. A split
// run's checkpoint is a one-rank checkpoint: it resumes under mpirun with any number of ranks, or
// in one process.
int interrupted_exit(const wave::Result& r, const fs::path& checkpoint, const std::string& command) {
  const std::string again = resume_command(command);
  const std::string how = r.ranks > 1
                              ? "mpirun -np " + std::to_string(r.ranks) + " " + again +
                                    "\n(or under any number of ranks, or in one process: " + again + ")"
                              : again;
  // In a split run the stop may have come from another rank's signal alone.
  const std::string by =
      InterruptGuard::signal() != 0 ? std::string(InterruptGuard::name()) : "a signal to another rank";
  std::fprintf(
      stderr,
      "fdstencil: interrupted by %s after step %lld of %lld; the state is in %s. Resume with:\n  %s\n",
      by.c_str(), static_cast<long long>(r.steps_done), static_cast<long long>(r.nt), checkpoint.c_str(),
      how.c_str());
  return interrupted_status();
}

// --resume needs a checkpoint to resume from. A temporary one a stopped run never renamed (a
// second signal during its write) is named: it may be whole, and load_checkpoint refuses a damaged
// one.
void check_resumable(const Setup& s) {
  std::error_code ec;
  if (!s.resume || fs::exists(s.out_dir / kCheckpointFile, ec)) return;
  std::string temporaries;
  for (const std::string& name : earlier_outputs(s.out_dir))
    if (name.rfind(std::string(kCheckpointFile) + ".tmp.", 0) == 0)
      temporaries += (temporaries.empty() ? "" : ", ") + name;
  const std::string none =
      "--resume: there is no " + std::string(kCheckpointFile) + " in " + s.out_dir.string();
  if (!temporaries.empty())
    throw Error(
        ErrorKind::invalid_argument,
        none + ", only the temporary checkpoint a stopped run did not finish writing (" + temporaries +
            "). If that run was stopped while writing it, it may be whole: rename it to " + kCheckpointFile +
            " to resume from it (a damaged one is refused), or run with --overwrite "
            "to start over");
  throw Error(ErrorKind::invalid_argument, none + ": run without --resume to start from step 0");
}

int run_single(const Flags& flags, const std::string& command) {
  Setup s = prepare(flags);
  const fs::path checkpoint = s.out_dir / kCheckpointFile;
  check_resumable(s);
  claim_output(s);
  OutputDir dir(s.out_dir);
  InterruptGuard interrupts;
  ShotRun run = run_shot(s, command, RunControl{});
  dir.keep();
  return run.result.interrupted ? interrupted_exit(run.result, checkpoint, command) : 0;
}

}  // namespace

namespace wave_cli {

std::vector<float> shot_prechecks(const Setup& s) {
  // The analytic record needs only the inputs, so a comparison that cannot work (no receiver
  // sees the direct wave before the box's edges could echo) is refused before the run.
  std::vector<float> analytic;
  if (s.compare_analytic) {
    const wave::Model& m = s.model();
    PhaseNotice computing(kNoticeLabel, "computing the analytic record", !s.quiet);
    analytic = analytic_record(s);
    const wave::Domain d = wave::Domain::make(m.dim, s.options.radius, m.nz, m.ny, m.nx, s.options.boundary);
    compare(s, analytic, analytic, window_end(s, d));  // throws exactly when no window holds energy
  }
  check_disk_space(s);
  return analytic;
}

std::unique_ptr<wave::Checkpoint> load_resume(const Setup& s) {
  const fs::path checkpoint = s.out_dir / kCheckpointFile;
  std::error_code ec;
  if (!s.resume || !fs::exists(checkpoint, ec)) return nullptr;
  try {
    return std::make_unique<wave::Checkpoint>(wave::load_checkpoint(checkpoint));
  } catch (const Error& e) {
    throw Error(e.kind(), std::string("--resume: ") + e.what() + " (remove it, or run without --resume)");
  }
}

namespace {

// The snapshots among this run's outputs: a split run's ranks wrote theirs themselves
// (Options::split_snapshot_file), and a resumed run's earlier part took some before its checkpoint.
void list_snapshots(const Setup& s, ShotRun& run) {
  if (s.options.split_snapshot_file) {
    std::vector<int64_t> steps = s.options.snapshot_steps;
    std::sort(steps.begin(), steps.end());
    steps.erase(std::unique(steps.begin(), steps.end()), steps.end());
    for (int64_t step : steps)
      if (step >= run.result.first_step) run.outputs.push_back(snapshot_name(step));
  }
  // The snapshots the interrupted run took before its checkpoint are this run's outputs too.
  if (run.result.first_step > 0) {
    std::vector<std::string> earlier;
    for (int64_t step : s.options.snapshot_steps)
      if (step < run.result.first_step) {
        const std::string name = snapshot_name(step);
        std::error_code ec;
        if (fs::exists(s.out_dir / name, ec) &&
            std::find(earlier.begin(), earlier.end(), name) == earlier.end())
          earlier.push_back(name);
      }
    run.outputs.insert(run.outputs.begin(), earlier.begin(), earlier.end());
  }
}

// The record, resampled where asked, and the files after the steps: the shot, the analytic
// comparison, the final field, the summary. Returns the comparison (null without one).
nlohmann::json write_outputs(const Setup& s, ShotRun& run, const std::vector<float>& analytic,
                             const std::string& command, bool quiet) {
  const wave::Result& r = run.result;
  std::vector<float> record;
  if (!s.options.receivers.empty()) {
    char dt[32];
    std::snprintf(dt, sizeof dt, "%g", s.record_dt);
    PhaseNotice resampling(kNoticeLabel, std::string("resampling the record to dt ") + dt + " s",
                           !quiet && (s.record_dt != r.dt || s.n_out != r.nt), "receivers");
    record = shot_record(s, r, &resampling);
  }
  PhaseNotice writing(kNoticeLabel, "writing the outputs", !quiet);
  nlohmann::json comparison;
  if (!s.options.receivers.empty()) {
    for (const std::string& name : write_shot(s, record)) run.outputs.push_back(name);
    if (s.compare_analytic) {
      comparison = compare(s, record, analytic, window_end(s, r.domain));
      run.outputs.push_back(write_analytic(s, analytic));
    }
  }
  if (s.write_final) run.outputs.push_back(write_final(s, r));
  run.outputs.push_back("summary.json");
  write_summary(s, r, command, comparison, run.outputs);
  return comparison;
}

}  // namespace

// A single-GPU run without --kernel-params takes the launch `fdstencil tune --wave` stored for this
// card and grid, if any (tune_wave.hpp); the summary names the file. Split runs keep their slabs'
// own defaults.
static void take_tuned_launch(Setup& s) {
  wave::Options& o = s.options;
  const bool gpu = o.backend == "cuda" || (o.backend == "auto" && !o.double_precision && gpu_count() > 0);
  if (!gpu || o.comm != nullptr || !o.kernel_params.empty()) return;
#ifdef FDSTENCIL_HAVE_CUDA
  const std::filesystem::path file = wave_cache_file("");
  const std::string device = cuda::device_info(cuda::current_device())["name"].get<std::string>();
  const auto warn = [](const std::string& w) { std::fprintf(stderr, "fdstencil: warning: %s\n", w.c_str()); };
  const wave::Model& m = s.model();
  const std::string params = tuned_launch(file, device, wave_case_of(m, o), warn);
  if (params.empty()) return;
  // An entry another build wrote, with a key or value this one refuses, gives way to the defaults;
  // an error that is the run's own, not the launch's, is the run's to report (run() gives it again).
  o.kernel_params = params;
  try {
    wave::check(m, o);
  } catch (const Error& e) {
    o.kernel_params.clear();
    wave::check(m, o);
    warn(file.string() + ": the tuned launch " + params + " is refused (" + e.what() +
         "): the default launch is used");
    return;
  }
  s.launch_from = file.string();
#endif
}

ShotRun run_shot(Setup& s, const std::string& command, const RunControl& control) {
  const std::vector<float> analytic = control.prechecked ? *control.prechecked : shot_prechecks(s);
  // Every check has passed, the solver's own too: the earlier run's outputs go (--overwrite). A
  // split run's rank 0 did so before the ranks' vote (run_split), where a failure stops them all.
  if (s.overwrite && !control.prechecked) {
    wave::check(s.model(), s.options);
    clear_earlier_outputs(s);
  }
  const fs::path checkpoint = s.out_dir / kCheckpointFile;
  // Temporaries of checkpoints a killed process never renamed: state-sized, and nobody's now.
  {
    std::error_code ec;
    const std::string stale = std::string(kCheckpointFile) + ".tmp.";
    for (const auto& e : fs::directory_iterator(s.out_dir, ec))
      if (e.path().filename().string().rfind(stale, 0) == 0) fs::remove(e.path(), ec);
  }
  // A split run's ranks read their own parts of the checkpoint (Options::split_resume_file).
  const bool split_resume = !s.options.split_resume_file.empty();
  std::shared_ptr<const wave::Checkpoint> resumed = control.resumed ? control.resumed
                                                    : split_resume  ? nullptr
                                                                    : load_resume(s);
  const bool quiet = s.quiet || control.quiet;
  ShotRun run;
  ProgressBar bar(kNoticeLabel, !quiet && !control.progress);
  // The solver's setup (its memory, the absorbing layers, the sources' and receivers' taps) ends at
  // the first report of a step.
  PhaseNotice setting_up(kNoticeLabel, "setting up the solver", !quiet && !control.progress);
  // A quiet run has no bar to feed: without a callback the time loop never waits for the device
  // to report progress, so the host may queue steps ahead.
  if (control.progress) {
    s.options.progress = control.progress;
  } else if (!quiet) {
    s.options.progress = [&bar, &setting_up](int64_t done, int64_t total) {
      setting_up.end();
      bar.update(done, total);
    };
  }
  s.options.on_snapshot = [&s, &run](const wave::Snapshot& snap) {
    run.outputs.push_back(write_snapshot(s, snap));
  };
  CheckpointWriter writer(checkpoint);
  s.options.on_checkpoint = [&writer](wave::Checkpoint c) { writer.submit(std::move(c)); };
  s.options.checkpoint_buffer = [&writer] { return writer.spare(); };
  // A run across ranks stops as a whole, where any rank was asked to (mpirun passes a signal on).
  s.options.stop_requested = [] { return InterruptGuard::requested(); };
  s.options.resume = resumed.get();
  s.options.measure_bandwidth = control.measure_bandwidth;
  take_tuned_launch(s);
  bool ran = false;
  try {
    run.result = wave::run(s.model(), s.options);
    ran = true;
    // The last checkpoint on the disk before anything else happens; the wait is the checkpoints' cost.
    const auto a = std::chrono::steady_clock::now();
    writer.finish();
    run.result.timing.checkpoint_s +=
        std::chrono::duration<double>(std::chrono::steady_clock::now() - a).count();
    if (control.written) control.written(true);
  } catch (const Error& e) {
    if (ran && control.written) control.written(false);
    bar.finish();
    if (resumed || split_resume)
      throw Error(e.kind(), "--resume from " + checkpoint.string() + ": " + e.what());
    throw;
  }
  bar.finish();
  setting_up.end();
  resumed.reset();
  wave::Result& r = run.result;
  r.timing.checkpoint_write_s = writer.write_seconds();
  for (const std::string& w : r.warnings) std::fprintf(stderr, "fdstencil: warning: %s\n", w.c_str());
  if (r.interrupted) return run;
  list_snapshots(s, run);
  const nlohmann::json comparison = write_outputs(s, run, analytic, command, quiet);
  // Finished: the checkpoint would only resume a run that has nothing left to do.
  std::error_code ec;
  fs::remove(checkpoint, ec);
  if (!quiet) std::fprintf(stderr, "%s\n", human_summary(s, r, comparison, run.outputs.size()).c_str());
  return run;
}

}  // namespace wave_cli

namespace {

// The ranks an MPI launcher (OpenMPI's mpirun, or a PMI one such as MPICH's) started this process
// among, read from the environment it sets: 1 when none did.
int launched_ranks() {
  for (const char* name : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE"})
    if (const char* v = std::getenv(name)) {
      const int n = std::atoi(v);
      if (n > 0) return n;
    }
  return 1;
}

#if !FDSTENCIL_HAVE_MPI
[[noreturn]] void refuse_without_mpi(int ranks) {
  throw Error(ErrorKind::unsupported, "started by an MPI launcher with " + std::to_string(ranks) +
                                          " ranks, but this fdstencil was built without MPI (install "
                                          "libopenmpi-dev and openmpi-bin, then rebuild)");
}
#endif

#if FDSTENCIL_HAVE_MPI
// After a failed vote, on every rank: the first refusing rank's error, which a rank that did not
// refuse throws as its own ("another rank refused the run (rank r): ..."). A rank exiting non-zero
// makes mpirun end the others, perhaps before the refusing rank has printed; whichever message it
// shows then still names the cause.
Error share_refusal(wave::Comm& comm, const std::optional<Error>& failed) {
  const std::string mine = failed ? std::string(1, char(failed->kind())) + failed->what() : std::string();
  const std::vector<int64_t> sizes = wave::gather_to_root(comm, std::vector<int64_t>{int64_t(mine.size())});
  const std::vector<char> texts = comm.gather_bytes(mine.data(), int64_t(mine.size()));
  // On rank 0, the first refusing rank; the ranks before it sent nothing, so its text leads.
  int64_t head[2] = {-1, 0};  // that rank, its text's length
  for (size_t r = 0; r < sizes.size() && head[0] < 0; ++r)
    if (sizes[r] > 0) head[0] = int64_t(r), head[1] = sizes[r];
  comm.broadcast(head, int64_t(sizeof head));
  std::string text(size_t(head[1]), '\0');
  if (comm.rank() == 0) std::copy_n(texts.begin(), head[1], text.begin());
  comm.broadcast(text.data(), head[1]);
  if (text.empty()) return Error(ErrorKind::invalid_argument, "another rank refused the run");
  return Error(ErrorKind(text[0]),
               "another rank refused the run (rank " + std::to_string(head[0]) + "): " + text.substr(1));
}
#endif

#if FDSTENCIL_HAVE_NCCL
// --backend auto under several ranks: the GPUs when every rank has one of its own (each node has
// at least as many GPUs as ranks), else the cpu on every rank. Where GPUs were found but too few,
// rank 0 says so, since a user who asked for nothing may expect them.
bool auto_takes_gpus(wave::Comm& comm) {
  const int gpus = gpu_count();
  const wave::Comm::NodePlace node = comm.node_place();
  if (comm.all(gpus >= node.size)) return true;
  if (!comm.all(gpus == 0) && comm.rank() == 0)
    std::fprintf(stderr,
                 "fdstencil: --backend auto: a node runs more ranks than it has GPUs (rank 0's: %d ranks, %d "
                 "GPU(s)), so every rank runs on the cpu; --backend cuda takes one GPU per rank\n",
                 node.size, gpus);
  return false;
}
#endif

// One shot split along z across the ranks an MPI launcher started (issue 14): every rank parses
// and checks the same command line, rank 0 alone makes the output directory, shows progress and
// writes the outputs. The ranks vote once their inputs are checked, so a bad input or an
// unwritable directory on any rank stops all of them with an error and nothing written; then
// wave::run votes again once every slab is built. The GPUs (NCCL) when --backend is cuda, or auto
// with a GPU on every rank; else the cpu over MPI.
int run_split(const Flags& flags, const std::string& command, int ranks) {
  if (!flags.batch.empty())
    throw Error(ErrorKind::invalid_argument,
                "--batch runs a --survey's shots side by side, and no --survey was given");
#if !FDSTENCIL_HAVE_MPI
  (void)command;
  refuse_without_mpi(ranks);
#else
  (void)ranks;
  mpi::MpiSession session;
  std::unique_ptr<wave::Comm> host = mpi::world();
  const int rank = host->rank();
  // Every rank's inputs, and rank 0's directory and disk, checked before the ranks go on together.
  std::optional<Setup> s;
  std::optional<OutputDir> dir;
  std::vector<float> analytic;
  std::optional<Error> failed;
  try {
    // Each rank holds only the model planes its slab reads (a SEG-Y model is read whole).
    const ModelInput model = read_model(flags, [&](int dim, int64_t nz, int64_t ny, int64_t nx) {
      return slab_model_planes(flags, dim, nz, ny, nx, rank, host->size());
    });
    s.emplace(prepare(flags, &model));
    // Every rank writes its own part of each checkpoint, and reads its own part to resume: no
    // rank holds the whole state (wave::run reads and checks the file's header on every rank).
    s->options.split_checkpoint_file = s->out_dir / kCheckpointFile;
    if (s->resume) s->options.split_resume_file = s->out_dir / kCheckpointFile;
    // Whole-field snapshots and the final field likewise; a --snapshot-slice is cut on each rank
    // and the cuts gathered on rank 0 (a plane, not the field).
    if (!s->slice.axis)
      s->options.split_snapshot_file = [dir = s->out_dir](int64_t step) { return dir / snapshot_name(step); };
    else
      s->options.split_snapshot_cut = [&setup = *s](const std::vector<float>& planes, int64_t first_plane) {
        return slice_cut(setup, planes, first_plane);
      };
    if (s->write_final) s->options.split_final_file = s->out_dir / "final.npy";
    if (rank == 0) {
      check_resumable(*s);
      claim_output(*s);
      dir.emplace(s->out_dir);
      analytic = shot_prechecks(*s);
      if (s->overwrite) {  // before the vote: a failure here stops every rank
        wave::check(s->model(), s->options);
        clear_earlier_outputs(*s);
      }
    }
  } catch (const Error& e) {
    failed = e;
  }
  if (!host->all(!failed)) {
    if (failed) {
      share_refusal(*host, failed);
      throw *failed;
    }
    throw share_refusal(*host, failed);
  }
  // The transport: NCCL's between GPUs, else MPI's between cpu processes.
#if FDSTENCIL_HAVE_NCCL
  const bool on_gpus = flags.backend == "cuda" ||
                       (flags.backend == "auto" && !s->options.double_precision && auto_takes_gpus(*host));
  std::unique_ptr<wave::Comm> comm = on_gpus ? nccl::over_gpus(std::move(host)) : std::move(host);
#else
  std::unique_ptr<wave::Comm> comm = std::move(host);  // wave::run refuses cuda: no NCCL transport
#endif
  s->options.comm = comm.get();
  InterruptGuard interrupts;
  if (rank == 0) {
    RunControl control;
    control.prechecked = &analytic;
    control.written = [&comm](bool ok) { comm->all(ok); };  // the other ranks wait for it below
    const ShotRun run = run_shot(*s, command, control);
    dir->keep();
    return run.result.interrupted ? interrupted_exit(run.result, s->out_dir / kCheckpointFile, command) : 0;
  }
  // The other ranks take part in every gather and checkpoint; rank 0 writes the other outputs.
  s->options.stop_requested = [] { return InterruptGuard::requested(); };
  const wave::Result r = wave::run(s->model(), s->options);
  // Until rank 0 is done with the run (RunControl::written): leaving with 143 first would make
  // mpirun end rank 0 before it tells the user where the state is and how to resume.
  comm->all(true);
  return r.interrupted ? interrupted_status() : 0;
#endif
}

// A survey across the ranks an MPI launcher started (issue 31): each rank runs its share of the
// shots, whole, on a GPU of its own where there is one per rank (node rank r takes GPU r), else on
// the cpu or, where GPUs are fewer than ranks, the ranks of a node sharing them in turn
// (independent shots can share a GPU as a batch does). Rank 0 writes the manifest.
int run_survey_across(const Flags& flags, const std::string& command, int ranks) {
#if !FDSTENCIL_HAVE_MPI
  (void)flags;
  (void)command;
  refuse_without_mpi(ranks);
#else
  (void)ranks;
  mpi::MpiSession session;
  std::unique_ptr<wave::Comm> comm = mpi::world();
  SurveyRanks r;
  r.comm = comm.get();
  const int gpus = gpu_count();
  const bool cpu = flags.backend == "cpu" || flags.double_precision;
  if (!cpu && gpus > 0) r.gpu = comm->node_place().rank % gpus;
  r.agree = [&comm](const std::optional<Error>& failed) {
    if (comm->all(!failed)) return;
    if (failed) {
      share_refusal(*comm, failed);
      throw *failed;
    }
    throw share_refusal(*comm, failed);
  };
  return run_survey(flags, command, r);
#endif
}

int run_wave(const Flags& flags, const std::string& command) {
  if (const int ranks = launched_ranks(); ranks > 1) {
    if (!flags.survey.empty()) return run_survey_across(flags, command, ranks);
    return run_split(flags, command, ranks);
  }
  if (!flags.survey.empty()) return run_survey(flags, command);
  if (!flags.batch.empty())
    throw Error(ErrorKind::invalid_argument,
                "--batch runs a --survey's shots side by side, and no --survey was given");
  return run_single(flags, command);
}

}  // namespace

namespace wave_cli {

// One group of a subcommand's options in its help; every value option is text until prepare()
// parses it (Flags), shown in the help by `type`.
struct OptionGroup {
  CLI::App* cmd;
  std::string name;
  template <class T>
  CLI::Option* option(const char* flag, T& into, const char* type, const std::string& help) {
    return cmd->add_option(flag, into, help)->type_name(type)->group(name);
  }
  CLI::Option* flag(const char* flag_name, bool& into, const std::string& help) {
    return cmd->add_flag(flag_name, into, help)->group(name);
  }
};

void add_model_options(CLI::App* cmd, Flags* f) {
  OptionGroup g{cmd, "Model (one of --model, --constant, --layered)"};
  const std::string d = "(default ";
  g.option("--model", f->model, "FILE",
           "Velocity model, m/s: a float32 or float64 .npy (either byte order, C or Fortran order) of shape "
           "(nz,ny,nx) or (nz,nx), or SEG-Y (.sgy/.segy: samples "
           "along z, inlines along y, crosslines along x, one line for 2D; spacings from the sample interval "
           "and the CDP coordinates)");
  g.option("--constant", f->constant, "V", "A homogeneous model of this velocity, m/s (needs --shape)");
  g.option(
      "--layered", f->layered, "SPEC",
      "Horizontal layers 'D0:V0,D1:V1,...': top depth in m (the first 0, then rising) and velocity in m/s "
      "(needs --shape)");
  g.option("--shape", f->shape, "NZ,NY,NX",
           "Grid points NZ,NY,NX (3D) or NZ,NX (2D) of --constant and --layered");
  g.option("--spacing", f->spacing, "H",
           "Grid spacing in metres, the same on every axis (required, except with a SEG-Y --model whose "
           "headers give it; where they do, it must agree with them)");
  g.option("--segy-z-unit", f->segy_z_unit, "M",
           "SEG-Y --model: metres per unit of the sample interval field " + d +
               "0.001: depth models store millimetres there)");
  g.option("--segy-inline-byte", f->segy_iline_byte, "B",
           "SEG-Y --model: trace header byte of the inline number " + d + "189)");
  g.option("--segy-crossline-byte", f->segy_xline_byte, "B",
           "SEG-Y --model: trace header byte of the crossline number " + d + "193)");
}

void add_time_options(CLI::App* cmd, Flags* f) {
  OptionGroup g{cmd, "Time (one of --steps, --time)"};
  const std::string d = "(default ";
  g.option("--steps", f->steps, "N", "Time steps to run");
  g.option("--time", f->time, "T", "Seconds to simulate: ceil(T/dt) steps");
  g.option("--dt", f->dt, "DT",
           "Time step in seconds (default: --cfl-safety x the stability limit; a step above the limit is "
           "refused, naming it)");
  g.option("--cfl-safety", f->cfl_safety, "F",
           "The default step's fraction of the stability limit, in (0, 1] " + d + kDefaultCfl + ")");
}

void add_numerics_options(CLI::App* cmd, Flags* f) {
  OptionGroup g{cmd, "Numerics"};
  const std::string d = "(default ";
  g.option("--radius,-r", f->radius, "R",
           "Stencil radius R, 1..8: order 2R in space " + d + kDefaultRadius + ")");
  g.option("--cpml", f->cpml, "W",
           "CPML width in grid points on every face, outside the model; 0: none, a rigid box " + d +
               kDefaultCpml + ")");
  g.flag("--free-surface", f->free_surface, "The top face (z = 0) is pressure-free instead of absorbing");
  g.option("--cpml-reflection", f->cpml_reflection, "RC",
           "The CPML's theoretical reflection coefficient, in (0, 1) " + d + "0: chosen from the width)");
  g.option(
      "--interpolation", f->interpolation, "NAME",
      "How off-grid sources and receivers spread over the grid: hicks (windowed sinc, 8 points per axis) "
      "or trilinear " +
          d + "hicks)");
}

void add_sources_options(CLI::App* cmd, Flags* f) {
  OptionGroup g{cmd, "Sources (at least one; all share the wavelet)"};
  const std::string d = "(default ";
  g.option("--source", f->sources, "Z,[Y,]X", "A source at Z,Y,X (3D) or Z,X (2D), metres; repeatable")
      ->allow_extra_args(false);
  g.option("--sources", f->sources_file, "FILE",
           "Sources from a file: CSV rows Z,Y,X or Z,X in metres ('#' comments, an optional header line), or "
           "an .npy array (n,3) or (n,2)");
  g.option("--ricker", f->ricker, "F0",
           "A Ricker wavelet of this peak frequency, Hz " + d + kDefaultRicker + ")");
  g.option("--delay", f->delay, "T", "The Ricker's delay in seconds " + d + "1.5/F0)");
  g.option("--wavelet", f->wavelet, "FILE.npy",
           "The wavelet from a 1-D float32/float64 .npy, resampled to the run's dt (needs --wavelet-dt)");
  g.option("--wavelet-dt", f->wavelet_dt, "DT", "The --wavelet file's sample interval, seconds");
}

void add_receivers_options(CLI::App* cmd, Flags* f) {
  OptionGroup g{cmd, "Receivers (optional; may be combined)"};
  g.option("--receivers", f->receivers_file, "FILE",
           "Receivers from a file: CSV rows Z,Y,X or Z,X in metres, or an .npy array (n,3) or (n,2)");
  g.option("--receiver-line", f->receiver_lines, "SPEC",
           "N receivers evenly from the first point to the last, both included: 'Z0,Y0,X0:Z1,Y1,X1:N' (2D "
           "'Z0,X0:Z1,X1:N'), metres; repeatable")
      ->allow_extra_args(false);
  g.option("--receiver-grid", f->receiver_grids, "SPEC",
           "A horizontal grid of receivers at depth Z, 3D only: 'Z:Y0,Y1,NY:X0,X1,NX', metres; repeatable")
      ->allow_extra_args(false);
  g.option("--record-dt", f->record_dt, "DT",
           "Sample interval of the shot record in seconds (default: the run's dt); the traces are resampled, "
           "band-limited, to floor((nt-1) dt / DT) + 1 samples");
}

void add_outputs_options(CLI::App* cmd, Flags* f) {
  OptionGroup g{cmd, "Outputs"};
  const std::string d = "(default ";
  g.option(
      "--output,-o", f->output, "DIR",
      "Directory for the outputs, created if missing (required): shot.npy (nrec, nsamples) float32 with "
      "shot.json (and shot.sgy with --segy), final.npy, snapshot_<step>.npy, analytic.npy, summary.json");
  g.flag(
      "--segy", f->segy,
      "Also write shot.sgy, the record as SEG-Y (IEEE float; source and receiver positions, sample interval "
      "and count, field record and trace numbers in the headers). Its interval is a whole number of "
      "microseconds: without --record-dt, the run's dt rounded down to one");
  g.flag("--segy-little-endian", f->segy_little_endian,
         "Write shot.sgy little-endian (SEG-Y rev 2, the byte order marked at bytes 3297-3300); the default "
         "is big-endian rev 1");
  g.option("--shot-id", f->shot_id, "N",
           "The shot's number: FieldRecord in shot.sgy's trace headers, shot_id in shot.json " + d + "1)");
  g.flag("--overwrite", f->overwrite,
         "Replace the outputs of an earlier run in --output (its record, fields, snapshots, summary and "
         "checkpoint), removed once every check has passed; without it such a folder is refused");
  g.flag("--no-final", f->no_final, "Do not write final.npy, the wavefield after the last step");
  g.option("--snapshot-every", f->snapshot_every, "N",
           "A snapshot of u after every N steps: N, 2N, ... up to nt");
  g.option("--snapshot-steps", f->snapshot_steps, "A,B,C",
           "Snapshots after these steps, each 0..nt (0: before the first)");
  g.option("--snapshot-slice", f->snapshot_slice, "AXIS=I",
           "Cut each snapshot at a grid index: 'z=K', 'y=J' (3D) or 'x=I' (default: the whole model; a 2D "
           "model's slice is a line)");
  g.flag("--compare-analytic", f->compare_analytic,
         "Constant model without --free-surface: write analytic.npy and, in summary.json, the relative L2 "
         "misfit of the record against the exact solution up to the first possible reflection from the box's "
         "edge");
}

void add_run_options(CLI::App* cmd, Flags* f) {
  OptionGroup g{cmd, "Run"};
  const std::string d = "(default ";
  g.option("--backend,-b", f->backend, "NAME",
           "auto (the GPU when present, else cpu), cuda or cpu " + d + "auto)");
  g.flag(
      "--double", f->double_precision,
      "The whole solver in double precision, for verification (the cpu backend only, which auto then picks)");
  g.option(
      "--kernel-params", f->kernel_params, "JSON",
      "The GPU step kernel's parameters, e.g. '{\"design\": \"tma\", \"block\": \"16x16\", \"nw\": 16}'; "
      "keys block, vec (2|4), nw, design (l1|tile|tma), zq (0|1, tile), split (0|1; 1 under tma), ahead "
      "(0..8, tma), boundary (l1|tile, tma), graph (steps per CUDA graph: 0 or even, up to 1024), cpml "
      "(march|apart|beside: the CPML's terms in the march, by a kernel over the layers' points after it, "
      "or that kernel computing those points whole beside the march; a split run's slabs take beside as "
      "apart, the same bits), side (2D, beside: 0 for the layers' kernel on a second stream, or 1..16 for "
      "the layers' points in the march's own launch, that many a thread), pdl (0|1: the step's kernels on "
      "one "
      "stream as programmatic dependent launches), "
      "temporal (2D: 0, or 2..4 steps a pass, with temporal_block threads and temporal_nw rows), "
      "resident (2D: 0, or 1 for each block of steps in one kernel, the fields in shared memory) "
      "(default: by R, the plane's size and whether there are CPML layers, docs/wave.md)");
  g.flag("--quiet,-q", f->quiet, "No progress bar and no summary on stderr (warnings still)");
  g.option(
      "--overlap", f->overlap, "auto|on|off",
      "Under mpirun on the GPUs: the halo exchange beside the inner planes' update (on), before it (off), "
      "or whichever the run's first 90 steps time faster (runs of 360 steps or more; shorter ones take "
      "on) (default: auto)");
  g.flag("--no-overlap", f->no_overlap, "The same as --overlap off");
  g.option(
      "--layer-plane-cost", f->layer_plane_cost, "X",
      "Under mpirun: a plane of the z absorbing layers counts X inner planes when the domain is cut into "
      "slabs, so that the ranks at the layers keep pace (1: slabs of equal planes; default: 3 at R <= 4, "
      "2 at R >= 8, a straight line between, docs/multigpu.md)");
}

void add_checkpoints_options(CLI::App* cmd, Flags* f) {
  OptionGroup g{cmd, "Checkpoints and surveys"};
  const std::string d = "(default ";
  g.option("--checkpoint-every", f->checkpoint_every, "N",
           "Every N steps write the whole state (both time levels, the CPML's memory, the traces so far) to "
           "DIR/checkpoint.ckpt, atomically; SIGINT or SIGTERM always writes one at the step it stops at");
  g.flag(
      "--resume", f->resume,
      "Continue from DIR/checkpoint.ckpt (the same command line as the run that wrote it): the record "
      "equals, bit for bit, that of a run never stopped. With --survey: finished shots are skipped anyway, "
      "and the shots that were running continue from their checkpoints");
  g.option(
      "--survey", f->survey, "FILE.json",
      "Run every shot of a survey into DIR/shot_<id>: {\"shots\": [{\"id\": 1, \"source\": [Z,Y,X], "
      "...}], \"defaults\": {...}}; a shot may set source, sources, sources_file, ricker, delay, wavelet, "
      "wavelet_dt, receivers, receiver_lines, receiver_grids, each replacing the command line's group. A "
      "re-run skips the shots whose outputs are complete (sizes and CRC-32C in done.json) and runs the "
      "rest; a folder whose finished shots another run made (other inputs, settings or backend) is refused. "
      "Under mpirun each rank takes the next shot when it is free, node rank r on GPU r (ranks "
      "share GPUs in turn where there are fewer)");
  g.option("--batch", f->batch, "K",
           "With --survey on the GPU: run K shots side by side, each on its own stream " + d + "1)");
}

}  // namespace wave_cli

Action add_wave(CLI::App& app, const std::vector<std::string>& argv) {
  auto* cmd = app.add_subcommand(
      "wave",
      "Propagate one shot through an acoustic velocity model (u_tt = v^2 lap u + v^2 f delta, order 2R in "
      "space, leapfrog in time, CPML or a free surface at the edges) and write the shot record, the final "
      "field, snapshots and a summary into --output DIR. Positions are in metres from the model's first grid "
      "point, Z,Y,X in 3D and Z,X in 2D. Bad input exits 2 before the run and writes nothing. Started by "
      "mpirun with P ranks, one shot is split along z into P slabs, one GPU per rank (NCCL) or one cpu "
      "process per rank (MPI); rank 0 writes the outputs: mpirun -np 2 fdstencil wave ...");
  auto f = std::make_shared<Flags>();
  add_model_options(cmd, f.get());
  add_time_options(cmd, f.get());
  add_numerics_options(cmd, f.get());
  add_sources_options(cmd, f.get());
  add_receivers_options(cmd, f.get());
  add_outputs_options(cmd, f.get());
  add_run_options(cmd, f.get());
  add_checkpoints_options(cmd, f.get());

  const std::string command = command_text(argv);
  return [f, command] { return run_wave(*f, command); };
}

}  // namespace fdstencil::cli
