// acoustic_step: one leapfrog step of u_tt = v^2 lap u + s, in one kernel or two (`split`, below).
// The stencil is a z march (z from a queue: registers, and with the tile's `zq` partly a
// shared-memory ring) in one of two designs, chosen per radius and plane size by measurement
// (acoustic.cu's defaults):
//   l1    seismic/xyz_l1march.cuh's: no tile, no barrier, x and y straight from global memory
//         through Hopper's L1 (march_l1);
//   tile  seismic/xyz_pipelined.cuh's: x and y from a double-buffered shared-memory tile of the
//         plane, its halo copied by cp.async one plane ahead (march_tile; 3D, 4-wide vectors);
//   tma   seismic/xyz_tma.cuh's: x and y from a ring of whole plane tiles that the tensor memory
//         accelerator brings, `ahead` planes beyond the newest a step reads, no block barrier in
//         the march (march_tma; 3D, 4-wide vectors; the interior box only, its boundary blocks
//         take the l1 march).
// In 2D at R = 3 and 4 the plain blocks take march_rows: the l1 march with each row's x neighbours
// loaded a row ahead (acoustic_step_rows, and acoustic_step_beside.cuh's one-kernel step).
// On top of either, per point (update_points, the same arithmetic in the same order for both):
//   the leapfrog update  u^{n+1} = 2 u^n - u^{n-1} + m L   (physics/acoustic.hpp), written over u^{n-1};
//   the CPML, per axis, where a block's points reach that axis's layer (block-uniform template
//     flags: the interior blocks run the plain sum of second derivatives and never compute a first
//     one, and a block at an x face pays for x's memory variables alone). Loading the memory
//     variables at the top of each plane, to hide their latency, took the kernel from 80 to 166
//     registers at R = 1 (every variant pays the heaviest one's) and slowed the interior. Hence,
//     with `split`, two kernels a step: the blocks outside the interior box, then the box by a
//     kernel compiled without the CPML;
//   the sources' taps (added into u^{n+1}), found by a binary search of the block's own sorted
//     list, so a block without taps pays one pair of loads. Receivers are acoustic_record's.
// The interior moves 16 bytes per point: u^n, u^{n-1} and m read, u^{n+1} written.
#pragma once

#include <cstdint>

#include "physics/acoustic.hpp"
#include "cuda/common/async_copy.cuh"
#include "cuda/common/dependent_launch.cuh"
#include "cuda/common/thread_ring.cuh"
#include "cuda/common/vec.cuh"
#include "cuda/seismic/tile.cuh"
#include "cuda/seismic/tma_ring.cuh"

