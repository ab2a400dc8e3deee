// The backward pass under a memory budget (fdstencil/imaging.hpp's Storage): binomial checkpoints
// must give the very bits of the run that keeps every step's field, since the steps run again do
// the same arithmetic in the same order; the report must say what was kept and run again; and a
// budget too small for one checkpoint is refused before any work.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "core/revolve.hpp"
#include "fdstencil/error.hpp"
#include "fdstencil/imaging.hpp"
#include "fdstencil/wave.hpp"
#include "test_util.hpp"
#include "wave/imaging_shot.hpp"
#include "wave/wave_test_util.hpp"

using namespace fdstencil;
using test::ImagingShot;
using test::report;

namespace {

class Storage : public testing::TestWithParam<bool> {};

TEST_P(Storage, CheckpointsGiveTheBitsOfEveryFieldKept) {
  const ImagingShot s(2, GetParam(), "cpu");
  const wave::Gradient all = wave::gradient(s.model, s.o, s.observed);
  ASSERT_EQ(all.storage.checkpoints, 0);
  ASSERT_EQ(all.storage.backend, "cpu");
  EXPECT_EQ(all.storage.recomputed_steps, 0);
  EXPECT_GT(all.storage.stored_bytes, 0);
  // Budgets of a sixth and a tenth of the fields: a few checkpoints, then two, which run many steps
  // again.
  for (const int64_t budget : {all.storage.stored_bytes / 6, all.storage.stored_bytes / 10}) {
    const wave::Gradient kept = wave::gradient(s.model, s.o, s.observed, wave::Storage{budget});
    ASSERT_GT(kept.storage.checkpoints, 0) << "budget " << budget;
    EXPECT_LE(kept.storage.stored_bytes, budget);
    EXPECT_GT(kept.storage.recomputed_steps, 0);
    // The sweep's steps up to its deepest checkpoint are the schedule's first descent: the rest of
    // the minimum count is run again.
    int64_t descent = 0;
    for (int64_t free = kept.storage.checkpoints - 1; free > 0 && s.o.nt - descent > 1; --free)
      descent += revolve::split(s.o.nt - descent, free + 1);
    EXPECT_EQ(kept.storage.recomputed_steps,
              revolve::forward_steps(s.o.nt, kept.storage.checkpoints) - descent);
    report("checkpoints_budget_" + std::to_string(budget), double(kept.storage.checkpoints));
    report("recomputed_steps_budget_" + std::to_string(budget), double(kept.storage.recomputed_steps));
    EXPECT_EQ(kept.misfit, all.misfit);
    EXPECT_EQ(kept.traces, all.traces);
    ASSERT_EQ(kept.velocity.size(), all.velocity.size());
    for (size_t i = 0; i < all.velocity.size(); ++i)
      ASSERT_EQ(kept.velocity[i], all.velocity[i]) << "point " << i;
  }
  // The correlations of RTM too.
  wave::RtmOptions cross;
  cross.condition = wave::ImagingCondition::crosscorrelation;
  cross.illumination = true;
  const std::vector<double> image = wave::rtm(s.model, s.o, s.observed, cross);
  cross.storage.budget_bytes = all.storage.stored_bytes / 10;
  wave::StorageReport r;
  cross.report = &r;
  EXPECT_EQ(wave::rtm(s.model, s.o, s.observed, cross), image);
  EXPECT_GT(r.checkpoints, 0);
}

INSTANTIATE_TEST_SUITE_P(Imaging, Storage, testing::Values(false, true),
                         [](const testing::TestParamInfo<bool>& i) { return i.param ? "double" : "float"; });

TEST(ImagingStorage, RefusesABudgetBelowOneCheckpoint) {
  const ImagingShot s(2, true, "cpu");
  try {
    wave::gradient(s.model, s.o, s.observed, wave::Storage{1000});
    FAIL() << "a budget of 1000 bytes taken";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::out_of_memory);
    EXPECT_NE(std::string(e.what()).find("holds not even one checkpoint"), std::string::npos) << e.what();
  }
}

}  // namespace
