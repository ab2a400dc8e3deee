// The operators: which derivatives, of which order, on which grid spacing.
#pragma once

#include <array>
#include <string>
#include <string_view>
#include <vector>

#include "fdstencil/layout.hpp"

namespace fdstencil {

inline constexpr int kMaxRadius = 8;
inline constexpr int kMaxTaps = 2 * kMaxRadius + 1;

enum class Op {
  laplacian7,  // the Laplacian series: 2nd-order 7-point Laplacian, radius 1
  d2x,         // second derivative along x, order 2R
  d2y,
  d2z,
  d2xy,   // d2x + d2y in one pass
  d2xyz,  // d2x + d2y + d2z in one pass: the Laplacian of order 2R
};

inline constexpr std::array<Op, 6> kAllOps = {Op::laplacian7, Op::d2x, Op::d2y, Op::d2z, Op::d2xy, Op::d2xyz};

std::string_view op_name(Op op);
Op parse_op(std::string_view name);  // throws Error(invalid_argument) naming the valid ops
std::array<bool, 3> op_axes(Op op);  // which of x, y, z the operator differentiates

struct Spacing {
  double hx = 1.0, hy = 1.0, hz = 1.0;
};

struct Stencil {
  Op op = Op::d2xyz;
  int radius = 1;
  Spacing h{};
};

// Throws Error(invalid_argument) for a radius outside 1..8 (laplacian7: exactly 1) or a spacing
// that is zero, negative or not finite.
void validate(const Stencil& s);

// Throws Error(invalid_argument) when `interior` cannot carry the stencil (an extent < 1).
void validate_extents(const Stencil& s, Extents interior);

// Per-axis second-derivative weights w[a][r], r = 0..2R (offset r - R), scaled by 1/h_a^2;
// all zero for an axis the operator does not differentiate.
struct StencilWeights {
  int radius = 1;
  std::array<bool, 3> axis{};
  std::array<std::array<double, kMaxTaps>, 3> w{};
};
StencilWeights stencil_weights(const Stencil& s);

// The size convention of each series: the Laplacian posts count the boundary points in nx
// (512^3 is a 510^3 interior), the seismic posts count only the interior.
Extents interior_from_size(Op op, Extents size);
Extents size_from_interior(Op op, Extents interior);

}  // namespace fdstencil
