// The autotuner: for one case (operator, radius, type, extents) on the current GPU, search the
// CUDA variants and their parameters, verify each candidate against the reference backend before
// timing it (a candidate that fails is reported and can never win), and store the fastest in the
// tuning cache with its time and its share of the copy bandwidth measured in the same run.
//
// The search, bounded by a time budget:
//   1. every variant of the operator at its registry defaults, and every built-in default of the
//      operator (each size class's and radius band's choice);
//   2. the families within kPruneFactor of the fastest go on; each is refined by coordinate
//      descent over its parameter space (one parameter at a time, the others held at the
//      family's best), until a sweep over all its parameters finds nothing faster;
//   3. the best few are timed again with more repeats, and the fastest of that round wins.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include <nlohmann/json.hpp>

#include "fdstencil/tuning_cache.hpp"

namespace fdstencil {

// The seed of the random verification input everywhere (tuner, benchmark, tests) unless a user
// gives another; printed with each run so that a failure reproduces.
inline constexpr uint64_t kDefaultSeed = 20260522;

struct TuneOptions {
  // Wall time, from the start, after which no more refinement candidates are tried; must be
  // positive. The first round and the final round always run.
  double budget_seconds = 60;
  std::string cache_file;        // "" is default_cache_file()
  bool store = true;             // write the winner into the cache
  int warmup = 2;                // untimed applications per candidate
  int reps = 10;                 // timed applications per candidate (median)
  int final_reps = 30;           // timed applications of each finalist
  uint64_t seed = kDefaultSeed;  // the random verification input
  // One line per step; stderr when empty.
  std::function<void(const std::string&)> progress;
};

struct TuneResult {
  TuningEntry best;
  int timed = 0;        // candidates verified and timed
  int failed = 0;       // candidates that failed verification (never timed)
  int unsupported = 0;  // parameter combinations the variant cannot run (not launched)
  bool budget_reached = false;
  double seconds = 0;
  std::string cache_file;  // where the winner was stored ("" when it was not)
  // Every candidate: variant, params, status ("ok", "FAILED", "unsupported"), median_ms,
  // pct_of_copy or the reason.
  nlohmann::json candidates = nlohmann::json::array();
};

// The winner's cache entry (to_json(TuningEntry)) with the search's counts, its time, the cache
// file written and every candidate: what `fdstencil tune --json` and fdstencil.tune report.
nlohmann::json to_json(const TuneResult& r);

// `interior` counts the points written (for laplacian7, the grid without its boundary). Throws
// Error(invalid_argument) for a bad case or option, Error(unsupported) without a GPU,
// Error(out_of_memory) when the case does not fit the device or the host, Error(io) when the
// cache is to be written and its folder is not writable (checked before the search), and
// Error(verification) when no candidate verifies.
TuneResult tune(Op op, int radius, DType dtype, Extents interior, const TuneOptions& options = {});

}  // namespace fdstencil
