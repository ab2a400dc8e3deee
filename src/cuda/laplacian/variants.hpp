// The Laplacian series (kernels 1-7 of the posts, and ours: shfl_march, bulk_ring) as registry entries.
#pragma once

#include <vector>

#include "core/variant.hpp"

namespace fdstencil::cuda {

std::vector<Variant> laplacian_variants();

}  // namespace fdstencil::cuda
