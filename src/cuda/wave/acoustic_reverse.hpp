// Boundary saving on the GPU (physics/reversal.hpp): the reversal box's ring taken from the forward
// state's fields at every step, and the box's field stepped back on compact arrays (nx ny nz, x
// fastest: the adjoint's layout, acoustic_adjoint.hpp). Plain C++, no CUDA types; the work is
// enqueued on the stream given.
#pragma once

#include <cstdint>
#include <memory>

#include "physics/acoustic.hpp"
#include "physics/reversal.hpp"

namespace fdstencil::cuda::wave {

class ReversalGpu {
 public:
  // Uploads the ring's indices and the sources' taps in the box (on the legacy stream, waited
  // for). m: the forward state's (AcousticGpu::medium_device, the storage layout), read by the
  // step back while this lives. Refuses (invalid_argument) a grid whose planes or lines exceed
  // the launches' grid dimensions.
  ReversalGpu(const acoustic::Setup<float>& s, const acoustic::ReversalBox& box, const float* m);
  ~ReversalGpu();
  ReversalGpu(const ReversalGpu&) = delete;
  ReversalGpu& operator=(const ReversalGpu&) = delete;

  // The device bytes its own arrays take (the ring's indices, the taps: for the memory check).
  static int64_t bytes(const acoustic::SetupFrame<float>& s, const acoustic::ReversalBox& box);
  int64_t ring() const;  // the ring's points: the floats one step keeps

  // The ring of `field` (the forward state's storage layout) into `to`.
  void keep(const float* field, float* to, void* stream) const;
  // Zero at the points of compact `field` beyond the ring.
  void forget_beyond_ring(float* field, void* stream) const;
  // Step n undone: compact `out` holds u^{n+1} and gets u^{n-1} in the box (u: u^n) and the ring's
  // `kept` values (u^{n-1}'s, as keep() took them); beyond the ring it is left as it is.
  void step_back(const float* u, float* out, const float* kept, int64_t n, void* stream) const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace fdstencil::cuda::wave
