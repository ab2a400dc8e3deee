// A split run's state on the cpu over MPI (issue 14): its checkpoints and snapshots are one
// rank's, in the one-rank formats, and a checkpoint resumes on any number of ranks. Part of
// test_mpi (main() in test_wave_slabs.cpp), launched with 2 ranks and with 3.
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "fdstencil/wave.hpp"
#include "mpi/slab_state_test_util.hpp"
#include "mpi/slab_test_util.hpp"

using namespace fdstencil::wave;
using namespace fdstencil::wave::test;

// 3D, R = 4, Hicks taps (4 points each way), CPML 6 on every side: checkpoints at steps 50, 100
// and 150, each the one-rank checkpoint to the byte (receivers straddling slabs to round-off).
TEST(WaveSlabState, CheckpointsAreOneRanks) {
  expect_split_checkpoints_match(*test_comm(), make_case(3, 4, false, Interpolation::hicks, 30), 4);
}

// A slab boundary inside the z CPML layer (its slots on two ranks), a free surface on rank 0 (its
// mirrored halo in u), double precision: layer_cut_case.
TEST(WaveSlabState, CheckpointsCutInTheLayerInDoubleAreOneRanks) {
  Case c = layer_cut_case(2);
  c.options.double_precision = true;
  expect_split_checkpoints_match(*test_comm(), c, 1);
}

// Every rank writing its own part of one checkpoint file: the one-rank checkpoint to the byte.
TEST(WaveSlabState, CheckpointFilesAreOneRanks) {
  expect_checkpoint_files_match(*test_comm(), make_case(3, 4, false, Interpolation::hicks, 30), 4);
}

TEST(WaveSlabState, CheckpointFilesCutInTheLayerInDoubleAreOneRanks) {
  Case c = layer_cut_case(2);
  c.options.double_precision = true;
  expect_checkpoint_files_match(*test_comm(), c, 1);
}

TEST(WaveSlabState, CheckpointFilesResumeAcrossRankCounts) {
  expect_resumes_from_files(*test_comm(), make_case(3, 4, true, Interpolation::trilinear, 30), 1);
}

TEST(WaveSlabState, BadCheckpointFilesAreRefusedOnEveryRank) {
  expect_bad_files_refused_on_every_rank(*test_comm(), make_case(2, 2, false, Interpolation::trilinear, 40));
}

TEST(WaveSlabState, SnapshotAndFinalFilesAreOneRanks) {
  expect_field_files_match(*test_comm(), make_case(3, 2, true, Interpolation::trilinear, 30));
}

// A folder a rank cannot write into is refused on every rank before the run.
TEST(WaveSlabState, AFolderTheRanksCannotWriteIntoIsRefusedBeforeTheRun) {
  Comm& comm = *test_comm();
  Case c = make_case(2, 2, false, Interpolation::trilinear, 40);
  c.options.comm = &comm;
  c.options.checkpoint_every = 10;
  c.options.split_checkpoint_file = "/nonexistent-fdstencil-folder/state.ckpt";
  std::string what = "(no error)";
  try {
    run(c.model, c.options);
  } catch (const std::exception& e) {
    what = e.what();
  }
  EXPECT_NE(what.find("cannot write into /nonexistent-fdstencil-folder"), std::string::npos) << what;
  EXPECT_TRUE(comm.all(true)) << "the ranks are still together";
}

TEST(WaveSlabState, SnapshotsAreOneRanks) {
  expect_split_snapshots_match(*test_comm(), make_case(3, 2, true, Interpolation::trilinear, 30));
}

TEST(WaveSlabState, CheckpointsResumeAcrossRankCounts) {
  expect_resumes_across_rank_counts(*test_comm(), make_case(3, 4, false, Interpolation::trilinear, 30), 1);
}

TEST(WaveSlabState, CheckpointsResumeAcrossRankCountsIn2DDouble) {
  Case c = make_case(2, 2, true, Interpolation::trilinear, 40);
  c.options.double_precision = true;
  expect_resumes_across_rank_counts(*test_comm(), c, 1);
}

// Comm::scatter_bytes, which cuts a resumed state into the slabs: each rank its own range of rank
// 0's bytes, ranges overlapping the next rank's, rank 0's copied in place, and an empty one.
TEST(WaveSlabState, ScatterGivesEachRankItsOwnRange) {
  Comm& comm = *test_comm();
  const int P = comm.size(), r = comm.rank();
  const auto byte_at = [](int64_t i) { return char((i * 7 + 3) % 251); };
  std::vector<char> whole;
  if (r == 0)
    for (int64_t i = 0; i < 100 * P + 200; ++i) whole.push_back(byte_at(i));
  const int64_t offset = 100 * r, bytes = r == P - 1 ? 0 : 150 + r;  // the last rank asks for nothing
  std::vector<char> mine(size_t(bytes + 2), 'x');                    // a guard byte at each end
  comm.scatter_bytes(r == 0 ? whole.data() : nullptr, offset, mine.data() + 1, bytes);
  bool ok = mine.front() == 'x' && mine.back() == 'x';
  for (int64_t k = 0; k < bytes; ++k) ok = ok && mine[size_t(k + 1)] == byte_at(offset + k);
  EXPECT_TRUE(ok) << "rank " << r;
  EXPECT_TRUE(comm.all(ok)) << "a rank received other bytes than its range";
}
