// Born modelling on the GPU: acoustic_born.hpp. The two runs keep their own streams; two events a
// step order them: the source term waits for both runs' step n, and the background's step n + 1
// (which writes its u^{n+2} over the u^n the term read) waits for the term.
#include "cuda/wave/acoustic_born.hpp"

#include <cuda_runtime.h>

#include "core/stop.hpp"
#include "cuda/common/check.hpp"
#include "fdstencil/device.hpp"
#include "cuda/wave/acoustic.hpp"
#include "cuda/wave/acoustic_backward.hpp"
#include "cuda/wave/device_array.hpp"
#include "cuda/wave/drain.hpp"

namespace fdstencil::cuda::wave {

namespace {

constexpr int kThreads = 128;  // x points a block: any multiple of 32 serves

struct BornArgs {
  int nx;
  int64_t line, slice, origin;
  bool free_surface;
  const float *dm, *m, *next, *cur, *prev;  // storage layout
};

// The scattered field's u^{n+1} += dm du^{n+1}/dm, in wave/imaging.cpp's (cpu) order of operations.
__global__ void __launch_bounds__(kThreads) born_source(BornArgs a, float* scattered) {
  const int i = int(blockIdx.x * blockDim.x + threadIdx.x);
  if (i >= a.nx) return;
  const int64_t p = a.origin + i + blockIdx.y * a.line + blockIdx.z * a.slice;
  const bool surface = a.free_surface && blockIdx.z == 0;
  const float du = surface ? a.next[p] : a.next[p] - 2.f * a.cur[p] + a.prev[p];
  scattered[p] += a.dm[p] * (du / a.m[p]);
}

// An event, destroyed on leaving.
struct Event {
  cudaEvent_t e = nullptr;
  Event() { FDS_CUDA_CHECK(cudaEventCreateWithFlags(&e, cudaEventDisableTiming)); }
  ~Event() { cudaEventDestroy(e); }
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;
};

// `waiter` goes on once `done`'s work so far is.
void follow(cudaStream_t waiter, cudaStream_t done, const Event& e) {
  FDS_CUDA_CHECK(cudaEventRecord(e.e, done));
  FDS_CUDA_CHECK(cudaStreamWaitEvent(waiter, e.e, 0));
}

}  // namespace

std::vector<float> born(const acoustic::Setup<float>& s, const std::vector<float>& dm) {
  const KernelConfig c = linearised_launch(s);
  AcousticGpu background(s, c);
  acoustic::Setup<float> quiet(s);
  quiet.sources.clear();
  AcousticGpu scattered(quiet, c);
  ensure_device_memory(3 * s.alloc * int64_t(sizeof(float)), "Born's source term (dm, m and u^{n-1})");
  const DeviceArray<float> dm_d(dm.data(), s.alloc), m_d(s.m.data(), s.alloc);
  DeviceArray<float> before = DeviceArray<float>::uninitialised(s.alloc);  // the background's u^{n-1}
  FDS_CUDA_CHECK(cudaStreamSynchronize(cudaStreamLegacy));  // the uploads, before either stream reads them
  const auto bs = static_cast<cudaStream_t>(background.stream()),
             ss = static_cast<cudaStream_t>(scattered.stream());
  BornArgs a{int(s.nx), s.line, s.slice, s.origin, s.free_surface, dm_d.p, m_d.p, nullptr, nullptr, before.p};
  const dim3 grid(unsigned((s.nx + kThreads - 1) / kThreads), unsigned(s.ny), unsigned(s.nz));
  const Event stepped, added;
  const Drain drain{bs, ss};
  for (int64_t n = 0; n < s.nt; ++n) {
    core::poll_stop();
    FDS_CUDA_CHECK(cudaMemcpyAsync(before.p, background.previous_device(), size_t(s.alloc) * sizeof(float),
                                   cudaMemcpyDeviceToDevice, bs));
    background.step(n);
    scattered.step(n);
    follow(ss, bs, stepped);
    a.next = background.current_device();
    a.cur = background.previous_device();
    born_source<<<grid, kThreads, 0, ss>>>(a, scattered.current_device());
    FDS_CUDA_CHECK(cudaGetLastError());
    follow(bs, ss, added);
  }
  return scattered.traces();
}

}  // namespace fdstencil::cuda::wave
