// The CUDA backend's variants: every kernel family, as registry entries (src/plan/registry.cpp
// joins them with the host backends'). Nothing here knows how it is chosen, verified or timed.
#pragma once

#include <vector>

#include "core/variant.hpp"

namespace fdstencil::cuda {

std::vector<Variant> variants();

}  // namespace fdstencil::cuda
