// What boundary saving (fdstencil/imaging.hpp's Storage::boundary) leaves as it was: a model-shaped
// result at the points off the model's outer faces, where no layer point adds its share. For the
// tests of tests/wave/test_imaging_boundary.cpp and tests/cuda/test_imaging_gpu.cpp.
#pragma once

#include <cmath>
#include <cstdint>
#include <vector>

#include "fdstencil/wave.hpp"

namespace fdstencil::test {

// The largest |got - want| over the points off the outer faces, and the largest |want| there.
struct InteriorGap {
  double gap = 0, scale = 0;
  double relative() const { return gap / scale; }
};

inline InteriorGap interior_gap(const wave::Model& m, const std::vector<double>& got,
                                const std::vector<double>& want) {
  InteriorGap g;
  const bool y = m.dim == 3;
  for (int64_t k = 1; k + 1 < m.nz; ++k)
    for (int64_t j = y ? 1 : 0; j < (y ? m.ny - 1 : 1); ++j)
      for (int64_t i = 1; i + 1 < m.nx; ++i) {
        const size_t p = size_t((k * m.ny + j) * m.nx + i);
        g.gap = std::max(g.gap, std::abs(got[p] - want[p]));
        g.scale = std::max(g.scale, std::abs(want[p]));
      }
  return g;
}

}  // namespace fdstencil::test
