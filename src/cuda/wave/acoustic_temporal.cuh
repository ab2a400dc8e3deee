// acoustic_temporal: T leapfrog steps of a 2D model in one pass over memory (temporal blocking).
//
// One step reads u^n, u^{n-1} and m and writes u^{n+1}: 16 bytes a point, which bounds the
// one-step kernel (acoustic_step.cuh) by the memory's bandwidth. This kernel reads u^n, u^{n-1}
// and m once and writes u^{n+T} and u^{n+T-1} once, T steps later, so a point moves 20 bytes per
// T steps; the steps between live on chip.
//
// The design: overlapped tiles and a wavefront march along z.
//   - A block owns `owned` columns of `nw` rows. Its threads cover those columns and T R more on
//     each side (one column a thread), because the value at level T (u^{n+T}) of a column depends
//     on level 0 up to T R columns away. Those halo columns are computed again by the neighbouring
//     blocks: the price of needing no exchange between blocks.
//   - The block marches one row a iteration. At iteration f, level 0 (u^n) arrives for row f + R
//     and level t (1..T) is computed at row f - (t - 1) R, the latest row whose z neighbours at
//     level t - 1 exist. Level t is computed over rows [k0 - (T - t) R, k1 + (T - t) R), the rows
//     level T's own rows need; each level's window of 2R + 1 rows is a register queue per thread,
//     and each level's rows for the x neighbours a shared ring of R + 1 rows.
//   - u^{n+t-1}, the leapfrog's previous level, is the oldest entry of level t - 2's queue; m is a
//     queue of (T - 1) R + 1 rows; the CPML memory variables of the rows in flight a ring of
//     (T - 1) R + 1 rows per thread in shared memory (boundary blocks only).
//   - The outputs go to other arrays than the inputs (AcousticGpu keeps a second pair): a block's
//     halo reads its neighbours' columns at level 0, which the neighbours would otherwise already
//     have overwritten. Likewise the CPML memory.
//   - Sources are added at every level in every column the block computes; receivers are sampled at
//     levels 0..T-1 in the columns the block owns, into `samples`, which temporal_record sums in
//     acoustic_record's order: the traces are the bits of one step at a time.
// Every point's arithmetic is acoustic_step.cuh's update_points in the same order, so the fields
// are the one-step kernel's to the bit (WaveGpu.TemporalBlockingGivesTheBitsOfOneStepAtATime).
#pragma once

#include <cstdint>

#include "cuda/common/async_copy.cuh"
#include "cuda/wave/acoustic.hpp"
#include "physics/acoustic.hpp"

