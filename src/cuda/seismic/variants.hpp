// The seismic stencil kernels (d2x, d2y, d2z, d2xy, d2xyz; R = 1..8) as registry entries.
#pragma once

#include <vector>

#include "bench/variant.hpp"

namespace fdstencil::cuda {

std::vector<bench::Variant> seismic_variants();

}  // namespace fdstencil::cuda
