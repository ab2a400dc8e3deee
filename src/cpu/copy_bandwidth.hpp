// The host's copy bandwidth, STREAM's copy: the bound a cpu step is judged against, measured in
// the same run as the step (as the GPU's device-to-device copy is for the GPU's).
#pragma once

#include <cstdint>

namespace fdstencil::cpu {

// Bytes read and written per second, GB/s, by the OpenMP threads copying `bytes` of floats from
// one array to another, each thread its own static share (placed by that thread first: on a
// machine of several memory nodes, each share on its thread's node, as the step's arrays are):
// the median of `reps` timed copies after one untimed. 0 where the buffers cannot be allocated.
double measure_copy_bandwidth(int64_t bytes, int reps);

}  // namespace fdstencil::cpu
