// The one registry of variants: the benchmark, the tests and the CLI iterate this list.
#include <string>

#include "bench/registry.hpp"
#include "fdstencil/error.hpp"

namespace fdstencil::bench {

const std::vector<Variant>& all_variants() {
  static const std::vector<Variant> variants = [] {
    std::vector<Variant> vs = host_variants();
#ifdef FDSTENCIL_HAVE_CUDA
    for (Variant& v : cuda_variants()) vs.push_back(std::move(v));
#endif
    return vs;
  }();
  return variants;
}

std::vector<const Variant*> find_variants(Op op, const std::string& backend) {
  std::vector<const Variant*> out;
  for (const Variant& v : all_variants())
    if (v.op == op && (backend.empty() || v.backend == backend)) out.push_back(&v);
  return out;
}

Params merge_params(const Variant& v, const Params& overrides) {
  Params p = v.defaults;
  for (auto it = overrides.begin(); it != overrides.end(); ++it) {
    if (!p.contains(it.key()))
      throw Error(ErrorKind::invalid_argument,
                  "variant " + v.name + " of " + std::string(op_name(v.op)) +
                      " takes no parameter '" + it.key() + "' (it takes: " +
                      (v.defaults.empty() ? std::string("none") : v.defaults.dump()) + ")");
    // Same JSON type as the default (a number for m, a string for block): the kernels read the
    // value as that type, and a mismatch must be a clear error, not a parse failure mid-sweep.
    const bool same = (p[it.key()].is_number() && it.value().is_number()) ||
                      p[it.key()].type() == it.value().type();
    if (!same)
      throw Error(ErrorKind::invalid_argument,
                  "parameter '" + it.key() + "' of variant " + v.name + " takes " +
                      (p[it.key()].is_number() ? "a number" : "text like " + p[it.key()].dump()) +
                      ", not " + it.value().dump());
    p[it.key()] = it.value();
  }
  return p;
}

}  // namespace fdstencil::bench
