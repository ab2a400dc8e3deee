// The tuning cache: what `fdstencil tune` measured best for each case, in a JSON file that plans
// read when they are built. One file holds every device and case; an entry is trusted only for
// the device, driver, runtime and library version that measured it.
//
// The file: $FDSTENCIL_TUNING_CACHE when set, else $XDG_CACHE_HOME/fdstencil/tuning.json, else
// ~/.cache/fdstencil/tuning.json. It is written atomically (a temporary file renamed over it)
// under an exclusive lock on a lock file beside it, re-read under the lock, so two processes
// tuning at once both keep their entries.
#pragma once

#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "fdstencil/dtype.hpp"
#include "fdstencil/layout.hpp"
#include "fdstencil/stencil.hpp"

namespace fdstencil {

using Warn = std::function<void(const std::string&)>;

// What an entry is valid for.
struct TuningKey {
  std::string device;              // the GPU's name, e.g. "NVIDIA H100 80GB HBM3"
  std::string compute_capability;  // e.g. "9.0"
  int driver = 0;                  // CUDA driver and runtime versions, e.g. 13000
  int runtime = 0;
  Op op = Op::d2xyz;
  int radius = 1;
  DType dtype = DType::f32;
  Extents interior;
  // Everything but the extents: the entries an untuned size may borrow from.
  bool same_case_but_size(const TuningKey& o) const {
    return device == o.device && compute_capability == o.compute_capability && driver == o.driver &&
           runtime == o.runtime && op == o.op && radius == o.radius && dtype == o.dtype;
  }
  bool operator==(const TuningKey& o) const { return same_case_but_size(o) && interior == o.interior; }
};

struct TuningEntry {
  TuningKey key;
  std::string variant;  // the registry name
  nlohmann::json params = nlohmann::json::object();
  double median_ms = 0;       // the winner's median time
  double effective_gbps = 0;  // by the seeds' bytes model
  double copy_gbps = 0;       // cudaMemcpy device-to-device in the same run
  double pct_of_copy = 0;
  int candidates = 0;    // candidates timed
  double seconds = 0;    // the whole tuning run
  std::string tuned_at;  // UTC, ISO 8601
};

std::filesystem::path default_cache_file();

// An entry as the cache file holds it (what `fdstencil tune --show-json` prints).
nlohmann::json to_json(const TuningEntry& e);

class TuningCache {
 public:
  // Reads `file`. A missing file is an empty cache. A file that cannot be parsed, that is not a
  // tuning cache, or that another version of fdstencil wrote gives a warning naming the file and
  // an empty cache; so does an entry that is malformed (the others are kept). Never throws for
  // the file's content.
  static TuningCache load(const std::filesystem::path& file, const Warn& warn);

  const std::filesystem::path& file() const { return file_; }
  const std::vector<TuningEntry>& entries() const { return entries_; }

  // The entry of exactly this case, or nullptr.
  const TuningEntry* find(const TuningKey& key) const;
  // For a size that was not tuned: the entry of the same device, operator, radius and type whose
  // extents are nearest (the least sum over the axes of |log2(tuned / asked)|), among those
  // within a factor of 2 of the asked extents on every axis; nullptr when there is none.
  const TuningEntry* nearest(const TuningKey& key) const;

  // Adds `e` to `file` (replacing the entry of the same key) under the lock; creates the folder.
  // Throws Error(io) when the file cannot be written.
  static void store(const std::filesystem::path& file, const TuningEntry& e, const Warn& warn);

 private:
  std::filesystem::path file_;
  std::vector<TuningEntry> entries_;
};

}  // namespace fdstencil
