// The resident launch of a 2D run (acoustic_resident.cuh): a block of steps in one cooperative
// kernel, the fields in shared memory, one band of rows a block. AcousticGpu owns one where
// KernelConfig::resident is set and runs its blocks of steps through it (steps()); single steps
// (step()) take the one-step kernels, whose bits it gives.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include <cuda_runtime.h>

#include "cuda/wave/acoustic.hpp"
#include "cuda/wave/device_array.hpp"
#include "physics/acoustic.hpp"

namespace fdstencil::cuda::wave {

struct ResidentArgs;    // acoustic_resident.cuh
struct ResidentLevels;  // acoustic_resident.cuh
struct StepArgs;        // acoustic_step.cuh

// Steps a launch holds at most where there are receivers: their samples, one float a tap and step,
// wait in a buffer of this many steps for the record kernel.
inline constexpr int kSampleSteps = 256;

// Refuses a resident launch the model or the device cannot take (2D only, a whole model, a band's
// buffers within one block's shared memory), naming the parameter and the limit.
void check_resident(const acoustic::Setup<float>& s, const KernelConfig& c);
// The device bytes of a resident launch beyond the state's (state_bytes): the bands' taps, the
// receivers' samples of kSampleSteps steps, the edges and flags.
int64_t resident_bytes(const acoustic::Setup<float>& s, const KernelConfig& c);

class ResidentLaunch {
 public:
  // Sorts the sources' taps by band and the receivers by the band that samples them; `traces` is
  // the state's (nrec x nt).
  ResidentLaunch(const acoustic::Setup<float>& s, const KernelConfig& c, float* traces);
  ~ResidentLaunch();
  ResidentLaunch(const ResidentLaunch&) = delete;
  ResidentLaunch& operator=(const ResidentLaunch&) = delete;
  // Steps n0 .. n0 + count - 1 on `stream`, reading u^n0 from `u` and u^{n0-1} from `prev`
  // (storage layout) and writing u^{n0+count} into `prev` when count is odd, else into `u` (the
  // other takes u^{n0+count-1}), as `count` single steps would leave them. `a` is the one-step
  // kernel's arguments: the medium, weights, CPML and wavelets are taken from it.
  void launch(const StepArgs& a, float* u, float* prev, int64_t n0, int64_t count, cudaStream_t stream);
  int64_t bytes() const;
  // Bands, rows, halo, shared memory, registers.
  std::string describe() const;

 private:
  std::unique_ptr<ResidentArgs> args_;
  int64_t origin_ = 0;
  int bands_ = 0;
  size_t smem_ = 0;
  bool m_shared_ = false;
  const void* kernel_ = nullptr;
  int nrec_ = 0;
  int64_t nt_ = 0;
  float* traces_ = nullptr;
  DeviceArray<int> band_first_, tap_start_, sample_first_, sample_off_, sample_tap_, rec_start_;
  DeviceArray<int64_t> tap_key_;
  DeviceArray<acoustic::Tap> taps_;
  DeviceArray<float> samples_, rec_weight_, edges_;
  DeviceArray<unsigned> flags_;
};

}  // namespace fdstencil::cuda::wave
