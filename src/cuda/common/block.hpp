// A thread-block shape given at run time as "BXxBYxBZ", with the device's limits checked where
// the shape is parsed (x, y <= 1024, z <= 64, at most 1024 threads), so a bad shape is reported
// as unsupported before any launch rather than failing as a device error.
#pragma once

#include <cstdio>
#include <string>

#include "core/variant.hpp"

namespace fdstencil::cuda {

struct Block {
  int x = 256, y = 1, z = 1;
  int threads() const { return x * y * z; }
};

// Empty when `p["block"]` (or the default) is a valid shape, else the reason.
inline std::string parse_block(const Params& p, Block& b) {
  const std::string s = p.value("block", std::string("256x1x1"));
  char tail = 0;
  if (std::sscanf(s.c_str(), "%dx%dx%d%c", &b.x, &b.y, &b.z, &tail) != 3 || b.x < 1 || b.y < 1 || b.z < 1)
    return "block '" + s + "' must be BXxBYxBZ with each at least 1, e.g. 256x1x1";
  if (b.x > 1024 || b.y > 1024 || b.z > 64)
    return "block " + s + " exceeds the device's per-dimension limits (1024 x 1024 x 64)";
  if (int64_t(b.x) * b.y * b.z > 1024) return "block " + s + " has more than 1024 threads";
  return "";
}

}  // namespace fdstencil::cuda
