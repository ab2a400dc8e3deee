// A host backend applies an operator to host fields. "reference" is the oracle; every other
// backend and every CUDA kernel is tested against it. Plans (plan.hpp) reach these backends
// through the variant registry like any other; calling a backend directly is for the oracle's
// users (tests, verification).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "fdstencil/field.hpp"
#include "fdstencil/stencil.hpp"

namespace fdstencil {

class Backend {
 public:
  virtual ~Backend() = default;
  virtual std::string_view name() const = 0;
  virtual std::string_view description() const = 0;

  // out = op(in) at every interior point; out's halo and padding are left as they were.
  // Throws Error(invalid_argument) for an invalid stencil, mismatched layouts or device views.
  virtual void apply(const Stencil& s, FieldView<const float> in, FieldView<float> out) const = 0;
  virtual void apply(const Stencil& s, FieldView<const double> in, FieldView<double> out) const = 0;

  template <class T>
  void apply(const Stencil& s, const HostField<T>& in, HostField<T>& out) const {
    apply(s, in.view(), out.view());
  }
};

// Checks the stencil, the extents and that in and out share one geometry (extents, halo,
// strides, element size); throws otherwise.
void check_apply_args(const Stencil& s, const Layout& in, const Layout& out);

[[noreturn]] void throw_device_view_on_host();

// check_apply_args, and that both views are in host memory.
template <class T>
void check_host_views(const Stencil& s, const FieldView<const T>& in, const FieldView<T>& out) {
  if (in.memory() != Memory::host || out.memory() != Memory::host) throw_device_view_on_host();
  check_apply_args(s, in.layout(), out.layout());
}

const Backend& reference_backend();
const Backend& cpu_backend();
std::vector<const Backend*> host_backends();
const Backend& find_backend(std::string_view name);  // throws Error(invalid_argument)

}  // namespace fdstencil
