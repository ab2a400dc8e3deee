// The adjoint of the acoustic step on the GPU (issue 37): cpu/acoustic_adjoint.hpp's transpose,
// whose derivation that header gives, in float, as the wave layer sees it (plain C++, no CUDA
// types). Each backward step is two sweeps over the computational points, as on the cpu:
// - acoustic_adjoint_derivatives, pointwise: the gradient's correlation, the surface's zero, l = m a
//   and, in each axis's layer, its memory variables' adjoints and the parts of g2 and g1 beyond l;
// - acoustic_adjoint_gather: ubar^n = Q + 2a + the transposed stencils, l's over every point and the
//   layers' parts only where a stencil reaches a layer, so the interior reads one array an axis;
// then the receivers' residual is added at their taps, point by point in a fixed order.
// The forward fields it reads are compact arrays (nx ny nz, x fastest): the backward pass's store.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "physics/acoustic.hpp"

namespace fdstencil::cuda::wave {

class AcousticAdjointGpu {
 public:
  // `setup` is the forward run's (its m, CPML coefficients and receivers' taps); the adjoint runs
  // on `stream` (a cudaStream_t: the forward state's, so that the two take turns in order).
  // residual: (nrec, nt), the traces' adjoint. `gradient`: accumulate sum over steps of
  // ubar^{n+1} du^{n+1}/dm; `correlate`: also sum of u^n ubar^n and of (u^n)^2 (RTM); `wavelets`:
  // the wavelets' adjoint, each source's taps' weights times ubar^{n+1} at step n.
  AcousticAdjointGpu(const acoustic::Setup<float>& setup, void* stream, const std::vector<float>& residual,
                     bool gradient, bool correlate, bool wavelets = false);
  ~AcousticAdjointGpu();
  AcousticAdjointGpu(const AcousticAdjointGpu&) = delete;
  AcousticAdjointGpu& operator=(const AcousticAdjointGpu&) = delete;

  // The device bytes the adjoint's state takes (throws nothing: for the memory check).
  static int64_t bytes(const acoustic::SetupFrame<float>& s, bool gradient, bool correlate,
                       bool wavelets = false);

  // Backward over forward step n (nt - 1 down to 0), enqueued: next, cur and prev are u^{n+1},
  // u^n and u^{n-1} as compact device arrays (read only for `gradient`: null without it).
  void step(int64_t n, const float* next, const float* cur, const float* prev);

  // The accumulated sums over the computational points (compact), downloaded after the steps.
  std::vector<float> gradient();
  std::vector<float> cross();
  std::vector<float> illumination();
  std::vector<float> wavelets();  // (nsrc, nt)

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// The computational points of `field` (the storage layout, alloc elements) into `out` (compact),
// enqueued on `stream`.
void compact(const acoustic::SetupFrame<float>& s, const float* field, float* out, void* stream);

}  // namespace fdstencil::cuda::wave
