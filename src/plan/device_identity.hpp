// The identity of the current GPU as the tuning cache keys it: name, compute capability, CUDA
// driver and runtime versions. A tuned choice is trusted only on the same identity.
#pragma once

#include "fdstencil/tuning_cache.hpp"

namespace fdstencil {

// The key of (op, radius, dtype, interior) on the current device. Throws Error(unsupported)
// without the CUDA backend or a GPU.
TuningKey current_key(Op op, int radius, DType dtype, Extents interior);

// The current device's name (cudaDeviceProp::name); throws as current_key.
std::string current_device_name();

}  // namespace fdstencil
