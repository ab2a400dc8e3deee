// What a long command says while it works, on stderr:
// - ProgressBar: percent done and the time left. On a terminal it is redrawn in place; in a log
//   (a file or a pipe) it writes a line at every 10 % and whenever a while has passed without one,
//   so a log shows a run alive from its first second and is not filled with carriage returns.
// - SurveyProgress: one ProgressBar over the steps of a survey's shots, run one after another or
//   several at once.
// - PhaseNotice: a phase before or after the steps (reading a model, setting up the solver,
//   resampling the record) that says what it is doing once it has taken a second.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

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
  int log_lines_ = 0;
  std::chrono::steady_clock::time_point start_;
  std::chrono::steady_clock::time_point last_draw_;  // the terminal's last redraw, or the log's last line
};

// One bar over a survey's shots, several of them running at once (one a GPU): each shot reports
// its own steps done of its total (the Options::progress of its run, from its worker's thread),
// and the bar shows their sum against the sum of the totals, a shot not yet begun counted at the
// first total reported (a survey's shots are alike), its label how many have done all their steps.
class SurveyProgress {
 public:
  SurveyProgress(std::string label, size_t shots, bool enabled);
  // Shot k's (of the shots to run) Options::progress.
  std::function<void(int64_t, int64_t)> shot(size_t k);
  void finished(size_t k);  // shot k is over: its steps whole, whatever it reported
  void finish() { bar_.finish(); }

 private:
  void draw();  // under mutex_
  std::mutex mutex_;
  std::string label_;
  ProgressBar bar_;
  std::vector<int64_t> done_, total_;  // per shot; total 0 until the shot reports
  int64_t first_total_ = 0;
};

// A phase that says, once it has run for notice_after_s() seconds, what it is doing ("label: what
// ..."), then how far it is every kPhaseRepeat, and at its end how long it took; a quicker phase
// says nothing. A watcher thread speaks, so a phase busy inside one long call is heard too.
// advance() gives the lines a count ("3/5 receivers").
class PhaseNotice {
 public:
  PhaseNotice(std::string label, std::string what, bool enabled, std::string unit = "");
  ~PhaseNotice() { end(); }
  PhaseNotice(const PhaseNotice&) = delete;
  PhaseNotice& operator=(const PhaseNotice&) = delete;
  void advance(int64_t done, int64_t total) {
    done_ = done;
    total_ = total;
  }
  void end();  // once, from the thread that made the notice; the destructor's call then does nothing

 private:
  void watch(double after_s);
  void say(const char* how);
  std::string label_, what_, unit_;
  std::mutex mutex_;
  std::condition_variable wake_;
  bool ended_ = false, spoke_ = false;
  std::atomic<int64_t> done_{0}, total_{0};
  std::chrono::steady_clock::time_point start_;
  int exceptions_ = 0;  // std::uncaught_exceptions() when the phase began
  std::thread watcher_;
};

// Seconds a phase runs before it speaks, and a log's first progress line: 1, or the environment's
// FDSTENCIL_NOTICE_AFTER_S (0: at once, which the tests use to see every phase's line).
double notice_after_s();

// "12 s", "3 min 05 s", "1 h 02 min": the time left, as a person reads it.
std::string eta_text(double seconds);

}  // namespace fdstencil::cli
