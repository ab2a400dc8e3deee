// A variant is one implementation of one operator (the reference loops, the cpu backend, a CUDA
// kernel such as laplacian k5). All variants share this interface and sit in one registry, so
// `bench`, the tests and `apply` iterate the same list. Header-only: src/cuda registers its
// kernels here without linking the harness.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "fdstencil/dtype.hpp"
#include "fdstencil/field.hpp"
#include "fdstencil/stencil.hpp"

namespace fdstencil::bench {

struct Problem {
  Stencil stencil;
  Extents size;      // as the user gave it, in the series' convention (see interior_from_size)
  Extents interior;  // the points written
  DType dtype = DType::f32;
  int64_t align_bytes = kAlignBytes;  // 1: the unaligned layout of the seeds' first baselines
};

using Params = nlohmann::json;  // an object: m, block, launch bound, subdomains, nw, ...

// A variant bound to one problem and its parameters, owning its input and output storage.
template <class T>
class Runner {
 public:
  virtual ~Runner() = default;
  virtual void set_input(const HostField<T>& in) = 0;
  virtual void poison_output() = 0;  // NaN over the whole output allocation, halo included
  virtual void run() = 0;            // one application, complete when run() returns
  virtual void get_output(HostField<T>& out) = 0;  // the whole output allocation
  // Per-application times in milliseconds after `warmup` untimed applications, with the caches
  // flushed (or inputs rotated) between repeats so no repeat is served from a warm L2.
  virtual std::vector<double> time_ms(int warmup, int reps) = 0;
  // Registers, spills, shared memory, occupancy, resolved parameters: merged into the record.
  virtual nlohmann::json resources() const { return nlohmann::json::object(); }
};

struct Variant {
  Op op = Op::d2xyz;
  std::string name;     // unique per op, e.g. "k5", "x_vec4", "cpu"
  std::string backend;  // "reference", "cpu", "cuda"
  std::string summary;  // one line: the idea and which seed kernel it reproduces
  Params defaults = Params::object();
  // Why the variant cannot run `p` with `params`, or "" when it can (tile divisibility, vector
  // width, shared-memory limit, radius): reported, never silently rounded.
  std::function<std::string(const Problem& p, const Params& params)> cannot_run;
  std::function<std::unique_ptr<Runner<float>>(const Problem&, const Params&)> make_float;
  std::function<std::unique_ptr<Runner<double>>(const Problem&, const Params&)> make_double;
};

// Every variant of every backend built into this binary.
const std::vector<Variant>& all_variants();
std::vector<const Variant*> find_variants(Op op, const std::string& backend);

// The defaults overridden by the user's values; throws Error(invalid_argument) for a key the
// variant does not take.
Params merge_params(const Variant& v, const Params& overrides);

}  // namespace fdstencil::bench
