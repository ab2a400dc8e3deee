// The runs the checkpoint tests resume (tests/wave/test_wave_checkpoint.cpp on
// the cpu, tests/cuda/test_wave_gpu.cpp on the GPU): small models with every
// face's CPML (and a free surface in one), an off-grid Hicks source and
// receivers, so that every part of the state (both time levels, each axis's
// three memory variables, the traces) matters to the result.
#pragma once

#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "fdstencil/wave.hpp"

namespace fdstencil::test {

struct CheckpointCase {
  wave::Model model;
  wave::Options options;
};

// A two-layer model (so the velocity is not uniform) with the source and
// receivers off the grid.
inline CheckpointCase checkpoint_case(int dim, bool free_surface, const std::string& backend) {
  CheckpointCase c;
  const int64_t n = dim == 3 ? 36 : 90;
  c.model = wave::Model::layered(dim, n, dim == 3 ? n : 1, n, 10.0, {{0.0, 1800.f}, {200.0, 2600.f}});
  wave::Options& o = c.options;
  o.radius = 4;
  o.nt = dim == 3 ? 150 : 400;
  o.boundary.cpml_width = 10;
  o.boundary.free_surface = free_surface;
  o.backend = backend;
  const double dt = wave::run_dt(c.model, o);
  o.sources.push_back({{153.3, dim == 3 ? 177.7 : 0.0, 171.1}, wave::ricker(25, 0.05, dt, o.nt)});
  for (int r = 0; r < 5; ++r) o.receivers.push_back({42.5 + 30 * r, dim == 3 ? 101.5 : 0.0, 63.3 + 41.7 * r});
  return c;
}

inline bool same_bits(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() &&
         (a.empty() || std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0);
}

// The index of the first element whose bits differ, for the failure message
// (-1: none).
inline long first_difference(const std::vector<float>& a, const std::vector<float>& b) {
  if (a.size() != b.size()) return 0;
  for (size_t i = 0; i < a.size(); ++i)
    if (std::memcmp(&a[i], &b[i], sizeof(float)) != 0) return long(i);
  return -1;
}

}  // namespace fdstencil::test
