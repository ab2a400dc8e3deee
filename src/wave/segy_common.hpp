// What segy.cpp (conversions, writing) and segy_read.cpp (reading) share: the spacing tolerance
// and the wording of numbers and refusals.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>

#include "fdstencil/error.hpp"

namespace fdstencil::segy::detail {

// Spacings that agree to 1e-3 (relative) are the same spacing: a coordinate stored in centimetres
// or a sample interval in whole units cannot do better for a spacing of metres, and a real
// disagreement (a model meant at 10 m read at 12.5 m) is far larger.
inline constexpr double kSpacingTolerance = 1e-3;

[[noreturn]] inline void bad(const std::string& what) { throw Error(ErrorKind::invalid_argument, what); }

inline std::string num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.6g", v);
  return buf;
}

inline bool agree(double a, double b) {
  return std::abs(a - b) <= kSpacingTolerance * std::max(std::abs(a), std::abs(b));
}

}  // namespace fdstencil::segy::detail
