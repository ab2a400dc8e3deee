// The items of one call (shots) spread over GPUs: one worker per device, each taking the next item
// nobody has taken, so that a device runs its items one after another and a faster device takes
// more. With one device the calling thread is the worker, so a cpu run keeps the caller's OpenMP
// team and a GPU run leaves the caller's current GPU as it found it. Used by the Python module's
// forward_many and gradient_many / rtm_many.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <exception>
#include <functional>
#include <mutex>
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

  // Runs the items on `devices` (one worker each; {-1}: the calling thread, no GPU chosen).
  // Returns false when interrupted; else rethrows the error of the first item, in the items'
  // order, that failed, or of a worker whose device could not be made current.
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

}  // namespace fdstencil::cli
