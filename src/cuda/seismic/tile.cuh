// The shared-memory plane tile of the fused kernels (xy, one-pass xyz): a block of bx x by
// threads, each owning V consecutive x points, covers bx * V x by interior points of one plane.
// The tile adds R halo rows above and below and P = R rounded up to whole vectors on the left and
// right, so every access is one V-wide vector:
//   tile element (row, col)  <->  global point (x0 - P + col, j0 - R + row)
// with pitch bx * V + 2P elements and by + 2R rows. The corners are never needed: the halo loader
// (one-pass xyz) skips them; the whole-tile loader (xy fused) loads them, a few wasted vectors.
#pragma once

#include "cuda/common/async_copy.cuh"
#include "cuda/common/vec.cuh"
#include "cuda/seismic/common.cuh"

namespace fdstencil::cuda::seismic {

// Where a block of a z-marching tile kernel works, and its thread's place in it: the tile's first
// point (x0, j0), the thread's first point (i0, j; MY rows a thread from j), the chunk's planes
// k0 .. k1 - 1, the thread's rank among the block's threads. Args::z_first: the chunks of one
// column are launched together (blockIdx.x), so the 2R seam planes two chunks share are read again
// while still in L2.
template <int V, int MY = 1>
struct MarchBlock {
  int x0, j0, i0, j, k0, k1, rank, threads;

