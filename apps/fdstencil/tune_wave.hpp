// The wave step's launch tuned per card (issue 35). `fdstencil tune --wave` times the step's
// candidate launches (kernel parameters) on one model, checks each against the default launch's
// final field and a few receivers' traces, bit for bit where it places the CPML as the default
// does (every design does the same arithmetic in the same order), and stores
// the fastest in the wave tuning cache, keyed by the card's name and the run's grid: dimension,
// model shape, radius, CPML width and free surface. `fdstencil wave` takes the stored launch where
// a single-GPU run matches an entry and --kernel-params is not given.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "fdstencil/wave.hpp"

namespace fdstencil::cli {

struct WaveCase {
  int dim = 3, radius = 4;
  int64_t nz = 0, ny = 1, nx = 0;  // the model's points (ny 1 in 2D)
  int cpml = 10;
  bool free_surface = false;
};

// The case of a run about to start.
WaveCase wave_case_of(const wave::Model& m, const wave::Options& o);

// What a candidate's untimed run is checked by: its final field and the traces of four receivers,
// a quarter of the grid from the source along x and z.
struct WaveProbe {
  std::vector<float> field, traces;
};

// Whether a run that places the CPML otherwise than `reference` (adding the layers' terms in another
// order) agrees with it within float's round-off: each value of its field and traces within 1e-4 of
// the larger of the reference's peaks (none where that is not finite). The traces' peak is the
// direct wave's a quarter of the grid out: at the end of a long run on a small grid the field left
// is the layers' faint residue, whose own peak would hold the two placements to far less than
// round-off.
bool within_round_off(const WaveProbe& run, const WaveProbe& reference);

// The wave tuning cache: wave-tuning.json beside the plans' tuning cache (`plans_cache`, or
// default_cache_file() when empty).
std::filesystem::path wave_cache_file(const std::string& plans_cache);

// The file's entries (none where it is absent; a damaged one: none, and a warning).
nlohmann::json wave_entries(const std::filesystem::path& file,
                            const std::function<void(const std::string&)>& warn);

// Throws Error(io) where `file` exists and is not a wave tuning cache this build reads.
void check_wave_cache(const std::filesystem::path& file);

// The stored kernel parameters (a JSON object's text) of `device` and `c`, or "" where none is
// stored. A damaged file gives "" and a warning through `warn`.
std::string tuned_launch(const std::filesystem::path& file, const std::string& device, const WaveCase& c,
                         const std::function<void(const std::string&)>& warn);

// A winning candidate's kernel parameters as its launch ran: its "side" and "pdl" read from the
// kernel's description (acoustic.cu describe) where not given, so that a stored entry keeps them
// when later defaults change. The default launch ({}) stays {}.
nlohmann::json wave_params_as_ran(nlohmann::json params, const std::string& kernel);

// The launches tune_wave tries for a dimension and radius: the defaults' designs and shapes
// around them (acoustic.cu's table), each a --kernel-params object.
std::vector<std::string> wave_candidates(int dim, int radius);

// A candidate replaces the default launch only where it runs more than kMinGain faster: the same
// launch timed twice over 1000 steps differed by up to 0.5 % on the H100 (campaign wave-graphs,
// each launch quiet and with progress reports), so a smaller gain is the noise's.
inline constexpr double kMinGain = 0.01;

// The winner among tune_wave's candidates (the default's first, each with "status" and, where
// "ok", "gpts"): the fastest, unless it beats the default by kMinGain or less; then the default (0).
size_t wave_winner(const nlohmann::json& candidates);

struct WaveTuneOptions {
  int64_t steps = 500;                               // steps a timed run takes
  int reps = 3;                                      // timed runs per candidate (median)
  std::function<void(const std::string&)> progress;  // one line per candidate
};

// Times every candidate on a homogeneous model of `c` (2000 m/s, 10 m, a Ricker source in the
// middle) on the current GPU, `device`, and returns the record: the key, the winner (wave_winner)
// among the candidates whose field is the default launch's to the bit, the default's and every
// candidate's GPts/s,
// the copy bandwidth of the same run. Throws Error(verification) when the default launch fails.
nlohmann::json tune_wave(const std::string& device, const WaveCase& c, const WaveTuneOptions& o);

// Stores a tune_wave record in `file` (its candidates left out), replacing the entry of its key.
// Throws Error(io) for a damaged file or one it cannot write.
void store_wave_entry(const std::filesystem::path& file, const nlohmann::json& record);

}  // namespace fdstencil::cli
