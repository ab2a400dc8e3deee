// The seeds' theoretical traffic: the fewest bytes an operator must fetch and write, assuming an
// infinite cache. Effective bandwidth = (fetch + write) / time. 64-bit throughout (the posts'
// 32-bit int arithmetic overflows above about 1290^3).
#pragma once

#include <cstdint>

#include "fdstencil/layout.hpp"
#include "fdstencil/stencil.hpp"

namespace fdstencil {

struct TheoreticalBytes {
  int64_t fetch = 0;
  int64_t write = 0;
  int64_t total() const { return fetch + write; }
};

// laplacian7 (Laplacian part 1), on the N = n + 2 grid that includes the boundary:
//   fetch = (Nx Ny Nz - 8 - 4(Nx-2) - 4(Ny-2) - 4(Nz-2)) sizeof(T), write = nx ny nz sizeof(T)
// seismic ops: fetch = (nx ny nz + 2R * sum of the planes across each differentiated axis)
//   sizeof(T), write = nx ny nz sizeof(T)
TheoreticalBytes theoretical_bytes(Op op, Extents interior, int radius, int64_t elem_bytes);

}  // namespace fdstencil