namespace fdstencil::cuda::wave {

// Kernels compile for at most this many threads per block, so nvcc may give each up to 255
// registers: the R = 8 queue, window and six accumulators of 4-wide vectors need ~150.
inline constexpr int kStepThreads = 256;

// Planes the queue's front is loaded ahead of the plane being written (the L1 march's choice,
// seismic/common.cuh kMarchPrefetch: it hides one iteration of arithmetic behind the load).
inline constexpr int kPrefetch = 2;

struct StepArgs {
  float* out;      // u^{n-1} in, u^{n+1} out, at computational point (0, 0, 0)
  const float* u;  // u^n
  const float* m;  // (v dt)^2
  int nx, ny, nz, nw;
  // The launch's first chunk of nw planes: blockIdx.z + chunk_first is the block's chunk, so a
  // launch may cover any run of chunks (a split run's face and inner chunks, acoustic.cu). Likewise
  // along x and y, blockIdx + block_first is the block's place in the whole grid of grid_blocks
  // (the interior kernel's launch covers the interior box alone).
  int chunk_first;
  int block_first[2];
  int grid_blocks[2];
  // The interior box: the blocks whose whole extent (lanes past nx, ny, nz included, so a partial
  // last block is never in it) lies clear of every CPML layer, [first, end) along x, y (blocks)
  // and z (chunks). The interior kernel runs them; the boundary kernel skips them.
  int interior[3][2];
  // The points the march writes, [keep[ax][0], keep[ax][1]) along x, y and z: every point, but
  // under the CPML beside (KernelConfig::cpml_beside) those clear of every layer; the layers'
  // kernel writes the rest. A vector with no point to write skips its update (u^{n-1} and m are not
  // read, nothing is stored); the march still reads u^n there for its neighbours.
  int keep[3][2];
  int64_t line, slice;
  int ahead;  // the tma design's tiles in flight beyond the R + 1 a step reads
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
  // A CUDA graph's steps (AcousticGpu::steps): the step passed is relative to *step_base, which
  // the graph's last node advances, so that one graph serves every block of steps. nullptr: the
  // step passed is the step.
  const int64_t* step_base;
};

__device__ __forceinline__ int64_t tap_key(int64_t i, int64_t j, int64_t k, int64_t nx, int64_t ny) {
  return (k * ny + j) * nx + i;
}

// The first of the sorted keys[first, end) not below key (std::lower_bound's), or end.
__device__ __forceinline__ int first_key_at_least(const int64_t* keys, int first, int end, int64_t key) {
  int count = end - first;
  while (count > 0) {
    const int half = count / 2;
    if (keys[first + half] < key) {
      first += half + 1;
      count -= half + 1;
    } else {
      count = half;
    }
  }
  return first;
}

// The block's place in the whole grid: x and y blocks, chunk along z; and its taps: [tb, te) of
// the list sorted by (chunk, y, x) block.
__device__ __forceinline__ int block_x(const StepArgs& a) { return int(blockIdx.x) + a.block_first[0]; }
__device__ __forceinline__ int block_y(const StepArgs& a) { return int(blockIdx.y) + a.block_first[1]; }
__device__ __forceinline__ int block_chunk(const StepArgs& a) { return int(blockIdx.z) + a.chunk_first; }
__device__ __forceinline__ int2 block_taps(const StepArgs& a) {
  const int64_t block =
      (int64_t(block_chunk(a)) * a.grid_blocks[1] + block_y(a)) * a.grid_blocks[0] + block_x(a);
  return make_int2(a.tap_start[block], a.tap_start[block + 1]);
}
__device__ __forceinline__ bool block_in_interior(const StepArgs& a) {
  const int b[3] = {block_x(a), block_y(a), block_chunk(a)};
  bool in = true;
#pragma unroll
  for (int ax = 0; ax < 3; ++ax) in = in && b[ax] >= a.interior[ax][0] && b[ax] < a.interior[ax][1];
  return in;
}

// Step n at one thread's V points of plane k: the second (and, in a CPML layer, first)
// derivatives, the CPML, the leapfrog update, the sources' taps, and the store over u^{n-1}.
// centre is the thread's own u^n; z_at(r) is u^n's vector r - R planes along z (the queue),
// x_at(c) its vector (c - C) V points along x (C = ceil(R / V)) and y_at(l) its vector l - R lines
// along y. The march designs differ only in where those read from (registers or a shared-memory
// ring; global memory through L1 or a shared-memory tile), so every design does the same
// arithmetic in the same order: the same field to the bit.
template <int R, int V, bool kY, bool PX, bool PY, bool PZ, class ZAt, class XAt, class YAt>
__device__ __forceinline__ void update_points(const StepArgs& a, const Vec<float, V>& centre, ZAt z_at,
                                              XAt x_at, YAt y_at, int i0, int j0, int k, int tb, int te,
                                              int64_t n, float* out, const float* m) {
  constexpr int C = (R + V - 1) / V;
  constexpr bool kPml[3] = {PX, PY, PZ};
  if (k < a.keep[2][0] || k >= a.keep[2][1] || j0 < a.keep[1][0] || j0 >= a.keep[1][1] ||
      i0 + V <= a.keep[0][0] || i0 >= a.keep[0][1])
    return;
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
      const Vec<float, V> v = l == R ? centre : y_at(l);
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
    const Vec<float, V> v = c == C ? centre : x_at(c);
#pragma unroll
    for (int e = 0; e < V; ++e) w[c * V + e] = v.v[e];
  }
  // Plane by plane, so that a plane from the ring is read once; each sum still runs r = 0..2R.
#pragma unroll
  for (int r = 0; r <= 2 * R; ++r) {
    const Vec<float, V> zv = r == R ? centre : z_at(r);
#pragma unroll
    for (int e = 0; e < V; ++e) {
      const float x = w[C * V + e + r - R], z = zv.v[e];
      d2[0][e] += a.w2[r] * x;
      d2[2][e] += a.w2[r] * z;
      if constexpr (PX) d1[0][e] += a.w1[r] * x;
      if constexpr (PZ) d1[2][e] += a.w1[r] * z;
    }
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
    o.v[e] = acoustic::leapfrog(centre.v[e], prev.v[e], mv.v[e], lap);
    if (a.free_surface && k == 0) o.v[e] = 0.f;
  }
  if (tb < te) {  // this block holds taps: find this thread's among them
    const int64_t lo_key = tap_key(i0, j0, k, a.nx, a.ny), hi_key = lo_key + V;
    const int first = first_key_at_least(a.tap_key, tb, te, lo_key);
    const int64_t step = a.step_base ? n + *a.step_base : n;
    for (int t = first; t < te && a.tap_key[t] < hi_key; ++t) {
      const acoustic::Tap tp = a.taps[t];
      // hi_key may run past the line's end when nx < V: a key there is another line's point.
      if (tp.j != j0 || tp.k != k) continue;
      const int e = tp.i - i0;
#pragma unroll
      for (int ee = 0; ee < V; ++ee)
        if (ee == e)
          o.v[ee] += tp.w * a.wavelets[tp.id * a.nt + step];  // constant indices keep o in registers
    }
  }
  const int first = a.keep[0][0] - i0, valid = min(a.nx, a.keep[0][1]) - i0;
  if (first <= 0) {
    store_streaming(out, o, valid);
  } else {  // the vector starts in the x layer's points, which are the layers' kernel's
#pragma unroll
    for (int e = 0; e < V; ++e)
      if (e >= first && e < valid) __stcs(out + e, o.v[e]);
  }
}

