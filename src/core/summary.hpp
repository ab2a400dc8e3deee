// Two small things every layer above the core prints or reports: the median of repeated
// timings, and extents as text ("512x512x512"). One definition, so the tuner, the benchmark and
// the tool agree.
#pragma once

#include <algorithm>
#include <string>
#include <vector>

#include "fdstencil/layout.hpp"

namespace fdstencil {

// The middle value; for an even count the mean of the two middle ones. `v` must not be empty.
inline double median_of(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

inline std::string extents_text(Extents n) {
  return std::to_string(n.nx) + "x" + std::to_string(n.ny) + "x" + std::to_string(n.nz);
}

}  // namespace fdstencil
