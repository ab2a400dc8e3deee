// A progress bar on stderr for long runs: percent done and the time left. On a terminal it is
// redrawn in place; in a log (a file or a pipe) it writes a line every 10 %, so the log stays
// readable and is not filled with carriage returns.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <utility>

namespace fdstencil::cli {

class ProgressBar {
 public:
  // `label` starts each line ("fdstencil wave"); a disabled bar prints nothing.
  ProgressBar(std::string label, bool enabled);
  void update(int64_t done, int64_t total);
  // A new label for the lines to come: a survey's says which shot it is on.
  void set_label(std::string label) { label_ = std::move(label); }
  // Ends the line a terminal bar is drawn on; nothing for a log.
  void finish();

 private:
  std::string label_;
  bool enabled_ = false, tty_ = false, drawn_ = false;
  int last_decile_ = 0;  // the last 10 % mark written to a log
  std::chrono::steady_clock::time_point start_;
  std::chrono::steady_clock::time_point last_draw_;
};

// "12 s", "3 min 05 s", "1 h 02 min": the time left, as a person reads it.
std::string eta_text(double seconds);

}  // namespace fdstencil::cli
