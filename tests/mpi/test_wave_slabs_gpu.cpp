// A wave run split along z across GPUs, the halo exchange over NCCL (issue 14), against the same
// run on one GPU. Launched by mpiexec with 2 ranks, one GPU each. The final field is the same to
// the bit: the split changes which launch computes a plane, not its arithmetic, and the halo
// values are the neighbour's own. Receivers agree within the GPU's own atomicAdd round-off.
// Without a GPU per rank the split tests report skipped, and the refusal test checks that every
// rank is refused with the reason instead.
#include <gtest/gtest.h>

#include <cstdio>
#include <memory>
#include <string>

#include "fdstencil/device_field.hpp"
#include "fdstencil/error.hpp"
#include "fdstencil/wave.hpp"
#include "fdstencil/wave_comm.hpp"
#include "mpi/mpi_comm.hpp"
#include "mpi/slab_state_test_util.hpp"
#include "mpi/slab_test_util.hpp"
#include "nccl/nccl_comm.hpp"

using namespace fdstencil;
using namespace fdstencil::wave;
using namespace fdstencil::wave::test;

namespace {

Comm* g_host = nullptr;  // MPI
Comm* g_gpus = nullptr;  // NCCL, when every rank has a GPU of its own
std::string g_no_gpus;   // else why not

#define REQUIRE_GPUS() \
  if (g_gpus == nullptr) GTEST_SKIP() << g_no_gpus

Case on_gpus(Case c) {
  c.options.backend = "cuda";
  return c;
}

}  // namespace

TEST(WaveSlabsGpu, ThreeDMatchesOneGpu) {
  REQUIRE_GPUS();
  // R = 4, Hicks taps (4 points each way), the defaults' launch.
  expect_split_matches_one_rank(*g_gpus, on_gpus(make_case(3, 4, false, Interpolation::hicks, 30)), 4, true,
                                false);
}

// The tile design at R = 8 with chunks of 3 planes (the face chunks are then 3 at each end, and
// the slab's halo of 8 spans three of them), a free surface on rank 0's face.
TEST(WaveSlabsGpu, TileDesignThinChunksFreeSurfaceMatchOneGpu) {
  REQUIRE_GPUS();
  Case c = on_gpus(make_case(3, 8, true, Interpolation::trilinear, 44));
  c.options.kernel_params = R"({"design": "tile", "block": "16x8", "nw": 3})";
  expect_split_matches_one_rank(*g_gpus, c, 1, true, false);
}

// 2D, R = 2, and the exchange before the inner chunks instead of beside them: the same field.
TEST(WaveSlabsGpu, TwoDWithoutOverlapMatchesOneGpu) {
  REQUIRE_GPUS();
  Case c = on_gpus(make_case(2, 2, true, Interpolation::trilinear, 40));
  c.options.overlap = Options::Overlap::off;
  expect_split_matches_one_rank(*g_gpus, c, 1, true, false);
}

// The face chunks before the inner chunks on the run's stream (faces 0) instead of beside them on
// the exchange's (the default): the same field, with the overlap on and off.
TEST(WaveSlabsGpu, FacesBeforeTheInnerChunksMatchOneGpu) {
  REQUIRE_GPUS();
  Case c = on_gpus(make_case(3, 4, false, Interpolation::trilinear, 30));
  c.options.kernel_params = R"({"faces": 0})";
  for (const Options::Overlap way : {Options::Overlap::on, Options::Overlap::off}) {
    c.options.overlap = way;
    expect_split_matches_one_rank(*g_gpus, c, 1, true, false);
  }
}

// The path chosen by timing both (Overlap::automatic, a run long enough to probe): the same field,
// a path named, both paths' per-step times, and the same choice on every rank.
TEST(WaveSlabsGpu, OverlapChosenByTimingBothMatchesOneGpu) {
  REQUIRE_GPUS();
  Case c = on_gpus(make_case(3, 4, false, Interpolation::trilinear, 30));
  c.options.nt = 400;
  c.options.sources[0].wavelet = ricker(25.0, 0.045, run_dt(c.model, c.options), c.options.nt);
  ASSERT_EQ(c.options.overlap, Options::Overlap::automatic);
  Options split = c.options;
  split.comm = g_gpus;
  const Result many = run(c.model, split);
  EXPECT_TRUE(many.timing.overlap == "on" || many.timing.overlap == "off") << many.timing.overlap;
  EXPECT_GT(many.timing.probe_on_ms, 0);
  EXPECT_GT(many.timing.probe_off_ms, 0);
  EXPECT_EQ(many.timing.overlap == "on", many.timing.probe_on_ms < many.timing.probe_off_ms);
  EXPECT_TRUE(g_gpus->same(many.timing.overlap == "on" ? 1 : 0)) << "the ranks took different paths";
  expect_split_matches_one_rank(*g_gpus, c, 1, true, false);
}

// A slab boundary inside the z CPML layer (PmlAxis::offset on the GPU): layer_cut_case, in 3D.
TEST(WaveSlabsGpu, CpmlLayerSplitBetweenSlabsMatchesOneGpu) {
  REQUIRE_GPUS();
  const Case c = on_gpus(layer_cut_case(3));
  expect_split_matches_one_rank(*g_gpus, c, 1, false, false);
}

