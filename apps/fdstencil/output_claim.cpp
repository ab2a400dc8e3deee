// An output folder belongs to one run (issue 33): a run into a folder that holds another run's
// outputs, or its checkpoint, refuses unless it resumes that run (--resume) or replaces it
// (--overwrite), so that no record, snapshot or checkpoint of one run sits beside another's.
#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "fdstencil/error.hpp"
#include "wave_cli.hpp"

namespace fdstencil::cli::wave_cli {

namespace fs = std::filesystem;

namespace {

// The names a wave run (or a survey, whose manifest and shot folders a single run would mix with)
// writes into its folder; nothing else in the folder is a run's, and nothing else is touched.
bool run_output(const fs::directory_entry& e) {
  static const char* const kFixed[] = {"shot.npy",     "shot.json",    "shot.sgy",      "final.npy",
                                       "analytic.npy", "summary.json", kSurveyManifest, kCheckpointFile};
  const std::string name = e.path().filename().string();
  if (std::find(std::begin(kFixed), std::end(kFixed), name) != std::end(kFixed)) return true;
  const auto starts = [&](const std::string& prefix) { return name.rfind(prefix, 0) == 0; };
  const auto digits_from = [&](size_t at, size_t end) {
    return end > at && std::all_of(name.begin() + long(at), name.begin() + long(end), ::isdigit);
  };
  if (starts("snapshot_") && name.size() > 13 && name.substr(name.size() - 4) == ".npy")
    return digits_from(9, name.size() - 4);
  if (starts("shot_")) return e.is_directory() && digits_from(5, name.size());  // a survey's shot folder
  return starts(std::string(kCheckpointFile) + ".tmp.");
}

[[noreturn]] void bad(const std::string& what) { throw Error(ErrorKind::invalid_argument, what); }

bool is_checkpoint(const std::string& name) { return name.rfind(kCheckpointFile, 0) == 0; }
bool is_survey(const std::string& name) { return name == kSurveyManifest || name.rfind("shot_", 0) == 0; }

// Up to four names, then how many more.
std::string listed(const std::vector<std::string>& names) {
  std::string text;
  for (size_t i = 0; i < names.size() && i < 4; ++i) text += (i ? ", " : "") + names[i];
  if (names.size() > 4) text += " and " + std::to_string(names.size() - 4) + " more";
  return text;
}

}  // namespace

std::vector<std::string> earlier_outputs(const fs::path& dir) {
  std::vector<std::string> names;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec))
    if (run_output(e)) names.push_back(e.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

void claim_output(const Setup& s) {
  const std::vector<std::string> found = earlier_outputs(s.out_dir);
  std::vector<std::string> checkpoints, survey;
  std::copy_if(found.begin(), found.end(), std::back_inserter(checkpoints), is_checkpoint);
  std::copy_if(found.begin(), found.end(), std::back_inserter(survey), is_survey);
  const std::string dir = "--output " + s.out_dir.string();
  // A survey's folder is the survey's: --overwrite replaces one run, never a survey's shots.
  if (!survey.empty())
    bad(dir + " holds a survey (" + listed(survey) + "): a single run writes into a folder of its own");
  if (s.resume) return;  // the run it resumes wrote them: its files are this run's
  if (found.empty() || s.overwrite) return;
  if (!checkpoints.empty() &&
      std::find(checkpoints.begin(), checkpoints.end(), kCheckpointFile) == checkpoints.end())
    bad(dir + " holds the temporary checkpoint a stopped run did not finish writing (" + listed(checkpoints) +
        "): if it is whole, rename it to " + kCheckpointFile +
        " and add --resume to continue that run; or --overwrite to start over, which removes it and the "
        "run's other outputs");
  if (!checkpoints.empty())
    bad(dir + " holds the checkpoint of an earlier run (" + listed(checkpoints) +
        "): add --resume to continue that run, or --overwrite to start over, which removes it and the "
        "run's other outputs");
  bad(dir + " holds the outputs of an earlier run (" + listed(found) +
      "): a run writes into a folder of its own. Use another --output, or --overwrite to replace them");
}

void claim_survey_output(const std::filesystem::path& dir, const std::string& format) {
  std::vector<std::string> found = earlier_outputs(dir), single;
  std::copy_if(found.begin(), found.end(), std::back_inserter(single),
               [](const std::string& n) { return !is_survey(n); });
  if (!single.empty())
    bad("--output " + dir.string() + " holds the outputs of a single run (" + listed(single) +
        "): a survey writes into a folder of its own");
  const auto maker = [](const std::string& f) {
    return std::string(f == kBornSurveyFormat ? "`fdstencil born --survey`"
                       : f.empty()            ? "`fdstencil wave --survey`"
                                              : "a survey of another kind");
  };
  const fs::path manifest = dir / kSurveyManifest;
  std::error_code ec;
  if (!fs::exists(manifest, ec)) {
    if (!found.empty() && !format.empty())
      bad("--output " + dir.string() + " holds shot folders of a survey without its manifest (" +
          listed(found) + "), which " + maker(format) +
          " writes before its first shot: it writes into a folder of its own");
    return;
  }
  std::ifstream in(manifest);
  const nlohmann::json doc = nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
  if (!doc.is_object()) {  // damaged: wave's re-run writes it afresh, as before born's existed
    if (format.empty()) return;
    bad("--output " + dir.string() + " holds a survey whose manifest " + manifest.string() +
        " is unreadable: " + maker(format) + " writes into a folder of its own");
  }
  const nlohmann::json f = doc.value("format", nlohmann::json(""));
  const std::string theirs = f.is_string() ? f.get<std::string>() : "?";
  if (theirs != format)
    bad("--output " + dir.string() + " holds the shots of " + maker(theirs) + " (" + manifest.string() +
        "): " + maker(format) + " writes into a folder of its own");
}

void clear_earlier_outputs(const Setup& s) {
  if (!s.overwrite) return;
  for (const std::string& name : earlier_outputs(s.out_dir)) {
    std::error_code ec;
    fs::remove_all(s.out_dir / name, ec);
    if (ec)
      throw Error(ErrorKind::io,
                  "--overwrite: cannot remove " + (s.out_dir / name).string() + ": " + ec.message());
  }
}

}  // namespace fdstencil::cli::wave_cli
