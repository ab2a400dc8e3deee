// A device field against a reference on the device: the tuner verifies every candidate this way,
// against the reference backend's output uploaded once, so a sweep of many candidates at 1024^3
// does not copy 4 GB back to the host for each one.
#pragma once

#include <cstdint>

#include "fdstencil/layout.hpp"

namespace fdstencil::cuda {

struct FieldDiff {
  double max_abs_diff = 0;   // over the interior points where out is finite
  double max_abs_ref = 0;    // over the interior
  int64_t nonfinite = 0;     // interior points of out that are NaN or inf (not written)
  int64_t zeros = 0;         // interior points of out that are exactly 0
  int64_t halo_written = 0;  // halo points of out that are no longer NaN (out was poisoned)
};

// `out` and `ref` are element 0 of device fields with layout `l`. Synchronizes the device.
template <class T>
FieldDiff compare_on_device(const T* out, const T* ref, const Layout& l);

}  // namespace fdstencil::cuda