// The z queue of a march starting at plane k0: planes k0 - R .. k0 + R + D - 1 (those below k1 +
// R; Q = 2R + 1 + D), the planes above a free surface as the odd mirror image of those below it,
// each handed to put(r, vector) for queue entry r. u is at the thread's column on plane k0.
template <int R, int V, int Q, class Put>
__device__ __forceinline__ void fill_queue(const StepArgs& a, const float* u, int k0, int k1, Put put) {
#pragma unroll
  for (int r = 0; r < Q - 1; ++r) {
    const int kk = k0 + r - R;
    if (kk < k1 + R) {
      if (a.free_surface && kk < 0) {  // the odd mirror image about the surface z = 0
        Vec<float, V> v = load_vec<float, V>(u + (-2 * k0 - (r - R)) * a.slice);
#pragma unroll
        for (int e = 0; e < V; ++e) v.v[e] = -v.v[e];
        put(r, v);
      } else {
        put(r, load_vec<float, V>(u + (r - R) * a.slice));
      }
    }
  }
}

// The L1 design: x and y neighbours straight from global memory, cached by L1; no barrier, so a
// thread outside the domain has already left. XAhead (march_rows, below): each row's x neighbours
// loaded a row ahead.
template <int R, int V, bool kY, bool PX, bool PY, bool PZ, bool XAhead = false>
__device__ __forceinline__ void march_l1(const StepArgs& a, int i0, int j0, int k0, int k1, int tb, int te,
                                         int64_t n) {
  constexpr int C = (R + V - 1) / V;
  constexpr int D = kPrefetch;
  constexpr int Q = 2 * R + 1 + D;
  const float* u = a.u + i0 + a.line * j0 + a.slice * k0;
  float* out = a.out + i0 + a.line * j0 + a.slice * k0;
  const float* m = a.m + i0 + a.line * j0 + a.slice * k0;
  Vec<float, V> q[Q];
  fill_queue<R, V, Q>(a, u, k0, k1, [&](int r, const Vec<float, V>& v) { q[r] = v; });
  auto load_x = [&](Vec<float, V>* x, const float* row) {
#pragma unroll
    for (int c = 0; c <= 2 * C; ++c)
      if (c != C) x[c] = load_vec<float, V>(row + (c - C) * V);
  };
  Vec<float, V> x[2 * C + 1];  // XAhead: row k's x neighbours; entry C, the centre, is q[R]
  if constexpr (XAhead)
    if (k0 < k1) load_x(x, u);
  for (int k = k0; k < k1; ++k) {
    if (k + D < k1) q[Q - 1] = load_vec<float, V>(u + (R + D) * a.slice);
    Vec<float, V> next[2 * C + 1];
    if constexpr (XAhead)
      if (k + 1 < k1) load_x(next, u + a.slice);
    update_points<R, V, kY, PX, PY, PZ>(
        a, q[R], [&](int r) { return q[r]; },
        [&](int c) {
          if constexpr (XAhead)
            return x[c];
          else
            return load_vec<float, V>(u + (c - C) * V);
        },
        [&](int l) { return load_vec<float, V>(u + (l - R) * a.line); }, i0, j0, k, tb, te, n, out, m);
#pragma unroll
    for (int r = 0; r < Q - 1; ++r) q[r] = q[r + 1];
    if constexpr (XAhead) {
#pragma unroll
      for (int c = 0; c <= 2 * C; ++c)
        if (c != C) x[c] = next[c];
    }
    u += a.slice;
    out += a.slice;
    m += a.slice;
  }
}

