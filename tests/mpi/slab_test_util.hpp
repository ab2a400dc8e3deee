// What the split-run tests share (tests/mpi): a layered case, and the comparison of a run split
// across ranks with the same run on one rank.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <vector>

#include "fdstencil/wave.hpp"
#include "fdstencil/wave_comm.hpp"

namespace fdstencil::wave::test {

struct Case {
  Model model;
  Options options;
};

// A layered model (so slabs see different m), one Ricker source, receivers at every depth of a
// column through the source and beside it.
inline Case make_case(int dim, int radius, bool free_surface, Interpolation interp, int64_t nz) {
  Case c;
  const double h = 10;
  const int64_t nx = 26, ny = dim == 3 ? 22 : 1;
  c.model =
      Model::layered(dim, nz, ny, nx, h, {{0.0, 1500.f}, {h * nz / 3, 2000.f}, {h * nz * 2 / 3, 2600.f}});
  Options& o = c.options;
  o.radius = radius;
  o.nt = 160;
  o.boundary.cpml_width = 6;
  o.boundary.free_surface = free_surface;
  o.interpolation = interp;
  o.backend = "cpu";
  const double dt = run_dt(c.model, o);
  Source s;
  s.at = {h * 7.3, dim == 3 ? h * 10.6 : 0.0, h * 12.2};
  s.wavelet = ricker(25.0, 0.045, dt, o.nt);
  o.sources.push_back(s);
  for (int64_t k = 1; k + 1 < nz; ++k)
    for (double x : {h * 12.2, h * 17.5})
      o.receivers.push_back({h * double(k) + 0.37 * h, dim == 3 ? h * 9.0 : 0.0, x});
  return c;
}

// A slab boundary inside the z CPML layer: a free surface on top and 12 layer points below a
// model of 8 planes, 20 planes in all, cut at 10 (2 ranks) or 6 and 13 (3 ranks), inside the
// layer [8, 20) either way; R = 2, the source at depth 3.3 h.
inline Case layer_cut_case(int dim) {
  Case c = make_case(dim, 2, true, Interpolation::trilinear, 8);
  c.options.boundary.cpml_width = 12;
  c.options.sources[0].at.z = 3.3 * c.model.h;
  c.options.layer_plane_cost = 1;  // near-equal slabs: the cut between ranks lies inside the layer
  return c;
}

// Whether receiver depth z (metres) has every tap inside one slab: its interpolation reaches
// `reach` points above and below the grid point under it.
inline bool inside_one_slab(double z, double h, const Domain& d, const std::vector<Domain::Slab>& slabs,
                            int reach) {
  const int64_t k = int64_t(std::floor(z / h)) + d.lo[2];
  for (const Domain::Slab& s : slabs)
    if (k - reach >= s.k0 && k + reach + 1 < s.k1) return true;
  return false;
}

// Rank 0's split run `many` against the one-rank run `one` of the same case on `ranks` ranks: the
// final field to the bit, and the traces: those of receivers inside one slab to the bit where
// `exact_traces` (the cpu), or within 5e-6 of the trace's peak (the GPU sums a receiver's taps by
// atomicAdd, in no fixed order); those of receivers straddling slabs within 1e-5 of it.
inline void expect_same_run(const Result& one, const Result& many, const Case& c, int ranks, int reach,
                            bool both_kinds = true, bool exact_traces = true) {
  ASSERT_EQ(many.final_field.size(), one.final_field.size());
  int64_t differ = 0;
  for (size_t i = 0; i < one.final_field.size(); ++i) differ += many.final_field[i] != one.final_field[i];
  EXPECT_EQ(differ, 0) << "points of the final field that differ from the one-rank run";
  // The field must be a wavefield, not zeros that agree.
  float peak = 0;
  for (float v : one.final_field) peak = std::max(peak, std::abs(v));
  EXPECT_GT(peak, 0.f);

  const Domain d = one.domain;
  const auto slabs = d.split_z(ranks, slab_layer_cost(c.options));
  ASSERT_EQ(many.traces.size(), one.traces.size());
  const int64_t nt = c.options.nt;
  int exact = 0, straddling = 0;
  for (size_t r = 0; r < c.options.receivers.size(); ++r) {
    float scale = 0;
    for (int64_t n = 0; n < nt; ++n) scale = std::max(scale, std::abs(one.traces[r * nt + n]));
    const bool one_slab = inside_one_slab(c.options.receivers[r].z, c.model.h, d, slabs, reach);
    (one_slab ? exact : straddling)++;
    for (int64_t n = 0; n < nt; ++n) {
      const float a = one.traces[r * nt + n], b = many.traces[r * nt + n];
      if (one_slab && exact_traces) {
        ASSERT_EQ(a, b) << "receiver " << r << " (inside one slab), step " << n;
      } else if (one_slab) {
        ASSERT_NEAR(a, b, 5e-6f * scale) << "receiver " << r << " (inside one slab), step " << n;
      } else {
        ASSERT_NEAR(a, b, 1e-5f * scale) << "receiver " << r << " (straddling slabs), step " << n;
      }
    }
  }
  // Both kinds were exercised (where the geometry has both).
  EXPECT_GT(exact, 0);
  if (both_kinds) {
    EXPECT_GT(straddling, 0);
  }
}

// The run alone on every rank, then split across `comm`; rank 0 compares (expect_same_run).
inline void expect_split_matches_one_rank(Comm& comm, const Case& c, int reach, bool both_kinds = true,
                                          bool exact_traces = true) {
  const Result one = run(c.model, c.options);  // every rank, alone
  Options split = c.options;
  split.comm = &comm;
  const Result many = run(c.model, split);
  if (comm.rank() != 0) {
    EXPECT_TRUE(many.traces.empty());
    EXPECT_TRUE(many.final_field.empty());
    return;
  }
  expect_same_run(one, many, c, comm.size(), reach, both_kinds, exact_traces);
}

// The ranks of an MPI test binary, which its main() sets for the tests of all its files.
inline Comm*& test_comm() {
  static Comm* comm = nullptr;
  return comm;
}

// RUN_ALL_TESTS with only rank 0 printing (the others' output would interleave with it); a rank
// whose printer is off says at least that it failed. True on every rank when every rank passed.
inline bool run_all_tests_on_every_rank(Comm& comm, const char* program) {
  if (comm.rank() != 0) {
    auto& listeners = ::testing::UnitTest::GetInstance()->listeners();
    delete listeners.Release(listeners.default_result_printer());
  }
  const int failed = RUN_ALL_TESTS();
  if (failed != 0 && comm.rank() != 0)
    std::fprintf(stderr, "%s: rank %d of %d: a test failed (rerun it alone for the details)\n", program,
                 comm.rank(), comm.size());
  return comm.all(failed == 0);
}

}  // namespace fdstencil::wave::test
