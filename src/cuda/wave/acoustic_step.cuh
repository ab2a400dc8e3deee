// acoustic_step: one leapfrog step of u_tt = v^2 lap u + s in one kernel. The stencil is the L1
// march of seismic/xyz_l1march.cuh (no tile, no barrier: z from a register queue, x and y straight
// from global memory through Hopper's L1), and on top of it, per point:
//   the leapfrog update  u^{n+1} = 2 u^n - u^{n-1} + m L   (core/acoustic.hpp), written over u^{n-1};
//   the CPML, per axis, where a block's points reach that axis's layer (block-uniform template
//     flags: the interior blocks run the plain sum of second derivatives and never compute a first
//     one, and a block at an x face pays for x's memory variables alone). Loading the memory
//     variables at the top of each plane, to hide their latency, took the kernel from 80 to 166
//     registers at R = 1 (every variant pays the heaviest one's) and lost 12-22 % inside;
//   the sources' taps (added into u^{n+1}), found by a binary search of the block's own sorted
//     list, so a block without taps pays one pair of loads. Receivers are acoustic_record's.
// The interior moves 16 bytes per point: u^n, u^{n-1} and m read, u^{n+1} written.
#pragma once

#include <cstdint>

#include "core/acoustic.hpp"
#include "cuda/common/vec.cuh"

