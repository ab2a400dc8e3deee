// The split GPU step's choice of path by timing both (src/wave/overlap_probe.hpp): its schedule of
// blocks and its decision. The GPU runs that use it are tests/mpi/test_wave_slabs_gpu.cpp and the
// command-line test under mpirun; this checks the host-side logic alone, so CI runs it.
#include <gtest/gtest.h>

#include <cstdint>

#include "wave/overlap_probe.hpp"

using fdstencil::wave::detail::OverlapProbe;

namespace {

// Steps of the probe timed on each path, counted through the schedule itself.
struct Counts {
  int64_t on = 0, off = 0, untimed = 0;
};

Counts count_steps() {
  Counts c;
  bool in_block = false;
  for (int64_t i = 0; i < OverlapProbe::kSteps; ++i) {
    if (OverlapProbe::starts_block(i)) {
      EXPECT_FALSE(in_block) << "a block starts inside another at step " << i;
      in_block = true;
    }
    if (!in_block)
      ++c.untimed;
    else
      (OverlapProbe::overlap_at(i) ? c.on : c.off)++;
    if (OverlapProbe::ends_block(i)) {
      EXPECT_TRUE(in_block) << "a block ends outside one at step " << i;
      in_block = false;
    }
  }
  EXPECT_FALSE(in_block) << "the last block never ended";
  return c;
}

}  // namespace

TEST(OverlapProbe, TimesBothPathsEquallyAfterAWarmUp) {
  const Counts c = count_steps();
  EXPECT_EQ(c.untimed, OverlapProbe::kBlock);
  EXPECT_EQ(c.on, c.off);
  EXPECT_EQ(c.on + c.off + c.untimed, OverlapProbe::kSteps);
  // A block runs one path from its first step to its last.
  for (int64_t i = OverlapProbe::kBlock; i < OverlapProbe::kSteps; ++i)
    if (!OverlapProbe::starts_block(i)) {
      EXPECT_EQ(OverlapProbe::overlap_at(i), OverlapProbe::overlap_at(i - 1)) << i;
    }
  // The timed blocks go in pairs of one block of each path, and each path leads as many pairs.
  int on_first = 0, off_first = 0;
  for (int64_t b = 1; b < OverlapProbe::kSteps / OverlapProbe::kBlock; b += 2) {
    const bool lead = OverlapProbe::overlap_at(b * OverlapProbe::kBlock);
    EXPECT_NE(lead, OverlapProbe::overlap_at((b + 1) * OverlapProbe::kBlock)) << "pair from block " << b;
    (lead ? on_first : off_first)++;
  }
  EXPECT_EQ(on_first, off_first);
  EXPECT_FALSE(OverlapProbe::starts_block(OverlapProbe::kSteps));
  EXPECT_FALSE(OverlapProbe::ends_block(OverlapProbe::kSteps - 1 + OverlapProbe::kBlock));
}

TEST(OverlapProbe, KeepsTheFasterPathByItsFastestBlock) {
  // Overlap's blocks 2.0, 1.1, 1.3 and 2.2 ms a step; off's 1.2, 1.25, 1.5 and 1.2: overlap's
  // fastest wins, although its mean (1.65) is the slower.
  OverlapProbe p;
  const double on[] = {2.0e-2, 1.1e-2, 1.3e-2, 2.2e-2}, off[] = {1.2e-2, 1.25e-2, 1.5e-2, 1.2e-2};
  int ion = 0, ioff = 0;
  for (int64_t i = 0; i < OverlapProbe::kSteps; ++i)
    if (OverlapProbe::ends_block(i)) p.record(i, OverlapProbe::overlap_at(i) ? on[ion++] : off[ioff++]);
  EXPECT_EQ(ion, 4);
  EXPECT_EQ(ioff, 4);
  EXPECT_TRUE(p.overlap_wins());
  EXPECT_NEAR(p.on_ms(), 1.1, 1e-12);
  EXPECT_NEAR(p.off_ms(), 1.2, 1e-12);
}

TEST(OverlapProbe, ATieOrASlowerOverlapKeepsTheExchangeBefore) {
  for (const double on_s : {1.0e-2, 1.01e-2}) {
    OverlapProbe p;
    for (int64_t i = 0; i < OverlapProbe::kSteps; ++i)
      if (OverlapProbe::ends_block(i)) p.record(i, OverlapProbe::overlap_at(i) ? on_s : 1.0e-2);
    EXPECT_FALSE(p.overlap_wins()) << on_s;
  }
}

TEST(OverlapProbe, ShortRunsDoNotProbe) {
  EXPECT_FALSE(OverlapProbe::probes(OverlapProbe::kMinRun - 1));
  EXPECT_TRUE(OverlapProbe::probes(OverlapProbe::kMinRun));
  EXPECT_GE(OverlapProbe::kMinRun, 2 * OverlapProbe::kSteps);
}
