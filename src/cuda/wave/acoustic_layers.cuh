// acoustic_layers: the CPML's terms of a step, apart from the march (KernelConfig::cpml_apart).
// The march then runs every block as an interior one (no first derivatives, no memory variables,
// the registers of the plain step) and writes u^{n+1} = 2 u^n - u^{n-1} + m L u^n + sources; this
// kernel, after it on the same stream, visits only the layers' points and adds m times what the
// stretching adds to each axis's second derivative there (physics/acoustic.hpp cpml_added_term),
// advancing the memory variables as the march would. So the interior points pay nothing for the
// layers, and a layer point pays its own bytes: the memory variables, m, and u^{n+1} read again.
// Each axis's d2 and d1 are summed in the march's order (r = 0..2R); only where the added term
// joins the sum differs, so the field agrees with the march's to float round-off, not to the bit.
//
// Beside the march (KernelConfig::cpml_beside): the march writes only the points clear of every
// layer (StepArgs::keep), and acoustic_layers_whole computes the layers' points whole, in the same
// arithmetic as the march followed by acoustic_layers (the plain sum, the leapfrog, the surface's
// zero, the sources' taps, then m times the added terms), so the same bits. The two write disjoint
// points, and neither uses what the other writes (a march vector that straddles an x layer's edge
// loads u^{n-1} whole, and drops the layer's lanes unused), so they run side by side on two
// streams: a layer point pays u^{n-1}, m and u^{n+1} once, with its memory variables, and the
// layers' loads, which wait on latency, overlap the march's streaming.
#pragma once

#include <cstdint>

#include <cuda_runtime.h>

#include "cuda/wave/acoustic.hpp"
#include "cuda/wave/acoustic_step.cuh"
#include "physics/acoustic.hpp"

namespace fdstencil::cuda::wave {

// A pointwise kernel with no shared memory: any whole number of warps serves; eight let a handful
// of blocks share an SM.
inline constexpr int kLayerThreads = 256;

// Enqueues the layers' kernel for the step whose march `a` described (a.u: u^n, a.out: u^{n+1});
// `dependent`: a programmatic dependent launch (cuda/common/dependent_launch.cuh).
void launch_layers(const StepArgs& a, const LayerBoxes& b, int radius, bool y, cudaStream_t on,
                   bool dependent = false);

// The sources' taps at the layers' points, sorted by point (tap_key), for acoustic_layers_whole.
struct LayerTaps {
  const int64_t* key = nullptr;
  const acoustic::Tap* taps = nullptr;
  int count = 0;
};

// Enqueues the whole of step n at the layers' points (a.u: u^n, a.out: u^{n-1} in, u^{n+1} out).
void launch_layers_whole(const StepArgs& a, const LayerBoxes& b, const LayerTaps& t, int radius, bool y,
                         int64_t n, cudaStream_t on);

}  // namespace fdstencil::cuda::wave
