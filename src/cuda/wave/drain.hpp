// Streams drained on leaving a scope, before the arrays their kernels read are freed: an error or
// a stop (core/stop.hpp) in a loop of enqueued steps unwinds through it. cudaFree waits for the
// whole device today; a pool allocator or cudaFreeAsync would not. Errors are ignored here, as in
// a destructor. Declared after the arrays it protects, so that it runs before they are freed.
#pragma once

#include <cuda_runtime.h>

namespace fdstencil::cuda::wave {

struct Drain {
  cudaStream_t a, b;  // b: nullptr for none (not the legacy stream's 0)
  explicit Drain(cudaStream_t first, cudaStream_t second = nullptr) : a(first), b(second) {}
  Drain(const Drain&) = delete;
  Drain& operator=(const Drain&) = delete;
  ~Drain() {
    cudaStreamSynchronize(a);
    if (b) cudaStreamSynchronize(b);
  }
};

}  // namespace fdstencil::cuda::wave
