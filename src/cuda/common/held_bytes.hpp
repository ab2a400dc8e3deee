// The device memory this process holds in fdstencil's own owning objects (DeviceArray, DeviceField),
// over every GPU: what cuda::device_bytes_held() reports. A count of our own allocations rather than
// cudaMemGetInfo's free memory, which other processes on the same GPU move (the tests run in
// parallel), so that "a stopped solver gave its memory back" is a check of this process alone.
#pragma once

#include <cstdint>

namespace fdstencil::cuda {

// Adds `bytes` (negative on a free) to the count; called right after a successful cudaMalloc and
// right before its cudaFree.
void note_held_bytes(int64_t bytes) noexcept;

}  // namespace fdstencil::cuda
