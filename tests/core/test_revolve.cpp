// Binomial checkpointing (core/revolve.hpp): the closed-form count against the minimum over every
// choice of checkpoint, split() attaining it, and the schedule run over a backend that tracks which
// state each slot and the forward state hold, so that every adjoint step is seen to get its own
// three fields, in order, with no slot beyond those given.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <vector>

#include "core/revolve.hpp"

using namespace fdstencil;

namespace {

// The minimum by brute force: t(l, s) = min over j of j + t(l - j, s - 1) + t(j, s).
class Minimum {
 public:
  Minimum(int64_t steps, int64_t slots) : s_(slots), t_(size_t((steps + 1) * (slots + 1)), -1) {}
  int64_t operator()(int64_t l, int64_t s) {
    if (l <= 1) return 0;
    if (s <= 1) return l * (l - 1) / 2;
    int64_t& t = t_[size_t(l * (s_ + 1) + s)];
    if (t >= 0) return t;
    int64_t best = INT64_MAX;
    for (int64_t j = 1; j < l; ++j) best = std::min(best, j + (*this)(l - j, s - 1) + (*this)(j, s));
    return t = best;
  }

 private:
  int64_t s_;
  std::vector<int64_t> t_;
};

TEST(Revolve, CountIsTheMinimumAndSplitAttainsIt) {
  Minimum t(160, 9);
  for (int64_t s = 1; s <= 9; ++s)
    for (int64_t l = 1; l <= 160; ++l) {
      ASSERT_EQ(revolve::forward_steps(l, s), t(l, s)) << "l " << l << " s " << s;
      if (s < 2 || l < 2) continue;
      const int64_t j = revolve::split(l, s);
      ASSERT_GE(j, 1);
      ASSERT_LT(j, l);
      ASSERT_EQ(j + t(l - j, s - 1) + t(j, s), t(l, s)) << "l " << l << " s " << s << " j " << j;
    }
}

// States are step numbers: the forward state is at S_at, slot i holds S_slot[i].
struct Tracker {
  int64_t nt;
  int slots;
  int64_t at = 0, sweep_last_save = 0, advances = 0;
  bool sweeping = true;
  std::vector<int64_t> slot;
  int64_t next = -1, cur = -1, prev = -1;  // the adjoint's u^{n+1}, u^n, u^{n-1} as step numbers
  std::vector<int64_t> adjoint_order;

  Tracker(int64_t steps, int count) : nt(steps), slots(count), slot(size_t(count), -1) {}
  void save(int i) {
    ASSERT_LT(i, slots);
    slot[size_t(i)] = at;
    if (sweeping) sweep_last_save = at;
  }
  void load(int i) {
    ASSERT_GE(slot[size_t(i)], 0);
    at = slot[size_t(i)];
  }
  void advance(int64_t n) {
    ASSERT_EQ(n, at);
    ++at;
    ++advances;
  }
  void end_sweep() {
    ASSERT_EQ(at, nt);
    sweeping = false;
    next = nt;
    cur = nt - 1;
  }
  void prev_from_slot(int i) { prev = slot[size_t(i)] - 1; }
  void prev_from_state() { prev = at - 1; }
  void adjoint(int64_t n) {
    ASSERT_EQ(next, n + 1);
    ASSERT_EQ(cur, n);
    ASSERT_EQ(prev, n - 1);
    adjoint_order.push_back(n);
    next = cur;
    cur = prev;
  }
};

TEST(Revolve, ScheduleHandsEveryAdjointStepItsFields) {
  for (const int64_t nt : {1, 2, 3, 7, 50, 333})
    for (const int slots : {1, 2, 3, 5, 12, 400}) {
      Tracker b(nt, slots);
      const int64_t again = revolve::Schedule<Tracker>(b, nt, slots).run();
      ASSERT_FALSE(HasFatalFailure()) << "nt " << nt << " slots " << slots;
      ASSERT_EQ(int64_t(b.adjoint_order.size()), nt);
      for (int64_t i = 0; i < nt; ++i) ASSERT_EQ(b.adjoint_order[size_t(i)], nt - 1 - i);
      EXPECT_EQ(b.advances, nt + again);
      EXPECT_EQ(revolve::steps_again(nt, slots), again) << "nt " << nt << " slots " << slots;
      // The sweep's advances up to its deepest checkpoint are the minimum's own first descent.
      EXPECT_EQ(again + b.sweep_last_save, revolve::forward_steps(nt, slots))
          << "nt " << nt << " slots " << slots;
    }
}

}  // namespace
