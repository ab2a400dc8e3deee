// A split run's state (issue 14) in the one-rank formats: its checkpoint gathered from the slabs
// into the whole domain's arrays, and a whole state cut into one slab's to resume. A checkpoint
// written by P ranks is then the one a single rank writes at that step (the traces of receivers
// inside one slab to the bit, the others to round-off), and either resumes on any number of ranks.
//
// Where a slab's arrays lie in the whole's (physics/acoustic.hpp): u and u_prev plane by plane from
// the same head (local plane k is whole plane k0 + k); the x and y memory variables plane-major
// (x: (k, j, slot), y: (k, slot, i)); the z memory variables slot-major over the whole axis's
// slots, of which a slab updates those of its own planes (PmlAxis::offset); the traces by sum.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "physics/acoustic.hpp"
#include "fdstencil/wave.hpp"
#include "fdstencil/wave_comm.hpp"

namespace fdstencil::wave::detail {

// What places one slab's state arrays in the whole domain's.
struct SlabShape {
  int64_t radius = 0, nx = 0, ny = 0, slice = 0;
  int64_t base = 0;        // plane 0's block: origin - origin % slice, in both
  int64_t k0 = 0, k1 = 0;  // the slab's planes of the whole's nz
  int64_t whole_nz = 0, whole_alloc = 0, slab_alloc = 0;
  int64_t slots[3] = {0, 0, 0};  // each axis's memory-variable slots
  int64_t z_lo = 0, z_hi = 0;    // the z axis's layers at its start and end
  int64_t nrec = 0, nt = 0;
  bool first = false, last = false;  // rank 0, rank P - 1: they hold the domain's own z halos
  int64_t nz() const { return k1 - k0; }
};

template <class T>
SlabShape slab_shape(const acoustic::Setup<T>& slab, const Domain& d, const Domain::Slab& s, int rank,
                     int ranks) {
  SlabShape g;
  g.radius = slab.radius;
  g.nx = slab.nx;
  g.ny = slab.ny;
  g.slice = slab.slice;
  g.base = slab.origin - slab.origin % slab.slice;
  g.k0 = s.k0;
  g.k1 = s.k1;
  g.whole_nz = d.nz;
  g.whole_alloc = d.alloc;
  g.slab_alloc = slab.alloc;
  for (int a = 0; a < 3; ++a) g.slots[a] = slab.axis[a].slots();
  g.z_lo = slab.axis[2].lo;
  g.z_hi = slab.axis[2].hi;
  g.nrec = slab.nrec;
  g.nt = slab.nt;
  g.first = rank == 0;
  g.last = rank == ranks - 1;
  return g;
}

// Elements of a z-major array's one plane (u: a storage plane; x and y memory variables: their
// plane of slots), and of the z memory variables' one slot.
inline int64_t plane_elements(const SlabShape& g, int i) {
  if (i < 2) return g.slice;
  if (i < 5) return g.ny * g.slots[0];
  if (i < 8) return g.slots[1] * g.nx;
  return g.ny * g.nx;  // a z slot
}

// The whole domain's elements of state array i (the kStateArrays order).
inline int64_t whole_elements(const SlabShape& g, int i) {
  if (i < 2) return g.whole_alloc;
  if (i < 8) return g.whole_nz * plane_elements(g, i);
  if (i < acoustic::kStateArrays - 1) return g.slots[2] * plane_elements(g, i);
  return g.nrec * g.nt;
}

// One contiguous run of a slab's array, in elements: `count` from `local`. Segment s of array i,
// concatenated over the ranks in rank order, fills the whole array's elements from `whole` on;
// this rank's run lies at `at` in the whole's. The ranks' segments do not overlap.
struct Segment {
  int64_t local = 0, count = 0, whole = 0, at = 0;
};

inline std::vector<Segment> gather_segments(const SlabShape& g, int i) {
  const int64_t R = g.radius, per = plane_elements(g, i);
  if (i < 2) {
    // The slab's own planes; rank 0 adds the halo above the domain (a free surface's mirror), the
    // last rank the one below (zero): together the whole's planes -R .. nz + R - 1.
    const int64_t from = g.first ? -R : 0, to = g.nz() + (g.last ? R : 0);
    return {{g.base + from * per, (to - from) * per, g.base - R * per, g.base + (g.k0 + from) * per}};
  }
  if (i < 8) return {{0, g.nz() * per, 0, g.k0 * per}};
  // z slots c < lo belong to plane c, slots lo + c' to plane whole_nz - hi + c': two runs, each
  // ordered by plane, so each concatenates over the ranks in order.
  const int64_t lo_end = std::min(g.k1, g.z_lo), lo_from = std::min(g.k0, lo_end);
  const int64_t top = g.whole_nz - g.z_hi, hi_from = std::max(g.k0, top), hi_to = std::max(g.k1, top);
  // (every slab holds all the z slots in the whole's order: local and whole places agree)
  return {{lo_from * per, (lo_end - lo_from) * per, 0, lo_from * per},
          {(g.z_lo + hi_from - top) * per, (hi_to - hi_from) * per, g.z_lo * per,
           (g.z_lo + hi_from - top) * per}};
}

// Where slab array i comes from in the whole's (what a slab needs to resume), in elements: u and
// u_prev with both halos (the neighbours' faces, as the exchange would have left them) into a
// zeroed slab allocation, its planes of the x and y memory variables, and all the z slots. The
// traces are not cut: rank 0 keeps the whole's, the others start from zero (the ranks' are summed).
struct Cut {
  int64_t whole = 0, count = 0, local = 0, local_size = 0;  // whole[whole, +count) -> local[local, ...)
};

inline Cut cut_of(const SlabShape& g, int i) {
  const int64_t R = g.radius, per = plane_elements(g, i);
  if (i < 2) return {g.base + (g.k0 - R) * per, (g.nz() + 2 * R) * per, g.base - R * per, g.slab_alloc};
  if (i < 8) return {g.k0 * per, g.nz() * per, 0, g.nz() * per};
  return {0, whole_elements(g, i), 0, whole_elements(g, i)};
}

template <class T>
std::vector<T>& state_array(acoustic::State<T>& st, int i) {
  if (i == 0) return st.u;
  if (i == 1) return st.u_prev;
  if (i < acoustic::kStateArrays - 1) return st.pml[(i - 2) / 3][(i - 2) % 3];
  return st.traces;
}

// Every slab's state into rank 0's `into` (its arrays' bytes, in the whole's layout; the other
// ranks pass nullptr). `Backend` has state_array_bytes(i) and copy_state_array(i, host).
template <class T, class Backend>
void gather_state(Backend& b, Comm& comm, const SlabShape& g, std::vector<std::vector<char>*> into) {
  std::vector<T> mine;
  for (int i = 0; i < acoustic::kStateArrays; ++i) {
    mine.resize(size_t(b.state_array_bytes(i)) / sizeof(T));
    if (!mine.empty()) b.copy_state_array(i, mine.data());
    std::vector<char>* whole = g.first ? into[size_t(i)] : nullptr;
    if (whole) whole->assign(size_t(whole_elements(g, i)) * sizeof(T), 0);
    if (i == acoustic::kStateArrays - 1) {
      comm.sum_to_root(mine.data(), int64_t(mine.size()));
      if (whole) std::memcpy(whole->data(), mine.data(), whole->size());
      continue;
    }
    for (const Segment& s : gather_segments(g, i)) {
      const std::vector<char> part = comm.gather_bytes(mine.data() + s.local, s.count * int64_t(sizeof(T)));
      if (!whole) continue;
      if (s.whole * int64_t(sizeof(T)) + int64_t(part.size()) > int64_t(whole->size()))
        throw std::logic_error("a split run's checkpoint: the slabs' array " + std::to_string(i) +
                               " overruns the whole domain's");
      if (!part.empty()) std::memcpy(whole->data() + s.whole * int64_t(sizeof(T)), part.data(), part.size());
    }
  }
}

// Rank 0's whole state (the others pass nothing) cut into every rank's slab: the step first, then
// one array at a time, each rank receiving only its cut (Comm::scatter_bytes). Empty on every rank
// when rank 0 has no state to resume from.
template <class T>
std::optional<acoustic::State<T>> scatter_state(Comm& comm, const SlabShape& g, acoustic::State<T>* whole) {
  int64_t step = g.first && whole ? whole->step : -1;
  comm.broadcast(&step, int64_t(sizeof step));
  if (step < 0) return std::nullopt;
  acoustic::State<T> mine;
  mine.step = step;
  for (int i = 0; i < acoustic::kStateArrays; ++i) {
    std::vector<T>& out = state_array(mine, i);
    if (i == acoustic::kStateArrays - 1) {
      out = g.first ? whole->traces : std::vector<T>(size_t(whole_elements(g, i)), T(0));
      continue;
    }
    const Cut c = cut_of(g, i);
    if (g.first && int64_t(state_array(*whole, i).size()) < c.whole + c.count)
      throw std::logic_error("resuming a split run: the whole state's array " + std::to_string(i) +
                             " is shorter than the slabs' cut of it");
    out.assign(size_t(c.local_size), T(0));
    comm.scatter_bytes(g.first ? state_array(*whole, i).data() : nullptr, c.whole * int64_t(sizeof(T)),
                       out.data() + c.local, c.count * int64_t(sizeof(T)));
    if (g.first) {  // rank 0's copy of the whole array is no longer needed
      state_array(*whole, i).clear();
      state_array(*whole, i).shrink_to_fit();
    }
  }
  return mine;
}

}  // namespace fdstencil::wave::detail
