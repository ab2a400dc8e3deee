// The seismic stencil kernels (d2x, d2y, d2z, d2xy, d2xyz; R = 1..8) as registry entries.
#pragma once

#include <vector>

#include "core/variant.hpp"

namespace fdstencil::cuda {

// Every seismic variant: the baselines, then the single-axis and the fused families.
std::vector<Variant> seismic_variants();

namespace seismic {
std::vector<Variant> axis_variants();   // variants_axis.cu
std::vector<Variant> fused_variants();  // variants_fused.cu
std::vector<Variant> ring_variants();   // variants_ring.cu
std::vector<Variant> tma_variants();    // variants_tma.cu
}  // namespace seismic

}  // namespace fdstencil::cuda
