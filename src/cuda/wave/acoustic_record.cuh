// acoustic_record: the receivers' samples of u^n at step n, one warp per
// receiver. Each lane sums its share of the receiver's taps in a fixed order
// and the warp adds the lanes' sums in a fixed tree, so a trace is the same
// bits on every run: the bit-identical resume of a checkpoint needs that, and
// the atomicAdd the step kernel once did from its blocks could not give it (the
// blocks' order, and with it the rounding, changed from run to run).
#pragma once

#include <cstdint>

namespace fdstencil::cuda::wave {

inline constexpr int kRecordThreads = 128;  // four receivers per block: any multiple of 32 serves

struct RecordArgs {
  const float* u;         // u^n at computational point (0, 0, 0)
  const int* start;       // receiver r's taps are [start[r], start[r + 1])
  const int64_t* offset;  // each tap's element offset from computational point (0, 0, 0)
  const float* weight;    // each tap's weight
  float* traces;          // nrec x nt
  int nrec;
  int64_t nt;
  const int64_t* step_base;  // as StepArgs::step_base: a graph's steps are relative to it
};

// Receiver r's sample, by the 32 lanes of one warp (each passing its lane).
__device__ __forceinline__ void record_receiver(const RecordArgs& a, int r, int lane, int64_t n) {
  float sum = 0.f;
  for (int t = a.start[r] + lane; t < a.start[r + 1]; t += 32) sum += a.weight[t] * a.u[a.offset[t]];
#pragma unroll
  for (int w = 16; w > 0; w /= 2) sum += __shfl_down_sync(0xFFFFFFFFu, sum, w);
  if (lane == 0) a.traces[int64_t(r) * a.nt + (a.step_base ? n + *a.step_base : n)] = sum;
}

}  // namespace fdstencil::cuda::wave
