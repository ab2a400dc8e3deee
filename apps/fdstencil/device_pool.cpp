// DevicePool (device_pool.hpp): workers over GPUs taking a call's items in turn.
#include "device_pool.hpp"

#include <thread>
#include <utility>

#include "fdstencil/device.hpp"
#include "fdstencil/device_field.hpp"
#include "fdstencil/error.hpp"

namespace fdstencil::cli {

DevicePool::DevicePool(size_t items, std::function<bool()> interrupted, std::chrono::milliseconds poll)
    : interrupted_(std::move(interrupted)), poll_(poll), errors_(items), devices_(items, -1) {}

bool DevicePool::run(const std::vector<int>& devices, const Worker& worker) {
  if (devices.empty()) throw Error(ErrorKind::invalid_argument, "no device to run the items on");
  const bool interrupted =
      devices.size() == 1 ? run_here(devices[0], worker) : run_on_workers(devices, worker);
  if (interrupted) return false;
  if (setup_error_) std::rethrow_exception(setup_error_);
  for (const std::exception_ptr& e : errors_)
    if (e) std::rethrow_exception(e);
  return true;
}

bool DevicePool::stop_requested() {
  if (stop_ || !polled_by_worker_) return stop_;
  if (std::chrono::steady_clock::now() - last_poll_ < poll_) return false;
  last_poll_ = std::chrono::steady_clock::now();
  if (interrupted_()) was_interrupted_ = stop_ = true;
  return stop_;
}

// One device: this thread is the worker, and gives the caller back its current GPU.
bool DevicePool::run_here(int device, const Worker& worker) {
  polled_by_worker_ = true;
  last_poll_ = std::chrono::steady_clock::now();
  const int before = device >= 0 ? cuda::current_device() : -1;
  work(device, worker);
  if (before >= 0 && before != device) select_gpu(before);
  return was_interrupted_;
}

// Several devices: a worker thread each, this thread asking about an interruption until they end.
bool DevicePool::run_on_workers(const std::vector<int>& devices, const Worker& worker) {
  std::vector<std::thread> workers;
  try {
    for (const int d : devices) workers.emplace_back([this, d, &worker] { work(d, worker); });
  } catch (...) {  // no thread: those started stop at their next step and are joined
    stop_ = true;
    for (std::thread& w : workers) w.join();
    throw;
  }
  for (;;) {
    std::unique_lock<std::mutex> lock(mutex_);
    if (cv_.wait_for(lock, poll_, [&] { return done_ == devices.size(); })) break;
    lock.unlock();
    if (!was_interrupted_ && interrupted_()) was_interrupted_ = stop_ = true;
  }
  for (std::thread& w : workers) w.join();
  return was_interrupted_;
}

void DevicePool::work(int device, const Worker& worker) {
  std::exception_ptr failure;
  try {
    if (device >= 0) select_gpu(device);
    const std::function<void(size_t)> item = worker(device);
    for (size_t i = next_++; i < errors_.size() && !stop_; i = next_++) {
      devices_[i] = device;
      try {
        item(i);
      } catch (...) {
        errors_[i] = std::current_exception();
        stop_ = true;  // the other workers stop at their next step: the call fails as a whole
      }
    }
  } catch (...) {  // the GPU could not be made current, or the worker not made
    failure = std::current_exception();
    stop_ = true;
  }
  const std::lock_guard<std::mutex> lock(mutex_);
  if (failure && !setup_error_) setup_error_ = failure;
  ++done_;
  cv_.notify_all();
}

}  // namespace fdstencil::cli
