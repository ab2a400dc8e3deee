// Kernel 8 (ours, not in the posts): march along z with a register queue. A block owns a tile of
// 32 * W x TY interior points of the xy-plane (W = 16 bytes / sizeof(T): one float4 or double2
// per thread) and walks `nzc` consecutive planes. Each input value is loaded from global memory
// once per block (plus a one-point ring around the tile and two seam planes per z-chunk):
//   z-1, z, z+1  a register queue, the next plane prefetched two steps ahead
//   x-1, x+1     warp shuffles of the neighbouring lanes' vectors (lane 0 / 31 load one halo value)
//   y-1, y+1     the tile's plane staged in double-buffered shared memory, one barrier per plane
// Loads are 16-byte vectors, stores are 16-byte streaming stores. The working set does not grow
// with the plane, so there is no last-level-cache cliff to work around (part 4's problem).
#pragma once

#include <cuda_runtime.h>

#include "cuda/laplacian/common.cuh"

namespace fdstencil::cuda::laplacian {

template <class T>
struct Vec16;
template <>
struct Vec16<float> {
  using type = float4;
};
template <>
struct Vec16<double> {
  using type = double2;
};

template <class T>
struct ZmarchArgs {
  T* f;        // output at interior point (0, 0, 0)
  const T* u;  // input at interior point (0, 0, 0)
  int nx, ny, nz;  // interior
  int64_t line, slice;
  T cx, cy, cz, cc;  // 1/h^2 per axis and the centre weight
  int nzc;          // planes per block
  int chunks;       // ceil(nz / nzc)
  int tiles_x;      // ceil(nx / (32 W))
};

template <class T, int TY>
__global__ void __launch_bounds__(32 * TY) k8_zmarch(ZmarchArgs<T> a) {
  using Vec = typename Vec16<T>::type;
  constexpr int W = 16 / sizeof(T);
  constexpr int TXP = 32 * W;
  constexpr unsigned kAll = 0xffffffffu;
  __shared__ __align__(16) T rows[2][TY + 2][TXP];

  // Linear block order: z-chunks of one tile are consecutive, so the seam planes that two chunks
  // both read are fetched from DRAM once and found in L2 the second time.
  const int chunk = blockIdx.x % a.chunks;
  const int tile = blockIdx.x / a.chunks;
  const int lane = threadIdx.x, ty = threadIdx.y;
  const int x0 = (tile % a.tiles_x) * TXP;
  const int j0 = (tile / a.tiles_x) * TY;
  const int i0 = x0 + lane * W;
  const int j = j0 + ty;
  const int k0 = chunk * a.nzc;
  const int k1 = min(k0 + a.nzc, a.nz);

  // Row j = ny and the vector holding i = nx are halo the last valid points need; beyond them
  // nothing is loaded. The padded layout makes every such 16-byte read lie inside the allocation.
  const bool loads = j <= a.ny && i0 <= a.nx;
  const bool top_halo = ty == 0;                        // row j0 - 1
  const bool bottom_halo = ty == TY - 1 && j0 + TY <= a.ny;  // row j0 + TY
  const bool left_halo = lane == 0 && j <= a.ny;
  const bool right_halo = lane == 31 && x0 + TXP <= a.nx && j <= a.ny;
  const T* col = a.u + i0 + int64_t(j) * a.line;
  auto load = [&](const T* p, bool ok) {
    Vec v{};
    if (ok) v = __ldg(reinterpret_cast<const Vec*>(p));
    return v;
  };
  auto plane = [&](int k) { return int64_t(k) * a.slice; };

  Vec zm = load(col + plane(k0 - 1), loads);
  Vec z0 = load(col + plane(k0), loads);
  Vec zp = load(col + plane(k0 + 1), loads);
  // Warp-row 0 carries the ring row above the tile, warp-row TY-1 the one below (TY >= 2).
  Vec hrow{};
  if (top_halo) hrow = load(col - a.line + plane(k0), loads);
  if (ty == TY - 1) hrow = load(col + a.line + plane(k0), bottom_halo && i0 <= a.nx);
  T hl = left_halo ? a.u[x0 - 1 + int64_t(j) * a.line + plane(k0)] : T(0);
  T hr = right_halo ? a.u[x0 + TXP + int64_t(j) * a.line + plane(k0)] : T(0);

  int buf = 0;
  for (int k = k0; k < k1; ++k) {
    // Issue the next loads before this plane's arithmetic, so they are in flight during it.
    const Vec zpp = load(col + plane(k + 2), loads && k + 2 <= k1);
    Vec hrow_next{};
    T hl_next = T(0), hr_next = T(0);
    if (k + 1 < k1) {
      if (top_halo) hrow_next = load(col - a.line + plane(k + 1), loads);
      if (ty == TY - 1) hrow_next = load(col + a.line + plane(k + 1), bottom_halo && i0 <= a.nx);
      if (left_halo) hl_next = a.u[x0 - 1 + int64_t(j) * a.line + plane(k + 1)];
      if (right_halo) hr_next = a.u[x0 + TXP + int64_t(j) * a.line + plane(k + 1)];
    }

    *reinterpret_cast<Vec*>(&rows[buf][ty + 1][lane * W]) = z0;
    if (ty == 0) *reinterpret_cast<Vec*>(&rows[buf][0][lane * W]) = hrow;
    if (ty == TY - 1) *reinterpret_cast<Vec*>(&rows[buf][TY + 1][lane * W]) = hrow;
    __syncthreads();

    const T* c = reinterpret_cast<const T*>(&z0);
    const T* below = reinterpret_cast<const T*>(&zm);
    const T* above = reinterpret_cast<const T*>(&zp);
    const Vec ym = *reinterpret_cast<const Vec*>(&rows[buf][ty][lane * W]);
    const Vec yp = *reinterpret_cast<const Vec*>(&rows[buf][ty + 2][lane * W]);
    const T* s = reinterpret_cast<const T*>(&ym);
    const T* n = reinterpret_cast<const T*>(&yp);
    T left = __shfl_up_sync(kAll, c[W - 1], 1);
    T right = __shfl_down_sync(kAll, c[0], 1);
    if (lane == 0) left = hl;
    if (lane == 31) right = hr;
    Vec out;
    T* o = reinterpret_cast<T*>(&out);
#pragma unroll
    for (int e = 0; e < W; ++e) {
      const T xm = e == 0 ? left : c[e - 1];
      const T xp = e == W - 1 ? right : c[e + 1];
      o[e] = a.cc * c[e] + a.cx * (xm + xp) + a.cy * (s[e] + n[e]) + a.cz * (below[e] + above[e]);
    }
    if (j < a.ny && i0 < a.nx) {
      T* dst = a.f + i0 + int64_t(j) * a.line + plane(k);
      if (i0 + W <= a.nx) {
        __stcs(reinterpret_cast<Vec*>(dst), out);
      } else {
        for (int e = 0; e < a.nx - i0; ++e) __stcs(dst + e, o[e]);
      }
    }

    zm = z0;
    z0 = zp;
    zp = zpp;
    hrow = hrow_next;
    hl = hl_next;
    hr = hr_next;
    buf ^= 1;
  }
}

}  // namespace fdstencil::cuda::laplacian
