// A kernel's resource report, read at run time: registers, local memory (spills and stack
// arrays), shared memory and the occupancy at one block size. Merged into benchmark records.
#pragma once

#include <cstddef>

#include <nlohmann/json.hpp>

namespace fdstencil::cuda {

nlohmann::json kernel_resources(const void* kernel, int block_threads, size_t dynamic_smem);

}  // namespace fdstencil::cuda
