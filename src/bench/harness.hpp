// The measurement harness shared by every backend, a client of the plan API like any other: each
// job is a Plan (of one named variant, or the plan's own choice) applied to fields the harness
// owns. Verify against the reference first (random input with a printed seed, NaN-poisoned
// output, then the series' analytic field), then time (warm-up, median of N, the L2 flushed
// between repeats on the GPU), and report effective bandwidth by the seeds' bytes model beside
// the copy bandwidth measured in the same run.
#pragma once

#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

#include "core/variant.hpp"
#include "fdstencil/plan.hpp"
#include "plan/verify.hpp"

namespace fdstencil::bench {

struct BenchOptions {
  int warmup = 3;
  int reps = 20;                 // 0: verify only, status "verified", no timing
  uint64_t seed = kDefaultSeed;  // fixed and printed: a failure reproduces
  // false only in the job bench --profile runs under ncu, which the parent process verified
  // (same binary, variant, parameters, problem and seed) just before: the input is the same
  // random field, but no reference is computed.
  bool verify = true;
  // The NVTX range each timed application runs in (bench --profile's child), or none.
  const char* nvtx_range = nullptr;
};

// The series' analytic fields: the Laplacian posts' quadratic u = (x^2 + y^2 + z^2) / 2 (each
// differentiated axis contributes exactly 1), the seismic posts' u = i + j + k (every second
// derivative is 0). Returns the exact value of the operator at every interior point.
template <class T>
double fill_analytic(HostField<T>& f, const Stencil& s);

struct Check {
  bool ok = false;
  double max_rel_err = 0.0;  // max |out - ref| / max |ref| over the interior
  double tolerance = 0.0;
  std::string message;  // the first mismatches, with coordinates, when !ok
};

template <class T>
Check compare_to_reference(const HostField<T>& out, const HostField<T>& ref, DType t, const Stencil& s);

// The host's copy bandwidth (bytes read + written per second, GB/s), median of a few copies of a
// buffer far larger than the caches.
double host_copy_gbps();
nlohmann::json host_device_info();

// Verifies and times one variant on one problem, through a plan of that variant; never throws
// for a failing or unsupported variant (the record says so), only for bad arguments.
nlohmann::json run_variant(const Variant& v, const Problem& p, const Params& overrides,
                           const BenchOptions& opt, double copy_gbps);

// The same for the plan's own choice on `backend` (what a user of the library gets): the record's
// variant is "plan", with the variant chosen and the source of the choice beside it. With
// `tuned_only`, a case the tuning cache does not hold is reported as status "untuned".
nlohmann::json run_plan(const Problem& p, const PlanOptions& plan_options, bool tuned_only,
                        const BenchOptions& opt, double copy_gbps);

// One line of the stdout table for a record, and its header.
std::string table_header();
std::string table_row(const nlohmann::json& record);

}  // namespace fdstencil::bench
