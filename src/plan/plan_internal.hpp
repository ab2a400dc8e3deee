// The state behind a Plan, for the library's own clients of it: the benchmark harness times the
// launcher it holds, and plans of variants outside the registry (the harness tests' deliberately
// broken ones) are made here.
#pragma once

#include <memory>
#include <string>

#include "core/variant.hpp"
#include "fdstencil/plan.hpp"

namespace fdstencil {

struct Plan::Impl {
  Problem problem;
  std::string backend, variant, source;
  Params params;
  Memory memory = Memory::host;
  // What apply() demands of a view beyond the plan's geometry: the least alignment of its x-lines
  // and the readable bytes after its far halo corner and before its halo corner that the chosen
  // variant relies on (found by asking the variant's cannot_run about weaker layouts when the
  // plan is built).
  int64_t required_align = 1;
  int64_t required_tail = 0;
  int64_t required_head = 0;
  std::unique_ptr<Launcher> launcher;
};

// The plan of `v` (in the registry or not) with `params` over its defaults, on `problem`.
// Throws Error(invalid_argument) for bad parameters, Error(unsupported) when v cannot run.
Plan plan_of_variant(const Variant& v, const Problem& problem, const Params& params,
                     const std::string& source);

}  // namespace fdstencil
