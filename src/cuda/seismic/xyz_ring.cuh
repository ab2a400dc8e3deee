// d2xyz in one pass, ours (3), and d2z with the same engine: a z-march whose planes arrive in a
// ring of shared-memory tiles, copied by cp.async `ahead` planes before they are needed.
//
// The earlier marches hold their loads in registers: each thread's next plane (z queue front) is
// a register load in flight, so the bytes a block keeps in flight are one vector per thread, and
// the queue's registers cap the occupancy that would have to make up for it (docs/seismic.md,
// "What limits the one-pass kernels"). Here the copies do not pass through registers: a block
// keeps `ahead` whole plane tiles in flight (6.4 KB each at R = 4 for a 32 x 32 tile), whatever
// its occupancy, and a thread's registers hold only its z queue, fed from the ring.
//
// A block owns TX x TY = (bx V) x (by MY) points of the xy-plane and marches `nw` planes along z.
// Plane p's tile (its TX x TY points, R lines above and below, P = R rounded up to 16 bytes left
// and right, without the four corners nobody reads) lands in ring slot (p - k0 + R) mod S. Step t
// of the march consumes plane p = k0 - R + t:
//   the copies of plane p have landed (wait for all but the ahead - 1 newest groups, then the
//     barrier, which also says everyone has finished the step before);
//   plane p + ahead starts copying into the slot that plane p - R - 1 used;
//   z  each thread takes its V x MY points of plane p from the ring into its register queue
//      (2R + 1 planes), and once the queue is full, computes plane k = p - R:
//   y  MY + 2R lines of plane k's tile (column of V points), its own MY from the queue: one load
//      serves up to MY outputs (register blocking along y);
//   x  ceil(R / V) vectors each side from the tile row, the centre from the queue.
// Live slots: p - R (x and y), ..., p (the front), up to p + ahead (in flight): S = R + ahead + 1.
// XY = false is d2z: no halo, no x or y taps; the ring then only hides the latency.
#pragma once

#include "cuda/common/async_copy.cuh"
#include "cuda/common/vec.cuh"
#include "cuda/seismic/common.cuh"

