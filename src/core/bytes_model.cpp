// The seeds' theoretical fetch and write sizes (Laplacian part 1; seismic part 1).
#include "fdstencil/bytes_model.hpp"

namespace fdstencil {

TheoreticalBytes theoretical_bytes(Op op, Extents n, int radius, int64_t elem_bytes) {
  TheoreticalBytes b;
  const int64_t points = n.nx * n.ny * n.nz;
  b.write = points * elem_bytes;
  if (op == Op::laplacian7) {
    // Every grid point but the 8 corners and the 12 edges is some stencil's neighbour.
    const int64_t Nx = n.nx + 2, Ny = n.ny + 2, Nz = n.nz + 2;
    b.fetch = (Nx * Ny * Nz - 8 - 4 * (Nx - 2) - 4 * (Ny - 2) - 4 * (Nz - 2)) * elem_bytes;
    return b;
  }
  const auto axes = op_axes(op);
  const int64_t plane[3] = {n.ny * n.nz, n.nx * n.nz, n.nx * n.ny};  // across x, y, z
  int64_t halo = 0;
  for (int a = 0; a < 3; ++a)
    if (axes[a]) halo += 2 * static_cast<int64_t>(radius) * plane[a];
  b.fetch = (points + halo) * elem_bytes;
  return b;
}

}  // namespace fdstencil
