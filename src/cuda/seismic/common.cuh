// What the seismic kernels share: the argument block. Pointers are at interior point (0, 0, 0);
// the halo of width R lies at negative offsets and beyond n along each axis.
#pragma once

#include <cstdint>

#include "fdstencil/stencil.hpp"

namespace fdstencil::cuda::seismic {

template <class T>
struct Args {
  T* f;
  const T* u;
  int nx, ny, nz;  // interior
  int64_t line, slice;
  // Second-derivative weights scaled by 1/h^2, tap r at offset r - R; zero on an axis the operator
  // does not differentiate. Passed by value: kernel parameters live in the constant bank.
  T wx[kMaxTaps], wy[kMaxTaps], wz[kMaxTaps];
};

}  // namespace fdstencil::cuda::seismic