namespace fdstencil::cuda::seismic {

// The copies are 16-byte granules: a tile row starts and ends on a 16-byte boundary.
template <class T, int R, bool XY>
struct RingHalo {
  static constexpr int G = kVec16<T>;            // elements per granule
  static constexpr int P = XY ? kPad<R, G> : 0;  // x halo, whole granules
  static constexpr int H = XY ? R : 0;           // y halo
};

// The ring's slots, for the launch's shared memory (host) and the kernel's arithmetic.
inline int ring_stages(int radius, int ahead) { return radius + ahead + 1; }
inline size_t ring_bytes(int tx, int ty, int radius, bool xy, int ahead, int elem_bytes) {
  const int g = 16 / elem_bytes;
  const int p = xy ? (radius + g - 1) / g * g : 0, h = xy ? radius : 0;
  return size_t(tx + 2 * p) * size_t(ty + 2 * h) * size_t(ring_stages(radius, ahead)) * size_t(elem_bytes);
}

// A thread's share of a plane's copies when it is at most this many granules (16-byte copies):
// their offsets are computed once and held in 2 registers each, so a plane costs a few
// instructions per copy. Blocks with more per thread (small blocks, wide halos) take the general
// loop, which recomputes each copy's position (~35 instructions per copy in the sm_90 code).
inline constexpr int kRingCopiesHeld = 4;

// Blocks of at most 256 threads, and the number of them an SM must hold, from the queue's size:
// nvcc then keeps to 65536 / (256 x blocks) registers. Without the floor, the march unrolled by
// the queue length took 81-128 registers (a quarter of the SM's threads at every R, and issue-bound
// at R = 4 before the unrolling: docs/seismic.md); the queue plus ~28 is what it needs.
inline constexpr int kRingThreads = 256;
constexpr int ring_min_blocks(int queue_registers) {
  return queue_registers <= 36 ? 4 : queue_registers <= 56 ? 3 : 2;
}

// Floor: false drops the floor (at most 256 threads a block, one block per SM guaranteed), so nvcc
// takes the registers it wants, up to 255. The floor made 33 of 74 instances measured spill 8-136
// bytes a thread (bench/results/nvidia-h100/ring-fixed/); without it nothing spills but occupancy
// falls, and which wins depends on R and shape (ring-floor/, the `floor` parameter).
template <class T, int R, int V, int MY, bool XY, bool Floor = true>
__global__ void __launch_bounds__(kRingThreads,
                                  Floor ? ring_min_blocks((2 * R + 1) * V * MY * int(sizeof(T)) / 4) : 1)
    xyz_ring(Args<T> a) {
  using Halo = RingHalo<T, R, XY>;
  constexpr int G = Halo::G, P = Halo::P, H = Halo::H;
  constexpr int C = (R + V - 1) / V;  // x neighbour vectors on each side
  constexpr int Q = 2 * R + 1;        // the z queue
  extern __shared__ __align__(16) unsigned char smem_raw[];
  T* const ring = reinterpret_cast<T*>(smem_raw);
  const int TX = int(blockDim.x) * V, TY = int(blockDim.y) * MY;
  const int pitch = TX + 2 * P, rows = TY + 2 * H, stage = pitch * rows;
  const int ahead = a.ahead, S = R + ahead + 1;
  const int tile_x = a.z_first ? blockIdx.y : blockIdx.x;
  const int tile_y = a.z_first ? blockIdx.z : blockIdx.y;
  const int chunk = a.z_first ? blockIdx.x : blockIdx.z;
  const int x0 = tile_x * TX, j0 = tile_y * TY;
  const int k0 = chunk * a.nw, k1 = min(k0 + a.nw, a.nz);
  const int steps = k1 - k0 + 2 * R;  // planes k0 - R .. k1 - 1 + R
  const int i0 = x0 + V * int(threadIdx.x), jt = j0 + MY * int(threadIdx.y);
  const int rank = int(threadIdx.x + blockDim.x * threadIdx.y), threads = int(blockDim.x * blockDim.y);

  // The copy pattern, the same for every plane: this thread's granules are rank, rank + threads,
  // ... of the tile's rows x (pitch / G). Rows from j = ny + R on and granules from x = nx + R on
  // lie past the halo and are never copied (their slots only feed outputs that are not stored),
  // nor are the corners.
  const int per_row = pitch / G;
  const int rows_exist = min(rows, a.ny + R - (j0 - H));
  const int cols_exist = a.nx + R - (x0 - P);
  const T* const origin = a.u + (x0 - P) + int64_t(j0 - H) * a.line + int64_t(k0 - R) * a.slice;
  auto wanted = [&](int row, int c) {
    const bool corner = XY && (row < H || row >= H + TY) && (c < P || c >= P + TX);
    return !corner && row < rows_exist && c < cols_exist;
  };
  const bool held = (rows * per_row + threads - 1) / threads <= kRingCopiesHeld &&
                    int64_t(rows) * a.line + pitch < (int64_t(1) << 31);
  int held_n = 0, held_smem[kRingCopiesHeld], held_global[kRingCopiesHeld];
  if (held) {
#pragma unroll
    for (int n = 0; n < kRingCopiesHeld; ++n) {
      const int g = rank + n * threads, row = g / per_row, c = g % per_row * G;
      if (row < rows && wanted(row, c)) {
        // Compacted: the held slots hold only copies that happen.
#pragma unroll
        for (int m = 0; m < kRingCopiesHeld; ++m)
          if (m == held_n) held_smem[m] = row * pitch + c, held_global[m] = c + row * int(a.line);
        ++held_n;
      }
    }
  }
  auto issue = [&](int t, int slot) {
    T* dst = ring + slot * stage;
    const T* src = origin + int64_t(t) * a.slice;
    if (held) {
#pragma unroll
      for (int n = 0; n < kRingCopiesHeld; ++n)
        if (n < held_n) ptx::copy_async16(dst + held_smem[n], src + held_global[n]);
      return;
    }
    for (int g = rank; g < rows * per_row; g += threads) {
      const int row = g / per_row, c = g % per_row * G;
      if (wanted(row, c)) ptx::copy_async16(dst + row * pitch + c, src + c + int64_t(row) * a.line);
    }
  };

  for (int t = 0; t < ahead; ++t) {  // one group per plane, empty past the chunk, so counts stay even
    if (t < steps) issue(t, t);
    ptx::copy_async_commit();
  }
  const bool computes = i0 < a.nx && jt < a.ny;
  const int own = (H + MY * int(threadIdx.y)) * pitch + P + V * int(threadIdx.x);
  T* f = a.f + i0 + int64_t(jt) * a.line + int64_t(k0 - 2 * R) * a.slice;  // output of step t: f + t slices
  // The queue: plane step s in q[.][s % Q]. The march is unrolled by Q, so every queue index is a
  // constant and the queue never moves (a shifted queue cost 2R x V x MY register moves a plane).
  Vec<T, V> q[MY][Q];
  int slot_front = 0, slot_xy = S - R, slot_next = ahead;  // planes t, t - R and t + ahead
  for (int t0 = 0; t0 < steps; t0 += Q) {
#pragma unroll
    for (int ph = 0; ph < Q; ++ph) {
      const int t = t0 + ph;
      if (t >= steps) break;
      ptx::copy_async_wait_pending(ahead - 1);
      __syncthreads();
      if (t + ahead < steps) issue(t + ahead, slot_next);
      ptx::copy_async_commit();
      const T* front = ring + slot_front * stage + own;
#pragma unroll
      for (int m = 0; m < MY; ++m) q[m][ph] = load_vec<T, V>(front + m * pitch);
      // Plane t - 2R + r of the queue (r = 0 .. 2R) is at q[.][(ph - 2R + r) mod Q].
      auto z = [&](int m, int r) -> const Vec<T, V>& { return q[m][(ph + Q - 2 * R + r) % Q]; };
      if (t >= 2 * R && computes) {
        Vec<T, V> o[MY] = {};
        const T* tile = ring + slot_xy * stage + own;
        if constexpr (XY) {
          // y: lines -R .. MY - 1 + R about the thread's first; its own from the queue.
#pragma unroll
          for (int l = 0; l < MY + 2 * R; ++l) {
            Vec<T, V> v;
            if (l >= R && l < R + MY)
              v = z(l - R, R);
            else
              v = load_vec<T, V>(tile + (l - R) * pitch);
#pragma unroll
            for (int m = 0; m < MY; ++m)
              if (l - m >= 0 && l - m <= 2 * R) {
#pragma unroll
                for (int e = 0; e < V; ++e) o[m].v[e] += a.wy[l - m] * v.v[e];
              }
          }
        }
#pragma unroll
        for (int m = 0; m < MY; ++m) {
          if constexpr (XY) {
            T w[(2 * C + 1) * V];
#pragma unroll
            for (int c = 0; c <= 2 * C; ++c) {
              const Vec<T, V> v = c == C ? z(m, R) : load_vec<T, V>(tile + m * pitch + (c - C) * V);
#pragma unroll
              for (int e = 0; e < V; ++e) w[c * V + e] = v.v[e];
            }
#pragma unroll
            for (int e = 0; e < V; ++e) {
              T s = T(0);
#pragma unroll
              for (int r = 0; r <= 2 * R; ++r) s += a.wx[r] * w[C * V + e + r - R];
              o[m].v[e] += s;
            }
          }
#pragma unroll
          for (int e = 0; e < V; ++e) {
            T s = T(0);
#pragma unroll
            for (int r = 0; r <= 2 * R; ++r) s += a.wz[r] * z(m, r).v[e];
            o[m].v[e] += s;
          }
          if (jt + m < a.ny) store_streaming(f + int64_t(m) * a.line, o[m], a.nx - i0);
        }
      }
      f += a.slice;
      slot_front = slot_front + 1 == S ? 0 : slot_front + 1;
      slot_xy = slot_xy + 1 == S ? 0 : slot_xy + 1;
      slot_next = slot_next + 1 == S ? 0 : slot_next + 1;
    }
  }
}

}  // namespace fdstencil::cuda::seismic
