// Point sources and receivers off the grid: the grid points a position is spread over, and their
// weights (Hicks 2002's Kaiser-windowed sinc, or trilinear).
#pragma once

#include <string>
#include <vector>

#include "physics/acoustic.hpp"
#include "fdstencil/wave.hpp"

namespace fdstencil::wave::detail {

// Hicks' half-width: 4 points on each side, with his Kaiser parameter for it, b = 6.31.
inline constexpr int kHicksHalfWidth = 4;
inline constexpr double kHicksKaiserB = 6.31;

struct Weight1 {
  int64_t index;
  double w;
};
// The 1D weights of a position `pos` in grid units: one point of weight 1 on a grid point.
std::vector<Weight1> weights_1d(double pos, Interpolation kind);

// The taps of point `what` (`name`, e.g. "source 2", for messages) in the computational domain:
// the per-axis weights' product, mirrored oddly about a free surface (a tap above it moves to its
// image with the opposite sign; taps on it vanish with u there). Throws Error(invalid_argument)
// when the point lies outside the model or its taps leave the domain.
std::vector<acoustic::Tap> taps_of(const Point& p, int id, const std::string& name, const Domain& d, double h,
                                   Interpolation kind, bool free_surface);

}  // namespace fdstencil::wave::detail
