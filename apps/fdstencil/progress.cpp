// The progress bar of long subcommands (progress.hpp).
#include "progress.hpp"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <utility>

namespace fdstencil::cli {

namespace {

constexpr int kBarWidth = 30;  // characters of the bar itself: with the figures, well under 80 columns
// A terminal redraw at most this often: the solver reports up to ~200 times a run, and a redraw
// per report of a fast run would cost more than it tells.
constexpr auto kRedrawInterval = std::chrono::milliseconds(100);

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
  const int decile = int(fraction * 10);
  if (decile <= last_decile_) return;
  last_decile_ = decile;
  std::fprintf(stderr, "%s: %d %% (%lld/%lld steps), ETA %s\n", label_.c_str(), 10 * decile,
               static_cast<long long>(done), static_cast<long long>(total), eta.c_str());
  std::fflush(stderr);
}

void ProgressBar::finish() {
  if (enabled_ && tty_ && drawn_) std::fputc('\n', stderr);
  drawn_ = false;
}

}  // namespace fdstencil::cli
