// Where each backend's variants come from; all_variants() (registry.cpp) joins them.
#pragma once

#include <vector>

#include "bench/variant.hpp"

namespace fdstencil::bench {

std::vector<Variant> host_variants();  // host_variants.cpp
#ifdef FDSTENCIL_HAVE_CUDA
std::vector<Variant> cuda_variants();  // src/cuda/registry.cu
#endif

}  // namespace fdstencil::bench
