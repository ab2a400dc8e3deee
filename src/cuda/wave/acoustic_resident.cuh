// acoustic_resident: a 2D run's block of steps in one cooperative kernel, its fields held in shared
// memory across the launch (KernelConfig::resident; host side acoustic_resident.cu).
//
// Each block, one an SM, owns a band of whole rows and keeps u^n and u^{n-1} of its band, with
// `halo` rows above and below, in two shared-memory buffers (and m, where it fits). A step
// computes u^{n+1} over u^{n-1} in place, publishes its first and last `halo` rows to global
// memory and a flag, waits for its two neighbours' flags, reads their edge rows into its halo, and
// swaps the buffers. So a step moves no field through DRAM: only the edges, the CPML's memory
// variables and (where m is not held) m, all L2-resident on the models that fit. The state goes
// back to global memory once, at the launch's end.
//
// A step is the CPML apart's, pass for pass: the march's plain arithmetic at every point of the
// band (update_points': the x then z sums, the leapfrog, the surface's zero, the sources' taps),
// then at the layers' points m times the added terms (acoustic_layers'), the memory variables
// advanced. The receivers' samples are summed after the launch in acoustic_record's fixed order.
// So the bits are the one-step path's with the CPML apart or beside.
#pragma once

#include <cstdint>

#include "cuda/common/vec.cuh"
#include "cuda/wave/acoustic_step.cuh"
#include "physics/acoustic.hpp"

