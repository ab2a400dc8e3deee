// Checkpoints written beside the run: the solver hands a checkpoint over and steps on while a
// thread writes it (wave::save_checkpoint: a temporary, fsync, rename). A 512^3 run's 1.6 GB took
// 4 s to write on the H100 machine's disk, 2.5 times a thousand steps; written beside the run, a
// checkpoint costs the loop only its download. One write is in flight at a time, and the next
// checkpoint is copied into the buffers of the last one written: one checkpoint's host memory.
#pragma once

#include <exception>
#include <filesystem>
#include <thread>

#include "fdstencil/wave.hpp"

namespace fdstencil::cli {

class CheckpointWriter {
 public:
  explicit CheckpointWriter(std::filesystem::path path) : path_(std::move(path)) {}
  ~CheckpointWriter();  // waits for the write in flight; its error, if any, is lost: call finish()
  CheckpointWriter(const CheckpointWriter&) = delete;
  CheckpointWriter& operator=(const CheckpointWriter&) = delete;

  // Waits for the write in flight (rethrowing its error), then starts writing `c`.
  void submit(wave::Checkpoint c);
  // Waits for the write in flight; rethrows its error (Error(io) naming the file).
  void finish();
  // The last checkpoint written, for the next one's arrays (wave::Options::checkpoint_buffer):
  // waits for the write in flight; empty before the first.
  wave::Checkpoint spare();

  double write_seconds() const { return write_s_; }  // the writes' own time, beside the run

 private:
  std::filesystem::path path_;
  std::thread thread_;
  std::exception_ptr error_;
  wave::Checkpoint pending_;
  double write_s_ = 0;
};

}  // namespace fdstencil::cli
