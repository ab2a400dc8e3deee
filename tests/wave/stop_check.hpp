// The linearised solvers' stop between steps and progress (core/stop.hpp), checked the same way on
// the cpu (tests/wave/test_imaging.cpp) and the GPU (tests/cuda/test_imaging_gpu.cpp): a check that
// never says stop is asked at least once a step of each of the solver's sweeps, and one that says
// stop at its k-th question ends the call there with Error(interrupted), asked exactly k times; the
// progress reports rise to done == total, the total being every step the solver polled between.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <functional>
#include <initializer_list>
#include <string>
#include <utility>
#include <vector>

#include "fdstencil/error.hpp"
#include "fdstencil/wave.hpp"

namespace fdstencil::test {

// `call` runs the solver named `solver` (`sweeps` sweeps of o.nt steps) on options like `o`.
inline void expect_stops_between_steps(const std::string& solver, wave::Options o, int sweeps,
                                       std::initializer_list<int> stops,
                                       const std::function<void(const wave::Options&)>& call) {
  int asked = 0;
  o.stop_requested = [&] {
    ++asked;
    return false;
  };
  call(o);
  EXPECT_GE(asked, sweeps * int(o.nt)) << solver;
  for (const int k : stops) {
    asked = 0;
    o.stop_requested = [&] { return ++asked == k; };
    try {
      call(o);
      ADD_FAILURE() << solver << " ran on past a stop at question " << k;
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::interrupted) << solver << ": " << e.what();
      EXPECT_EQ(asked, k) << solver;
    }
  }
}

// `call` runs `solver` on options like `o` with progress reports; returns the total they gave (-1:
// none), having checked it against the steps polled and the reports against it.
inline int64_t expect_progress_over_every_step(const std::string& solver, wave::Options o,
                                               const std::function<void(const wave::Options&)>& call) {
  int64_t polls = 0;
  std::vector<std::pair<int64_t, int64_t>> reports;
  o.stop_requested = [&polls] { return ++polls < 0; };
  o.progress = [&reports](int64_t done, int64_t total) { reports.emplace_back(done, total); };
  call(o);
  if (reports.empty()) {
    ADD_FAILURE() << solver << " reported no progress";
    return -1;
  }
  const int64_t total = reports.back().second;
  EXPECT_EQ(reports.back().first, total) << solver << ": the last report is the whole";
  EXPECT_EQ(total, polls) << solver << ": the total is the steps polled between";
  for (size_t i = 1; i < reports.size(); ++i) {
    EXPECT_GT(reports[i].first, reports[i - 1].first) << solver << " report " << i;
    EXPECT_EQ(reports[i].second, total) << solver << " report " << i;
  }
  return total;
}

}  // namespace fdstencil::test
