// Operator names, validation and the per-axis weights every backend consumes.
#include "fdstencil/stencil.hpp"

#include <cmath>
#include <cstdio>
#include <limits>
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
              "unknown operator '" + std::string(name) + "' (valid: laplacian7, d2x, d2y, d2z, d2xy, d2xyz)");
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
    throw Error(ErrorKind::invalid_argument,
                "radius " + std::to_string(s.radius) + " is outside 1.." + std::to_string(kMaxRadius));
  const char* names[3] = {"hx", "hy", "hz"};
  const double h[3] = {s.h.hx, s.h.hy, s.h.hz};
  for (int a = 0; a < 3; ++a) {
    char buf[160];
    if (!std::isfinite(h[a]) || h[a] <= 0.0) {
      std::snprintf(buf, sizeof buf, "spacing %s = %g must be finite and positive", names[a], h[a]);
      throw Error(ErrorKind::invalid_argument, buf);
    }
    std::vector<double> weights;
    try {
      weights = central_weights(2, s.radius, h[a]);
    } catch (const Error& e) {
      throw Error(ErrorKind::invalid_argument, std::string(names[a]) + ": " + e.what());
    }
    // Every backend may run in float: the scaled weights must be normal floats, else the result
    // is silently inf or 0 (1/h^2 overflows float below h ~ 1e-19).
    for (double w : weights)
      if (w != 0.0 && !(std::fabs(w) >= std::numeric_limits<float>::min() &&
                        std::fabs(w) <= std::numeric_limits<float>::max())) {
        std::snprintf(buf, sizeof buf, "spacing %s = %g gives a weight of %g, outside the float range",
                      names[a], h[a], w);
        throw Error(ErrorKind::invalid_argument, buf);
      }
  }
}

void validate_extents(const Stencil& s, Extents n) {
  if (n.nx < 1 || n.ny < 1 || n.nz < 1)
    throw Error(ErrorKind::invalid_argument,
                "interior " + std::to_string(n.nx) + " x " + std::to_string(n.ny) + " x " +
                    std::to_string(n.nz) + " is too small for " + std::string(op_name(s.op)) + " of radius " +
                    std::to_string(s.radius) + ": every dimension needs at least 2R+1 = " +
                    std::to_string(2 * s.radius + 1) + " points including the halo");
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
