// The plan: an operator prepared once for one storage layout on one backend, then applied any
// number of times. Building a plan checks that it can run (throwing with the reason otherwise)
// and picks the implementation: the variant and parameters stored by `fdstencil tune` in the
// tuning cache when the cache has the case (or a nearby size of it), else the built-in defaults
// of the problem's size class. apply() then only enqueues the work: no allocation, no host
// synchronisation on the GPU.
//
//   fdstencil::DeviceField<float> u(extents, R), f(extents, R);
//   fdstencil::Plan plan({fdstencil::Op::d2xyz, R, {h, h, h}}, u.layout());
//   plan.apply(u, f, stream);
#pragma once

#include <functional>
#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include "fdstencil/device_field.hpp"
#include "fdstencil/dtype.hpp"
#include "fdstencil/field.hpp"
#include "fdstencil/stencil.hpp"
#include "fdstencil/stream.hpp"

namespace fdstencil {

struct PlanOptions {
  // "auto" (the GPU when this build has the CUDA backend and a GPU is present, else "cpu"),
  // "cuda", "cpu" or "reference".
  std::string backend = "auto";
  // Read the tuning cache (the default), or choose from the built-in defaults alone.
  bool use_cache = true;
  // The cache file; "" is default_cache_file() (tuning_cache.hpp).
  std::string cache_file;
  // Force one variant by its registry name ("window_vec", "k8", ...) with `params` over its
  // defaults; the benchmark and the tuner do this. Empty: the plan chooses.
  std::string variant;
  nlohmann::json params = nlohmann::json::object();
  // Where warnings go (a corrupt cache, a cached choice this build cannot run); stderr when
  // empty. Each distinct warning is given once per process.
  std::function<void(const std::string&)> warn;
};

class Plan {
 public:
  // The plan of stencil `s` on fields of layout `layout` (whose element size gives the type).
  // The cuda backend plans for the CUDA device current now; apply it with that device current.
  // Throws Error(invalid_argument) for a bad stencil, layout or option, Error(unsupported) when
  // the backend or the forced variant cannot serve the problem (the message says why).
  Plan(const Stencil& s, const Layout& layout, const PlanOptions& options = {});
  ~Plan();
  Plan(Plan&&) noexcept;
  Plan& operator=(Plan&&) noexcept;

  // out = op(in) at every interior point; out's halo and padding are left as they were. Both
  // views must have the plan's geometry (extents, halo, strides), lie in the backend's memory
  // (device for cuda, host otherwise) and keep the alignment the plan relies on; in and out
  // must not overlap. On cuda the work is enqueued on `stream` and apply returns at once; on
  // the host backends it is done when apply returns. Throws Error(invalid_argument) for a view
  // that does not fit, naming what differs.
  void apply(FieldView<const float> in, FieldView<float> out, Stream stream = nullptr) const;
  void apply(FieldView<const double> in, FieldView<double> out, Stream stream = nullptr) const;
  template <class T>
  void apply(const HostField<T>& in, HostField<T>& out) const {
    apply(in.view(), out.view());
  }
  template <class T>
  void apply(const DeviceField<T>& in, DeviceField<T>& out, Stream stream = nullptr) const {
    apply(in.view(), out.view(), stream);
  }

  const Stencil& stencil() const;
  const Layout& layout() const;
  DType dtype() const;
  const std::string& backend() const;    // "cuda", "cpu" or "reference"
  const std::string& variant() const;    // the registry name of the implementation chosen
  const nlohmann::json& params() const;  // its parameters, defaults included
  const std::string& source() const;     // how it was chosen, in words
  // All of the above as JSON, with the kernel's resources (registers, occupancy, grid).
  nlohmann::json describe() const;

  // The library's own: the state behind the plan (src/plan/plan_internal.hpp).
  struct Impl;
  explicit Plan(std::unique_ptr<Impl> impl);
  const Impl& impl() const { return *impl_; }

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace fdstencil
