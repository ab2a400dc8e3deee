// The caller's stop check, one per thread: stop.hpp.
#include "core/stop.hpp"

#include "fdstencil/error.hpp"

namespace fdstencil::core {

namespace {

thread_local const std::function<bool()>* current = nullptr;

}  // namespace

StopScope::StopScope(const std::function<bool()>& check) : outer_(current) {
  if (check) current = &check;
}

StopScope::~StopScope() { current = outer_; }

void poll_stop() {
  if (current != nullptr && (*current)())
    throw Error(ErrorKind::interrupted, "stopped at the caller's request between two steps");
}

}  // namespace fdstencil::core
