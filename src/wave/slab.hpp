// One rank's share of a run split along z (issue 14): its setup cut from the whole domain's, and
// the halo exchange of its current time level. A slab keeps the whole domain's storage shape in x
// and y (the same line and plane strides), holds its own planes k0..k1-1 as local planes 0..n-1
// with R halo planes on each side, and sees the z CPML through PmlAxis::offset.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "core/acoustic.hpp"
#include "fdstencil/wave.hpp"
#include "fdstencil/wave_comm.hpp"

namespace fdstencil::wave::detail {

// Where a slab's taps (sources or receivers) are: those of its planes, renumbered; the order of
// the whole list is kept, so each receiver sums its taps in the same order as on one rank.
inline std::vector<acoustic::Tap> slab_taps(const std::vector<acoustic::Tap>& all, const Domain::Slab& s) {
  std::vector<acoustic::Tap> mine;
  for (acoustic::Tap t : all)
    if (t.k >= s.k0 && t.k < s.k1) {
      t.k -= int32_t(s.k0);
      mine.push_back(t);
    }
  return mine;
}

// The setup of slab `s` of the whole domain's `whole`: its planes of m, its taps, the z CPML seen
// from its planes, and the free surface only where the slab holds z = 0.
template <class T>
acoustic::Setup<T> slab_setup(const acoustic::Setup<T>& whole, const Domain::Slab& s, int64_t tail) {
  acoustic::Setup<T> out;
  out.dim = whole.dim;
  out.radius = whole.radius;
  out.nx = whole.nx;
  out.ny = whole.ny;
  out.nz = s.k1 - s.k0;
  out.line = whole.line;
  out.slice = whole.slice;
  out.origin = whole.origin;  // the same head: R halo planes, then plane 0
  out.alloc = whole.slice * (out.nz + 2 * whole.radius) + tail;
  out.m.assign(size_t(out.alloc), T(0));
  // Planes k0..k1-1 of m, halo planes (zero) excluded: m is read at the slab's own points only.
  std::copy_n(whole.m.begin() + (whole.origin + s.k0 * whole.slice - whole.origin % whole.slice),
              size_t(out.nz * whole.slice), out.m.begin() + (out.origin - out.origin % out.slice));
  out.w2 = whole.w2;
  out.w1 = whole.w1;
  for (int a = 0; a < 3; ++a) {
    out.axis[a] = whole.axis[a];
    out.coef[a] = whole.coef[a];
  }
  out.axis[2].offset = s.k0;
  out.free_surface = whole.free_surface && s.k0 == 0;
  out.sources = slab_taps(whole.sources, s);
  out.receivers = slab_taps(whole.receivers, s);
  out.nsrc = whole.nsrc;
  out.nrec = whole.nrec;
  out.nt = whole.nt;
  out.wavelets = whole.wavelets;
  return out;
}

// The storage of local planes [k, k + count): whole planes, x and y halo included, so each is one
// contiguous block of count x slice elements.
template <class T>
T* planes(T* field, const acoustic::Setup<T>& s, int64_t k) {
  return field + (s.origin - s.origin % s.slice) + k * s.slice;
}

// Fills the slab's halo planes of `u` from its neighbours: R planes below plane 0 from rank - 1's
// top R planes, R planes above its last from rank + 1's bottom R. The domain's own faces (rank 0's
// bottom halo, the last rank's top) stay as they are: zero, as on one rank.
template <class T>
void exchange_halo(Comm& comm, T* u, const acoustic::Setup<T>& s) {
  const int64_t R = s.radius, bytes = R * s.slice * int64_t(sizeof(T));
  comm.exchange(planes(u, s, 0), planes(u, s, -R), planes(u, s, s.nz - R), planes(u, s, s.nz), bytes);
}

}  // namespace fdstencil::wave::detail
