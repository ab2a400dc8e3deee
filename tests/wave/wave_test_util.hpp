// Shared helpers of the wave solver's tests (tests/wave and tests/cuda/test_wave_gpu.cpp): the
// "[ measured ]" line each figure is printed and recorded with, the Ricker wavelet written out
// independently of wave::ricker (so the analytic side does not lean on the code under test), and
// the relative L2 misfit of a trace against an analytic one.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

namespace fdstencil::test {

constexpr double kPi = 3.14159265358979323846;

// Prints "[ measured ] key = value" and records it as a test property: the figures the team
// reports, and what the thresholds' margins were chosen from.
inline void report(const std::string& key, double value) {
  char text[32];
  std::snprintf(text, sizeof text, "%.6g", value);
  std::printf("[ measured ] %s = %s\n", key.c_str(), text);
  ::testing::Test::RecordProperty(key, text);
}

// The Ricker wavelet of peak frequency f0, peaking at t = delay.
inline double ricker_at(double f0, double delay, double t) {
  const double a = (kPi * f0 * (t - delay)) * (kPi * f0 * (t - delay));
  return (1 - 2 * a) * std::exp(-a);
}

// sqrt(sum (got - want)^2 / sum want^2) over the first want.size() samples of got.
inline double relative_l2(const float* got, const std::vector<double>& want) {
  double num = 0, den = 0;
  for (size_t n = 0; n < want.size(); ++n) {
    const double e = double(got[n]) - want[n];
    num += e * e;
    den += want[n] * want[n];
  }
  return std::sqrt(num / den);
}

}  // namespace fdstencil::test
