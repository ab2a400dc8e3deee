// Kernel 1 (Laplacian part 1): one output point per thread, early exit on the boundary. Every
// neighbour is a separate global load; reuse between threads is left to the caches.
#pragma once

#include "cuda/laplacian/common.cuh"

namespace fdstencil::cuda::laplacian {

template <class T>
__global__ void k1_baseline(Args<T> a) {
  const int i = threadIdx.x + blockIdx.x * blockDim.x;
  const int j = threadIdx.y + blockIdx.y * blockDim.y;
  const int k = threadIdx.z + blockIdx.z * blockDim.z;
  if (i == 0 || i >= a.nx - 1 || j == 0 || j >= a.ny - 1 || k == 0 || k >= a.nz - 1) return;
  const int64_t pos = i + a.line * j + a.slice * k;
  const T* u = a.u;
  a.f[pos] = u[pos] * a.invhxyz2 + (u[pos - 1] + u[pos + 1]) * a.invhx2 +
             (u[pos - a.line] + u[pos + a.line]) * a.invhy2 +
             (u[pos - a.slice] + u[pos + a.slice]) * a.invhz2;
}

}  // namespace fdstencil::cuda::laplacian
