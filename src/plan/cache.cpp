// The tuning cache file (see include/fdstencil/tuning_cache.hpp):
//   {"format": "fdstencil-tuning-cache", "format_version": 1, "library_version": "0.2.0",
//    "entries": [{"device": ..., "op": "d2z", "radius": 4, "dtype": "float", "interior": [..],
//                 "variant": "window_vec", "params": {...}, "median_ms": ..., ...}, ...]}
#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <sstream>

#include "fdstencil/error.hpp"
#include "fdstencil/tuning_cache.hpp"
#include "fdstencil/version.hpp"

namespace fdstencil {

namespace {

constexpr const char* kFormat = "fdstencil-tuning-cache";
constexpr int kFormatVersion = 1;

}  // namespace

nlohmann::json to_json(const TuningEntry& e) {
  const TuningKey& k = e.key;
  return {{"device", k.device},
          {"compute_capability", k.compute_capability},
          {"driver", k.driver},
          {"runtime", k.runtime},
          {"op", std::string(op_name(k.op))},
          {"radius", k.radius},
          {"dtype", std::string(dtype_name(k.dtype))},
          {"interior", {k.interior.nx, k.interior.ny, k.interior.nz}},
          {"variant", e.variant},
          {"params", e.params},
          {"median_ms", e.median_ms},
          {"effective_gbps", e.effective_gbps},
          {"copy_gbps", e.copy_gbps},
          {"pct_of_copy", e.pct_of_copy},
          {"candidates", e.candidates},
          {"seconds", e.seconds},
          {"tuned_at", e.tuned_at}};
}

namespace {

// Throws (nlohmann::json or fdstencil::Error) for a malformed entry.
TuningEntry from_json(const nlohmann::json& j) {
  TuningEntry e;
  TuningKey& k = e.key;
  k.device = j.at("device").get<std::string>();
  k.compute_capability = j.at("compute_capability").get<std::string>();
  k.driver = j.at("driver").get<int>();
  k.runtime = j.at("runtime").get<int>();
  k.op = parse_op(j.at("op").get<std::string>());
  k.radius = j.at("radius").get<int>();
  k.dtype = parse_dtype(j.at("dtype").get<std::string>());
  const auto& n = j.at("interior");
  if (!n.is_array() || n.size() != 3) throw Error(ErrorKind::io, "interior is not three extents");
  k.interior = {n[0].get<int64_t>(), n[1].get<int64_t>(), n[2].get<int64_t>()};
  if (k.interior.nx < 1 || k.interior.ny < 1 || k.interior.nz < 1)
    throw Error(ErrorKind::io, "an extent below 1");
  e.variant = j.at("variant").get<std::string>();
  e.params = j.at("params");
  if (!e.params.is_object()) throw Error(ErrorKind::io, "params is not an object");
  e.median_ms = j.value("median_ms", 0.0);
  e.effective_gbps = j.value("effective_gbps", 0.0);
  e.copy_gbps = j.value("copy_gbps", 0.0);
  e.pct_of_copy = j.value("pct_of_copy", 0.0);
  e.candidates = j.value("candidates", 0);
  e.seconds = j.value("seconds", 0.0);
  e.tuned_at = j.value("tuned_at", std::string());
  return e;
}

std::string slurp(const std::filesystem::path& file) {
  std::ifstream f(file, std::ios::binary);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

// The entries of `file`'s text, or none with a warning when the text is not this version's cache.
// `consequence` ends each warning: what happens to what the file held.
std::vector<TuningEntry> parse(const std::filesystem::path& file, const std::string& text, const Warn& warn,
                               const std::string& consequence) {
  std::vector<TuningEntry> out;
  const std::string name = file.string();
  nlohmann::json doc;
  try {
    doc = nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception&) {
    if (warn) warn(name + " is not valid JSON (a corrupt tuning cache): " + consequence);
    return out;
  }
  // Every field read with its type checked: a file of the right shape but wrong types is still a
  // warning, never an exception out of load().
  const auto text_of = [&](const char* key) {
    return doc.contains(key) && doc[key].is_string() ? doc[key].get<std::string>() : std::string("?");
  };
  if (!doc.is_object() || text_of("format") != kFormat || !doc.contains("entries") ||
      !doc["entries"].is_array()) {
    if (warn) warn(name + " is not an fdstencil tuning cache: " + consequence);
    return out;
  }
  const std::string version = text_of("library_version");
  const bool format_ok = doc.contains("format_version") && doc["format_version"].is_number_integer() &&
                         doc["format_version"].get<int64_t>() == kFormatVersion;
  if (!format_ok || version != kVersion) {
    if (warn)
      warn(name + " was written by fdstencil " + version + " (this is " + kVersion + "): " + consequence);
    return out;
  }
  for (const auto& j : doc["entries"]) {
    try {
      out.push_back(from_json(j));
    } catch (const std::exception& e) {
      if (warn) warn(name + ": a malformed entry is ignored (" + e.what() + ")");
    }
  }
  return out;
}

std::string now_utc() {
  const std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

// An exclusive lock on `file`.lock, released when this goes out of scope.
class FileLock {
 public:
  explicit FileLock(const std::filesystem::path& file) {
    const std::string name = file.string() + ".lock";
    fd_ = ::open(name.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd_ < 0) throw Error(ErrorKind::io, "cannot open the lock file " + name);
    while (::flock(fd_, LOCK_EX) != 0)
      if (errno != EINTR) {
        ::close(fd_);
        throw Error(ErrorKind::io, "cannot lock " + name);
      }
  }
  ~FileLock() {
    ::flock(fd_, LOCK_UN);
    ::close(fd_);
  }
  FileLock(const FileLock&) = delete;
  FileLock& operator=(const FileLock&) = delete;

 private:
  int fd_ = -1;
};

double log_distance(Extents a, Extents b, bool& within_factor_2) {
  const double d[3] = {std::log2(double(a.nx) / double(b.nx)), std::log2(double(a.ny) / double(b.ny)),
                       std::log2(double(a.nz) / double(b.nz))};
  within_factor_2 = std::fabs(d[0]) <= 1 && std::fabs(d[1]) <= 1 && std::fabs(d[2]) <= 1;
  return std::fabs(d[0]) + std::fabs(d[1]) + std::fabs(d[2]);
}

}  // namespace

std::filesystem::path default_cache_file() {
  if (const char* f = std::getenv("FDSTENCIL_TUNING_CACHE"); f != nullptr && *f != '\0') return f;
  if (const char* x = std::getenv("XDG_CACHE_HOME"); x != nullptr && *x != '\0')
    return std::filesystem::path(x) / "fdstencil" / "tuning.json";
  if (const char* h = std::getenv("HOME"); h != nullptr && *h != '\0')
    return std::filesystem::path(h) / ".cache" / "fdstencil" / "tuning.json";
  return std::filesystem::path(".cache") / "fdstencil" / "tuning.json";
}

TuningCache TuningCache::load(const std::filesystem::path& file, const Warn& warn) {
  TuningCache c;
  c.file_ = file;
  std::error_code ec;
  if (!std::filesystem::exists(file, ec)) return c;
  if (std::filesystem::is_directory(file, ec)) {
    if (warn) warn(file.string() + " is a folder, not a tuning cache: the built-in defaults are used");
    return c;
  }
  c.entries_ =
      parse(file, slurp(file), warn,
            "its entries are ignored and the built-in defaults are used (fdstencil tune writes a new one)");
  return c;
}

const TuningEntry* TuningCache::find(const TuningKey& key) const {
  for (const TuningEntry& e : entries_)
    if (e.key == key) return &e;
  return nullptr;
}

const TuningEntry* TuningCache::nearest(const TuningKey& key) const {
  const TuningEntry* best = nullptr;
  double best_d = 0;
  for (const TuningEntry& e : entries_) {
    if (!e.key.same_case_but_size(key)) continue;
    bool near = false;
    const double d = log_distance(e.key.interior, key.interior, near);
    // Ties go to the larger tuned size: its choice is the safer one for the memory system.
    if (near && (best == nullptr || d < best_d ||
                 (d == best_d && e.key.interior.points() > best->key.interior.points()))) {
      best = &e;
      best_d = d;
    }
  }
  return best;
}

void TuningCache::store(const std::filesystem::path& file, const TuningEntry& entry, const Warn& warn) {
  std::error_code ec;
  if (file.has_parent_path()) std::filesystem::create_directories(file.parent_path(), ec);
  if (ec)
    throw Error(ErrorKind::io,
                "cannot create the folder of the tuning cache " + file.string() + ": " + ec.message());
  const FileLock lock(file);
  // Under the lock, the file as the last writer left it: its entries survive ours.
  std::vector<TuningEntry> entries;
  if (std::filesystem::exists(file, ec))
    entries = parse(file, slurp(file), warn, "it is replaced by a new cache");
  TuningEntry e = entry;
  if (e.tuned_at.empty()) e.tuned_at = now_utc();
  bool replaced = false;
  for (TuningEntry& old : entries)
    if (old.key == e.key) old = e, replaced = true;
  if (!replaced) entries.push_back(e);
  nlohmann::json doc = {{"format", kFormat},
                        {"format_version", kFormatVersion},
                        {"library_version", kVersion},
                        {"entries", nlohmann::json::array()}};
  for (const TuningEntry& x : entries) doc["entries"].push_back(to_json(x));
  const std::filesystem::path tmp = file.string() + ".tmp." + std::to_string(::getpid());
  {
    std::ofstream f(tmp, std::ios::binary | std::ios::trunc);
    f << doc.dump(1) << "\n";
    f.close();
    if (!f) {
      std::filesystem::remove(tmp, ec);
      throw Error(ErrorKind::io, "cannot write the tuning cache " + file.string());
    }
  }
  std::filesystem::rename(tmp, file, ec);
  if (ec) {
    std::filesystem::remove(tmp, ec);
    throw Error(ErrorKind::io, "cannot replace the tuning cache " + file.string() + ": " + ec.message());
  }
}

}  // namespace fdstencil