namespace fdstencil::cuda::wave {

// One block an SM. 512 threads leave each up to 128 registers: at 1024 (64 registers) the layers'
// pass's batch of memory variables spilled (the launch shapes timed: bench/results/nvidia-h200/resident/).
inline constexpr int kResidentThreads = 512;
inline constexpr int kResidentVec = 2;
// Rows one thread's column marches in a step, unrolled so that its z queue lives in registers
// without moves.
inline constexpr int kResidentRun = 4;
// Layer points a thread takes at once in the layers' pass: their memory variables' loads in
// flight together.
inline constexpr int kResidentLayerBatch = 4;

struct ResidentArgs {
  const float* m;  // at computational point (0, 0)
  int nx, ny, nz;
  int64_t slice;          // between rows (z)
  const int* band_first;  // band b's rows [band_first[b], band_first[b + 1])
  int rows;               // the most rows a band holds: the buffers' size
  int halo;               // rows above and below a band: R, or more where a receiver's taps reach further
  int pitch;              // shared-memory row pitch, floats
  int pad;                // zero columns left of x = 0 in a shared row (16-byte aligned)
  float w2[kMaxTaps], w1[kMaxTaps];
  acoustic::PmlAxis axis[3];
  const acoustic::PmlCoef<float>* coef[3];
  float* psi[3];
  float* chi[3];
  float* phi[3];
  bool free_surface;
  // The sources' taps sorted by key (k, i), band b's [tap_start[b], tap_start[b + 1]).
  const int* tap_start;
  const int64_t* tap_key;
  const acoustic::Tap* taps;
  const float* wavelets;  // nsrc x nt
  int64_t nt;
  // The receivers' taps band b samples: sample_off[sample_first[b] .. sample_first[b + 1]), each
  // an offset from the band's row 0, column 0 in a shared buffer, whose u^n goes to
  // samples[step of the launch][sample_tap[..]] (a tap's place in acoustic_record's order);
  // resident_record sums them after the launch.
  const int* sample_first;
  const int* sample_off;
  const int* sample_tap;
  float* samples;
  int taps_total;
  // The bands' published edges, [parity][band][top, bottom][halo][edge_pitch], and each band's
  // count of steps published in this launch (zeroed before it).
  int edge_pitch;  // nx rounded up to 4: rows of 16-byte vectors
  float* edges;
  unsigned* flags;
};

// Where a launch reads and writes: u^n and u^{n-1} in; u^{n+count} and u^{n+count-1} out (the same
// two arrays, swapped as `count` odd or even). At computational point (0, 0).
struct ResidentLevels {
  const float* u;
  const float* prev;
  float* last;
  float* before;
};

__device__ __forceinline__ void publish_flag(unsigned* f, unsigned v) {
  asm volatile("st.release.gpu.global.u32 [%0], %1;" ::"l"(f), "r"(v) : "memory");
}
__device__ __forceinline__ unsigned read_flag(const unsigned* f) {
  unsigned v;
  asm volatile("ld.acquire.gpu.global.u32 %0, [%1];" : "=r"(v) : "l"(f) : "memory");
  return v;
}

// Rows [lo, hi) of the band from z0 of `from` (global, rows of slice) into `to` (shared, row 0 at
// `to`, rows of pitch): rows above z = 0 the odd mirror image under a free surface (`mirror`),
// else zero, as are rows past nz. Every thread of the block takes part.
__device__ __forceinline__ void load_rows(const ResidentArgs& a, const float* from, float* to, int z0, int lo,
                                          int hi, bool mirror) {
  const int width = a.nx;
  for (int idx = int(threadIdx.x); idx < (hi - lo) * width; idx += int(blockDim.x)) {
    const int r = lo + idx / width, i = idx % width, g = z0 + r;
    float v = 0.f;
    if (g >= 0 && g < a.nz)
      v = from[g * a.slice + i];
    else if (g < 0 && mirror && a.free_surface && -g < a.nz)
      v = -from[-g * a.slice + i];
    to[r * a.pitch + i] = v;
  }
}

// m at the V points (i0.., row k of the band): from the shared copy (MS) or global memory.
template <bool MS, int V>
__device__ __forceinline__ Vec<float, V> m_at(const ResidentArgs& a, const float* ms, int i0, int k, int g) {
  if constexpr (MS) {
    return load_vec<float, V>(ms + k * a.pitch + i0);
  } else {
    Vec<float, V> v;
#pragma unroll
    for (int e = 0; e < V; ++e) v.v[e] = i0 + e < a.nx ? __ldg(a.m + g * a.slice + i0 + e) : 0.f;
    return v;
  }
}

// The march's step at one thread's V points (i0.., row k of the band, g in the domain): the plain
// x then z sums, the leapfrog, the surface's zero and the sources' taps (update_points' arithmetic
// with no CPML), over u^{n-1} in `nxt`. z from the thread's queue (zq(r): row k + r - R).
template <int R, int V, bool MS, class ZAt>
__device__ __forceinline__ void march_point(const ResidentArgs& a, const float* cur, float* nxt,
                                            const float* ms, ZAt zq, int i0, int k, int g, int tb, int te,
                                            int64_t n) {
  constexpr int C = (R + V - 1) / V;
  const int p = a.pitch;
  const Vec<float, V> mv = m_at<MS, V>(a, ms, i0, k, g);
  const Vec<float, V> centre = zq(R);
  float w[(2 * C + 1) * V];
#pragma unroll
  for (int c = 0; c <= 2 * C; ++c) {
    const Vec<float, V> v = c == C ? centre : load_vec<float, V>(cur + k * p + i0 + (c - C) * V);
#pragma unroll
    for (int e = 0; e < V; ++e) w[c * V + e] = v.v[e];
  }
  float d2x[V], d2z[V];
#pragma unroll
  for (int e = 0; e < V; ++e) d2x[e] = d2z[e] = 0.f;
#pragma unroll
  for (int r = 0; r <= 2 * R; ++r) {
    const Vec<float, V> zv = r == R ? centre : zq(r);
#pragma unroll
    for (int e = 0; e < V; ++e) {
      d2x[e] += a.w2[r] * w[C * V + e + r - R];
      d2z[e] += a.w2[r] * zv.v[e];
    }
  }
  const Vec<float, V> prev = load_vec<float, V>(nxt + k * p + i0);
  Vec<float, V> o;
#pragma unroll
  for (int e = 0; e < V; ++e) {
    float lap = 0.f;
    lap += d2x[e];
    lap += d2z[e];
    o.v[e] = acoustic::leapfrog(centre.v[e], prev.v[e], mv.v[e], lap);
    if (a.free_surface && g == 0) o.v[e] = 0.f;
  }
  if (tb < te) {  // update_points' search of the band's sorted taps
    const int64_t lo_key = tap_key(i0, 0, g, a.nx, a.ny), hi_key = lo_key + V;
    const int first = first_key_at_least(a.tap_key, tb, te, lo_key);
    for (int t = first; t < te && a.tap_key[t] < hi_key; ++t) {
      const acoustic::Tap tp = a.taps[t];
      if (tp.k != g) continue;
      const int e = tp.i - i0;
#pragma unroll
      for (int ee = 0; ee < V; ++ee)
        if (ee == e) o.v[ee] += tp.w * a.wavelets[tp.id * a.nt + n];
    }
  }
  if (i0 + V <= a.nx) {
    store_vec<float, V>(nxt + k * p + i0, o);
  } else {
#pragma unroll
    for (int e = 0; e < V; ++e)
      if (i0 + e < a.nx) nxt[k * p + i0 + e] = o.v[e];
  }
}

// One thread's column of V points at x = i0, rows [k0, min(k0 + kResidentRun, k1)) of its band:
// the rows' z neighbours loaded once into registers (rows k0 - R .. k0 + kResidentRun - 1 + R, those
// below k1 + R), then each row's march.
template <int R, int V, bool MS>
__device__ __forceinline__ void march_run(const ResidentArgs& a, const float* cur, float* nxt,
                                          const float* ms, int i0, int k0, int k1, int z0, int tb, int te,
                                          int64_t n) {
  constexpr int L = kResidentRun;
  Vec<float, V> q[2 * R + L];
#pragma unroll
  for (int r = 0; r < 2 * R + L; ++r)
    q[r] = k0 + r - R < k1 + R ? load_vec<float, V>(cur + (k0 + r - R) * a.pitch + i0) : Vec<float, V>{};
#pragma unroll
  for (int kk = 0; kk < L; ++kk)
    if (k0 + kk < k1)
      march_point<R, V, MS>(
          a, cur, nxt, ms, [&](int r) { return q[kk + r]; }, i0, k0 + kk, z0 + k0 + kk, tb, te, n);
}

// Axis ax's plain second and first derivatives of u^n at row r, column i of the band (shared),
// summed as update_points and acoustic_layers sum them.
template <int R>
__device__ __forceinline__ void layer_derivatives(const ResidentArgs& a, const float* cur, int r, int i,
                                                  int ax, float& d2, float& d1) {
  const int stride = ax == 0 ? 1 : a.pitch;
  const float* u = cur + r * a.pitch + i;
  d2 = d1 = 0.f;
#pragma unroll
  for (int t = 0; t <= 2 * R; ++t) {
    const float v = u[(t - R) * stride];
    d2 += a.w2[t] * v;
    d1 += a.w1[t] * v;
  }
}

// The band's t-th layer point (rows in a z layer whole, the others' x layer columns): its row and
// column, or false past the last. ztop, zbot: the band's rows above which and from which the z
// layers lie.
__device__ __forceinline__ bool layer_point_of(const ResidentArgs& a, int t, int rb, int ztop, int zbot,
                                               int& r, int& i) {
  const int xs = a.axis[0].lo + a.axis[0].hi, top = ztop * a.nx, mid = top + (zbot - ztop) * xs;
  if (t < top) {
    r = t / a.nx;
    i = t % a.nx;
  } else if (t < mid) {
    r = ztop + (t - top) / xs;
    const int c = (t - top) % xs;
    i = c < a.axis[0].lo ? c : a.nx - a.axis[0].hi + (c - a.axis[0].lo);
  } else if (t < mid + (rb - zbot) * a.nx) {
    r = zbot + (t - mid) / a.nx;
    i = (t - mid) % a.nx;
  } else {
    return false;
  }
  return true;
}

// The layers' pass of a step: at each layer point of the band, m times what the stretching adds to
// each axis whose layer holds it (x, then z), added into u^{n+1} (acoustic_layers' arithmetic; the
// surface's row stays zero, its memory variables still advance). A thread takes
// kResidentLayerBatch points at once: their memory variables are loaded before any is stored.
template <int R, bool MS>
__device__ __forceinline__ void layers_pass(const ResidentArgs& a, const float* cur, float* nxt,
                                            const float* ms, int z0, int rb) {
  constexpr int B = kResidentLayerBatch;
  const int ztop = min(max(a.axis[2].lo - z0, 0), rb);
  const int zbot = min(max(int(a.nz - a.axis[2].hi) - z0, ztop), rb);
  const int T = int(blockDim.x);
  const int points = ztop * a.nx + (zbot - ztop) * (a.axis[0].lo + a.axis[0].hi) + (rb - zbot) * a.nx;
  for (int first = int(threadIdx.x); first < points; first += B * T) {
    int row[B], col[B], slot[B][2];
    int64_t q[B][2];
    float mem[B][2][3];
#pragma unroll
    for (int u = 0; u < B; ++u) {
      slot[u][0] = slot[u][1] = -1;
      if (!layer_point_of(a, first + u * T, rb, ztop, zbot, row[u], col[u])) continue;
      slot[u][0] = a.axis[0].slot(col[u]);
      slot[u][1] = a.axis[2].slot(z0 + row[u]);
#pragma unroll
      for (int ax = 0; ax < 2; ++ax) {
        const int s = 2 * ax;
        if (slot[u][ax] < 0) continue;
        q[u][ax] = acoustic::pml_index(s, slot[u][ax], col[u], 0, z0 + row[u], a.nx, a.ny, a.axis[s].slots());
        mem[u][ax][0] = a.psi[s][q[u][ax]];
        mem[u][ax][1] = a.chi[s][q[u][ax]];
        mem[u][ax][2] = a.phi[s][q[u][ax]];
      }
    }
#pragma unroll
    for (int u = 0; u < B; ++u) {
      if (slot[u][0] < 0 && slot[u][1] < 0) continue;
      float added = 0.f;
#pragma unroll
      for (int ax = 0; ax < 2; ++ax) {
        const int s = 2 * ax;
        if (slot[u][ax] < 0) continue;
        float d2, d1;
        layer_derivatives<R>(a, cur, row[u], col[u], s, d2, d1);
        added += acoustic::cpml_added_term(d2, d1, a.coef[s][slot[u][ax]], mem[u][ax][0], mem[u][ax][1],
                                           mem[u][ax][2]);
        a.psi[s][q[u][ax]] = mem[u][ax][0];
        a.chi[s][q[u][ax]] = mem[u][ax][1];
        a.phi[s][q[u][ax]] = mem[u][ax][2];
      }
      if (a.free_surface && z0 + row[u] == 0) continue;
      const int g = z0 + row[u];
      const float m = MS ? ms[row[u] * a.pitch + col[u]] : __ldg(a.m + g * a.slice + col[u]);
      float& o = nxt[row[u] * a.pitch + col[u]];
      o += m * added;
    }
  }
}

// The u^n at the taps band b samples, into the launch's step j of `samples`.
__device__ __forceinline__ void sample_band(const ResidentArgs& a, const float* cur, int b, int j) {
  float* out = a.samples + int64_t(j) * a.taps_total;
  for (int idx = a.sample_first[b] + int(threadIdx.x); idx < a.sample_first[b + 1]; idx += int(blockDim.x))
    out[__ldg(a.sample_tap + idx)] = cur[__ldg(a.sample_off + idx)];
}

// The traces of steps n0 .. n0 + count - 1 from the launch's samples: one warp a receiver and
// step, its lanes' shares and their tree as acoustic_record's, so the same bits.
__global__ void __launch_bounds__(128)
    resident_record(const int* start, const float* weight, const float* samples, int taps_total,
                    float* traces, int nrec, int64_t nt, int64_t n0, int count) {
  const int64_t w = (int64_t(blockIdx.x) * blockDim.x + threadIdx.x) / 32;
  const int lane = int(threadIdx.x % 32);
  if (w >= int64_t(nrec) * count) return;  // a whole warp leaves together
  const int r = int(w / count), j = int(w % count);
  const float* u = samples + int64_t(j) * taps_total;
  float sum = 0.f;
  for (int t = start[r] + lane; t < start[r + 1]; t += 32) sum += weight[t] * u[t];
#pragma unroll
  for (int d = 16; d > 0; d /= 2) sum += __shfl_down_sync(0xFFFFFFFFu, sum, d);
  if (lane == 0) traces[int64_t(r) * nt + n0 + j] = sum;
}

// After u^{n+1} is in `nxt` (step j of the launch): its edges out, the neighbours' in, and under a
// free surface band 0's mirror rows. Two parities of edges: a band writes parity j & 1 again only
// after its neighbours have published step j + 1, so after they read step j's.
__device__ __forceinline__ void exchange_edges(const ResidentArgs& a, float* nxt, int b, int rb, int j) {
  const int H = a.halo, q4 = a.edge_pitch / 4, n4 = H * q4, bands = int(gridDim.x), T = int(blockDim.x);
  const size_t edge = size_t(n4);
  float4* edges = reinterpret_cast<float4*>(a.edges);
  float4* mine = edges + (size_t(j & 1) * bands + b) * 2 * edge;
  const auto at = [&](int row, int idx) {  // 16-byte vector idx of the H rows from `row` on
    return reinterpret_cast<float4*>(nxt + (row + idx / q4) * a.pitch) + idx % q4;
  };
  for (int idx = int(threadIdx.x); idx < n4; idx += T) {
    mine[idx] = *at(0, idx);
    mine[edge + idx] = *at(rb - H, idx);
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    __threadfence();
    publish_flag(a.flags + b, unsigned(j + 1));
    if (b > 0)
      while (read_flag(a.flags + b - 1) < unsigned(j + 1)) {
      }
    if (b + 1 < bands)
      while (read_flag(a.flags + b + 1) < unsigned(j + 1)) {
      }
    __threadfence();
  }
  __syncthreads();
  const float4* above = edges + (size_t(j & 1) * bands + (b - 1)) * 2 * edge + edge;  // its bottom rows
  const float4* below = edges + (size_t(j & 1) * bands + (b + 1)) * 2 * edge;         // its top rows
  constexpr int kBatch = 4;  // loads in flight a thread before its stores
  for (int first = int(threadIdx.x); first < n4; first += kBatch * T) {
    float4 va[kBatch], vb[kBatch];
#pragma unroll
    for (int u = 0; u < kBatch; ++u) {
      const int idx = first + u * T;
      if (idx < n4 && b > 0) va[u] = __ldcg(above + idx);
      if (idx < n4 && b + 1 < bands) vb[u] = __ldcg(below + idx);
    }
#pragma unroll
    for (int u = 0; u < kBatch; ++u) {
      const int idx = first + u * T;
      if (idx < n4 && b > 0) *at(-H, idx) = va[u];
      if (idx < n4 && b + 1 < bands) *at(rb, idx) = vb[u];
    }
  }
  if (b == 0 && a.free_surface) {  // rows -1 .. -H: the odd mirror image of rows 1 .. H
    __syncthreads();
    for (int idx = int(threadIdx.x); idx < H * a.nx; idx += T) {
      const int r = idx / a.nx + 1, i = idx % a.nx;
      nxt[-r * a.pitch + i] = -nxt[r * a.pitch + i];
    }
  }
  __syncthreads();
}

// Steps n0 .. n0 + count - 1 of a 2D run, band blockIdx.x per block (cooperative: every band is
// resident, so the flags' waits end). MS: m held in shared memory.
template <int R, bool MS>
__global__ void __launch_bounds__(kResidentThreads, 1)
    acoustic_resident(ResidentArgs a, ResidentLevels l, int64_t n0, int count) {
  constexpr int V = kResidentVec;
  extern __shared__ float4 resident_smem[];
  const int b = int(blockIdx.x), z0 = a.band_first[b], rb = a.band_first[b + 1] - z0, H = a.halo;
  const int span = (a.rows + 2 * H) * a.pitch, total = 2 * span + (MS ? a.rows * a.pitch : 0);
  float* base = reinterpret_cast<float*>(resident_smem);
  for (int idx = int(threadIdx.x); idx < total; idx += int(blockDim.x)) base[idx] = 0.f;
  __syncthreads();
  float* cur = base + H * a.pitch + a.pad;
  float* nxt = cur + span;
  float* ms = MS ? base + 2 * span + a.pad : nullptr;
  load_rows(a, l.u, cur, z0, -H, rb + H, true);
  load_rows(a, l.prev, nxt, z0, 0, rb, true);
  if (MS) load_rows(a, a.m, ms, z0, 0, rb, false);
  __syncthreads();
  const int tb = a.tap_start[b], te = a.tap_start[b + 1];
  const int cols = (a.nx + V - 1) / V, runs = (rb + kResidentRun - 1) / kResidentRun;
  for (int j = 0; j < count; ++j) {
    const int64_t n = n0 + j;
    sample_band(a, cur, b, j);
    for (int item = int(threadIdx.x); item < cols * runs; item += int(blockDim.x)) {
      const int c = item % cols, k0 = (item / cols) * kResidentRun;
      march_run<R, V, MS>(a, cur, nxt, ms, c * V, k0, rb, z0, tb, te, n);
    }
    __syncthreads();
    layers_pass<R, MS>(a, cur, nxt, ms, z0, rb);
    __syncthreads();
    exchange_edges(a, nxt, b, rb, j);
    float* t = cur;
    cur = nxt;
    nxt = t;
  }
  for (int idx = int(threadIdx.x); idx < rb * a.nx; idx += int(blockDim.x)) {
    const int r = idx / a.nx, i = idx % a.nx;
    l.last[(z0 + r) * a.slice + i] = cur[r * a.pitch + i];
    l.before[(z0 + r) * a.slice + i] = nxt[r * a.pitch + i];
  }
}

}  // namespace fdstencil::cuda::wave