// The 2D march of plain blocks (no CPML compiled) with each row's x neighbours loaded a row ahead,
// while the row before is computed. In march_l1 a row's arithmetic waits on its x neighbours'
// loads (L1 hits, issued in the same row): with the few warps a 2D launch keeps resident, that
// wait was the kernel's largest stall (Nsight Compute, docs/wave.md). The 2C vectors ahead cost
// 2C V more registers, which the kernels that call this hold to the occupancy of the march
// without them (kRowsMinBlocks).
template <int R, int V>
__device__ __forceinline__ void march_rows(const StepArgs& a, int i0, int k0, int k1, int tb, int te,
                                           int64_t n) {
  march_l1<R, V, false, false, false, false, true>(a, i0, 0, k0, k1, tb, te, n);
}

// Where march_rows leads march_l1 (measured at R = 4: docs/wave.md; R = 3 follows it): at R = 1
// and 2 it ran from a few per cent behind to a few ahead, at R = 8 it lost on 1000^2 and 1400^2
// models.
__host__ __device__ constexpr bool rows_lead(int radius) { return radius == 3 || radius == 4; }

// march_rows' kernels compile for at least this many resident blocks of kStepThreads threads, so
// for at most 65536 / (256 x 3) = 85 registers: at R = 3 and 4 march_rows then takes 78-80 (4-wide),
// the occupancy of march_l1's 76, where unbounded it took 97 and ran slower.
inline constexpr int kRowsMinBlocks = 3;

// The tile design (3D, V = 4: seismic/xyz_pipelined.cuh's plan under the same update): each plane's
// x and y neighbours come from a shared-memory tile of the block's plane, two tiles in turn. While
// the block computes plane k from one, the halo of plane k + 1 is copied into the other with
// cp.async (no registers held) and each thread writes its own centre into it. One barrier per
// plane; every thread of the block marches, those outside the domain to load its halo.
// ZQ > 0 (`zq` 1: ZQ = R) keeps the queue's ZQ oldest planes (k - R .. k - R + ZQ - 1) in a ring
// of ZQ 16-byte slots per thread behind the tiles, as xyz_pipelined's `zq` does: each thread reads
// and writes only its own slots, so no barrier guards them.
inline constexpr int kTileVec = 4;  // cp.async moves 16 bytes: 4 floats