namespace fdstencil::cuda::wave {

// Kernels compile for at most this many threads per block, so nvcc may give each up to 255
// registers: the R = 8 queue, window and six accumulators of 4-wide vectors need ~150.
inline constexpr int kStepThreads = 256;

// Planes the queue's front is loaded ahead of the plane being written (the L1 march's choice,
// seismic/common.cuh kMarchPrefetch: it hides one iteration of arithmetic behind the load).
inline constexpr int kPrefetch = 2;

struct StepArgs {
  float* out;       // u^{n-1} in, u^{n+1} out, at computational point (0, 0, 0)
  const float* u;   // u^n
  const float* m;   // (v dt)^2
  int nx, ny, nz, nw;
  int64_t line, slice;
  float w2[kMaxTaps], w1[kMaxTaps];
  acoustic::PmlAxis axis[3];
  const acoustic::PmlCoef<float>* coef[3];
  float* psi[3];
  float* chi[3];
  float* phi[3];
  bool free_surface;
  // Taps, sorted by block then by key (k, j, i); block b's are [tap_start[b], tap_start[b + 1]).
  const int* tap_start;
  const int64_t* tap_key;
  const acoustic::Tap* taps;  // the sources'
  const float* wavelets;      // nsrc x nt
  int64_t nt;
};

__device__ __forceinline__ int64_t tap_key(int64_t i, int64_t j, int64_t k, int64_t nx, int64_t ny) {
  return (k * ny + j) * nx + i;
}

template <int R, int V, bool kY, bool PX, bool PY, bool PZ>
__device__ __forceinline__ void march(const StepArgs& a, int i0, int j0, int k0, int k1, int tb, int te,
                                      int64_t n) {
  constexpr int C = (R + V - 1) / V;  // x neighbour vectors on each side
  constexpr int D = kPrefetch;
  constexpr int Q = 2 * R + 1 + D;
  constexpr bool kPml[3] = {PX, PY, PZ};
  const float* u = a.u + i0 + a.line * j0 + a.slice * k0;
  float* out = a.out + i0 + a.line * j0 + a.slice * k0;
  const float* m = a.m + i0 + a.line * j0 + a.slice * k0;
  Vec<float, V> q[Q];
#pragma unroll
  for (int r = 0; r < Q - 1; ++r) {
    const int kk = k0 + r - R;
    if (kk < k1 + R) {
      if (a.free_surface && kk < 0) {  // the odd mirror image about the surface z = 0
        q[r] = load_vec<float, V>(u + (-2 * k0 - (r - R)) * a.slice);
#pragma unroll
        for (int e = 0; e < V; ++e) q[r].v[e] = -q[r].v[e];
      } else {
        q[r] = load_vec<float, V>(u + (r - R) * a.slice);
      }
    }
  }
  for (int k = k0; k < k1; ++k) {
    if (k + D < k1) q[Q - 1] = load_vec<float, V>(u + (R + D) * a.slice);
    const Vec<float, V> prev = load_vec<float, V>(out);
    const Vec<float, V> mv = load_vec<float, V>(m);
    float d2[3][V], d1[3][V];
#pragma unroll
    for (int e = 0; e < V; ++e)
#pragma unroll
      for (int ax = 0; ax < 3; ++ax) d2[ax][e] = d1[ax][e] = 0.f;
    if constexpr (kY) {
#pragma unroll
      for (int l = 0; l <= 2 * R; ++l) {
        const Vec<float, V> v = l == R ? q[R] : load_vec<float, V>(u + (l - R) * a.line);
#pragma unroll
        for (int e = 0; e < V; ++e) {
          d2[1][e] += a.w2[l] * v.v[e];
          if constexpr (PY) d1[1][e] += a.w1[l] * v.v[e];
        }
      }
    }
    float w[(2 * C + 1) * V];
#pragma unroll
    for (int c = 0; c <= 2 * C; ++c) {
      const Vec<float, V> v = c == C ? q[R] : load_vec<float, V>(u + (c - C) * V);
#pragma unroll
      for (int e = 0; e < V; ++e) w[c * V + e] = v.v[e];
    }
#pragma unroll
    for (int e = 0; e < V; ++e)
#pragma unroll
      for (int r = 0; r <= 2 * R; ++r) {
        const float x = w[C * V + e + r - R], z = q[r].v[e];
        d2[0][e] += a.w2[r] * x;
        d2[2][e] += a.w2[r] * z;
        if constexpr (PX) d1[0][e] += a.w1[r] * x;
        if constexpr (PZ) d1[2][e] += a.w1[r] * z;
      }
    Vec<float, V> o;
#pragma unroll
    for (int e = 0; e < V; ++e) {
      float lap = 0.f;
#pragma unroll
      for (int ax = 0; ax < 3; ++ax) {
        if (ax == 1 && !kY) continue;
        const int i = i0 + e;
        const int slot = kPml[ax] && i < a.nx ? a.axis[ax].slot(ax == 0 ? i : ax == 1 ? j0 : k) : -1;
        if (slot >= 0) {
          const int64_t p = acoustic::pml_index(ax, slot, i, j0, k, a.nx, a.ny, a.axis[ax].slots());
          float psi = a.psi[ax][p], chi = a.chi[ax][p], phi = a.phi[ax][p];
          lap += acoustic::cpml_second_derivative(d2[ax][e], d1[ax][e], a.coef[ax][slot], psi, chi, phi);
          a.psi[ax][p] = psi;
          a.chi[ax][p] = chi;
          a.phi[ax][p] = phi;
        } else {
          lap += d2[ax][e];
        }
      }
      o.v[e] = acoustic::leapfrog(q[R].v[e], prev.v[e], mv.v[e], lap);
      if (a.free_surface && k == 0) o.v[e] = 0.f;
    }
    if (tb < te) {  // this block holds taps: find this thread's among them
      const int64_t lo_key = tap_key(i0, j0, k, a.nx, a.ny), hi_key = lo_key + V;
      int first = tb, count = te - tb;
      while (count > 0) {  // lower_bound
        const int half = count / 2;
        if (a.tap_key[first + half] < lo_key) {
          first += half + 1;
          count -= half + 1;
        } else {
          count = half;
        }
      }
      for (int t = first; t < te && a.tap_key[t] < hi_key; ++t) {
        const acoustic::Tap tp = a.taps[t];
        // hi_key may run past the line's end when nx < V: a key there is another line's point.
        if (tp.j != j0 || tp.k != k) continue;
        const int e = tp.i - i0;
#pragma unroll
        for (int ee = 0; ee < V; ++ee)
          if (ee == e) o.v[ee] += tp.w * a.wavelets[tp.id * a.nt + n];  // constant indices keep o in registers
      }
    }
    store_streaming(out, o, a.nx - i0);
#pragma unroll
    for (int r = 0; r < Q - 1; ++r) q[r] = q[r + 1];
    u += a.slice;
    out += a.slice;
    m += a.slice;
  }
}

template <int R, int V, bool kY>
__global__ void __launch_bounds__(kStepThreads) acoustic_step(StepArgs a, int64_t n) {
  const int i0 = V * int(threadIdx.x + blockIdx.x * blockDim.x);
  const int j0 = kY ? int(threadIdx.y + blockIdx.y * blockDim.y) : 0;
  const int k0 = blockIdx.z * a.nw;
  const int k1 = min(k0 + a.nw, a.nz);
  const int block = int((blockIdx.z * gridDim.y + blockIdx.y) * gridDim.x + blockIdx.x);
  const int tb = a.tap_start[block], te = a.tap_start[block + 1];
  // Which axes' CPML layers the block's points reach: uniform over the block, so the branch costs
  // nothing and each block compiles only the first derivatives and memory variables it needs.
  const int bx0 = V * int(blockIdx.x * blockDim.x), bx1 = bx0 + V * int(blockDim.x);
  const int by0 = int(blockIdx.y * blockDim.y), by1 = by0 + int(blockDim.y);
  const bool px = bx0 < a.axis[0].lo || bx1 > a.nx - a.axis[0].hi;
  const bool py = kY && (by0 < a.axis[1].lo || by1 > a.ny - a.axis[1].hi);
  const bool pz = k0 < a.axis[2].lo || k1 > a.nz - a.axis[2].hi;
  if (i0 >= a.nx || j0 >= a.ny) return;  // no barrier: an idle thread may simply leave
  switch (int(px) | int(py) << 1 | int(pz) << 2) {
    case 0: return march<R, V, kY, false, false, false>(a, i0, j0, k0, k1, tb, te, n);
    case 1: return march<R, V, kY, true, false, false>(a, i0, j0, k0, k1, tb, te, n);
    case 4: return march<R, V, kY, false, false, true>(a, i0, j0, k0, k1, tb, te, n);
    case 5: return march<R, V, kY, true, false, true>(a, i0, j0, k0, k1, tb, te, n);
  }
  if constexpr (kY) {  // the y faces exist in 3D only
    switch (int(px) | int(pz) << 1) {
      case 0: return march<R, V, kY, false, true, false>(a, i0, j0, k0, k1, tb, te, n);
      case 1: return march<R, V, kY, true, true, false>(a, i0, j0, k0, k1, tb, te, n);
      case 2: return march<R, V, kY, false, true, true>(a, i0, j0, k0, k1, tb, te, n);
      default: return march<R, V, kY, true, true, true>(a, i0, j0, k0, k1, tb, te, n);
    }
  }
}

}  // namespace fdstencil::cuda::wave
