// The host backend registry and the argument checks every backend shares.
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

void check_apply_args(const Stencil& s, const Layout& in, const Layout& out) {
  validate(s);
  if (in.radius() != s.radius)
    throw Error(ErrorKind::invalid_argument,
                "the input's halo is " + std::to_string(in.radius()) + " points wide but the " +
                    std::string(op_name(s.op)) + " stencil has radius " + std::to_string(s.radius));
  validate_extents(s, in.interior());
  if (!(in == out))
    throw Error(ErrorKind::invalid_argument, "input and output shapes differ: input " +
                                                 describe(in) + ", output " + describe(out));
}

std::vector<const Backend*> host_backends() { return {&reference_backend(), &cpu_backend()}; }

const Backend& find_backend(std::string_view name) {
  std::string names;
  for (const Backend* b : host_backends()) {
    if (b->name() == name) return *b;
    names += (names.empty() ? "" : ", ") + std::string(b->name());
  }
  throw Error(ErrorKind::invalid_argument,
              "unknown backend '" + std::string(name) + "' (valid: " + names + ")");
}

}  // namespace fdstencil
