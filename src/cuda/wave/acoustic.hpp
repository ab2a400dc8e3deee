// The acoustic step on the GPU, as the wave layer sees it: plain C++, no CUDA types. One kernel
// per time step (acoustic_step.cuh) does the stencil, the leapfrog update, the CPML and the source
// injection; a small one before it (acoustic_record.cuh) samples the receivers. Nothing else
// sweeps the volume.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/acoustic.hpp"

namespace fdstencil::cuda::wave {

// The step kernel's launch shape: a block of bx x by threads, each owning `vec` consecutive x
// points of one line and marching `nw` planes along z.
struct KernelConfig {
  int bx = 32, by = 4, vec = 4, nw = 16;
};
// The defaults for a radius (the table in acoustic.cu cites the runs that chose them).
KernelConfig default_config(int dim, int radius);
// {"block": "BXxBY", "vec": 2|4, "nw": N}, missing keys from the defaults; throws
// Error(invalid_argument) naming a bad key or value.
KernelConfig parse_config(const std::string& json, int dim, int radius);
std::string describe(const KernelConfig& c);

// The device bytes a run's state takes: three fields, the CPML memory, the taps, the traces.
int64_t state_bytes(const acoustic::Setup<float>& s);

class AcousticGpu {
 public:
  // Allocates and uploads on the current device; throws Error(out_of_memory) first when the state
  // does not fit.
  AcousticGpu(const acoustic::Setup<float>& s, const KernelConfig& c);
  ~AcousticGpu();
  AcousticGpu(const AcousticGpu&) = delete;
  AcousticGpu& operator=(const AcousticGpu&) = delete;
  // Records the receivers' u^n and enqueues step n, on the run's own stream.
  void step(int64_t n);
  void synchronize();
  // u^n after n steps, the whole storage (s.alloc elements) into `host`.
  void download_current(float* host);
  std::vector<float> traces();  // (nrec, nt)
  // The state's arrays (core/acoustic.hpp kStateArrays) one by one, copied out synchronously, and
  // back: restore() takes arrays of those sizes and throws Error(invalid_argument) for another.
  int64_t state_array_bytes(int i) const;
  void copy_state_array(int i, void* host);
  void restore(const acoustic::State<float>& st);
  int64_t bytes() const;
  // The kernel, its launch shape and its resources (registers, spills, occupancy).
  std::string describe() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace fdstencil::cuda::wave
