// The tuner refuses nonsense before it touches a GPU: a budget of zero, negative or not a number,
// no timed repeats, a radius or extents the operator cannot take, extents whose bytes overflow;
// and without a GPU it says so. Host-side: CI runs these. Tuning on a GPU: tests/cuda/test_plan.cpp.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "fdstencil/device_field.hpp"
#include "fdstencil/tune.hpp"
#include "test_util.hpp"

using namespace fdstencil;
using fdstencil::test::throws_error;

TEST(TuneArgs, NonsenseIsRefusedWithTheReason) {
  const Extents n{64, 64, 64};
  for (double budget :
       {0.0, -5.0, std::numeric_limits<double>::quiet_NaN(), std::numeric_limits<double>::infinity()}) {
    TuneOptions o;
    o.budget_seconds = budget;
    EXPECT_TRUE(
        throws_error([&] { tune(Op::d2z, 4, DType::f32, n, o); }, ErrorKind::invalid_argument, {"budget"}))
        << budget;
  }
  TuneOptions o;
  o.reps = 0;
  EXPECT_TRUE(
      throws_error([&] { tune(Op::d2z, 4, DType::f32, n, o); }, ErrorKind::invalid_argument, {"timed"}));
  o = {};
  o.store = false;
  EXPECT_TRUE(
      throws_error([&] { tune(Op::d2z, 9, DType::f32, n, o); }, ErrorKind::invalid_argument, {"radius"}));
  EXPECT_TRUE(throws_error([&] { tune(Op::laplacian7, 2, DType::f32, n, o); }, ErrorKind::invalid_argument,
                           {"laplacian7"}));
  EXPECT_TRUE(throws_error(
      [&] {
        tune(Op::d2z, 4, DType::f32, {64, 0, 64}, o);
      },
      ErrorKind::invalid_argument, {"0"}));
  EXPECT_TRUE(throws_error(
      [&] {
        tune(Op::d2z, 4, DType::f32, {int64_t(1) << 40, int64_t(1) << 40, 1 << 20}, o);
      },
      ErrorKind::out_of_memory, {"overflow"}));
}

TEST(TuneArgs, WithoutAGpuItSaysSo) {
  if (gpu_count() > 0) GTEST_SKIP() << "a GPU is present";
  TuneOptions o;
  o.store = false;
  EXPECT_TRUE(throws_error(
      [&] {
        tune(Op::d2z, 4, DType::f32, {64, 64, 64}, o);
      },
      ErrorKind::unsupported, {"gpu", "cuda"}));
}
