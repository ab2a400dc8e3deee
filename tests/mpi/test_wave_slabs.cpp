// A wave run split along z across MPI ranks against the same run on one rank (issue 14). Every rank
// runs each test: the one-rank run by itself, then its slab of the split run; rank 0 compares.
// The wavefield is the same to the bit (each point's arithmetic is unchanged, its halo values are
// the neighbour's own), and so is every receiver whose taps lie in one slab; a receiver whose
// taps straddle two slabs sums them in another order, so to round-off.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "fdstencil/error.hpp"
#include "fdstencil/wave.hpp"
#include "fdstencil/wave_comm.hpp"
#include "mpi/mpi_comm.hpp"

using namespace fdstencil;
using namespace fdstencil::wave;

namespace {

Comm* g_comm = nullptr;

struct Case {
  Model model;
  Options options;
};

// A layered model (so slabs see different m), one Ricker source, receivers at every depth of a
// column through the source and beside it.
Case make_case(int dim, int radius, bool free_surface, Interpolation interp, int64_t nz) {
  Case c;
  const double h = 10;
  const int64_t nx = 26, ny = dim == 3 ? 22 : 1;
  c.model = Model::layered(dim, nz, ny, nx, h, {{0.0, 1500.f}, {h * nz / 3, 2000.f}, {h * nz * 2 / 3, 2600.f}});
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
    for (double x : {h * 12.2, h * 17.5}) o.receivers.push_back({h * double(k) + 0.37 * h, dim == 3 ? h * 9.0 : 0.0, x});
  return c;
}

// Whether receiver depth z (metres) has every tap inside one slab: its interpolation reaches
// `reach` points above and below the grid point under it.
bool inside_one_slab(double z, double h, const Domain& d, const std::vector<Domain::Slab>& slabs, int reach) {
  const int64_t k = int64_t(std::floor(z / h)) + d.lo[2];
  for (const Domain::Slab& s : slabs)
    if (k - reach >= s.k0 && k + reach + 1 < s.k1) return true;
  return false;
}

void expect_split_matches_one_rank(const Case& c, int reach, bool both_kinds = true) {
  Comm& comm = *g_comm;
  const Result one = run(c.model, c.options);  // every rank, alone
  Options split = c.options;
  split.comm = &comm;
  const Result many = run(c.model, split);
  if (comm.rank() != 0) {
    EXPECT_TRUE(many.traces.empty());
    EXPECT_TRUE(many.final_field.empty());
    return;
  }
  ASSERT_EQ(many.final_field.size(), one.final_field.size());
  int64_t differ = 0;
  for (size_t i = 0; i < one.final_field.size(); ++i) differ += many.final_field[i] != one.final_field[i];
  EXPECT_EQ(differ, 0) << "points of the final field that differ from the one-rank run";
  // The field must be a wavefield, not zeros that agree.
  float peak = 0;
  for (float v : one.final_field) peak = std::max(peak, std::abs(v));
  EXPECT_GT(peak, 0.f);

  const Domain d = one.domain;
  const auto slabs = d.split_z(comm.size());
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
      if (one_slab) {
        ASSERT_EQ(a, b) << "receiver " << r << " (inside one slab), step " << n;
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

}  // namespace

TEST(WaveSlabs, ThreeDHicksMatchesOneRank) {
  // Hicks taps reach 4 points each way; R = 4; the source's taps straddle a cut.
  expect_split_matches_one_rank(make_case(3, 4, false, Interpolation::hicks, 30), 4);
}

// A slab boundary inside a CPML layer: the layer's planes on two ranks, each through
// PmlAxis::offset. A free surface on top and 12 layer points below a model of 8 planes: 20
// planes, cut at 10 (2 ranks) or 6 and 13 (3 ranks), inside the layer [8, 20) either way.
TEST(WaveSlabs, CpmlLayerSplitBetweenSlabsMatchesOneRank) {
  Case c = make_case(2, 2, true, Interpolation::trilinear, 8);
  c.options.boundary.cpml_width = 12;
  c.options.sources[0].at.z = 3.3 * c.model.h;
  const Domain d = Domain::make(2, 2, 8, 1, c.model.nx, c.options.boundary);
  bool cut_in_layer = false;
  for (const Domain::Slab& s : d.split_z(g_comm->size()))
    cut_in_layer = cut_in_layer || (s.k1 > d.nz - d.hi[2] && s.k1 < d.nz);
  ASSERT_TRUE(cut_in_layer) << "the test's geometry no longer cuts the layer";
  expect_split_matches_one_rank(c, 1, /*both_kinds=*/false);
}

TEST(WaveSlabs, TwoDFreeSurfaceMatchesOneRank) {
  // The free surface belongs to rank 0 alone; R = 2, trilinear taps (1 point each way).
  expect_split_matches_one_rank(make_case(2, 2, true, Interpolation::trilinear, 40), 1);
}

TEST(WaveSlabs, DoublePrecisionMatchesOneRank) {
  Case c = make_case(3, 8, false, Interpolation::trilinear, 36);
  c.options.double_precision = true;
  expect_split_matches_one_rank(c, 1);
}

// Every rank refuses what a split run cannot do, with the same message, and none waits for another.
TEST(WaveSlabs, RefusalsOnEveryRank) {
  Case c = make_case(3, 8, false, Interpolation::trilinear, 10);
  c.options.boundary.cpml_width = 0;  // 10 planes: thinner than R = 8 at 2 or 3 slabs
  c.options.receivers.resize(2);
  c.options.comm = g_comm;
  const auto refused = [](const Model& model, const Options& o, const std::string& word) {
    try {
      run(model, o);
      ADD_FAILURE() << "not refused: expected '" << word << "'";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(word), std::string::npos) << e.what();
    }
  };
  refused(c.model, c.options, "thinner than the radius");
  Case ok = make_case(3, 2, false, Interpolation::trilinear, 30);
  ok.options.comm = g_comm;
  Options o = ok.options;
  o.snapshot_steps = {10};
  refused(ok.model, o, "no snapshots");
  o = ok.options;
  o.checkpoint_every = 10;
  o.on_checkpoint = [](Checkpoint) {};
  refused(ok.model, o, "checkpoints");
  o = ok.options;
  o.backend = "cuda";
  refused(ok.model, o, "cpu backend only");
  // And the ranks are still in step: a collective after the refusals completes on every rank.
  EXPECT_TRUE(g_comm->all(true));
}

// One rank fails before the run starts (here a bad option on the last rank alone): it reports
// its own error, and every other rank, ready to run, reports that another rank failed, instead
// of waiting for it in the first exchange.
TEST(WaveSlabs, AFailureOnOneRankStopsEveryRank) {
  Case c = make_case(3, 2, false, Interpolation::trilinear, 30);
  c.options.comm = g_comm;
  const bool failing = g_comm->rank() == g_comm->size() - 1;
  if (failing) c.options.nt = 0;
  try {
    run(c.model, c.options);
    ADD_FAILURE() << "rank " << g_comm->rank() << " was not stopped";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(failing ? "at least 1 time step" : "another rank failed"), std::string::npos)
        << e.what();
  }
  EXPECT_TRUE(g_comm->all(true));
}

int main(int argc, char** argv) {
  fdstencil::mpi::MpiSession session(argc, argv);
  auto comm = fdstencil::mpi::world();
  g_comm = comm.get();
  ::testing::InitGoogleTest(&argc, argv);
  // Only rank 0 prints: the others' output would interleave with it.
  if (comm->rank() != 0) {
    auto& listeners = ::testing::UnitTest::GetInstance()->listeners();
    delete listeners.Release(listeners.default_result_printer());
  }
  const int failed = RUN_ALL_TESTS();
  if (failed != 0 && comm->rank() != 0)  // its printer is off: say at least that it failed
    std::fprintf(stderr, "test_mpi: rank %d of %d: a test failed (rerun it alone for the details)\n", comm->rank(),
                 comm->size());
  // Every rank's verdict: a failure on any rank fails the run.
  const bool all_passed = g_comm->all(failed == 0);
  g_comm = nullptr;
  comm.reset();
  return all_passed ? 0 : 1;
}
