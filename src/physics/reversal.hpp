// Boundary saving for the backward pass (issue 37): the forward run kept as thin strips instead of
// whole fields, and its field rebuilt backwards in time.
//
// The leapfrog is its own inverse. Where a point's step is the plain one,
//   u^{n+1} = 2 u^n - u^{n-1} + m L(u^n) + the sources' taps of f^n,
// the same expression gives u^{n-1} from u^{n+1} and u^n. That holds at the points clear of every
// CPML layer and of the free surface's mirror: the reversal box. The layers' memory variables
// decay, and a step of theirs cannot be undone. So the backward pass keeps, at every step, only
// u^n on the ring of R points around the box (which the box's stencils read), steps the box back
// from the last two fields, and takes the ring from what it kept. Points beyond the ring, deeper in
// the layers, are not known; they count as zero, so the gradient's sums leave them out (images,
// which take the model's points alone, lie in the box or the ring).
//
// In exact arithmetic the rebuilt field is the forward one. In floating point each step back
// rounds differently from the step it undoes, so the two differ by round-off that grows with the
// steps (measured in docs/imaging.md).
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>

#include "fdstencil/error.hpp"
#include "physics/acoustic.hpp"

namespace fdstencil::acoustic {

struct ReversalBox {
  int radius = 1;
  bool planar = false;        // 2D: y is not an axis (one point, j = 0)
  int64_t n[3] = {1, 1, 1};   // the computational points along x, y, z
  int64_t lo[3] = {0, 0, 0};  // the box: [lo, hi) along each axis
  int64_t hi[3] = {1, 1, 1};

  bool empty() const { return lo[0] >= hi[0] || lo[1] >= hi[1] || lo[2] >= hi[2]; }
  // The box grown by R along each axis, within the grid.
  FDS_HOST_DEVICE bool axis(int a) const { return !(planar && a == 1); }
  FDS_HOST_DEVICE int64_t grown_lo(int a) const { return !axis(a) || lo[a] < radius ? 0 : lo[a] - radius; }
  FDS_HOST_DEVICE int64_t grown_hi(int a) const {
    return !axis(a) ? 1 : hi[a] + radius > n[a] ? n[a] : hi[a] + radius;
  }
  FDS_HOST_DEVICE bool inside(int64_t i, int64_t j, int64_t k) const {
    return i >= lo[0] && i < hi[0] && j >= lo[1] && j < hi[1] && k >= lo[2] && k < hi[2];
  }
};

// The box of setup s: clear of every layer, and R points in from every edge: the free surface's
// mirror reaches R planes down, and the GPU steps back on compact arrays, without a halo, whose
// stencils must stay within the grid. A 3D axis of fewer than 2R + 1 points leaves it empty.
template <class T>
ReversalBox reversal_box(const SetupFrame<T>& s) {
  ReversalBox b;
  b.radius = s.radius;
  const int64_t n[3] = {s.nx, s.ny, s.nz};
  for (int a = 0; a < 3; ++a) {
    b.n[a] = n[a];
    if (a == 1 && s.dim == 2) {
      b.planar = true;
      continue;
    }
    b.lo[a] = std::max<int64_t>(s.axis[a].lo, s.radius);
    b.hi[a] = std::min<int64_t>(n[a] - s.axis[a].hi, n[a] - s.radius);
  }
  return b;
}

// The box of s, refused (invalid_argument) where it holds no point.
template <class T>
ReversalBox checked_reversal_box(const SetupFrame<T>& s) {
  const ReversalBox box = reversal_box(s);
  if (box.empty())
    throw Error(ErrorKind::invalid_argument,
                "boundary saving: no point of the grid lies clear of the absorbing layers and " +
                    std::to_string(s.radius) + " points (the radius) in from its edges");
  return box;
}

// f(i0, i1, j, k) for each x-run [i0, i1) of the ring: the grown box less the box, in storage order.
template <class F>
void for_each_ring_run(const ReversalBox& b, F&& f) {
  for (int64_t k = b.grown_lo(2); k < b.grown_hi(2); ++k)
    for (int64_t j = b.grown_lo(1); j < b.grown_hi(1); ++j) {
      const bool through = j >= b.lo[1] && j < b.hi[1] && k >= b.lo[2] && k < b.hi[2];
      if (!through) {
        f(b.grown_lo(0), b.grown_hi(0), j, k);
        continue;
      }
      if (b.grown_lo(0) < b.lo[0]) f(b.grown_lo(0), b.lo[0], j, k);
      if (b.hi[0] < b.grown_hi(0)) f(b.hi[0], b.grown_hi(0), j, k);
    }
}

// The ring's point count.
inline int64_t ring_points(const ReversalBox& b) {
  int64_t count = 0;
  for_each_ring_run(b, [&](int64_t i0, int64_t i1, int64_t, int64_t) { count += i1 - i0; });
  return count;
}

}  // namespace fdstencil::acoustic
