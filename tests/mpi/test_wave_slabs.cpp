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
#include "mpi/slab_test_util.hpp"

using namespace fdstencil;
using namespace fdstencil::wave;
using namespace fdstencil::wave::test;

TEST(WaveSlabs, ThreeDHicksMatchesOneRank) {
  // Hicks taps reach 4 points each way; R = 4; the source's taps straddle a cut.
  expect_split_matches_one_rank(*test_comm(), make_case(3, 4, false, Interpolation::hicks, 30), 4);
}

// A slab boundary inside a CPML layer (layer_cut_case): the layer's planes on two ranks, each
// through PmlAxis::offset.
TEST(WaveSlabs, CpmlLayerSplitBetweenSlabsMatchesOneRank) {
  const Case c = layer_cut_case(2);
  const Domain d = Domain::make(2, 2, 8, 1, c.model.nx, c.options.boundary);
  bool cut_in_layer = false;
  for (const Domain::Slab& s : d.split_z(test_comm()->size(), slab_layer_cost(c.options)))
    cut_in_layer = cut_in_layer || (s.k1 > d.nz - d.hi[2] && s.k1 < d.nz);
  ASSERT_TRUE(cut_in_layer) << "the test's geometry no longer cuts the layer";
  expect_split_matches_one_rank(*test_comm(), c, 1, /*both_kinds=*/false);
}

TEST(WaveSlabs, TwoDFreeSurfaceMatchesOneRank) {
  // The free surface belongs to rank 0 alone; R = 2, trilinear taps (1 point each way).
  expect_split_matches_one_rank(*test_comm(), make_case(2, 2, true, Interpolation::trilinear, 40), 1);
}

TEST(WaveSlabs, DoublePrecisionMatchesOneRank) {
  Case c = make_case(3, 8, false, Interpolation::trilinear, 36);
  c.options.double_precision = true;
  expect_split_matches_one_rank(*test_comm(), c, 1);
}

// Every rank refuses what a split run cannot do, with the same message, and none waits for another.
// (Snapshots, checkpoints and resumes: tests/mpi/test_wave_slab_state.cpp.)
TEST(WaveSlabs, RefusalsOnEveryRank) {
  Case c = make_case(3, 8, false, Interpolation::trilinear, 10);
  c.options.boundary.cpml_width = 0;  // 10 planes: thinner than R = 8 at 2 or 3 slabs
  c.options.receivers.resize(2);
  c.options.comm = test_comm();
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
  ok.options.comm = test_comm();
  Options o = ok.options;
  o.backend = "cuda";  // MPI alone carries host memory
  refused(ok.model, o, "needs the NCCL transport");
  // And the ranks are still in step: a collective after the refusals completes on every rank.
  EXPECT_TRUE(test_comm()->all(true));
}

// One rank fails before the run starts (here a bad option on the last rank alone): it reports
// its own error, and every other rank, ready to run, reports that another rank failed, instead
// of waiting for it in the first exchange.
TEST(WaveSlabs, AFailureOnOneRankStopsEveryRank) {
  Case c = make_case(3, 2, false, Interpolation::trilinear, 30);
  c.options.comm = test_comm();
  const bool failing = test_comm()->rank() == test_comm()->size() - 1;
  if (failing) c.options.nt = 0;
  try {
    run(c.model, c.options);
    ADD_FAILURE() << "rank " << test_comm()->rank() << " was not stopped";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(failing ? "at least 1 time step" : "another rank failed"),
              std::string::npos)
        << e.what();
  }
  EXPECT_TRUE(test_comm()->all(true));
}

// The ranks compare their runs before the first exchange: a receiver moved, or snapshots at
// other steps (each is gathered by every rank), on the last rank alone stops every rank with the
// same error, and the ranks are still in step.
TEST(WaveSlabs, DifferentRunsOnTheRanksAreRefused) {
  const bool last = test_comm()->rank() == test_comm()->size() - 1;
  for (int variant = 0; variant < 2; ++variant) {
    Case c = make_case(3, 2, false, Interpolation::trilinear, 30);
    c.options.comm = test_comm();
    c.options.snapshot_steps = {20};
    if (last && variant == 0) c.options.receivers[0].x += c.model.h;
    if (last && variant == 1) c.options.snapshot_steps = {21};
    try {
      run(c.model, c.options);
      ADD_FAILURE() << "rank " << test_comm()->rank() << " ran (variant " << variant << ")";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("different runs"), std::string::npos) << e.what();
    }
    EXPECT_TRUE(test_comm()->all(true));
  }
}

int main(int argc, char** argv) {
  fdstencil::mpi::MpiSession session(argc, argv);
  auto comm = fdstencil::mpi::world();
  test_comm() = comm.get();
  ::testing::InitGoogleTest(&argc, argv);
  // Every rank's verdict: a failure on any rank fails the run.
  const bool all_passed = run_all_tests_on_every_rank(*comm, "test_mpi");
  test_comm() = nullptr;
  comm.reset();
  return all_passed ? 0 : 1;
}
