// A run-time radius as a template constant: the wave step's kernels are compiled per radius 1..8
// (kMaxTaps = 2 x 8 + 1 weights), and each launcher picks its instance through this one switch.
#pragma once

#include <string>

#include "fdstencil/error.hpp"

namespace fdstencil::cuda::wave {

// pick.template operator()<R>() for R = radius; Error(invalid_argument) outside 1..8.
template <class Pick>
auto for_radius(int radius, Pick&& pick) {
  switch (radius) {
    case 1: return pick.template operator()<1>();
    case 2: return pick.template operator()<2>();
    case 3: return pick.template operator()<3>();
    case 4: return pick.template operator()<4>();
    case 5: return pick.template operator()<5>();
    case 6: return pick.template operator()<6>();
    case 7: return pick.template operator()<7>();
    case 8: return pick.template operator()<8>();
  }
  throw Error(ErrorKind::invalid_argument, "radius " + std::to_string(radius) + " is outside 1..8");
}

}  // namespace fdstencil::cuda::wave
