// The checkpoint writer thread (checkpoint_writer.hpp).
#include "checkpoint_writer.hpp"

#include <chrono>
#include <utility>

namespace fdstencil::cli {

namespace {

double since(std::chrono::steady_clock::time_point a) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - a).count();
}

}  // namespace

CheckpointWriter::~CheckpointWriter() {
  if (thread_.joinable()) thread_.join();
}

void CheckpointWriter::finish() {
  if (thread_.joinable()) thread_.join();
  if (error_) std::rethrow_exception(std::exchange(error_, nullptr));
}

wave::Checkpoint CheckpointWriter::spare() {
  finish();
  return std::exchange(pending_, wave::Checkpoint{});
}

void CheckpointWriter::submit(wave::Checkpoint c) {
  finish();
  pending_ = std::move(c);
  thread_ = std::thread([this] {
    const auto a = std::chrono::steady_clock::now();
    try {
      wave::save_checkpoint(path_, pending_);
    } catch (...) {
      error_ = std::current_exception();
    }
    write_s_ += since(a);
  });
}

}  // namespace fdstencil::cli