  template <class T>
  __device__ __forceinline__ explicit MarchBlock(const Args<T>& a) {
    const int tile_x = a.z_first ? blockIdx.y : blockIdx.x;
    const int tile_y = a.z_first ? blockIdx.z : blockIdx.y;
    const int chunk = a.z_first ? blockIdx.x : blockIdx.z;
    x0 = tile_x * blockDim.x * V;
    j0 = tile_y * blockDim.y * MY;
    i0 = x0 + V * threadIdx.x;
    j = j0 + MY * threadIdx.y;
    k0 = chunk * a.nw;
    k1 = min(k0 + a.nw, a.nz);
    rank = threadIdx.x + blockDim.x * threadIdx.y;
    threads = blockDim.x * blockDim.y;
  }
};

template <int R, int V>
struct TileShape {
  static constexpr int P = kPad<R, V>;
  int bx, by;
  __device__ __host__ int pitch() const { return bx * V + 2 * P; }
  __device__ __host__ int rows() const { return by + 2 * R; }
  __device__ __host__ int elems() const { return pitch() * rows(); }
  // Halo vectors: 2R full-width rows plus 2P / V vectors at each end of the by interior rows.
  __device__ __host__ int halo_vectors() const { return 2 * R * bx + by * (2 * P / V); }
};

// Bytes of one tile of `elem_bytes` elements in 16-byte vectors, for the launch's shared memory.
inline size_t tile_bytes(int bx, int by, int radius, int elem_bytes) {
  const int vec = 16 / elem_bytes;
  const int pad = (radius + vec - 1) / vec * vec;
  return size_t(bx * vec + 2 * pad) * size_t(by + 2 * radius) * size_t(elem_bytes);
}

// Calls f(row, col) for the halo vectors this thread of `threads` loads, `first` being its rank.
template <int R, int V, class F>
__device__ __forceinline__ void for_each_halo_vector(TileShape<R, V> s, int first, int threads, F&& f) {
  constexpr int P = TileShape<R, V>::P;
  const int ybody = 2 * R * s.bx;
  for (int e = first; e < s.halo_vectors(); e += threads) {
    if (e < ybody) {
      const int row = e / s.bx;
      f(row < R ? row : row + s.by, P + V * (e % s.bx));
    } else {
      const int side = 2 * P / V;  // vectors per interior row: P / V left, then P / V right
      const int c = (e - ybody) % side;
      f(R + (e - ybody) / side, c < P / V ? V * c : s.bx * V + P + V * (c - P / V));
    }
  }
}

// Calls f(row, col) for every vector of the tile, halo and interior (the corners included).
template <int R, int V, class F>
__device__ __forceinline__ void for_each_tile_vector(TileShape<R, V> s, int first, int threads, F&& f) {
  const int per_row = s.pitch() / V;
  for (int e = first; e < s.rows() * per_row; e += threads) f(e / per_row, V * (e % per_row));
}

// d2x at the V points P elements right of `window` (a tile row): the x window as 2P / V + 1
// vectors held in registers.
template <class T, int R, int V>
__device__ __forceinline__ Vec<T, V> x_from_tile_row(const T* window, const Args<T>& a) {
  constexpr int P = TileShape<R, V>::P;
  T w[2 * P + V];
#pragma unroll
  for (int c = 0; c < (2 * P + V) / V; ++c) {
    const Vec<T, V> q = load_vec<T, V>(window + c * V);
#pragma unroll
    for (int e = 0; e < V; ++e) w[c * V + e] = q.v[e];
  }
  Vec<T, V> o;
#pragma unroll
  for (int e = 0; e < V; ++e) {
    T s_ = T(0);
#pragma unroll
    for (int r = 0; r <= 2 * R; ++r) s_ += a.wx[r] * w[P + e + r - R];
    o.v[e] = s_;
  }
  return o;
}

// d2x + d2y at the thread's V points (tx, ty) from the tile: the x window of the centre row, the
// y taps as 2R + 1 vectors of the thread's column.
template <class T, int R, int V>
__device__ __forceinline__ Vec<T, V> xy_from_tile(const T* tile, TileShape<R, V> s, int tx, int ty,
                                                  const Args<T>& a) {
  constexpr int P = TileShape<R, V>::P;
  const int pitch = s.pitch();
  // The window starts P left of the centre.
  Vec<T, V> o = x_from_tile_row<T, R, V>(tile + (ty + R) * pitch + V * tx, a);
  const T* column = tile + ty * pitch + P + V * tx;
#pragma unroll
  for (int r = 0; r <= 2 * R; ++r) {
    const Vec<T, V> q = load_vec<T, V>(column + r * pitch);
#pragma unroll
    for (int e = 0; e < V; ++e) o.v[e] += a.wy[r] * q.v[e];
  }
  return o;
}

// xy_from_tile for MY rows at once (register blocking along y): the thread's outputs at tile rows
// row0 + R .. row0 + R + MY - 1 of its column. Each of the 2R + MY y-tap rows is loaded once and
// added to every output it reaches, in the same order (r = 0 .. 2R for each output) as
// xy_from_tile's, so the sums are the same to the bit. At MY = 2 a thread loads 2R + 2 + 2 (2P / V)
// vectors for 2V points where xy_from_tile's two calls load 2(2R + 1 + 2P / V).
template <class T, int R, int V, int MY>
__device__ __forceinline__ void xy_rows_from_tile(const T* tile, TileShape<R, V> s, int tx, int row0,
                                                  const Args<T>& a, Vec<T, V> (&o)[MY]) {
  constexpr int P = TileShape<R, V>::P;
  const int pitch = s.pitch();
#pragma unroll
  for (int m = 0; m < MY; ++m) o[m] = x_from_tile_row<T, R, V>(tile + (row0 + m + R) * pitch + V * tx, a);
  const T* column = tile + row0 * pitch + P + V * tx;
#pragma unroll
  for (int l = 0; l < 2 * R + MY; ++l) {
    const Vec<T, V> q = load_vec<T, V>(column + l * pitch);
#pragma unroll
    for (int m = 0; m < MY; ++m) {
      const int r = l - m;  // the tap of row l for output m
      if (r < 0 || r > 2 * R) continue;
#pragma unroll
      for (int e = 0; e < V; ++e) o[m].v[e] += a.wy[r] * q.v[e];
    }
  }
}

// Whether the vector at tile (row, col) lies inside the allocation's meaningful part: rows up to
// the last halo row, vectors starting before the end of the right halo. Vectors beyond serve only
// outputs outside the interior, which are never stored.
template <class T, int R, int V>
__device__ __forceinline__ bool tile_vector_exists(const Args<T>& a, int x0, int j0, int row, int col) {
  return j0 - R + row < a.ny + R && x0 - TileShape<R, V>::P + col < a.nx + R;
}

// Starts the cp.async copies of plane k's halo into `tile` (the block's tile origin x0, j0; this
// thread's share, `rank` of `threads`): the vectors tile_vector_exists keeps, committed as one group.
template <class T, int R, int V>
__device__ __forceinline__ void start_halo_copies(const Args<T>& a, TileShape<R, V> s, int x0, int j0,
                                                  int rank, int threads, int k, T* tile) {
  const T* plane = a.u + a.slice * k;
  for_each_halo_vector(s, rank, threads, [&](int row, int col) {
    if (tile_vector_exists<T, R, V>(a, x0, j0, row, col))
      ptx::copy_async16(tile + row * s.pitch() + col,
                        plane + (x0 - s.P + col) + int64_t(j0 - R + row) * a.line);
  });
  ptx::copy_async_commit();
}

}  // namespace fdstencil::cuda::seismic
