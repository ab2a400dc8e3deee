// shfl_march (ours, first; k8_shfl before issue 32): march along z with a register queue.
// bulk_ring.cuh uses the helpers and the argument block defined here. A block owns a tile of
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

// Vectors to register arrays and back by constant indices, so nothing lands in local memory
// (taking a vector's address would put it there).
__device__ __forceinline__ void unpack(const float4& v, float (&o)[4]) {
  o[0] = v.x, o[1] = v.y, o[2] = v.z, o[3] = v.w;
}
__device__ __forceinline__ void unpack(const double2& v, double (&o)[2]) { o[0] = v.x, o[1] = v.y; }
__device__ __forceinline__ float4 pack(const float (&o)[4]) { return make_float4(o[0], o[1], o[2], o[3]); }
__device__ __forceinline__ double2 pack(const double (&o)[2]) { return make_double2(o[0], o[1]); }

// A whole vector when it lies inside the interior, else its leading elements one by one.
template <class T, class Vec, int W>
__device__ __forceinline__ void store_streaming(T* dst, const T (&o)[W], int valid) {
  if (valid >= W) {
    __stcs(reinterpret_cast<Vec*>(dst), pack(o));
  } else {
#pragma unroll
    for (int e = 0; e < W; ++e)
      if (e < valid) __stcs(dst + e, o[e]);
  }
}

template <class T>
struct ZmarchArgs {
  T* f;            // output at interior point (0, 0, 0)
  const T* u;      // input at interior point (0, 0, 0)
  int nx, ny, nz;  // interior
  int64_t line, slice;
  T cx, cy, cz, cc;  // 1/h^2 per axis and the centre weight
  int nzc;           // planes per block
  int chunks;        // ceil(nz / nzc)
  int tiles_x;       // ceil(nx / (32 W))
  int tiles_y;       // ceil(ny / TY)
};

template <class T, int TY>
__global__ void __launch_bounds__(32 * TY) shfl_march(ZmarchArgs<T> a) {
  using Vec = typename Vec16<T>::type;
  constexpr int W = 16 / sizeof(T);
  constexpr int TXP = 32 * W;
  constexpr unsigned kAll = 0xffffffffu;
  __shared__ __align__(16) T rows[2][TY + 2][TXP];

  // Block order x-tile, then y-tile, then z-chunk: the blocks resident together cover whole
  // x-lines of neighbouring rows of one plane, long contiguous streams DRAM serves best.
  const int lane = threadIdx.x, ty = threadIdx.y;
  const int x0 = (blockIdx.x % a.tiles_x) * TXP;
  const int j0 = (blockIdx.x / a.tiles_x % a.tiles_y) * TY;
  const int chunk = blockIdx.x / a.tiles_x / a.tiles_y;
  const int i0 = x0 + lane * W;
  const int j = j0 + ty;
  const int k0 = chunk * a.nzc;
  const int k1 = min(k0 + a.nzc, a.nz);

  // Row j = ny and the vector holding i = nx are halo the last valid points need; beyond them
  // nothing is loaded. The padded layout makes every such 16-byte read lie inside the allocation.
  const bool loads = j <= a.ny && i0 <= a.nx;
  const bool top_halo = ty == 0;                             // row j0 - 1
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

    T c[W], below[W], above[W], s[W], n[W], o[W];
    unpack(z0, c);
    unpack(zm, below);
    unpack(zp, above);
    unpack(*reinterpret_cast<const Vec*>(&rows[buf][ty][lane * W]), s);
    unpack(*reinterpret_cast<const Vec*>(&rows[buf][ty + 2][lane * W]), n);
    T left = __shfl_up_sync(kAll, c[W - 1], 1);
    T right = __shfl_down_sync(kAll, c[0], 1);
    if (lane == 0) left = hl;
    if (lane == 31) right = hr;
#pragma unroll
    for (int e = 0; e < W; ++e) {
      const T xm = e == 0 ? left : c[e - 1];
      const T xp = e == W - 1 ? right : c[e + 1];
      o[e] = a.cc * c[e] + a.cx * (xm + xp) + a.cy * (s[e] + n[e]) + a.cz * (below[e] + above[e]);
    }
    if (j < a.ny && i0 < a.nx)
      store_streaming<T, Vec, W>(a.f + i0 + int64_t(j) * a.line + plane(k), o, a.nx - i0);

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