template <int R, int ZQ, bool PX, bool PY, bool PZ>
__device__ __forceinline__ void march_tile(const StepArgs& a, float* tiles, int k0, int k1, int tb, int te,
                                           int64_t n) {
  constexpr int V = kTileVec;
  constexpr int C = (R + V - 1) / V;
  constexpr int D = kPrefetch;
  constexpr int Q = 2 * R + 1 + D;
  static_assert(ZQ >= 0 && ZQ <= R, "the centre stays in a register");
  constexpr int QR = Q - ZQ;  // queue entries in registers: planes k - R + ZQ .. k + R + D
  const seismic::TileShape<R, V> s{int(blockDim.x), int(blockDim.y)};
  constexpr int P = seismic::TileShape<R, V>::P;
  const int pitch = s.pitch();
  const int x0 = V * block_x(a) * int(blockDim.x), jb = block_y(a) * int(blockDim.y);
  const int i0 = x0 + V * int(threadIdx.x), j0 = jb + int(threadIdx.y);
  const int rank = int(threadIdx.x + blockDim.x * threadIdx.y), threads = int(blockDim.x * blockDim.y);
  // A thread whose centre is some stored point's neighbour loads it; only the domain's are stored.
  const bool loads = i0 < a.nx + R && j0 < a.ny + R;
  const bool stores = i0 < a.nx && j0 < a.ny;
  const int64_t column = i0 + a.line * j0 + a.slice * k0;
  const float* u = a.u + column;
  float* out = a.out + column;
  const float* m = a.m + column;
  const int centre = (int(threadIdx.y) + R) * pitch + P + V * int(threadIdx.x);
  auto start_halo = [&](int k, float* tile) {
    const float* plane = a.u + a.slice * k;
    seismic::for_each_halo_vector(s, rank, threads, [&](int row, int col) {
      // The vectors that some stored point reads (seismic/tile.cuh tile_vector_exists).
      if (jb - R + row < a.ny + R && x0 - P + col < a.nx + R)
        ptx::copy_async16(tile + row * pitch + col, plane + (x0 - P + col) + int64_t(jb - R + row) * a.line);
    });
    ptx::copy_async_commit();
  };
  ThreadRing<float, V, ZQ> ring(tiles + 2 * s.elems(), rank, threads);  // entry 0: plane k - R
  Vec<float, V> q[QR] = {};
  auto put = [&](int r, const Vec<float, V>& v) {
    if (r < ZQ)
      ring.fill(r, v);
    else
      q[r < ZQ ? 0 : r - ZQ] = v;
  };
  if constexpr (ZQ > 0) {  // entries fill_queue leaves alone read as zero, as the registers' do
#pragma unroll
    for (int r = 0; r < ZQ; ++r) put(r, Vec<float, V>{});
  }
  if (loads) fill_queue<R, V, Q>(a, u, k0, k1, put);
  if (k0 < k1) start_halo(k0, tiles);
  for (int k = k0; k < k1; ++k) {
    float* tile = tiles + ((k - k0) & 1) * s.elems();
    if (loads && k + D < k1) q[QR - 1] = load_vec<float, V>(u + (R + D) * a.slice);
    store_vec(tile + centre, q[R - ZQ]);
    ptx::copy_async_wait_all();
    // Plane k's halo and centres have landed, and every thread has finished reading the other
    // tile (plane k - 1), which may now be refilled.
    __syncthreads();
    if (k + 1 < k1) start_halo(k + 1, tiles + ((k + 1 - k0) & 1) * s.elems());
    if (stores)
      update_points<R, V, true, PX, PY, PZ>(
          a, q[R - ZQ], [&](int r) { return r < ZQ ? ring[r] : q[r < ZQ ? 0 : r - ZQ]; },
          [&](int c) { return load_vec<float, V>(tile + centre + (c - C) * V); },
          [&](int l) { return load_vec<float, V>(tile + centre + (l - R) * pitch); }, i0, j0, k, tb, te, n,
          out, m);
    if constexpr (ZQ > 0) ring.push(q[0]);  // plane k - R + ZQ takes the slot of plane k - R, which is done
#pragma unroll
    for (int r = 0; r < QR - 1; ++r) q[r] = q[r + 1];
    u += a.slice;
    out += a.slice;
    m += a.slice;
  }
}

