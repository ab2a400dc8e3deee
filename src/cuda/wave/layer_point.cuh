// Which point of the layers' boxes (LayerBoxes, cuda/wave/acoustic.hpp) thread g of a launch over
// them takes: the forward's layers kernel (acoustic_layers.cu) and the adjoint's
// (acoustic_adjoint.cu) both walk the boxes this way.
#pragma once

#include <cstdint>

#include "cuda/wave/acoustic.hpp"

namespace fdstencil::cuda::wave {

// Point g's coordinates into `at` (x, y, z), x fastest within its box; false past the last box.
__device__ inline bool layer_point(const LayerBoxes& b, int64_t g, int (&at)[3]) {
  if (g >= b.first[b.count]) return false;
  int box = 0;
  while (g >= b.first[box + 1]) ++box;
  // Within a box in 32 bits (layer_boxes keeps each under 2^31 points): two divisions, not 64-bit ones.
  const unsigned t = unsigned(g - b.first[box]), ex = unsigned(b.extent[box][0]),
                 ey = unsigned(b.extent[box][1]);
  const unsigned row = t / ex;
  at[0] = b.lo[box][0] + int(t - row * ex);
  at[1] = b.lo[box][1] + int(row % ey);
  at[2] = b.lo[box][2] + int(row / ey);
  return true;
}

}  // namespace fdstencil::cuda::wave
