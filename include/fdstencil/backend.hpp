// A backend applies an operator to host fields. Every backend but "reference" is tested against
// "reference"; the bench harness times them through the variant registry (src/bench).
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
  // Throws Error(invalid_argument) for an invalid stencil or mismatched layouts.
  virtual void apply(const Stencil& s, const HostField<float>& in, HostField<float>& out) const = 0;
  virtual void apply(const Stencil& s, const HostField<double>& in, HostField<double>& out) const = 0;
};

// Checks the stencil, the extents and that in and out share one layout; throws otherwise.
void check_apply_args(const Stencil& s, const Layout& in, const Layout& out);

const Backend& reference_backend();
const Backend& cpu_backend();
std::vector<const Backend*> host_backends();
const Backend& find_backend(std::string_view name);  // throws Error(invalid_argument)

}  // namespace fdstencil
