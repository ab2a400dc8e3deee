// The items of one call (shots) spread over GPUs: one worker per device, each taking the next item
// nobody has taken, so that a device runs its items one after another and a faster device takes
// more. With one device the calling thread is the worker, so a cpu run keeps the caller's OpenMP
// team and a GPU run leaves the caller's current GPU as it found it. InOrder hands the items'
// results on in the items' order. Used by the Python module's forward_many and gradient_many /
// rtm_many, and by `fdstencil rtm / gradient --survey --devices`.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <exception>
#include <functional>
#include <map>
#include <mutex>
#include <utility>
#include <vector>

namespace fdstencil::cli {

class DevicePool {
 public:
  // What a worker runs: made once on the worker's thread, its device current (-1: none chosen,
  // for the cpu), then called with each item the worker takes. What it holds (a kept GPU state, a
  // launch looked up once) lives as long as the worker, on its device.
  using Worker = std::function<std::function<void(size_t item)>(int device)>;

  // interrupted: whether the caller was interrupted (Ctrl-C), asked every `poll` by the waiting
  // thread, or with one device by stop_requested between the worker's steps. Once it says yes every
  // item stops at its next step.
  DevicePool(size_t items, std::function<bool()> interrupted, std::chrono::milliseconds poll);

  // Runs the items on `devices` (one worker each; {-1}: the calling thread, no GPU chosen; none:
  // refused). Returns false when interrupted; else rethrows the error of the first item, in the
  // items' order, that failed, or of a worker whose device could not be made current.
  bool run(const std::vector<int>& devices, const Worker& worker);

  // What the items' runs ask between steps (wave::Options::stop_requested): true once the caller
  // was interrupted or an item failed, so that a failing item fails the call as a whole.
  bool stop_requested();

  int device(size_t item) const { return devices_[item]; }  // where item ran (-1: none chosen)

 private:
  bool run_here(int device, const Worker& worker);
  bool run_on_workers(const std::vector<int>& devices, const Worker& worker);
  void work(int device, const Worker& worker);

  std::function<bool()> interrupted_;
  std::chrono::milliseconds poll_;
  bool polled_by_worker_ = false;  // one device: stop_requested asks `interrupted_` itself
  std::chrono::steady_clock::time_point last_poll_;
  std::vector<std::exception_ptr> errors_;  // item i's, written by the worker that ran it
  std::exception_ptr setup_error_;          // a worker's whose device could not be made current
  std::vector<int> devices_;
  std::atomic<size_t> next_{0};
  std::atomic<bool> stop_{false}, was_interrupted_{false};
  std::mutex mutex_;
  std::condition_variable cv_;
  size_t done_ = 0;  // workers finished
};

// Items' results used in the items' order whatever order they end in, so that a sum of them has
// the bits of one item after another. A result that ends early waits here until those before it
// are used; a worker starts an item at most `ahead` places past the oldest unused one, which bounds
// the results waiting to `ahead` - 1.
template <class R>
class InOrder {
 public:
  explicit InOrder(size_t ahead) : ahead_(ahead < 1 ? 1 : ahead) {}

  // Before item k runs: waits until k is within `ahead` of the oldest unused item. Returns false,
  // and k should not run, once `stop` says the call is over (asked every 100 ms) or a use failed.
  bool wait_turn(size_t k, const std::function<bool()>& stop) {
    std::unique_lock<std::mutex> lock(mutex_);
    while (k >= next_ + ahead_ && !broken_) {
      if (stop()) return false;
      cv_.wait_for(lock, std::chrono::milliseconds(100));
    }
    return !broken_;
  }

  // Item k's result: `use(k, result)` is called, under this object's lock, for it and for each
  // result after it whose turn has come, in order. A use that throws leaves every later result
  // unused (the call has failed), so that none is used twice or out of its turn.
  void put(size_t k, R result, const std::function<void(size_t, R&)>& use) {
    const std::lock_guard<std::mutex> lock(mutex_);
    if (broken_) return;
    waiting_.emplace(k, std::move(result));
    for (auto it = waiting_.find(next_); it != waiting_.end(); it = waiting_.find(next_)) {
      try {
        use(it->first, it->second);
      } catch (...) {
        broken_ = true;
        cv_.notify_all();  // the waiting workers stop now
        throw;
      }
      waiting_.erase(it);
      ++next_;
      cv_.notify_all();
    }
  }

 private:
  std::mutex mutex_;
  std::condition_variable cv_;
  std::map<size_t, R> waiting_;
  size_t next_ = 0;  // the oldest item not yet used
  size_t ahead_;
  bool broken_ = false;
};

}  // namespace fdstencil::cli
