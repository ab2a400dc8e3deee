// The Python calls' progress(done, total) over several shots at once (forward_many, gradient_many,
// rtm_many, born_many): one callable hears the shots' steps summed.
#pragma once

#include <nanobind/nanobind.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <mutex>
#include <utility>
#include <vector>

namespace fdstencil::python {

namespace nb = nanobind;

// One progress(done, total) over the steps of several shots running at once: each shot reports its
// own (wave::Options::progress, from its worker's thread), and the caller hears the sums, a shot not
// yet begun counted at the first total any shot reported (where the shots' totals differ, as
// checkpoints planned from each GPU's free memory can make them, the total moves as they begin).
// One report at a time, whole: a mutex taken before the GIL (the callable may give the GIL up
// part-way, as a bar's output does), so the caller hears the sums in order.
class ShotsProgress {
 public:
  ShotsProgress(size_t shots, nb::object progress)
      : done_(shots), total_(shots), progress_(std::move(progress)) {}
  std::function<void(int64_t, int64_t)> shot(size_t k) {
    if (progress_.is_none()) return {};
    return [this, k](int64_t done, int64_t total) {
      const std::lock_guard<std::mutex> one_at_a_time(mutex_);  // before the GIL: no worker holds it here
      nb::gil_scoped_acquire gil;
      done_[k] = done;
      total_[k] = total;
      if (first_total_ == 0) first_total_ = total;
      int64_t d = 0, t = 0;
      for (size_t i = 0; i < done_.size(); ++i) {
        d += done_[i];
        t += total_[i] ? total_[i] : first_total_;
      }
      progress_(d, t);
    };
  }

 private:
  std::mutex mutex_;
  std::vector<int64_t> done_, total_;  // per shot; total 0 until the shot reports
  int64_t first_total_ = 0;
  nb::object progress_;
};

}  // namespace fdstencil::python
