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
  int nw;  // planes per block along z (the sliding-window kernels), else unused
  // The z window's launch order: false, blockIdx = (x tile, y tile, z chunk), so the chunks of
  // one column run far apart in time; true, blockIdx = (z chunk, x tile, y tile), so they run
  // together and the 2R seam planes they share are still in L2 (Laplacian k6's grid reordering).
  bool z_first;
  // The ring kernels (xyz_ring.cuh): planes whose copies are in flight ahead of the one being
  // consumed, 1..4; else unused.
  int ahead;
  // Second-derivative weights scaled by 1/h^2, tap r at offset r - R; zero on an axis the operator
  // does not differentiate. Passed by value: kernel parameters live in the constant bank.
  T wx[kMaxTaps], wy[kMaxTaps], wz[kMaxTaps];
};

// The block size bound of the kernels that march along z: their queue of 2R + 1 vectors takes up
// to ~128 registers per thread at R = 8, and an SM's 65536 registers hold 512 such threads.
// Declared in __launch_bounds__ so nvcc keeps to 128, and checked before launch.
inline constexpr int kMarchThreads = 512;

// Planes a z-march's queue front is loaded ahead of the plane being written, as measured (2).
// The intent was more loads in flight than one per thread (Little's law: ~3 TB/s at ~1 us of
// latency wants ~16 KB in flight per SM). It does not achieve that: the k loop is not unrolled,
// so the queue's shift is register moves at the loop's end, which wait for the load issued at
// the top of the same iteration (sm_90 PTX of z_window<float, 4, 4>). It hides one iteration of
// arithmetic, like 1 would, at V more registers; it measured no faster (docs/seismic.md). The fix
// is a march unrolled by the queue length with rotating slot indices, not yet written.
inline constexpr int kMarchPrefetch = 2;

// The x-halo width of a shared-memory tile: R rounded up to whole vectors of V, so every row of
// the tile, and its source in global memory, starts on a vector boundary.
template <int R, int V>
inline constexpr int kPad = (R + V - 1) / V* V;

}  // namespace fdstencil::cuda::seismic
