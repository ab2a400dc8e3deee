// Timing device work the way every figure of this project is taken: warm-up launches first,
// then each timed repeat alone between two events, with the L2 flushed before it so no repeat
// finds its input cached by the previous one. The benchmark harness and the tuner both time here.
#pragma once

#include <functional>
#include <vector>

#include "fdstencil/stream.hpp"

namespace fdstencil::cuda {

// Evicts the current device's L2 by reading a buffer twice its size (allocated once per device).
// Reads, not writes: a dirty flush buffer would be written back during the timed kernel and
// charged to it.
void flush_l2();

// Per-repeat times in milliseconds of `work`, enqueued on the default stream: `warmup` untimed
// calls, then `reps` timed ones, each after an L2 flush. When `nvtx_range` is given, each timed
// call runs inside an NVTX push/pop range of that name, so a profiler can select exactly those
// launches (bench --profile).
std::vector<double> time_ms(const std::function<void(Stream)>& work, int warmup, int reps,
                            const char* nvtx_range = nullptr);

}  // namespace fdstencil::cuda
