// The measurement harness shared by every backend: verify against the reference first (random
// input with a printed seed, NaN-poisoned output, then the series' analytic field), then time
// (warm-up, median of N), and report effective bandwidth by the seeds' bytes model beside the
// copy bandwidth measured in the same run.
#pragma once

#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

#include "bench/variant.hpp"

namespace fdstencil::bench {

struct BenchOptions {
  int warmup = 3;
  int reps = 20;  // 0: verify only, status "verified", no timing
  uint64_t seed = 20260522;  // fixed and printed: a failure reproduces
  // false only in the job bench --profile runs under ncu, which the parent process verified
  // (same binary, variant, parameters, problem and seed) just before: the input is the same
  // random field, but no reference is computed.
  bool verify = true;
};

// Random values in [-1, 1) at every element of the allocation, a pure function of (seed, index)
// so it is the same on any number of threads.
template <class T>
void fill_random(HostField<T>& f, uint64_t seed);

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

// Relative tolerance for comparing a T-precision result with the double reference: a sum of
// `taps` products each rounded once is within taps * eps_T of exact relative to sum |w u|, and
// for random data max |ref| is within a small factor of sum |w u|; a factor 4 covers that.
double tolerance_for(DType t, const Stencil& s);

template <class T>
Check compare_to_reference(const HostField<T>& out, const HostField<T>& ref, DType t,
                           const Stencil& s);

// The host's copy bandwidth (bytes read + written per second, GB/s), median of a few copies of a
// buffer far larger than the caches.
double host_copy_gbps();
nlohmann::json host_device_info();

// Verifies and times one variant on one problem; never throws for a failing or unsupported
// variant (the record says so), only for bad arguments.
nlohmann::json run_variant(const Variant& v, const Problem& p, const Params& overrides,
                           const BenchOptions& opt, double copy_gbps);

// One line of the stdout table for a record, and its header.
std::string table_header();
std::string table_row(const nlohmann::json& record);

}  // namespace fdstencil::bench
