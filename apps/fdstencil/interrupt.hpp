// SIGINT and SIGTERM during a run: the first asks the run to stop where it can
// keep its work (a wave run at the next step boundary, with its checkpoint; an
// imaging survey after the shot in progress, with its stack), which then exits
// 128 + the signal's number with a message naming how to resume; a second one
// ends the process at once (checkpoints and stacks are written to a temporary
// name and renamed, so even then the last complete one survives).
#pragma once

namespace fdstencil::cli {

// Installs the handlers for its lifetime and restores the ones before it
// afterwards.
class InterruptGuard {
 public:
  // `what_next`: what the first signal's line on stderr says happens (by default the time loop's
  // stop at the next step with a checkpoint); it must outlive the guard.
  explicit InterruptGuard(const char* what_next = nullptr);
  ~InterruptGuard();
  InterruptGuard(const InterruptGuard&) = delete;
  InterruptGuard& operator=(const InterruptGuard&) = delete;

  static bool requested();    // a signal arrived: stop at the next step boundary
  static int signal();        // which (0: none)
  static const char* name();  // "SIGINT" or "SIGTERM"
};

}  // namespace fdstencil::cli
