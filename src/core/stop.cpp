// The caller's stop check and progress report, one per thread: stop.hpp.
#include "core/stop.hpp"

#include <algorithm>
#include <exception>

#include "fdstencil/error.hpp"

namespace fdstencil::core {

struct ProgressScope::Count {
  const std::function<void(int64_t, int64_t)>* report = nullptr;
  int64_t started = 0, total = 0;
  int64_t next = 0;  // the steps finished at the next report
};

namespace {

thread_local const std::function<bool()>* current = nullptr;
thread_local ProgressScope::Count* counting = nullptr;

// Reports a run: often enough for a bar redrawn each percent, few enough to cost nothing.
constexpr int64_t kReports = 200;

int64_t report_interval(int64_t total) { return std::max<int64_t>(1, total / kReports); }

}  // namespace

// A scope without a report counts nothing, and hides the outer one's count: a solver called
// inside another's sweep sets its own total, not the outer one's.
ProgressScope::ProgressScope(const std::function<void(int64_t, int64_t)>& report)
    : outer_(counting), exceptions_(std::uncaught_exceptions()) {
  if (report) {
    own_ = std::make_unique<Count>();
    own_->report = &report;
  }
  counting = own_.get();
}

ProgressScope::~ProgressScope() {
  counting = outer_;
  if (own_ && own_->total > 0 && std::uncaught_exceptions() == exceptions_) {
    try {
      (*own_->report)(own_->total, own_->total);
    } catch (...) {  // a destructor throws nothing: the run is over and whole, its report only late
    }
  }
}

void set_progress_total(int64_t total) {
  if (counting == nullptr) return;
  counting->total = total;
  counting->next = std::max<int64_t>(counting->started - 1, 0) + report_interval(total);
}

StopScope::StopScope(const std::function<bool()>& check) : outer_(current) {
  if (check) current = &check;
}

StopScope::~StopScope() { current = outer_; }

void poll_stop() {
  if (current != nullptr && (*current)())
    throw Error(ErrorKind::interrupted, "stopped at the caller's request between two steps");
  if (counting == nullptr) return;
  // A step starts here, so the steps before it are finished (the caller sees the last one end
  // when the solver returns).
  ProgressScope::Count& c = *counting;
  const int64_t finished = c.started++;
  if (c.total > 0 && finished >= c.next) {
    (*c.report)(std::min(finished, c.total), c.total);
    c.next = finished + report_interval(c.total);
  }
}

}  // namespace fdstencil::core
