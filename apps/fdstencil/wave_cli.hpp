// The pieces of `fdstencil wave` shared by its files: the flags as typed (cmd_wave.cpp registers
// them), the run they describe once parsed and checked (wave_inputs.cpp), the comparison with the
// analytic solution (wave_analytic.cpp) and the files a run leaves (wave_outputs.cpp).
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "fdstencil/error.hpp"
#include "fdstencil/wave.hpp"
#include "fdstencil/wave_comm.hpp"
#include "progress.hpp"

namespace fdstencil::cli::wave_cli {

// What starts each progress line and phase notice of a run.
inline constexpr const char* kNoticeLabel = "fdstencil wave";

// The defaults the help states, as text because the flags are text until parsed (Flags).
inline constexpr const char* kDefaultRadius = "4";   // order 8, wave::Options::radius
inline constexpr const char* kDefaultCpml = "10";    // points, wave::Boundary::cpml_width
inline constexpr const char* kDefaultCfl = "0.8";    // wave::Options::cfl_safety
inline constexpr const char* kDefaultRicker = "10";  // Hz: a typical seismic source's peak frequency
// The Ricker's delay is 1.5 / f0: at t = 0 the wavelet is then ~1e-8 of its peak, so the source
// switches on without a jump that would ring through the record.
inline constexpr double kRickerDelayPeriods = 1.5;

// What the user typed. Numbers stay text until parse time, so every message can quote the text
// and name its flag, and "absent" is an empty string rather than a sentinel value.
struct Flags {
  std::string model, constant, layered, shape, spacing;
  std::string steps, time, dt, cfl_safety;
  std::string radius, cpml, cpml_reflection, interpolation = "hicks";
  bool free_surface = false;
  std::vector<std::string> sources;
  std::string sources_file;
  std::string ricker, delay, wavelet, wavelet_dt;
  std::string receivers_file;
  std::vector<std::string> receiver_lines, receiver_grids;
  std::string record_dt;
  std::string output;
  bool no_final = false;
  std::string snapshot_every, snapshot_steps, snapshot_slice;
  bool compare_analytic = false;
  std::string backend = "auto";
  bool double_precision = false;
  std::string kernel_params;
  bool quiet = false;
  // A run across ranks on the GPUs: the exchange beside the inner planes or before them
  // (wave::Options::Overlap): auto, on or off; --no-overlap is off.
  std::string overlap = "auto";
  bool no_overlap = false;
  std::string layer_plane_cost;  // wave::Options::layer_plane_cost; "" keeps its default
  // SEG-Y: reading a .sgy/.segy --model, and shot.sgy beside shot.npy.
  std::string segy_z_unit, segy_iline_byte, segy_xline_byte;
  bool segy = false, segy_little_endian = false;
  std::string shot_id;
  // Checkpoints and surveys.
  std::string checkpoint_every;
  bool resume = false;
  bool overwrite = false;  // --overwrite: replace an earlier run's outputs in --output
  std::string survey, batch;
  // What the input phases' notices start with: the command that reads these flags.
  std::string label = kNoticeLabel;
};

// The wavelet all sources share, as the user described it (the samples at the run's dt are in
// every wave::Source).
struct Wavelet {
  std::string kind;               // "ricker" or "file"
  double f0 = 0, delay = 0;       // ricker: Hz, s
  std::string path;               // file
  double file_dt = 0;             // file: its own sample interval, s
  double run_dt = 0;              // the run's step, s
  std::vector<double> at_run_dt;  // f(n run_dt) for n = 0..nt-1, or longer: the whole pulse