// The CPML apart from the march (cuda/wave/acoustic_layers.cuh): a slab adds its face planes'
// layer terms before the exchange and its inner planes' after the inner chunks. A slab boundary
// inside the z layer (R = 2), R = 4 with Hicks taps under a free surface, and chunks of 2 planes
// on 26-plane slabs, whose inner chunks hold z layer planes (4, 5 on rank 0, 20, 21 on rank 1);
// the face chunks beside the exchange (faces 1) and before the inner ones (faces 0).
TEST(WaveSlabsGpu, CpmlApartMatchesOneGpu) {
  REQUIRE_GPUS();
  for (const char* params : {R"({"cpml": "apart"})", R"({"cpml": "apart", "faces": 0})"}) {
    SCOPED_TRACE(params);
    Case cut = on_gpus(layer_cut_case(3));
    cut.options.kernel_params = params;
    expect_split_matches_one_rank(*g_gpus, cut, 1, false, false);
    Case hicks = on_gpus(make_case(3, 4, true, Interpolation::hicks, 30));
    hicks.options.kernel_params = params;
    expect_split_matches_one_rank(*g_gpus, hicks, 4, true, false);
    Case inner = on_gpus(make_case(3, 4, false, Interpolation::trilinear, 40));
    inner.options.kernel_params =
        std::string(params).substr(0, std::string(params).size() - 1) + R"(, "nw": 2})";
    expect_split_matches_one_rank(*g_gpus, inner, 1, false, false);
  }
}

// Checkpoints, snapshots and resumes across GPUs, in the one-GPU formats
// (tests/mpi/slab_state_test_util.hpp): the state arrays to the byte, snapshots to the bit.
TEST(WaveSlabsGpu, CheckpointsAreOneGpus) {
  REQUIRE_GPUS();
  expect_split_checkpoints_match(*g_gpus, on_gpus(make_case(3, 4, false, Interpolation::trilinear, 30)), 1,
                                 false);
}

TEST(WaveSlabsGpu, SnapshotsAreOneGpus) {
  REQUIRE_GPUS();
  expect_split_snapshots_match(*g_gpus, on_gpus(make_case(3, 2, true, Interpolation::trilinear, 30)));
}

// The tile design at R = 8 under a free surface: the restored halos (the neighbours' faces, and
// rank 0's mirror) are what the first step after the resume reads.
TEST(WaveSlabsGpu, CheckpointsResumeAcrossGpuCounts) {
  REQUIRE_GPUS();
  Case c = on_gpus(make_case(3, 8, true, Interpolation::trilinear, 44));
  c.options.kernel_params = R"({"design": "tile", "block": "16x8", "nw": 3})";
  expect_resumes_across_rank_counts(*g_gpus, c, 1, false);
}

// Every GPU's rank writing and reading its own part of one checkpoint file.
TEST(WaveSlabsGpu, CheckpointFilesAreOneGpus) {
  REQUIRE_GPUS();
  expect_checkpoint_files_match(*g_gpus, on_gpus(make_case(3, 4, false, Interpolation::trilinear, 30)), 1,
                                false);
}

TEST(WaveSlabsGpu, SnapshotAndFinalFilesAreOneGpus) {
  REQUIRE_GPUS();
  expect_field_files_match(*g_gpus, on_gpus(make_case(3, 2, true, Interpolation::trilinear, 30)));
}

TEST(WaveSlabsGpu, CheckpointFilesResumeAcrossGpuCounts) {
  REQUIRE_GPUS();
  expect_resumes_from_files(*g_gpus, on_gpus(make_case(3, 4, true, Interpolation::trilinear, 30)), 1, false);
}

// The split run reports its exchange: a time per step, and the inner chunks' beside it.
TEST(WaveSlabsGpu, TheExchangeIsTimed) {
  REQUIRE_GPUS();
  Case c = on_gpus(make_case(3, 4, false, Interpolation::trilinear, 60));
  c.options.comm = g_gpus;
  const Result r = run(c.model, c.options);
  EXPECT_EQ(r.backend, "cuda");
  EXPECT_EQ(r.ranks, g_gpus->size());
  EXPECT_GT(r.timing.exchange_ms, 0);
  EXPECT_GT(r.timing.inside_ms, 0);
}

// Without a GPU for every rank (no GPU at all, or fewer GPUs than ranks on a node), the NCCL
// transport is refused on every rank, each saying why, and the ranks are still in step.
TEST(WaveSlabsGpuRefusals, RanksWithoutAGpuOfTheirOwnAreRefused) {
  if (g_gpus != nullptr) GTEST_SKIP() << "every rank has a GPU of its own";
  try {
    auto comm = nccl::over_gpus(mpi::world());
    ADD_FAILURE() << "rank " << g_host->rank() << " was given a GPU transport: " << g_no_gpus;
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::unsupported);
    const std::string w = e.what();
    EXPECT_TRUE(w.find("has no GPU") != std::string::npos ||
                w.find("one GPU per rank") != std::string::npos ||
                w.find("another rank") != std::string::npos)
        << w;
  }
  EXPECT_TRUE(g_host->all(true));
}

int main(int argc, char** argv) {
  fdstencil::mpi::MpiSession session(argc, argv);
  auto host = fdstencil::mpi::world();
  g_host = host.get();
  ::testing::InitGoogleTest(&argc, argv);
  // The NCCL transport when every rank can have a GPU of its own, else the reason (nccl::over_gpus
  // refuses on every rank then, which the refusal test checks).
  std::unique_ptr<Comm> gpus;
  try {
    gpus = fdstencil::nccl::over_gpus(fdstencil::mpi::world());
  } catch (const Error& e) {
    g_no_gpus = e.what();
  }
  g_gpus = gpus.get();
  const bool all_passed = run_all_tests_on_every_rank(*host, "test_mpi_gpu");
  g_gpus = nullptr;
  gpus.reset();
  g_host = nullptr;
  host.reset();
  return all_passed ? 0 : 1;
}
