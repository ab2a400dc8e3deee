// The tile of M outputs along y with its loads in ascending address order (Laplacian part 2,
// "reordered loads"): the z-1 plane's lines, the y-1 line, the tile's x-lines (x-1, x, x+1, the
// centre reused for y-1 / y+1), the y+1 line, then the z+1 plane's lines. Kernels 3-7 all run
// this body; they differ in launch bounds, store kind and which (i, j, k) a block gets.
#pragma once

#include "cuda/laplacian/common.cuh"

namespace fdstencil::cuda::laplacian {

// Streaming stores (st.global.cs, evict-first) are Hopper's counterpart of the posts'
// __builtin_nontemporal_store: the output lines leave L1/L2 first, so the input planes that
// are reused up to six times stay cached.
template <bool kStreaming, class T>
__device__ __forceinline__ void store(T* p, T v) {
  if constexpr (kStreaming)
    __stcs(p, v);
  else
    *p = v;
}

template <class T, int M, bool kStreaming>
__device__ __forceinline__ void tile_reordered(const Args<T>& a, int i, int j, int k) {
  if (i == 0 || i >= a.nx - 1 || k == 0 || k >= a.nz - 1 || j >= a.ny) return;
  const int64_t pos = i + a.line * j + a.slice * k;
  const T* u = a.u;
  T lu[M] = {};
#pragma unroll
  for (int n = 0; n < M; ++n) lu[n] += u[pos - a.slice + n * a.line] * a.invhz2;
  lu[0] += j > 0 ? u[pos - a.line] * a.invhy2 : T(0);
#pragma unroll
  for (int n = 0; n < M; ++n) {
    lu[n] += u[pos - 1 + n * a.line] * a.invhx2;
    const T centre = u[pos + n * a.line];
    lu[n] += centre * a.invhxyz2;
    lu[n] += u[pos + 1 + n * a.line] * a.invhx2;
    if (n > 0) lu[n - 1] += centre * a.invhy2;
    if (n < M - 1) lu[n + 1] += centre * a.invhy2;
  }
  lu[M - 1] += j < a.ny - M ? u[pos + M * a.line] * a.invhy2 : T(0);
#pragma unroll
  for (int n = 0; n < M; ++n) lu[n] += u[pos + a.slice + n * a.line] * a.invhz2;
#pragma unroll
  for (int n = 0; n < M; ++n)
    if (n + j > 0 && n + j < a.ny - 1) store<kStreaming>(&a.f[pos + n * a.line], lu[n]);
}

}  // namespace fdstencil::cuda::laplacian
