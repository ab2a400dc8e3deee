// Operator names, validation and the per-axis weights every backend consumes.
#include "fdstencil/stencil.hpp"

#include <cmath>
#include <string>

#include "fdstencil/coefficients.hpp"
#include "fdstencil/error.hpp"

namespace fdstencil {

std::string_view op_name(Op op) {
  switch (op) {
    case Op::laplacian7: return "laplacian7";
    case Op::d2x: return "d2x";
    case Op::d2y: return "d2y";
    case Op::d2z: return "d2z";
    case Op::d2xy: return "d2xy";
    case Op::d2xyz: return "d2xyz";
  }
  return "?";
}

Op parse_op(std::string_view name) {
  for (Op op : kAllOps)
    if (op_name(op) == name) return op;
  throw Error(ErrorKind::invalid_argument,
              "unknown operator '" + std::string(name) +
                  "' (valid: laplacian7, d2x, d2y, d2z, d2xy, d2xyz)");
}

std::array<bool, 3> op_axes(Op op) {
  switch (op) {
    case Op::d2x: return {true, false, false};
    case Op::d2y: return {false, true, false};
    case Op::d2z: return {false, false, true};
    case Op::d2xy: return {true, true, false};
    case Op::laplacian7:
    case Op::d2xyz: return {true, true, true};
  }
  return {};
}

void validate(const Stencil& s) {
  if (s.op == Op::laplacian7 && s.radius != 1)
    throw Error(ErrorKind::invalid_argument,
                "laplacian7 is the 7-point stencil of radius 1, not radius " + std::to_string(s.radius));
  if (s.radius < 1 || s.radius > kMaxRadius)
    throw Error(ErrorKind::invalid_argument, "radius " + std::to_string(s.radius) +
                                                 " is outside 1.." + std::to_string(kMaxRadius));
  const char* names[3] = {"hx", "hy", "hz"};
  const double h[3] = {s.h.hx, s.h.hy, s.h.hz};
  for (int a = 0; a < 3; ++a)
    if (!std::isfinite(h[a]) || h[a] <= 0.0)
      throw Error(ErrorKind::invalid_argument, std::string("spacing ") + names[a] + " = " +
                                                   std::to_string(h[a]) +
                                                   " must be finite and positive");
}

void validate_extents(const Stencil& s, Extents n) {
  if (n.nx < 1 || n.ny < 1 || n.nz < 1)
    throw Error(ErrorKind::invalid_argument,
                "interior " + std::to_string(n.nx) + " x " + std::to_string(n.ny) + " x " +
                    std::to_string(n.nz) + " is too small for " + std::string(op_name(s.op)) +
                    " of radius " + std::to_string(s.radius) +
                    ": every dimension needs at least 2R+1 = " + std::to_string(2 * s.radius + 1) +
                    " points including the halo");
}

StencilWeights stencil_weights(const Stencil& s) {
  validate(s);
  StencilWeights sw;
  sw.radius = s.radius;
  sw.axis = op_axes(s.op);
  const double h[3] = {s.h.hx, s.h.hy, s.h.hz};
  for (int a = 0; a < 3; ++a) {
    if (!sw.axis[a]) continue;
    const std::vector<double> w = central_weights(2, s.radius, h[a]);
    for (int r = 0; r <= 2 * s.radius; ++r) sw.w[a][r] = w[r];
  }
  return sw;
}

Extents interior_from_size(Op op, Extents size) {
  if (op == Op::laplacian7) return {size.nx - 2, size.ny - 2, size.nz - 2};
  return size;
}

Extents size_from_interior(Op op, Extents n) {
  if (op == Op::laplacian7) return {n.nx + 2, n.ny + 2, n.nz + 2};
  return n;
}

}  // namespace fdstencil
