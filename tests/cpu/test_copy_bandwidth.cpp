// The host copy probe (cpu/copy_bandwidth.hpp), the bound a cpu wave run is judged against: a
// positive rate for a real copy, nothing for nothing to copy. Small buffers: a rate, not a figure.
#include <gtest/gtest.h>

#include "cpu/copy_bandwidth.hpp"

using namespace fdstencil;

TEST(HostCopy, MeasuresARateAndRefusesNothingToCopy) {
  const double gbps = cpu::measure_copy_bandwidth(int64_t(8) << 20, 2);
  EXPECT_GT(gbps, 0.0);
  EXPECT_LT(gbps, 1e5);  // no machine copies 100 TB/s: a rate, not a division by a zero time
  EXPECT_EQ(cpu::measure_copy_bandwidth(0, 2), 0.0);
  EXPECT_EQ(cpu::measure_copy_bandwidth(int64_t(1) << 20, 0), 0.0);
}
