// The Laplacian series (kernels 1-7 of the posts, and ours, k8) as registry entries.
#pragma once

#include <vector>

#include "bench/variant.hpp"

namespace fdstencil::cuda {

std::vector<bench::Variant> laplacian_variants();

}  // namespace fdstencil::cuda
