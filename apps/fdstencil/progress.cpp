// The progress bar of long subcommands (progress.hpp).
#include "progress.hpp"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <utility>

namespace fdstencil::cli {

namespace {

constexpr int kBarWidth = 30;  // characters of the bar itself: with the figures, well under 80 columns
// A terminal redraw at most this often: the solver reports up to ~200 times a run, and a redraw
// per report of a fast run would cost more than it tells.
constexpr auto kRedrawInterval = std::chrono::milliseconds(100);
// A log's line at least this often, and a long phase's: often enough to show the run is alive,
// rare enough that a day-long run's log stays a few thousand lines.
constexpr double kLogRepeatS = 30;

double seconds_since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

}  // namespace

std::string eta_text(double seconds) {
  char buf[64];
  if (!std::isfinite(seconds) || seconds < 0) return "?";
  const long long s = std::llround(seconds);
  if (s < 60)
    std::snprintf(buf, sizeof buf, "%lld s", s);
  else if (s < 3600)
    std::snprintf(buf, sizeof buf, "%lld min %02lld s", s / 60, s % 60);
  else
    std::snprintf(buf, sizeof buf, "%lld h %02lld min", s / 3600, (s % 3600) / 60);
  return buf;
}

ProgressBar::ProgressBar(std::string label, bool enabled)
    : label_(std::move(label)),
      enabled_(enabled),
      tty_(isatty(fileno(stderr)) == 1),
      start_(std::chrono::steady_clock::now()) {}

void ProgressBar::update(int64_t done, int64_t total) {
  if (!enabled_ || total <= 0) return;
  const auto now = std::chrono::steady_clock::now();
  const double fraction = std::min(1.0, std::max(0.0, double(done) / double(total)));
  const double elapsed = std::chrono::duration<double>(now - start_).count();
  // The rate so far predicts the rest: the steps cost the same throughout a run.
  const std::string eta = done > 0 ? eta_text(elapsed * double(total - done) / double(done)) : "?";
  if (tty_) {
    if (drawn_ && done < total && now - last_draw_ < kRedrawInterval) return;
    const int filled = int(fraction * kBarWidth);
    std::fprintf(stderr, "\r%s [%s%s] %3.0f %% (%lld/%lld steps) ETA %s   ", label_.c_str(),
                 std::string(size_t(filled), '#').c_str(),
                 std::string(size_t(kBarWidth - filled), ' ').c_str(), 100 * fraction,
                 static_cast<long long>(done), static_cast<long long>(total), eta.c_str());
    std::fflush(stderr);
    drawn_ = true;
    last_draw_ = now;
    return;
  }
  // A line at each 10 % mark, or once the first second (then kLogRepeatS) has passed without one.
  const int decile = int(fraction * 10);
  const double quiet_s = std::chrono::duration<double>(now - (log_lines_ > 0 ? last_draw_ : start_)).count();
  if (decile <= last_decile_ && quiet_s < (log_lines_ > 0 ? kLogRepeatS : notice_after_s())) return;
  last_decile_ = std::max(last_decile_, decile);
  ++log_lines_;
  last_draw_ = now;
  std::fprintf(stderr, "%s: %d %% (%lld/%lld steps), ETA %s\n", label_.c_str(), int(100 * fraction),
               static_cast<long long>(done), static_cast<long long>(total), eta.c_str());
  std::fflush(stderr);
}

void ProgressBar::finish() {
  if (enabled_ && tty_ && drawn_) std::fputc('\n', stderr);
  drawn_ = false;
}

SurveyProgress::SurveyProgress(std::string label, size_t shots, bool enabled)
    : label_(std::move(label)), bar_(label_, enabled), done_(shots, 0), total_(shots, 0) {}

std::function<void(int64_t, int64_t)> SurveyProgress::shot(size_t k) {
  return [this, k](int64_t done, int64_t total) {
    const std::lock_guard<std::mutex> lock(mutex_);
    done_[k] = done;
    total_[k] = total;
    if (first_total_ == 0) first_total_ = total;
    draw();
  };
}

void SurveyProgress::finished(size_t k) {
  const std::lock_guard<std::mutex> lock(mutex_);
  if (total_[k] == 0) total_[k] = first_total_;
  done_[k] = total_[k];
  draw();
}

void SurveyProgress::draw() {
  if (first_total_ == 0) return;
  int64_t done = 0, total = 0;
  size_t whole = 0;  // shots whose steps are all done
  for (size_t k = 0; k < done_.size(); ++k) {
    done += done_[k];
    total += total_[k] > 0 ? total_[k] : first_total_;
    whole += total_[k] > 0 && done_[k] >= total_[k];
  }
  bar_.set_label(label_ + " (" + std::to_string(whole) + "/" + std::to_string(done_.size()) + " shots)");
  bar_.update(done, total);
}

double notice_after_s() {
  const char* env = std::getenv("FDSTENCIL_NOTICE_AFTER_S");
  char* end = nullptr;
  const double v = env ? std::strtod(env, &end) : 1.0;
  // At most a day: a larger wait would overflow the condition variable's clock.
  constexpr double kLongest = 86400;
  return env && end != env && std::isfinite(v) && v >= 0 ? std::min(v, kLongest) : 1.0;
}

PhaseNotice::PhaseNotice(std::string label, std::string what, bool enabled, std::string unit)
    : label_(std::move(label)),
      what_(std::move(what)),
      unit_(std::move(unit)),
      start_(std::chrono::steady_clock::now()),
      exceptions_(std::uncaught_exceptions()) {
  if (!enabled) {
    ended_ = true;
    return;
  }
  const double after = notice_after_s();
  if (after <= 0) {  // at once, on this thread: a test sees the line whatever the phase's speed
    say("...");
    spoke_ = true;
  }
  watcher_ = std::thread([this, after] { watch(after); });
}

void PhaseNotice::say(const char* how) {
  const int64_t done = done_, total = total_;
  if (total > 0)
    std::fprintf(stderr, "%s: %s %s (%lld/%lld%s%s)\n", label_.c_str(), what_.c_str(), how,
                 static_cast<long long>(done), static_cast<long long>(total), unit_.empty() ? "" : " ",
                 unit_.c_str());
  else
    std::fprintf(stderr, "%s: %s %s\n", label_.c_str(), what_.c_str(), how);
  std::fflush(stderr);
}

void PhaseNotice::watch(double after_s) {
  std::unique_lock<std::mutex> lock(mutex_);
  double wait_s = spoke_ ? kLogRepeatS : after_s;
  while (!wake_.wait_for(lock, std::chrono::duration<double>(wait_s), [this] { return ended_; })) {
    say("...");
    spoke_ = true;
    wait_s = kLogRepeatS;
  }
}

void PhaseNotice::end() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (ended_ && !watcher_.joinable()) return;
    ended_ = true;
  }
  wake_.notify_all();
  if (watcher_.joinable()) watcher_.join();
  if (!spoke_) return;
  spoke_ = false;  // one closing line
  // A phase ended by an exception did not finish: its error says what happened instead.
  if (std::uncaught_exceptions() > exceptions_) return;
  std::fprintf(stderr, "%s: %s done in %.1f s\n", label_.c_str(), what_.c_str(), seconds_since(start_));
  std::fflush(stderr);
}

}  // namespace fdstencil::cli
