// The registry: the host backends' variants, then the CUDA backend's when it is built.
#include "plan/registry.hpp"

#include <string>

#include "fdstencil/backend.hpp"
#include "fdstencil/error.hpp"
#ifdef FDSTENCIL_HAVE_CUDA
#include "cuda/variants.hpp"
#endif

namespace fdstencil {

const std::vector<Variant>& all_variants() {
  static const std::vector<Variant> variants = [] {
    std::vector<Variant> vs = host_variants();
#ifdef FDSTENCIL_HAVE_CUDA
    for (Variant& v : cuda::variants()) vs.push_back(std::move(v));
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

std::string current_variant_name(Op op, const std::string& name) {
  if (op != Op::laplacian7) return name;
  if (name == "k8_shfl") return "shfl_march";
  if (name == "k8") return "bulk_ring";
  if (name == "k9") return "pipelined";
  return name;
}

const Variant* find_variant(Op op, const std::string& backend, const std::string& name) {
  const std::string current = current_variant_name(op, name);
  for (const Variant* v : find_variants(op, backend))
    if (v->name == current) return v;
  return nullptr;
}

Params merge_params(const Variant& v, const Params& overrides) {
  if (!overrides.is_object())
    throw Error(ErrorKind::invalid_argument,
                "parameters of variant " + v.name + " must be a JSON object, not " + overrides.dump());
  Params p = v.defaults;
  for (auto it = overrides.begin(); it != overrides.end(); ++it) {
    if (!p.contains(it.key()))
      throw Error(ErrorKind::invalid_argument,
                  "variant " + v.name + " of " + std::string(op_name(v.op)) + " takes no parameter '" +
                      it.key() +
                      "' (it takes: " + (v.defaults.empty() ? std::string("none") : v.defaults.dump()) + ")");
    // Same JSON type as the default (a number for m, a string for block): the kernels read the
    // value as that type, and a mismatch must be a clear error, not a parse failure mid-sweep.
    const bool same = (p[it.key()].is_number_integer() && it.value().is_number_integer()) ||
                      (!p[it.key()].is_number_integer() && p[it.key()].type() == it.value().type());
    if (!same)
      throw Error(ErrorKind::invalid_argument,
                  "parameter '" + it.key() + "' of variant " + v.name + " takes " +
                      (p[it.key()].is_number() ? "an integer" : "text like " + p[it.key()].dump()) +
                      ", not " + it.value().dump());
    p[it.key()] = it.value();
  }
  return p;
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
