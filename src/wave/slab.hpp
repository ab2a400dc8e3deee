// One rank's share of a run split along z (issue 14): its taps, and the halo exchange of its
// current time level (solver.cpp's build_setup builds a slab's setup from its planes alone). A slab keeps the whole domain's storage shape in x
// and y (the same line and plane strides), holds its own planes k0..k1-1 as local planes 0..n-1
// with R halo planes on each side, and sees the z CPML through PmlAxis::offset.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "physics/acoustic.hpp"
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