// The tma design (3D, V = 4: seismic/xyz_tma.cuh's ring under the same update), for the interior
// box: the tile of each plane, interior and x/y halo, comes whole by one bulk tensor copy into a
// ring of R + 1 + ahead tiles (seismic/tma_ring.cuh), asked for by one producer thread; x and y
// from the tile of plane k, the z queue in registers, its R planes below the chunk from global
// memory (mirrored above a free surface, as fill_queue's) and each newer plane from the centre of
// the newest tile. `map` describes u^n from point (-P, -R, -R), its box one tile (acoustic.cu).
// Every thread marches to the end: each warp releases each tile. In the interior box every lane
// is inside the domain (a partial block is never in it), so every thread also stores.
template <int R>
__device__ __forceinline__ void march_tma(const StepArgs& a, const CUtensorMap* map, int k0, int k1, int tb,
                                          int te, int64_t n) {
  constexpr int V = kTileVec;
  constexpr int C = (R + V - 1) / V;
  extern __shared__ __align__(seismic::kTmaTileAlign) unsigned char step_ring[];
  const seismic::TileShape<R, V> s{int(blockDim.x), int(blockDim.y)};
  const int pitch = s.pitch();
  const int x0 = V * block_x(a) * int(blockDim.x), jb = block_y(a) * int(blockDim.y);
  const int i0 = x0 + V * int(threadIdx.x), j0 = jb + int(threadIdx.y);
  const int rank = int(threadIdx.x + blockDim.x * threadIdx.y), threads = int(blockDim.x * blockDim.y);
  const bool stores = i0 < a.nx && j0 < a.ny;
  const int64_t column = i0 + a.line * j0 + a.slice * k0;
  float* out = a.out + column;
  const float* m = a.m + column;
  const int centre = (int(threadIdx.y) + R) * pitch + seismic::TileShape<R, V>::P + V * int(threadIdx.x);
  // Tile t holds plane k0 + t; there are k1 - k0 + R of them (through plane k1 + R - 1).
  seismic::TmaTileRing<float> ring(step_ring, s.elems(), seismic::tma_ring_tiles(R, a.ahead), R, map, x0, jb,
                                   k0, k1 - k0 + R);
  ring.start(rank == 0, threads);
  // The queue q[r] holds plane k - R + r: before the first step the R planes below the chunk
  // (fill_queue's first R entries), then the R from k0 up from the first tiles.
  Vec<float, V> q[2 * R + 1] = {};
  if (stores)
    fill_queue<R, V, R + 1>(a, a.u + column, k0, k1, [&](int r, const Vec<float, V>& v) { q[r] = v; });
  ring.wait_first(R);
#pragma unroll
  for (int r = R; r < 2 * R; ++r) q[r] = load_vec<float, V>(ring.first(r - R) + centre);
  for (int k = k0; k < k1; ++k) {
    if (rank == 0) ring.refill(k - k0);
    q[2 * R] = load_vec<float, V>(ring.newest() + centre);
    const float* tile = ring.oldest();
    if (stores)
      update_points<R, V, true, false, false, false>(
          a, q[R], [&](int r) { return q[r]; },
          [&](int c) { return load_vec<float, V>(tile + centre + (c - C) * V); },
          [&](int l) { return load_vec<float, V>(tile + centre + (l - R) * pitch); }, i0, j0, k, tb, te, n,
          out, m);
    ring.release_and_advance(rank);
#pragma unroll
    for (int r = 0; r < 2 * R; ++r) q[r] = q[r + 1];
    out += a.slice;
    m += a.slice;
  }
}

// Which axes' CPML layers the block's points reach: uniform over the block, so the branch costs
// nothing and each block compiles only the first derivatives and memory variables it needs.
// f.template operator()<PX, PY, PZ>() is called with the block's flags as constants.
template <int V, bool kY, class F>
__device__ __forceinline__ void with_block_pml(const StepArgs& a, int k0, int k1, F&& f) {
  const int bx0 = V * block_x(a) * int(blockDim.x), bx1 = bx0 + V * int(blockDim.x);
  const int by0 = block_y(a) * int(blockDim.y), by1 = by0 + int(blockDim.y);
  const bool px = bx0 < a.axis[0].lo || bx1 > a.nx - a.axis[0].hi;
  const bool py = kY && (by0 < a.axis[1].lo || by1 > a.ny - a.axis[1].hi);
  // z through the axis's offset: a slab of a split run sees the whole domain's layers.
  const int64_t g0 = k0 + a.axis[2].offset, g1 = k1 + a.axis[2].offset;
  const bool pz = g0 < a.axis[2].lo || g1 > a.axis[2].n - a.axis[2].hi;
  switch (int(px) | int(py) << 1 | int(pz) << 2) {
    case 0: return f.template operator()<false, false, false>();
    case 1: return f.template operator()<true, false, false>();
    case 4: return f.template operator()<false, false, true>();
    case 5: return f.template operator()<true, false, true>();
  }
  if constexpr (kY) {  // the y faces exist in 3D only
    switch (int(px) | int(pz) << 1) {
      case 0: return f.template operator()<false, true, false>();
      case 1: return f.template operator()<true, true, false>();
      case 2: return f.template operator()<false, true, true>();
      default: return f.template operator()<true, true, true>();
    }
  }
}