namespace fdstencil::cuda::wave {

// Up to 256 threads a block (1 block per 256 columns of a plane with 2 T R of halo), each with
// the T queues of 2R + 1 registers.
inline constexpr int kTemporalThreads = kTemporalMaxThreads;

// Iterations whose rows of u^n, m and u^{n-1} are in flight (cp.async into a per-thread ring of
// shared memory, holding no registers), so that an iteration need not wait on the memory's
// latency. At most 4: copy_async_wait_pending's range. (Against one iteration ahead in registers
// it measured within noise: the pass is bound by instructions, docs/wave.md.)
inline constexpr int kTemporalStages = 4;

struct TemporalArgs {
  const float* u;     // u^n, at computational point (0, 0)
  const float* prev;  // u^{n-1}
  const float* m;     // (v dt)^2
  float* u_out;       // u^{n+T}
  float* prev_out;    // u^{n+T-1}
  int nx, nz;
  int64_t row;  // elements from one row (z) to the next
  int owned;    // columns a block owns: blockDim.x - 2 T R
  int nw;       // rows a block owns
  // The blocks (x: strips of `owned` columns; z: chunks of nw rows) whose computed points that
  // matter lie clear of every CPML layer, [first, end) per axis: the interior kernel runs them.
  int interior[2][2];
  int strips;
  float w2[kMaxTaps], w1[kMaxTaps];
  acoustic::PmlAxis axis[3];
  const acoustic::PmlCoef<float>* coef[3];
  const float* pml_in[3][3];  // axis x, y, z; psi, chi, phi at step n
  float* pml_out[3][3];       // at step n + T
  bool free_surface;
  // Per strip, per row: the sources' taps in the strip's columns and its halo's,
  // [src_row[strip (nz + 1) + k], src_row[strip (nz + 1) + k + 1]) of src_taps, sorted by column
  // (acoustic_step's order at one point); likewise the receivers' taps in the owned columns:
  // rec_col, and rec_tap, the tap's place in the receivers' order (acoustic_record's).
  const int* src_row;
  const acoustic::Tap* src_taps;
  const float* wavelets;  // nsrc x nt
  int64_t nt;
  const int* rec_row;
  const int* rec_col;
  const int* rec_tap;
  float* samples;  // T x rec_taps: the receivers' taps' values at levels 0..T-1
  int64_t rec_taps;
  const int64_t* step_base;  // as StepArgs::step_base
};

namespace temporal {

// The x neighbours' rows of one level: ring slot of row r, R + 1 slots, each `pitch` floats
// (the block's columns and R of padding each side, zero).
template <int R>
__device__ __forceinline__ int slot(int r) {
  return r % (R + 1);
}

// Level t at row k of one column: the order-2R sums along x (from the ring row `xs`, the thread's
// own column at xs[0]) and z (the window zw, row k at zw[R]), the CPML where the block has layers,
// the leapfrog update and the sources' taps: update_points' arithmetic in its order.
template <int R, bool PX, bool PZ>
__device__ __forceinline__ float point(const TemporalArgs& a, const float (&zw)[2 * R + 1], const float* xs,
                                       float prev, float m, int i, int k, float* mem, int mem_stride,
                                       int64_t step, int tb, int te) {
  const float centre = zw[R];
  float d2x = 0.f, d2z = 0.f, d1x = 0.f, d1z = 0.f;
#pragma unroll
  for (int r = 0; r <= 2 * R; ++r) {
    const float x = r == R ? centre : xs[r - R], z = zw[r];
    d2x += a.w2[r] * x;
    d2z += a.w2[r] * z;
    if constexpr (PX) d1x += a.w1[r] * x;
    if constexpr (PZ) d1z += a.w1[r] * z;
  }
  float lap = 0.f;
  const int sx = PX ? a.axis[0].slot(i) : -1;
  if (sx >= 0) {
    float& psi = mem[0];
    float& chi = mem[mem_stride];
    float& phi = mem[2 * mem_stride];
    lap += acoustic::cpml_second_derivative(d2x, d1x, a.coef[0][sx], psi, chi, phi);
  } else {
    lap += d2x;
  }
  const int sz = PZ ? a.axis[2].slot(k) : -1;
  if (sz >= 0) {
    float& psi = mem[3 * mem_stride];
    float& chi = mem[4 * mem_stride];
    float& phi = mem[5 * mem_stride];
    lap += acoustic::cpml_second_derivative(d2z, d1z, a.coef[2][sz], psi, chi, phi);
  } else {
    lap += d2z;
  }
  float o = acoustic::leapfrog(centre, prev, m, lap);
  if (a.free_surface && k == 0) o = 0.f;
  for (int t = tb; t < te; ++t) {
    const acoustic::Tap tp = a.src_taps[t];
    if (tp.i == i) o += tp.w * a.wavelets[tp.id * a.nt + step];
  }
  return o;
}

// The CPML memory of point (i, k) at step n into the thread's ring entry `mem` (x's three, then
// z's), or back from it at step n + T.
template <bool PX, bool PZ, bool Load>
__device__ __forceinline__ void move_memory(const TemporalArgs& a, int i, int k, float* mem, int stride) {
  const int sx = PX ? a.axis[0].slot(i) : -1, sz = PZ ? a.axis[2].slot(k) : -1;
  const int64_t px = int64_t(k) * a.axis[0].slots() + sx, pz = int64_t(sz) * a.nx + i;
#pragma unroll
  for (int v = 0; v < 3; ++v) {
    if (sx >= 0) {
      if constexpr (Load)
        mem[v * stride] = a.pml_in[0][v][px];
      else
        a.pml_out[0][v][px] = mem[v * stride];
    }
    if (sz >= 0) {
      if constexpr (Load)
        mem[(3 + v) * stride] = a.pml_in[2][v][pz];
      else
        a.pml_out[2][v][pz] = mem[(3 + v) * stride];
    }
  }
}

// Receiver taps at (i, k) of level t take its value v.
__device__ __forceinline__ void sample(const TemporalArgs& a, int strip, int i, int k, int t, float v) {
  const int64_t row = int64_t(strip) * (a.nz + 1) + k;
  for (int e = a.rec_row[row]; e < a.rec_row[row + 1]; ++e)
    if (a.rec_col[e] == i) a.samples[t * a.rec_taps + a.rec_tap[e]] = v;
}

// One block's march (PX, PZ: whether its points that matter reach an x or a z layer). Shared
// memory: T rings of R + 1 rows of `pitch` floats; the staged loads, kTemporalStages x 3 x
// blockDim.x; then (PX or PZ) the memory variables' ring, D = (T - 1) R + 1 rows x 6 variables x
// blockDim.x.
template <int R, int T, bool PX, bool PZ>
__device__ __forceinline__ void march(const TemporalArgs& a, float* smem, int strip, int chunk, int64_t n) {
  constexpr int W = 2 * R + 1;
  constexpr int D = (T - 1) * R + 1;
  const int threads = int(blockDim.x), tid = int(threadIdx.x);
  const int pitch = threads + 2 * R;
  const int x0 = strip * a.owned, i = x0 - T * R + tid;
  const int k0 = chunk * a.nw, k1 = min(k0 + a.nw, a.nz);
  const bool in_x = i >= 0 && i < a.nx;
  const bool owns = in_x && i >= x0 && i < x0 + a.owned;
  constexpr int P = kTemporalStages;
  float* stage = smem + T * (R + 1) * pitch + tid;  // this thread's staged rows, stride `threads`
  float* mem = stage + P * 3 * threads;             // this thread's ring entries, stride `threads`
  const int mem_stride = threads, mem_row = 6 * threads;
  // Zero the rings, padding included: a column past the block's reads zeros, as past the domain.
  for (int e = tid; e < T * (R + 1) * pitch; e += threads) smem[e] = 0.f;
  __syncthreads();
  const int64_t base = a.step_base ? n + *a.step_base : n;
  // Taps: whether the block's rows hold any (most blocks hold none, and skip the lookups).
  const int64_t rows0 = int64_t(strip) * (a.nz + 1);
  const int lo = max(k0 - T * R, 0), hi = min(k1 + T * R, a.nz);
  const bool src = a.src_row[rows0 + hi] > a.src_row[rows0 + lo];
  const bool rec = a.rec_taps > 0 && a.rec_row[rows0 + k1] > a.rec_row[rows0 + k0];
  const auto level0 = [&](int r) { return in_x && r >= 0 && r < a.nz ? a.u[int64_t(r) * a.row + i] : 0.f; };
  // Iteration f's rows (u^n at f + R, m and u^{n-1} at f) into stage slot (f - f0) mod P, as one
  // group of copies.
  const auto issue = [&](int f, int f0) {
    float* st = stage + ((f - f0) % P) * 3 * threads;
    const int ru = f + R;
    const bool u_ok = in_x && ru >= 0 && ru < a.nz, row_ok = in_x && f >= 0 && f < a.nz;
    ptx::copy_async4(st, a.u + (u_ok ? int64_t(ru) * a.row + i : 0), u_ok);
    ptx::copy_async4(st + threads, a.m + (row_ok ? int64_t(f) * a.row + i : 0), row_ok);
    ptx::copy_async4(st + 2 * threads, a.prev + (row_ok ? int64_t(f) * a.row + i : 0), row_ok);
    ptx::copy_async_commit();
  };
  float q[T][W] = {};  // level t's window: rows of the level t + 1 update, oldest first
  float mq[D] = {};    // m at rows f - (T - 1) R .. f
  const int f0 = max(k0 - (T - 1) * R, 0), f1 = k1 + (T - 1) * R;
  // Level 0's window before the first iteration's row f0 + R: rows f0 - R .. f0 + R - 1, those
  // from f0 also into the ring that level 1 takes its x neighbours from.
#pragma unroll
  for (int e = 0; e < W - 1; ++e) {
    const int r = f0 - R + e;
    q[0][e + 1] = level0(r);
    if (r >= f0) smem[slot<R>(r) * pitch + R + tid] = q[0][e + 1];
    if (rec && owns && r >= k0 && r < k1) sample(a, strip, i, r, 0, q[0][e + 1]);
  }
  // Each iteration's rows of u^n, m and u^{n-1} are asked for P - 1 iterations ahead.
#pragma unroll
  for (int p = 0; p < P - 1; ++p) issue(f0 + p, f0);
  for (int f = f0; f < f1; ++f) {
    issue(f + P - 1, f0);
    ptx::copy_async_wait_pending(P - 1);  // this iteration's group has landed
    const float* st = stage + ((f - f0) % P) * 3 * threads;
    const float u_r = st[0], m_f = st[threads], prev_f = st[2 * threads];
    // The rows written R iterations ago are visible, and the rows read last iteration are free.
    __syncthreads();
    {
      const int r = f + R;
      const float v = u_r;
#pragma unroll
      for (int e = 0; e < W - 1; ++e) q[0][e] = q[0][e + 1];
      q[0][W - 1] = v;
      if (r < a.nz) smem[slot<R>(r) * pitch + R + tid] = v;
      if (rec && owns && r >= k0 && r < k1) sample(a, strip, i, r, 0, v);
    }
#pragma unroll
    for (int e = 0; e < D - 1; ++e) mq[e] = mq[e + 1];
    mq[D - 1] = m_f;
#pragma unroll
    for (int t = 1; t <= T; ++t) {
      const int r = f - (t - 1) * R;
      const bool rows = r >= 0 && r < a.nz && r >= k0 - (T - t) * R && r < k1 + (T - t) * R;
      float v = 0.f;
      float* entry = mem + (r >= 0 ? r % D : 0) * mem_row;
      if (rows && in_x) {
        float zw[W];
#pragma unroll
        for (int e = 0; e < W; ++e) zw[e] = q[t - 1][e];
        if (a.free_surface && r < R) {  // rows above the surface: the odd mirror image of those below
#pragma unroll
          for (int rr = 0; rr < R; ++rr)
            if (r == rr) {
#pragma unroll
              for (int e = 0; e < R - rr; ++e) zw[e] = -q[t - 1][2 * R - 2 * rr - e];
            }
        }
        const float prev = t == 1 ? prev_f : q[t >= 2 ? t - 2 : 0][0];
        if constexpr (PX || PZ)
          if (t == 1) move_memory<PX, PZ, true>(a, i, r, entry, mem_stride);
        int tb = 0, te = 0;
        if (src) {
          tb = a.src_row[rows0 + r];
          te = a.src_row[rows0 + r + 1];
        }
        const float* xs = smem + ((t - 1) * (R + 1) + slot<R>(r)) * pitch + R + tid;
        v = point<R, PX, PZ>(a, zw, xs, prev, mq[(T - t) * R], i, r, entry, mem_stride, base + t - 1, tb, te);
      }
      if (t < T) {
#pragma unroll
        for (int e = 0; e < W - 1; ++e) q[t][e] = q[t][e + 1];
        q[t][W - 1] = v;
        if (r >= 0 && r < a.nz) smem[(t * (R + 1) + slot<R>(r)) * pitch + R + tid] = v;
        if (rec && owns && r >= k0 && r < k1) sample(a, strip, i, r, t, v);
      } else if (owns && r >= k0 && r < k1) {
        a.u_out[int64_t(r) * a.row + i] = v;
        a.prev_out[int64_t(r) * a.row + i] = q[T - 1][R];
        if constexpr (PX || PZ) move_memory<PX, PZ, false>(a, i, r, entry, mem_stride);
      }
    }
  }
  ptx::copy_async_wait_all();  // the copies for iterations past the last land before the block ends
}

// The blocks whose points that matter reach an x or a z layer: uniform over the block, as
// acoustic_step.cuh's with_block_pml.
__device__ __forceinline__ bool strip_interior(const TemporalArgs& a, int strip) {
  return strip >= a.interior[0][0] && strip < a.interior[0][1];
}
__device__ __forceinline__ bool chunk_interior(const TemporalArgs& a, int chunk) {
  return chunk >= a.interior[1][0] && chunk < a.interior[1][1];
}

}  // namespace temporal

// Interior: the launch covers the interior box alone (block_first: its first strip and chunk), no
// CPML compiled. Otherwise every block, skipping the interior box's. Dynamic shared memory: the
// T rings, and for the boundary kernel the memory variables' ring (temporal_smem).
template <int R, int T, bool Interior>
__global__ void __launch_bounds__(kTemporalThreads)
    acoustic_temporal(TemporalArgs a, int64_t n, int strip_first, int chunk_first) {
  extern __shared__ __align__(16) float temporal_smem[];
  const int strip = int(blockIdx.x) + strip_first, chunk = int(blockIdx.y) + chunk_first;
  if constexpr (Interior) {
    temporal::march<R, T, false, false>(a, temporal_smem, strip, chunk, n);
  } else {
    const bool sx = temporal::strip_interior(a, strip), cz = temporal::chunk_interior(a, chunk);
    if (sx && cz) return;  // the whole block: no barrier is left waiting
    if (!sx && !cz)
      temporal::march<R, T, true, true>(a, temporal_smem, strip, chunk, n);
    else if (!sx)
      temporal::march<R, T, true, false>(a, temporal_smem, strip, chunk, n);
    else
      temporal::march<R, T, false, true>(a, temporal_smem, strip, chunk, n);
  }
}

// The receivers' traces at steps n .. n + T - 1 from the samples: acoustic_record's sums, in its
// order, over the samples in place of u.
__global__ void __launch_bounds__(128)
    temporal_record(const int* start, const float* weight, const float* samples, int64_t rec_taps,
                    float* traces, int nrec, int64_t nt, int levels, const int64_t* step_base, int64_t n) {
  const int r = int((blockIdx.x * blockDim.x + threadIdx.x) / 32);
  const int lane = int(threadIdx.x % 32);
  if (r >= nrec) return;
  const int64_t first = step_base ? n + *step_base : n;
  for (int t = 0; t < levels; ++t) {
    float sum = 0.f;
    for (int e = start[r] + lane; e < start[r + 1]; e += 32) sum += weight[e] * samples[t * rec_taps + e];
#pragma unroll
    for (int w = 16; w > 0; w /= 2) sum += __shfl_down_sync(0xFFFFFFFFu, sum, w);
    if (lane == 0) traces[int64_t(r) * nt + first + t] = sum;
  }
}

}  // namespace fdstencil::cuda::wave
