// The computational domain: the model with its absorbing layers, on storage whose x-lines start
// on 128-byte boundaries so the step kernel's vector loads stay aligned.
#include <algorithm>
#include <cmath>
#include <string>

#include "fdstencil/error.hpp"
#include "fdstencil/layout.hpp"
#include "fdstencil/wave.hpp"

namespace fdstencil::wave {

namespace {
// Elements per 128 bytes of float: lines and the first interior point are padded to this.
constexpr int64_t kAlignElems = kAlignBytes / int64_t(sizeof(float));
// Readable floats after the last point: the x window's vector loads run up to 2 vectors of 4
// past a line's halo (acoustic_step.cuh).
constexpr int64_t kTailElems = 64;
int64_t round_up(int64_t v, int64_t m) { return (v + m - 1) / m * m; }
}  // namespace

Domain Domain::make(int dim, int radius, int64_t nz, int64_t ny, int64_t nx, const Boundary& b) {
  if (radius < 1 || radius > 8)
    throw Error(ErrorKind::invalid_argument, "radius " + std::to_string(radius) + " is outside 1..8");
  if (b.cpml_width < 0 || b.cpml_width > 1000)
    throw Error(ErrorKind::invalid_argument,
                "the CPML width must be 0..1000 points, got " + std::to_string(b.cpml_width));
  Domain d;
  d.dim = dim;
  d.radius = radius;
  d.model_nz = nz;
  d.model_ny = dim == 3 ? ny : 1;
  d.model_nx = nx;
  const int w = b.cpml_width;
  d.lo[0] = d.hi[0] = w;
  d.lo[1] = d.hi[1] = dim == 3 ? w : 0;
  d.lo[2] = b.free_surface ? 0 : w;
  d.hi[2] = w;
  d.nx = nx + d.lo[0] + d.hi[0];
  d.ny = d.model_ny + d.lo[1] + d.hi[1];
  d.nz = nz + d.lo[2] + d.hi[2];
  // The step kernels and the taps index one axis in 32 bits, with room for the halo.
  constexpr int64_t kMaxExtent = int64_t(1) << 30;
  if (d.nx >= kMaxExtent || d.ny >= kMaxExtent || d.nz >= kMaxExtent)
    throw Error(ErrorKind::invalid_argument,
                "a computational extent (model and absorbing layers) of 2^30 points or more");
  const int64_t R = radius, halo_y = dim == 3 ? R : 0;
  const int64_t xpad = round_up(R, kAlignElems);  // the x halo, widened to keep lines aligned
  d.line = round_up(xpad + d.nx + R, kAlignElems);
  d.slice = dim == 3 ? d.line * (d.ny + 2 * halo_y) : d.line;
  d.origin = xpad + halo_y * d.line + R * d.slice;
  const double alloc = double(d.slice) * double(d.nz + 2 * R) + double(kTailElems);
  if (alloc * sizeof(float) > 9e18)
    throw Error(ErrorKind::out_of_memory, "the domain's size overflows 64 bits");
  d.alloc = d.slice * (d.nz + 2 * R) + kTailElems;
  return d;
}

Model::Window Domain::model_planes(const Slab& s) const {
  const auto model_plane = [&](int64_t k) { return std::clamp<int64_t>(k - lo[2], 0, model_nz - 1); };
  return {model_plane(s.k0), model_plane(s.k1 - 1) + 1};
}

double default_layer_plane_cost(int radius) { return std::clamp(3.0 - (radius - 4) / 4.0, 2.0, 3.0); }

std::vector<Domain::Slab> Domain::split_z(int parts, double layer_cost) const {
  if (parts < 1) throw Error(ErrorKind::invalid_argument, "a domain splits into at least 1 slab");
  if (!(std::isfinite(layer_cost) && layer_cost >= 1))
    throw Error(ErrorKind::invalid_argument,
                "an absorbing-layer plane costs at least an inner plane, got " + std::to_string(layer_cost));
  if (nz / parts < radius)
    throw Error(ErrorKind::invalid_argument, std::to_string(parts) + " slabs of " + std::to_string(nz) +
                                                 " planes are thinner than the radius " +
                                                 std::to_string(radius) +
                                                 ": a slab's halo would reach past its neighbour");
  std::vector<Slab> even;
  for (int p = 0; p < parts; ++p) even.push_back({nz * p / parts, nz * (p + 1) / parts});
  if (layer_cost == 1) return even;
  // Planes [0, k) cost cost(k): the layers' planes layer_cost each, the others 1. Slab p ends at
  // the plane where that reaches p + 1 parts of the whole, to the nearest plane.
  const auto cost = [&](int64_t k) {
    const int64_t top = std::min<int64_t>(k, lo[2]), bottom = std::max<int64_t>(0, k - (nz - hi[2]));
    return double(k) + (layer_cost - 1) * double(top + bottom);
  };
  std::vector<Slab> s;
  int64_t k = 0;
  for (int p = 0; p < parts; ++p) {
    const double goal = cost(nz) * double(p + 1) / double(parts);
    int64_t end = k;
    while (end < nz && cost(end + 1) <= goal) ++end;
    if (end < nz && goal - cost(end) > cost(end + 1) - goal) ++end;
    if (p + 1 == parts) end = nz;
    s.push_back({k, end});
    k = end;
  }
  // A balance that leaves a slab thinner than the radius falls back to near-equal slabs.
  for (const Slab& slab : s)
    if (slab.k1 - slab.k0 < radius) return even;
  return s;
}

}  // namespace fdstencil::wave