// Two kernels per design: Interior runs the interior box (its launch covers only that) and
// compiles no CPML at all; the boundary kernel runs every other block, each with its block's
// flags, and skips the interior box's (an empty box, `split` 0: it runs them all). Registers are
// a kernel's heaviest path's, so the interior blocks no longer pay for the CPML's (tile, R = 8:
// 127 registers against 164). Fewer is not always faster: the l1 march's interior kernel at R = 4
// (80 against 126) ran slower, so `split` is chosen per radius (acoustic.cu's defaults).
// Pml false: a boundary kernel without the CPML, for the tma design's blocks outside its box when
// the layers' terms are added apart (acoustic_layers.cuh).
template <int R, int V, bool kY, bool Interior, bool Pml = true>
__global__ void __launch_bounds__(kStepThreads) acoustic_step(StepArgs a, int64_t n) {
  join_dependent_chain();
  if constexpr (!Interior)
    if (block_in_interior(a)) return;
  const int i0 = V * int(threadIdx.x + block_x(a) * blockDim.x);
  const int j0 = kY ? int(threadIdx.y + block_y(a) * blockDim.y) : 0;
  const int k0 = block_chunk(a) * a.nw;
  const int k1 = min(k0 + a.nw, a.nz);
  const int2 t = block_taps(a);
  if (i0 >= a.nx || j0 >= a.ny) return;  // no barrier: an idle thread may simply leave
  if constexpr (Interior || !Pml) {
    march_l1<R, V, kY, false, false, false>(a, i0, j0, k0, k1, t.x, t.y, n);
  } else {
    with_block_pml<V, kY>(a, k0, k1, [&]<bool PX, bool PY, bool PZ>() {
      march_l1<R, V, kY, PX, PY, PZ>(a, i0, j0, k0, k1, t.x, t.y, n);
    });
  }
}

// A 2D step's plain blocks (the interior box's, or every block when the CPML is not in the march):
// march_rows, its registers held (kRowsMinBlocks). Instantiated where rows_lead.
template <int R, int V>
__global__ void __launch_bounds__(kStepThreads, kRowsMinBlocks) acoustic_step_rows(StepArgs a, int64_t n) {
  join_dependent_chain();
  const int i0 = V * int(threadIdx.x + block_x(a) * blockDim.x);
  const int k0 = block_chunk(a) * a.nw;
  const int k1 = min(k0 + a.nw, a.nz);
  const int2 t = block_taps(a);
  if (i0 >= a.nx) return;
  march_rows<R, V>(a, i0, k0, k1, t.x, t.y, n);
}

// Dynamic shared memory: two tiles of the block's plane (tile_bytes(bx, by, R, 4) each), then the
// ring of ZQ x 16 bytes per thread. Interior as acoustic_step's.
template <int R, int ZQ, bool Interior>
__global__ void __launch_bounds__(kStepThreads) acoustic_step_tile(StepArgs a, int64_t n) {
  join_dependent_chain();
  if constexpr (!Interior)
    if (block_in_interior(a)) return;  // the whole block: no barrier is left waiting
  extern __shared__ __align__(16) float step_tiles[];
  const int k0 = block_chunk(a) * a.nw;
  const int k1 = min(k0 + a.nw, a.nz);
  const int2 t = block_taps(a);
  if constexpr (Interior) {
    march_tile<R, ZQ, false, false, false>(a, step_tiles, k0, k1, t.x, t.y, n);
  } else {
    with_block_pml<kTileVec, true>(a, k0, k1, [&]<bool PX, bool PY, bool PZ>() {
      march_tile<R, ZQ, PX, PY, PZ>(a, step_tiles, k0, k1, t.x, t.y, n);
    });
  }
}

// The tma design's kernel: the interior box only (no CPML compiled; its boundary blocks run
// acoustic_step<R, 4, true, false>, the l1 march). Dynamic shared memory: the ring,
// seismic::tma_smem_bytes(bx, by, R, 4, ahead). `map` as march_tma's.
template <int R>
__global__ void __launch_bounds__(kStepThreads)
    acoustic_step_tma(StepArgs a, int64_t n, const __grid_constant__ CUtensorMap map) {
  join_dependent_chain();
  const int k0 = block_chunk(a) * a.nw;
  const int k1 = min(k0 + a.nw, a.nz);
  const int2 t = block_taps(a);
  march_tma<R>(a, &map, k0, k1, t.x, t.y, n);
}

}  // namespace fdstencil::cuda::wave
