// How far boundary saving's results (fdstencil/imaging.hpp's Storage::boundary) lie from every
// field's, over a model-shaped result: for the tests of tests/wave/test_imaging_boundary.cpp and
// tests/cuda/test_imaging_gpu.cpp. Off the model's outer faces no layer point beyond the strips
// adds its share, so the gradient is every field's there to round-off; images are, everywhere.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "fdstencil/wave.hpp"

namespace fdstencil::test {

// The largest |got - want| and the largest |want|, over the points off the outer faces or over all.
struct ResultGap {
  double gap = 0, scale = 0;
  double relative() const { return gap / scale; }
};

inline ResultGap result_gap(const wave::Model& m, const std::vector<double>& got,
                            const std::vector<double>& want, bool faces) {
  ResultGap g;
  const int64_t in = faces ? 0 : 1, y_in = m.dim == 3 ? in : 0;
  for (int64_t k = in; k < m.nz - in; ++k)
    for (int64_t j = y_in; j < m.ny - y_in; ++j)
      for (int64_t i = in; i < m.nx - in; ++i) {
        const size_t p = size_t((k * m.ny + j) * m.nx + i);
        g.gap = std::max(g.gap, std::abs(got[p] - want[p]));
        g.scale = std::max(g.scale, std::abs(want[p]));
      }
  return g;
}

inline ResultGap interior_gap(const wave::Model& m, const std::vector<double>& got,
                              const std::vector<double>& want) {
  return result_gap(m, got, want, false);
}
inline ResultGap whole_gap(const wave::Model& m, const std::vector<double>& got,
                           const std::vector<double>& want) {
  return result_gap(m, got, want, true);
}

}  // namespace fdstencil::test
