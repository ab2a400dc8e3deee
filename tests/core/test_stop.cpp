// core::StopScope and core::ProgressScope (src/core/stop.hpp) on their own: the count of steps
// between polls, the reports' pace and last report, and scopes nested on one thread.
#include <gtest/gtest.h>

#include <cstdint>
#include <functional>
#include <utility>
#include <vector>

#include "core/stop.hpp"
#include "fdstencil/error.hpp"

namespace fdstencil::core {
namespace {

using Reports = std::vector<std::pair<int64_t, int64_t>>;

// `steps` polls under a scope reporting into `out`, the total set first.
void sweep(Reports& out, int64_t total, int64_t steps) {
  const std::function<void(int64_t, int64_t)> report = [&out](int64_t d, int64_t t) {
    out.emplace_back(d, t);
  };
  const ProgressScope scope(report);
  set_progress_total(total);
  for (int64_t i = 0; i < steps; ++i) poll_stop();
}

TEST(ProgressScope, ReportsAbout200TimesRisingToTheWhole) {
  Reports r;
  sweep(r, 10000, 10000);
  ASSERT_GE(r.size(), 190u);
  ASSERT_LE(r.size(), 210u);
  for (size_t i = 1; i < r.size(); ++i) ASSERT_GT(r[i].first, r[i - 1].first);
  EXPECT_EQ(r.back(), std::make_pair(int64_t(10000), int64_t(10000)));
  Reports few;
  sweep(few, 3, 3);  // fewer steps than reports: one a step, then the whole
  EXPECT_EQ(few, Reports({{1, 3}, {2, 3}, {3, 3}}));
}

TEST(ProgressScope, AnInnerScopeWithoutAReportLeavesTheOuterCountAlone) {
  Reports outer;
  const std::function<void(int64_t, int64_t)> report = [&outer](int64_t d, int64_t t) {
    outer.emplace_back(d, t);
  };
  {
    const ProgressScope scope(report);
    set_progress_total(20);
    for (int i = 0; i < 10; ++i) poll_stop();
    {
      const std::function<void(int64_t, int64_t)> none;
      const ProgressScope inner(none);
      set_progress_total(5);  // the inner solver's, counted nowhere
      for (int i = 0; i < 5; ++i) poll_stop();
    }
    for (int i = 0; i < 10; ++i) poll_stop();
  }
  ASSERT_FALSE(outer.empty());
  for (const auto& [done, total] : outer) EXPECT_EQ(total, 20);
  EXPECT_EQ(outer.back().first, 20);
  for (size_t i = 1; i < outer.size(); ++i) EXPECT_GT(outer[i].first, outer[i - 1].first);
}

TEST(ProgressScope, AScopeLeftByAnExceptionGivesNoLastReport) {
  Reports r;
  int asked = 0;
  const std::function<bool()> stop = [&asked] { return ++asked > 4; };
  const StopScope stopping(stop);
  EXPECT_THROW(sweep(r, 10, 10), Error);
  ASSERT_FALSE(r.empty());
  EXPECT_EQ(r.back().first, 3) << "steps 1-3 finished when the 5th poll stopped the sweep";
}

}  // namespace
}  // namespace fdstencil::core