  nlohmann::json to_json() const;
  double operator()(double t) const;  // f(t): the formula, or the samples interpolated linearly
};

// A 2-D cut of each snapshot (or a line of a 2D one): axis 'z', 'y' or 'x' at grid index `index`;
// axis 0 keeps the whole volume.
struct Slice {
  char axis = 0;
  int64_t index = 0;
};

// The velocity model as read from the flags, shared by a survey's shots (read once, never copied).
struct ModelInput {
  std::shared_ptr<const wave::Model> model;
  nlohmann::json json;  // the model's sidecar entry: dim, shape, spacing, vmin, vmax, kind...
};

// Everything a run needs, parsed and checked before the solver starts.
struct Setup {
  std::shared_ptr<const wave::Model> model_ptr;
  const wave::Model& model() const { return *model_ptr; }
  nlohmann::json model_json;  // the model's sidecar entry: dim, shape, spacing, vmin, vmax, kind...
  wave::Options options;      // dt, nt, sources with their wavelets, receivers, snapshots, backend
  double dt_limit = 0;
  bool dt_given = false;  // --dt: the step is the user's, not cfl_safety x the limit
  Wavelet wavelet;
  std::vector<wave::Point> sources;  // the positions, as given (options.sources has them too)
  double record_dt = 0;
  int64_t n_out = 0;  // samples per trace in the shot record
  Slice slice;
  std::filesystem::path out_dir;
  bool write_final = true, compare_analytic = false, quiet = false;
  bool write_segy = false;          // shot.sgy (--segy): record_dt is then a whole number of microseconds
  bool segy_little_endian = false;  // --segy-little-endian
  int shot_id = 1;                  // the shot's number: FieldRecord in shot.sgy, shot_id in shot.json
  bool resume = false;              // --resume: continue from out_dir's checkpoint
  bool overwrite = false;           // --overwrite: an earlier run's outputs in out_dir are removed first
  std::string launch_from;          // the wave tuning cache the GPU launch came from ("": the defaults)
};

// Parses and checks every flag and input file; throws Error (an input error, exit code 2) naming
// the flag and the problem. Creates nothing.
// `model`, when given, is taken instead of reading the model the flags name (a survey's shots).
Setup prepare(const Flags& flags, const ModelInput* model = nullptr);
// The planes of a model (dim, nz, ny, nx) to hold, or all of them (nullopt).
using ModelPlanes =
    std::function<std::optional<wave::Model::Window>(int dim, int64_t nz, int64_t ny, int64_t nx)>;
// The model alone, as prepare() reads it; with `planes_of`, only the planes it names are kept
// (Model::z0; a SEG-Y model is read whole). `summarise`: its extremes and checksum kept in
// Model::whole, for a caller whose runs would each pass over it for them (a survey's shots: the
// kept GPU state recognises the medium by its checksum; a single shot: its checks and fingerprint).
ModelInput read_model(const Flags& flags, const ModelPlanes& planes_of = {}, bool summarise = false);
// The model planes rank `rank` of `ranks` reads in a run split along z (Domain::model_planes), from
// the flags' radius, CPML and free surface; nullopt (the whole model) when they do not parse or the
// slabs would be too thin, which prepare() and the run then report.
std::optional<wave::Model::Window> slab_model_planes(const Flags& flags, int dim, int64_t nz, int64_t ny,
                                                     int64_t nx, int rank, int ranks);

// --- cmd_wave.cpp: the flags' groups, shared by wave, gradient and rtm --------------------------
// The command as typed, quoted so that pasting it into a shell runs it again.
std::string command_text(const std::vector<std::string>& argv);
void add_model_options(CLI::App* cmd, Flags* f);
void add_time_options(CLI::App* cmd, Flags* f);
void add_numerics_options(CLI::App* cmd, Flags* f);
void add_sources_options(CLI::App* cmd, Flags* f);
void add_receivers_options(CLI::App* cmd, Flags* f);
void add_outputs_options(CLI::App* cmd, Flags* f);
void add_run_options(CLI::App* cmd, Flags* f);
void add_checkpoints_options(CLI::App* cmd, Flags* f);

// --- cmd_wave.cpp: one shot's run ---------------------------------------------------------------
// The checkpoint a run writes into its output directory, and --resume reads.
inline constexpr const char* kCheckpointFile = "checkpoint.ckpt";
// A survey's manifest, in its --output folder beside the shot_<id> folders.
inline constexpr const char* kSurveyManifest = "survey.json";

// The command again with --resume, for the message of an interrupted run.
inline std::string resume_command(const std::string& command) {
  return command.find(" --resume") == std::string::npos ? command + " --resume" : command;
}

// How a shot runs beside the flags: a survey runs its shots with its own progress line.
struct RunControl {
  bool measure_bandwidth = true;                   // wave::Options::measure_bandwidth
  bool quiet = false;                              // no bar of its own, no summary paragraph
  std::function<void(int64_t, int64_t)> progress;  // steps done, total: instead of the bar
  // shot_prechecks' result, when the caller ran them already (a run across ranks, before its vote).
  const std::vector<float>* prechecked = nullptr;
  // The --resume checkpoint, when the caller loaded it already (load_resume; a run across ranks,
  // before its vote, so a bad file stops every rank instead of leaving them waiting).
  std::shared_ptr<const wave::Checkpoint> resumed;
  // Called once the solver has returned and the checkpoint written beside it is on the disk (true)
  // or failed (false): a run across ranks holds the other ranks there, since one leaving with a
  // non-zero status (143 after a stop) makes mpirun end rank 0, perhaps mid-write.
  std::function<void(bool)> written;
};
struct ShotRun {
  wave::Result result;               // result.interrupted: stopped by a signal, its checkpoint written
  std::vector<std::string> outputs;  // the files written, names in out_dir
};
// What a shot refuses before its run: an analytic comparison that cannot work, outputs that would
// not fit on the disk. Returns the analytic record (empty without --compare-analytic).
std::vector<float> shot_prechecks(const Setup& s);
// --resume's checkpoint in s.out_dir, read and checked for damage; nullptr without --resume or
// without the file.
std::unique_ptr<wave::Checkpoint> load_resume(const Setup& s);
// Runs a prepared shot into s.out_dir (which must exist): the solver with its checkpoints, then
// every output. A signal stops it at a step boundary with a checkpoint and nothing else written.
// In a run across ranks (s.options.comm), rank 0 runs this and the others wave::run alone.
ShotRun run_shot(Setup& s, const std::string& command, const RunControl& control);

// --- output_claim.cpp ----------------------------------------------------------------------------
// An output folder belongs to one run. The files in `dir` a wave run or a survey writes (its
// record, fields, summary, snapshots, checkpoint and its temporaries, a survey's manifest and
// shot folders), sorted; nothing else there is a run's.
std::vector<std::string> earlier_outputs(const std::filesystem::path& dir);
// Refuses (Error invalid_argument, naming the files) a run into a folder holding an earlier run's
// outputs, unless it resumes that run or was given --overwrite; a checkpoint among them says how
// to resume or start over.
void claim_output(const Setup& s);
// The manifest format of `fdstencil born --survey`'s folder; a `wave --survey` manifest has none.
inline constexpr const char* kBornSurveyFormat = "fdstencil-born-survey-1";
// A survey's folder holds no single run's outputs (its manifest and shot folders are its own), and
// no survey of another command: `format` is the manifest's format of the survey about to write
// ("" for wave's, kBornSurveyFormat for born's), and a folder whose manifest says another is
// refused; so is one holding shot folders but no manifest, for born (which writes its manifest
// before its first shot, so that its folders are always known as its own).
void claim_survey_output(const std::filesystem::path& dir, const std::string& format = "");
// With --overwrite, removes the earlier run's outputs: called once every check has passed.
void clear_earlier_outputs(const Setup& s);

// --- wave_survey.cpp ----------------------------------------------------------------------------
// A survey across the ranks an MPI launcher started: each rank takes the next unfinished shot
// whenever it is free (with --batch, rank r runs every P-th from the r-th on), on GPU `gpu` (-1:
// the cpu, or the process's current GPU), and rank 0 writes the manifest. `agree` is called on every rank with its refusal, if any, once every shot is checked:
// it returns when no rank refused, else throws on every rank (the first refusing rank's error).
struct SurveyRanks {
  wave::Comm* comm = nullptr;  // nullptr: one process runs every shot
  int gpu = -1;
  std::function<void(const std::optional<Error>&)> agree;
};

// One shot of a survey file: its id, its run's flags (the command line's, then the file's defaults,
// then its own keys) and its folder, OUTPUT/shot_<id>.
struct SurveyShot {
  int64_t id = 0;
  Flags flags;
  std::filesystem::path dir;
};
// The survey file flags.survey names, parsed and checked as JSON; the shots' own flags are checked
// later, by prepare(). Throws Error naming the file, the shot and the key.
std::vector<SurveyShot> read_survey(const Flags& flags);

// Shot `id`'s folder in a survey's --output: OUTPUT/shot_<id, 6 digits>.
std::filesystem::path shot_folder(const std::string& output, int64_t id);
// A survey's shot is finished when its folder's done.json names `identity` (what made its files)
// and lists each file with its size and CRC-32C, and every file passes: returns why not, or "" when
// it is. write_shot_done writes that done.json for `outputs`, names in `dir`.
std::string shot_unfinished(const std::filesystem::path& dir, const std::string& identity);
void write_shot_done(const std::filesystem::path& dir, const std::string& identity,
                     const std::vector<std::string>& outputs);
inline constexpr const char* kShotDoneFile = "done.json";

// fdstencil wave --survey FILE: every shot into OUTPUT/shot_<id>; returns the exit code.
int run_survey(const Flags& flags, const std::string& command, const SurveyRanks& ranks = {});

// The model's shape as the user sees it: (nz, ny, nx), or (nz, nx) in 2D.
std::vector<int64_t> model_shape(const wave::Model& m);

// --- wave_outputs.cpp ---------------------------------------------------------------------------
// The file of the snapshot after `step` steps: snapshot_<step, 6 digits>.npy.
std::string snapshot_name(int64_t step);
// Writes one snapshot, cut to `slice`, as DIR/snapshot_name(step); returns its name. A split run's
// snapshot arrives cut already (Options::split_snapshot_cut).
std::string write_snapshot(const Setup& s, const wave::Snapshot& snap);
// The --snapshot-slice's values in model planes [first_plane, first_plane + planes.size() /
// (ny nx)) of a field's model points, in C order: a split run's rank cuts its planes with it, and
// the ranks' cuts in rank order are the slice.
std::vector<float> slice_cut(const Setup& s, const std::vector<float>& planes, int64_t first_plane);
// The shot record resampled to record_dt, (nrec, n_out), row-major.
// `notice`, where given, hears how many receivers' traces are resampled.
std::vector<float> shot_record(const Setup& s, const wave::Result& r, PhaseNotice* notice = nullptr);
// Writes shot.npy and shot.json, and shot.sgy with --segy; returns their names.
std::vector<std::string> write_shot(const Setup& s, const std::vector<float>& record);
std::string write_final(const Setup& s, const wave::Result& r);
std::string write_analytic(const Setup& s, const std::vector<float>& analytic);
void write_summary(const Setup& s, const wave::Result& r, const std::string& command,
                   const nlohmann::json& analytic, const std::vector<std::string>& outputs);
// The paragraph on stderr after a run.
std::string human_summary(const Setup& s, const wave::Result& r, const nlohmann::json& analytic,
                          size_t files_written);

// --- wave_analytic.cpp --------------------------------------------------------------------------
// The analytic shot record of the homogeneous model, (nrec, n_out) at record_dt: the sum over the
// sources of wave::analytic_trace.
std::vector<float> analytic_record(const Setup& s);
// The time until the first reflection from the outer edge of `domain` (model plus absorbing
// layers) could reach a receiver: before it, the homogeneous solution is the exact answer.
double window_end(const Setup& s, const wave::Domain& domain);
// The comparison for the summary: {"misfit", "window_end_s", "per_receiver", "skipped"}.
// Throws Error(invalid_argument) when no receiver's window holds any of the direct wave.
nlohmann::json compare(const Setup& s, const std::vector<float>& record, const std::vector<float>& analytic,
                       double t_end);

}  // namespace fdstencil::cli::wave_cli
