// The pieces of `fdstencil gradient`, `rtm` and `born` (issue 37) shared by their files: the flags
// beside `wave`'s, the recorded shots and perturbations read and checked against the run
// (imaging_inputs.cpp), the output folder's claim (imaging_claim.cpp), one shot's image or gradient
// (cmd_imaging.cpp), a survey's stack of them (imaging_survey.cpp) and a survey's Born records
// (born_survey.cpp).
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <span>
#include <string>
#include <vector>

#include "fdstencil/imaging.hpp"
#include "wave_cli.hpp"

namespace fdstencil::cli::imaging_cli {

using wave_cli::Flags;
using wave_cli::Setup;

// What the user typed beside `wave`'s flags.
struct ImagingFlags {
  std::string observed, memory_budget, condition = "adjoint", perturbation;
  bool illumination = false, laplacian = false;
  bool segy = false;             // rtm, gradient: the result as a SEG-Y model file too
  bool boundary_saving = false;  // wave::Storage::boundary
  std::string devices;           // --devices: the GPUs a survey spreads over ("": the current one)
};

// The kind of result: rtm's image.npy or gradient's gradient.npy.
enum class Kind { gradient, rtm };

// --- imaging_inputs.cpp --------------------------------------------------------------------------
// The file holding a recorded shot's samples: `path` itself when it is a SEG-Y file (.sgy, .segy),
// else in the folder `path` its shot.npy, or its shot.sgy where it has no shot.npy.
std::filesystem::path observed_file(const std::filesystem::path& path);
// The observed traces (nrec, nt) of a recorded shot (observed_file's), checked against the run
// before any work: sampled at its dt, one trace per receiver at the same positions, the source's
// position, one sample a step; and from shot.json the same radius, CPML and free surface (a SEG-Y
// record does not say them). `flag` names the path in messages. Throws Error (invalid_argument
// or io) naming the mismatch.
std::vector<double> read_observed(const std::filesystem::path& path, const Setup& s, const std::string& flag);
// --memory-budget MIB in bytes (0: none given).
int64_t budget_bytes(const std::string& mib);
// --perturbation FILE.npy: dv over the model's points (its shape), float32 or float64.
std::vector<double> read_perturbation(const std::string& path, const Setup& s);

// --- imaging_outputs.cpp -------------------------------------------------------------------------
const char* command_name(Kind k);      // "rtm", "gradient"
const char* result_name(Kind k);       // "image.npy", "gradient.npy"
const char* result_segy_name(Kind k);  // "image.sgy", "gradient.sgy"
nlohmann::json storage_json(const wave::StorageReport& r);

// The output folder of one command. `names`: every file a run of the command may write there (with
// or without its options), so that none of an earlier run's is left beside this run's: a folder
// holding any is refused unless --overwrite, and with it those this run does not write again are
// removed once it succeeds (keep()). Missing folders are made, and on a failure (the claim
// destroyed before keep()) the files this run wrote and the folders it made are removed again.
class OutputClaim {
 public:
  OutputClaim(const std::filesystem::path& dir, const std::vector<std::string>& names, bool overwrite);
  ~OutputClaim();
  OutputClaim(const OutputClaim&) = delete;
  OutputClaim& operator=(const OutputClaim&) = delete;
  void wrote(const std::string& name);  // removed again on failure
  void keep();

 private:
  void remove_made_folders();
  std::filesystem::path dir_, top_;  // top_: the outermost folder this run made ("" when dir_ existed)
  std::vector<std::filesystem::path> written_, earlier_;
  bool kept_ = false;
};

// The result's files: result_name(kind) (float32, the model's shape) and with --segy the same
// values as a SEG-Y model file (result_segy_name: segy::write_model's layout, z in the
// --segy-z-unit of a SEG-Y --model, else the finest of mm, cm, dm and m that holds the spacing's
// interval). check_result_files refuses before the run what SEG-Y cannot hold; write_result
// writes them into `dir`, each named to `claim` first.
std::vector<std::string> result_files(Kind kind, const ImagingFlags& g);
void check_result_files(const Setup& s, const Flags& f, const ImagingFlags& g);
void write_result(const std::filesystem::path& dir, const Setup& s, const Flags& f, const ImagingFlags& g,
                  Kind kind, const std::vector<double>& values, OutputClaim& claim);

// --- cmd_imaging.cpp -----------------------------------------------------------------------------
// One shot's image (rtm: its condition, illumination and Laplacian) or gradient, with its misfit
// (gradient only) and what the backward pass kept.
struct ShotImage {
  std::vector<double> values;  // the model's points
  double misfit = 0;
  wave::StorageReport report;
};
// `kept`: a survey worker's state, whose GPU buffer a shot's stored fields take from the last shot
// (wave::Options::kept_state); `progress`, where given, replaces s.options.progress (a survey's bar).
ShotImage image_shot(const Setup& s, const ImagingFlags& g, Kind kind, std::span<const double> observed,
                     const std::shared_ptr<wave::KeptState>& kept = nullptr,
                     const std::function<void(int64_t, int64_t)>& progress = nullptr);
// The summary's description of the settings (kind, condition, illumination...).
nlohmann::json settings_json(const ImagingFlags& g, Kind kind);
// Born modelling of a prepared shot (its progress option as the caller set it), written into
// s.out_dir (which exists) as `wave` writes a shot: shot.npy, shot.json, shot.sgy with --segy, and
// summary.json. `writing` hears the names just before the files are written (a claim that removes
// them again on a failure); `progress`, where given, replaces s.options.progress (a survey's bar).
struct BornShot {
  std::vector<std::string> outputs;  // names in s.out_dir
  std::string backend;
  double seconds = 0;  // the solver's
};
BornShot born_shot(const Setup& s, const std::vector<double>& dv, const ImagingFlags& g,
                   const std::string& command,
                   const std::function<void(const std::vector<std::string>&)>& writing,
                   const std::function<void(int64_t, int64_t)>& progress = nullptr);

// --- imaging_survey.cpp --------------------------------------------------------------------------
// --survey FILE: every shot's image or gradient, from the records of a `fdstencil wave --survey`
// folder (--observed), added into one stack in --output, resumable shot by shot. Returns the exit
// status (128 + the signal when stopped between shots).
int run_survey_stack(const Flags& f, const ImagingFlags& g, Kind kind, const std::string& command);
// --devices: "" (the current GPU, or {-1} where the survey runs on the cpu: `gpu` false), "all", or
// a list of GPU indices, each checked; refused on the cpu.
std::vector<int> survey_devices(const ImagingFlags& g, bool gpu);

// --- born_survey.cpp -----------------------------------------------------------------------------
// born --survey FILE: every shot's record J dv into OUTPUT/shot_<id> as `wave --survey` writes its
// shots; a re-run keeps the finished shots (verified) and runs the rest. Returns the exit status
// (128 + the signal when stopped between shots).
int run_born_survey(const Flags& f, const ImagingFlags& g, const std::string& command);

}  // namespace fdstencil::cli::imaging_cli
