// The output folder of `fdstencil gradient`, `rtm` and `born` (imaging_cli.hpp's OutputClaim).
#include "commands.hpp"
#include "fdstencil/error.hpp"
#include "imaging_cli.hpp"

namespace fdstencil::cli::imaging_cli {

namespace fs = std::filesystem;

OutputClaim::OutputClaim(const fs::path& dir, const std::vector<std::string>& names, bool overwrite)
    : dir_(dir) {
  for (const std::string& name : names)
    if (fs::exists(dir_ / name) && !overwrite)
      throw Error(ErrorKind::invalid_argument, "--output " + dir_.string() + " holds an earlier run's " +
                                                   name + " (--overwrite replaces it)");
  std::error_code ec;
  for (fs::path p = dir_; !p.empty() && !fs::exists(p, ec); p = p.parent_path()) {
    top_ = p;
    if (p == p.parent_path()) break;
  }
  fs::create_directories(dir_, ec);
  if (ec) throw Error(ErrorKind::io, "--output " + dir_.string() + ": cannot create it: " + ec.message());
  check_writable((dir_ / "summary.json").string());
}

OutputClaim::~OutputClaim() {
  if (kept_) return;
  std::error_code ec;
  for (const fs::path& f : written_) fs::remove(f, ec);
  if (top_.empty()) return;
  for (fs::path p = dir_;; p = p.parent_path()) {  // only while empty: stops at the first with files
    if (!fs::remove(p, ec) || p == top_ || p == p.parent_path()) return;
  }
}

void OutputClaim::wrote(const std::string& name) { written_.push_back(dir_ / name); }
void OutputClaim::keep() { kept_ = true; }

}  // namespace fdstencil::cli::imaging_cli
