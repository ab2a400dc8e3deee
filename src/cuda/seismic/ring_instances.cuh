// Which instances of xyz_ring exist, shared by the translation units of those with the register
// floor (variants_ring.cu) and those without (variants_ring_unbounded.cu): one file per set, so
// nvcc builds the two in parallel.
#pragma once

#include "cuda/seismic/launch.hpp"
#include "cuda/seismic/xyz_ring.cuh"

namespace fdstencil::cuda::seismic {

// The z queue's registers per thread, (2R + 1) x V x MY values, at most this many 32-bit
// registers: with the x window, the MY accumulators and the addresses, about what the 128 of the
// fewest blocks ring_min_blocks asks for leave (float4 x 2 lines fits up to R = 4, float2 x 2
// lines and float4 x 1 line up to R = 8). Instances beyond it are neither compiled nor offered.
inline constexpr int kRingQueueRegisters = 72;

constexpr bool queue_fits(int radius, int vec, int my, int elem_bytes) {
  return (2 * radius + 1) * vec * my * elem_bytes / 4 <= kRingQueueRegisters;
}

// The instance of radius `radius`, `vec` elements per vector and `my` lines per thread, with or
// without the register floor; nullptr where none is compiled.
template <class T, bool XY, bool Floor>
const void* ring_instance(int radius, int vec, int my) {
  return pick_radius(radius, [vec, my](auto r) -> const void* {
    constexpr int R = decltype(r)::value;
    constexpr int G = kVec16<T>;
    constexpr int E = int(sizeof(T));
    if (vec == G && my == 1) return reinterpret_cast<const void*>(xyz_ring<T, R, G, 1, XY, Floor>);
    if constexpr (G > 1) {
      if (vec == G / 2 && my == 1) return reinterpret_cast<const void*>(xyz_ring<T, R, G / 2, 1, XY, Floor>);
    }
    if constexpr (XY && queue_fits(R, G, 2, E)) {
      if (vec == G && my == 2) return reinterpret_cast<const void*>(xyz_ring<T, R, G, 2, XY, Floor>);
    }
    if constexpr (XY && G > 1 && queue_fits(R, G / 2, 2, E)) {
      if (vec == G / 2 && my == 2) return reinterpret_cast<const void*>(xyz_ring<T, R, G / 2, 2, XY, Floor>);
    }
    return nullptr;
  });
}

// The instances without the register floor (variants_ring_unbounded.cu).
template <class T, bool XY>
const void* ring_unbounded_instance(int radius, int vec, int my);

}  // namespace fdstencil::cuda::seismic
