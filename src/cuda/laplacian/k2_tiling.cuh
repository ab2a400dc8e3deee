// Kernel 2 (Laplacian part 2, loop tiling): each thread computes M outputs along y and reuses the
// centre value it loaded as the y+1 neighbour of the output before it and the y-1 neighbour of
// the output after it. Loads keep kernel 1's per-point order (x-line, then z-1 and z+1 for every
// tile row), so the thread's addresses jump back and forth by a whole slice.
#pragma once

#include "cuda/laplacian/common.cuh"

namespace fdstencil::cuda::laplacian {

template <class T, int M>
__global__ void k2_tiling(Args<T> a) {
  const int i = threadIdx.x + blockIdx.x * blockDim.x;
  const int j = M * (threadIdx.y + blockIdx.y * blockDim.y);
  const int k = threadIdx.z + blockIdx.z * blockDim.z;
  if (i == 0 || i >= a.nx - 1 || k == 0 || k >= a.nz - 1 || j >= a.ny) return;
  const int64_t pos = i + a.line * j + a.slice * k;
  const T* u = a.u;
  T lu[M] = {};
#pragma unroll
  for (int n = 0; n < M; ++n) {
    const int64_t p = pos + n * a.line;
    const T centre = u[p];
    lu[n] +=
        centre * a.invhxyz2 + (u[p - 1] + u[p + 1]) * a.invhx2 + (u[p - a.slice] + u[p + a.slice]) * a.invhz2;
    if (n > 0) lu[n - 1] += centre * a.invhy2;
    if (n < M - 1) lu[n + 1] += centre * a.invhy2;
  }
  lu[0] += j > 0 ? u[pos - a.line] * a.invhy2 : T(0);
  lu[M - 1] += j < a.ny - M ? u[pos + M * a.line] * a.invhy2 : T(0);
#pragma unroll
  for (int n = 0; n < M; ++n)
    if (n + j > 0 && n + j < a.ny - 1) a.f[pos + n * a.line] = lu[n];
}

}  // namespace fdstencil::cuda::laplacian
