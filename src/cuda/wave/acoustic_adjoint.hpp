// The adjoint of the acoustic step on the GPU (issue 37): cpu/acoustic_adjoint.hpp's transpose,
// whose derivation that header gives, in float, as the wave layer sees it (plain C++, no CUDA
// types). The state is W = m ubar: with l = m a = W^{n+1}, the cpu's ubar^n = Q + 2a + S^T l + ...
// times m reads
//   W^n = 2 W^{n+1} - W^{n+2} + m (S2^T W^{n+1} + the layers' terms + the mirror's),
// the forward step's shape over one array, so each backward step is
// - acoustic_adjoint_sources, for the wavelets' adjoint only: ubar^{n+1} = W^{n+1} / m at the
//   sources' taps (the surface plane's value before its zero);
// - acoustic_adjoint_layers, over the layers' points only: their memory variables' adjoints and
//   g2 - l, g1 per axis (from l = W^{n+1});
// - acoustic_adjoint_march, over every point: W^n in place of W^{n+2}, the layers' terms read only
//   where a stencil reaches a layer, the gradient's and RTM's sums, the free surface's zero;
// then the receivers' residual, m times it, is added at their taps, point by point in a fixed order.
// The gradient sum_n ubar^{n+1} du^{n+1}/dm with du^{n+1} = u^{n+1} - 2 u^n + u^{n-1} (u^{n+1}
// alone on a free surface, where the adjoint's ubar^{n+1}, ubar^{n+2} are zeroed) is summed by parts
// in time: sum_n u^n (ubar^n - 2 ubar^{n+1} + ubar^{n+2}) / m, the same sum (u^0 = 0 and ubar^nt =
// ubar^{nt+1} = 0 end it), each step reading u^n alone where the direct form reads three fields.
// The forward fields it reads are compact arrays (nx ny nz, x fastest): the backward pass's store.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "core/unwritten_allocator.hpp"
#include "physics/acoustic.hpp"

namespace fdstencil::cuda::wave {

// A sum over the computational points downloaded to the host: its every element is written by the
// copy, so its pages are not zeroed first.
using HostSums = std::vector<float, UnwrittenAllocator<float>>;

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

  // Backward over forward step n (nt - 1 down to 0), enqueued: cur is u^n as a compact device array
  // (read for `gradient` and `correlate`: null without them).
  void step(int64_t n, const float* cur);

  // The accumulated sums over the computational points (compact), downloaded after the steps.
  HostSums gradient();
  HostSums cross();
  HostSums illumination();
  std::vector<float> wavelets();  // (nsrc, nt)

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// Whether the backward march may take its points in pairs where their loads are aligned (the
// default; one point a thread elsewhere). The two give the same bits: false, a process-wide
// switch, is for the test that checks it.
void allow_adjoint_pairs(bool allowed);

// The computational points of `field` (the storage layout, alloc elements) into `out` (compact),
// enqueued on `stream`.
void compact(const acoustic::SetupFrame<float>& s, const float* field, float* out, void* stream);

}  // namespace fdstencil::cuda::wave
