// Every CUDA call checked: the call's text, file and line in the message.
#pragma once

#include <cuda_runtime.h>

#include <string>

#include "fdstencil/error.hpp"

namespace fdstencil::cuda {

[[noreturn]] void throw_cuda_error(cudaError_t err, const char* call, const char* file, int line);

inline void check(cudaError_t err, const char* call, const char* file, int line) {
  if (err != cudaSuccess) throw_cuda_error(err, call, file, line);
}

}  // namespace fdstencil::cuda

#define FDS_CUDA_CHECK(call) ::fdstencil::cuda::check((call), #call, __FILE__, __LINE__)
// After every launch: configuration errors surface here, not at the next unrelated call.
#define FDS_CUDA_CHECK_LAUNCH() \
  ::fdstencil::cuda::check(cudaGetLastError(), "kernel launch", __FILE__, __LINE__)
