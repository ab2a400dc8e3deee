// SIGINT and SIGTERM during a run: the first asks the run to stop at the next
// step boundary, where it writes its checkpoint and exits 128 + the signal's
// number with a message naming how to resume; a second one ends the process at
// once (checkpoints are written to a temporary name and renamed, so even then
// the last complete one survives).
#pragma once

namespace fdstencil::cli {

// Installs the handlers for its lifetime and restores the ones before it
// afterwards.
class InterruptGuard {
 public:
  InterruptGuard();
  ~InterruptGuard();
  InterruptGuard(const InterruptGuard&) = delete;
  InterruptGuard& operator=(const InterruptGuard&) = delete;

  static bool requested();    // a signal arrived: stop at the next step boundary
  static int signal();        // which (0: none)
  static const char* name();  // "SIGINT" or "SIGTERM"
};

}  // namespace fdstencil::cli
