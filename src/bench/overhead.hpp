// What a plan costs on top of its kernel: Plan::apply against the bare launch of the same
// prepared kernel (the variant's launcher: the argument block filled, cudaLaunchKernel, the
// launch checked), on a field small enough that the launch, not the memory, sets the pace.
#pragma once

#include <nlohmann/json.hpp>

#include "core/variant.hpp"
#include "fdstencil/plan.hpp"

namespace fdstencil::bench {

// Two figures per path, medians over `rounds` rounds that alternate the paths:
//   enqueue_us: host time per call of `calls` back-to-back calls, before synchronising (the
//               cost a time loop pays to submit one application);
//   total_us:   per call, `calls` back-to-back calls and the synchronisation (the GPU's pace).
// Throws Error(unsupported) for a plan that is not on the cuda backend.
nlohmann::json measure_apply_overhead(const Plan& plan, int calls = 200, int rounds = 31);

}  // namespace fdstencil::bench
