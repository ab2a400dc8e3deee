// acoustic_step_beside: a whole 2D step in one kernel, its layers' points beside the march
// (KernelConfig::cpml_beside) in blocks of the same launch instead of a kernel on a second stream.
//
// Beside the march, each step forked a second stream for the layers' kernel (and the receivers'),
// and joined it before the next step; the next step's kernels then waited on two grids, and a
// programmatic dependent launch (cuda/common/dependent_launch.cuh) gained nothing there, while it
// gained on a run without layers, whose step is one kernel (docs/wave.md). Here the launch's first
// `side_chunks` chunks along z do the side's work, each thread a stride of the layers' points
// (whole_step_at, layer_step.cuh: the layers' kernel's arithmetic) and each warp a stride of the
// receivers (record_receiver); the chunks after them march, each block as the 2D interior kernel
// does (acoustic_step<R, V, false, true>, or acoustic_step_rows where rows_lead). The side's
// blocks come first in the launch, so that the multiprocessors start them before the march and
// the layers' longer points do not trail the step. The two parts write disjoint points and
// neither reads what the other writes (as on two streams), so the field and the traces are the
// CPML beside's on two streams, to the bit.
#pragma once

#include <cstdint>

#include "cuda/common/dependent_launch.cuh"
#include "cuda/wave/acoustic_record.cuh"
#include "cuda/wave/layer_step.cuh"

namespace fdstencil::cuda::wave {

struct BesideArgs {
  LayerBoxes layers;
  LayerTaps taps;
  RecordArgs record;
  int side_chunks;  // the launch's first chunks along z: the layers' points and the receivers
};

// The side's share of the step: thread t of the side's `threads`.
template <int R>
__device__ __forceinline__ void beside_work(const StepArgs& a, const BesideArgs& b, int64_t t,
                                            int64_t threads, int64_t n) {
  const int64_t points = b.layers.first[b.layers.count];
  for (int64_t g = t; g < points; g += threads) {
    int at[3];
    layer_point(b.layers, g, at);
    whole_step_at<R, false>(a, b.taps, n, at);
  }
  // Whole warps: the side's threads are a multiple of 32 (the launch's rows are), so a warp's lanes
  // take the same receivers and the shuffles stay full.
  const int64_t warps = threads / 32;
  for (int64_t r = t / 32; r < b.record.nrec; r += warps) record_receiver(b.record, int(r), int(t % 32), n);
}

// The step: the side's chunks, then the march's (a.chunk_first places the march's first chunk at
// blockIdx.z = b.side_chunks); Rows: march_rows instead of march_l1 (acoustic_step.cuh rows_lead).
template <int R, int V, bool Rows>
__device__ __forceinline__ void step_beside(const StepArgs& a, const BesideArgs& b, int64_t n) {
  join_dependent_chain();
  if (int(blockIdx.z) < b.side_chunks) {
    const int64_t threads = int64_t(b.side_chunks) * gridDim.x * blockDim.x;
    beside_work<R>(a, b, (int64_t(blockIdx.z) * gridDim.x + blockIdx.x) * blockDim.x + threadIdx.x, threads,
                   n);
    return;
  }
  const int i0 = V * int(threadIdx.x + block_x(a) * blockDim.x);
  const int k0 = block_chunk(a) * a.nw;
  const int k1 = min(k0 + a.nw, a.nz);
  const int2 t = block_taps(a);
  if (i0 >= a.nx) return;
  if constexpr (Rows)
    march_rows<R, V>(a, i0, k0, k1, t.x, t.y, n);
  else
    march_l1<R, V, false, false, false, false>(a, i0, 0, k0, k1, t.x, t.y, n);
}

template <int R, int V>
__global__ void __launch_bounds__(kStepThreads) acoustic_step_beside(StepArgs a, BesideArgs b, int64_t n) {
  step_beside<R, V, false>(a, b, n);
}

// Where rows_lead: march_rows, its registers held as acoustic_step_rows' are.
template <int R, int V>
__global__ void __launch_bounds__(kStepThreads, kRowsMinBlocks)
    acoustic_step_beside_rows(StepArgs a, BesideArgs b, int64_t n) {
  step_beside<R, V, true>(a, b, n);
}

// The kernel for this radius and vector width (2, else 4: step_kernels' two widths): where
// rows_lead, acoustic_step_beside_rows.
const void* beside_kernel(int radius, int vec);

}  // namespace fdstencil::cuda::wave
