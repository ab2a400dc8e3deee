// The linearised solvers' stop between steps (core/stop.hpp), checked the same way on the cpu
// (tests/wave/test_imaging.cpp) and the GPU (tests/cuda/test_imaging_gpu.cpp): a check that never
// says stop is asked at least once a step of each of the solver's sweeps, and one that says stop
// at its k-th question ends the call there with Error(interrupted), asked exactly k times.
#pragma once

#include <gtest/gtest.h>

#include <functional>
#include <initializer_list>
#include <string>

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

}  // namespace fdstencil::test
