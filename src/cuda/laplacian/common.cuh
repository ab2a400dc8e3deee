// What the Laplacian kernels share: the argument block, in the posts' terms. The posts index a
// full grid of nx x ny x nz points whose outermost layer is the boundary; here that grid is the
// interior plus the radius-1 halo of the aligned layout, so `u` and `f` point at the grid's
// corner (halo point (-1, -1, -1)) and grid point (i, j, k) is at i + j * line + k * slice.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

namespace fdstencil::cuda::laplacian {

template <class T>
struct Args {
  T* f;            // output, at the grid corner
  const T* u;      // input, at the grid corner
  int nx, ny, nz;  // the full grid, boundary included (the posts' nx, ny, nz)
  int64_t line, slice;
  T invhx2, invhy2, invhz2, invhxyz2;  // 1/h^2 per axis and the centre weight -2 sum 1/h^2
};

// The tiled kernels 2-7 hold m outputs along y per thread. Template values only.
inline constexpr int kTileFactors[] = {1, 2, 4, 8, 16};
inline constexpr int kLaunchBounds[] = {128, 256, 512, 1024};

}  // namespace fdstencil::cuda::laplacian
