// The temporal-blocking launch of a 2D run (acoustic_temporal.cuh): T steps a pass, its taps
// sorted into strips and rows, the receivers' samples, and the kernels for the radius and T.
// AcousticGpu owns one where KernelConfig::temporal is set, with the second pair of time levels
// and CPML memory the outputs go to.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include <cuda_runtime.h>

#include "cuda/wave/acoustic.hpp"
#include "cuda/wave/device_array.hpp"
#include "physics/acoustic.hpp"

namespace fdstencil::cuda::wave {

struct TemporalArgs;  // acoustic_temporal.cuh

// Where one pass reads and writes: u^n, u^{n-1} and the CPML memory at step n in; u^{n+T},
// u^{n+T-1} and the memory at step n + T out; each field at its computational point (0, 0).
struct TemporalLevels {
  const float* u;
  const float* prev;
  float* u_out;
  float* prev_out;
  const float* pml_in[3][3];
  float* pml_out[3][3];
};

// The receivers as acoustic_record takes them: taps by receiver, their weights, the traces.
struct TemporalReceivers {
  const int* start;
  const float* weight;
  float* traces;
};

// Refuses a temporal launch the kernel cannot take (2D only, T 2..4, whole warps of at most
// kTemporalThreads threads that own at least one warp's columns beside 2 T R of halo, shared
// memory), naming the parameter.
void check_temporal(const acoustic::Setup<float>& s, const KernelConfig& c);
// The device bytes of a temporal launch beyond the state's (state_bytes): the second pair of
// time levels and CPML memory, the taps by strip and row, the samples.
int64_t temporal_bytes(const acoustic::Setup<float>& s, const KernelConfig& c);

class TemporalLaunch {
 public:
  // Uploads the taps by strip and row; `m`, `coef` and `wavelets` are the state's, on the device.
  TemporalLaunch(const acoustic::Setup<float>& s, const KernelConfig& c, const float* m,
                 const acoustic::PmlCoef<float>* const (&coef)[3], const float* wavelets,
                 TemporalReceivers rec);
  ~TemporalLaunch();
  TemporalLaunch(const TemporalLaunch&) = delete;
  TemporalLaunch& operator=(const TemporalLaunch&) = delete;
  // Steps n .. n + T - 1 on `stream`: the pass, then the receivers' traces of those steps.
  // step_base as StepArgs::step_base.
  void launch(const TemporalLevels& l, int64_t n, const int64_t* step_base, cudaStream_t stream);
  int steps() const { return T_; }
  int64_t bytes() const;
  // The kernels' registers, spills and occupancy, and the interior box.
  std::string describe() const;

 private:
  int T_, R_;
  int nrec_;
  int64_t nt_;
  std::unique_ptr<TemporalArgs> args_;
  TemporalReceivers rec_{};
  dim3 grid_, block_;
  const void* interior_ = nullptr;
  const void* boundary_ = nullptr;
  size_t smem_ = 0, boundary_smem_ = 0;
  DeviceArray<int> src_row_, rec_row_, rec_col_, rec_tap_;
  DeviceArray<acoustic::Tap> src_taps_;
  DeviceArray<float> samples_;
  // The boundary blocks run on `side_` beside the interior's on the run's stream (they write
  // points of their own and read the same inputs): alone, its few hundred blocks left most SMs
  // idle for as long as the interior kernel takes. `fork_` and `join_` order them.
  cudaStream_t side_ = nullptr;
  cudaEvent_t fork_ = nullptr, join_ = nullptr;
};

}  // namespace fdstencil::cuda::wave
