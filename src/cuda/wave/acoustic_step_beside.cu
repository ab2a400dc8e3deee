// The one-kernel 2D step's instances (acoustic_step_beside.cuh), in a file of their own so that
// they compile beside acoustic.cu.
#include "cuda/wave/acoustic_step_beside.cuh"

#include "cuda/wave/for_radius.hpp"

namespace fdstencil::cuda::wave {

const void* beside_kernel(int radius, int vec) {
  return for_radius(radius, [vec]<int R>() {
    if constexpr (rows_lead(R))
      return vec == 2 ? reinterpret_cast<const void*>(acoustic_step_beside_rows<R, 2>)
                      : reinterpret_cast<const void*>(acoustic_step_beside_rows<R, 4>);
    else
      return vec == 2 ? reinterpret_cast<const void*>(acoustic_step_beside<R, 2>)
                      : reinterpret_cast<const void*>(acoustic_step_beside<R, 4>);
  });
}

}  // namespace fdstencil::cuda::wave
