// A caller's request to stop a long computation between its steps (the linearised solvers'
// sweeps, issue 37: Ctrl-C in Python, a signal in a tool). A StopScope installs the caller's
// check on this thread for its life; the sweeps call poll_stop() between steps, which asks the
// check and throws Error(ErrorKind::interrupted) when it says stop, so the solver unwinds, frees
// its memory and returns nothing. The check may also throw its own exception (Python's
// KeyboardInterrupt), which unwinds the same way. Never called inside an OpenMP region, which an
// exception must not leave. Scopes nest; a scope without a check leaves the outer one's.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>

namespace fdstencil::core {

class StopScope {
 public:
  explicit StopScope(const std::function<bool()>& check);  // kept by address: it must outlive the scope
  StopScope(std::function<bool()>&&) = delete;
  ~StopScope();
  StopScope(const StopScope&) = delete;
  StopScope& operator=(const StopScope&) = delete;

 private:
  const std::function<bool()>* outer_;
};

// Throws Error(ErrorKind::interrupted) when this thread's innermost check asks to stop; else counts
// one step for this thread's innermost ProgressScope.
void poll_stop();

// A caller's progress report over the steps the sweeps take (the linearised solvers'
// Options::progress): poll_stop() counts them, and once the solver has set the total its sweeps
// will take (set_progress_total, when its storage plan is made) `report(done, total)` is called
// about 200 times along the way, and with done == total when the scope ends without an exception.
// Scopes nest; a scope without a report counts nothing and hides the outer one's count.
class ProgressScope {
 public:
  explicit ProgressScope(const std::function<void(int64_t, int64_t)>& report);  // kept by address
  ProgressScope(std::function<void(int64_t, int64_t)>&&) = delete;
  ~ProgressScope();  // the last report, done == total, unless an exception is leaving
  ProgressScope(const ProgressScope&) = delete;
  ProgressScope& operator=(const ProgressScope&) = delete;
  struct Count;  // stop.cpp's: the steps counted, the total, the next report

 private:
  Count* outer_;
  std::unique_ptr<Count> own_;
  int exceptions_;  // std::uncaught_exceptions() when the scope began
};

// The steps this thread's innermost ProgressScope's sweeps take in all (nothing without one).
void set_progress_total(int64_t total);

}  // namespace fdstencil::core
