// A variant is one implementation of one operator: the reference loops, the cpu backend, a CUDA
// kernel such as laplacian k5 or the z sliding window. Each backend lists its variants in this
// one shape (src/cuda/variants.hpp, src/plan/host_variants.cpp) and src/plan/registry.cpp joins
// them into the one registry that the plans, the tuner, the benchmark and the tests iterate.
//
// The lifecycle (CUTLASS's): cannot_run(problem, params) says why a variant cannot serve a
// problem, or ""; prepare(problem, params) does everything that may allocate, query the device
// or fail (kernel instance, grid, shared-memory opt-in, weights) and returns a Launcher whose
// run() only enqueues the work.
#pragma once

#include <functional>
#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include "fdstencil/dtype.hpp"
#include "fdstencil/layout.hpp"
#include "fdstencil/stencil.hpp"
#include "fdstencil/stream.hpp"

namespace fdstencil {

// A variant's parameters, as a JSON object: block, m, nw, vec_bytes, ...
using Params = nlohmann::json;

// What a plan is built for: the operator and the storage of its input and output fields (both
// have this layout).
struct Problem {
  Stencil stencil;
  Layout layout;
  Extents interior() const { return layout.interior(); }
  DType dtype() const { return layout.elem_bytes() == 4 ? DType::f32 : DType::f64; }
};

// The problem on the layout that HostField and DeviceField allocate (align_bytes = 1: the
// unaligned layout of the seeds' first baselines).
Problem make_problem(const Stencil& s, Extents interior, DType t, int64_t align_bytes = kAlignBytes);

// A variant bound to one problem and its parameters.
class Launcher {
 public:
  virtual ~Launcher() = default;
  // out = op(in) at every interior point; out's halo and padding are left as they were. `in` and
  // `out` point at interior point (0, 0, 0) (FieldView::origin()) of fields with the problem's
  // extents, halo and strides, in the memory of the variant's backend; every point is addressed
  // from there, so two fields may differ in what lies before their halo corner. Device launchers
  // enqueue on `stream` and return at once: no allocation, no synchronisation. Host launchers
  // run to completion and ignore the stream.
  virtual void run(const void* in, void* out, Stream stream) const = 0;
  // Registers, spills, shared memory, occupancy, the grid and the parameters it settled on.
  virtual nlohmann::json resources() const { return nlohmann::json::object(); }
};

struct Variant {
  Op op = Op::d2xyz;
  std::string name;     // unique per op and backend, e.g. "k5", "vec4", "cpu"
  std::string backend;  // "reference", "cpu", "cuda"
  std::string summary;  // one line: the idea and which seed kernel it reproduces
  Params defaults = Params::object();
  // The tuner's search space: for each parameter, the values worth trying ({"nw": [4, 8, 16]}).
  // Every combination is checked with cannot_run before it is tried.
  Params space = Params::object();
  std::function<std::string(const Problem&, const Params&)> cannot_run;
  std::function<std::unique_ptr<Launcher>(const Problem&, const Params&)> prepare;

  bool on_device() const { return backend == "cuda"; }
};

}  // namespace fdstencil
