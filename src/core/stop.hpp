// A caller's request to stop a long computation between its steps (the linearised solvers'
// sweeps, issue 37: Ctrl-C in Python, a signal in a tool). A StopScope installs the caller's
// check on this thread for its life; the sweeps call poll_stop() between steps, which asks the
// check and throws Error(ErrorKind::interrupted) when it says stop, so the solver unwinds, frees
// its memory and returns nothing. The check may also throw its own exception (Python's
// KeyboardInterrupt), which unwinds the same way. Never called inside an OpenMP region, which an
// exception must not leave. Scopes nest; a scope without a check leaves the outer one's.
#pragma once

#include <functional>

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

// Throws Error(ErrorKind::interrupted) when this thread's innermost check asks to stop.
void poll_stop();

}  // namespace fdstencil::core
