// The argument checks every backend shares.
#include "fdstencil/backend.hpp"

#include <string>

#include "fdstencil/error.hpp"

namespace fdstencil {

namespace {
std::string describe(const Layout& l) {
  const Extents n = l.interior();
  return std::to_string(n.nx) + " x " + std::to_string(n.ny) + " x " + std::to_string(n.nz) +
         " (R = " + std::to_string(l.radius()) + ", line " + std::to_string(l.line()) + ")";
}
}  // namespace

void throw_device_view_on_host() {
  throw Error(
      ErrorKind::invalid_argument,
      "a host backend was given a view of device memory: use a plan on the cuda backend, or a host field");
}

void check_apply_args(const Stencil& s, const Layout& in, const Layout& out) {
  validate(s);
  if (in.radius() != s.radius)
    throw Error(ErrorKind::invalid_argument, "the input's halo is " + std::to_string(in.radius()) +
                                                 " points wide but the " + std::string(op_name(s.op)) +
                                                 " stencil has radius " + std::to_string(s.radius));
  validate_extents(s, in.interior());
  if (!same_geometry(in, out))
    throw Error(ErrorKind::invalid_argument,
                "input and output shapes differ: input " + describe(in) + ", output " + describe(out));
}

}  // namespace fdstencil
