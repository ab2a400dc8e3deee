// The one registry of variants: every backend's, in one list that the plans, the tuner, the
// benchmark and the tests iterate. A variant missing here is missing everywhere.
#pragma once

#include <string>
#include <vector>

#include "core/variant.hpp"

namespace fdstencil {

// Every variant of every backend built into this library.
const std::vector<Variant>& all_variants();
// The variants of `op` on `backend` ("" for every backend), in registry order.
std::vector<const Variant*> find_variants(Op op, const std::string& backend);
// One variant by name (a former name too: current_variant_name); nullptr when there is none.
const Variant* find_variant(Op op, const std::string& backend, const std::string& name);
// The Laplacian's own kernels took the posts' numbering on, k8_shfl, k8 and k9, until issue 32
// named them by design: shfl_march, bulk_ring and pipelined. Result files and tuning caches of
// that time still name them: a former name gives the current one, any other name itself.
std::string current_variant_name(Op op, const std::string& name);

// The defaults overridden by the user's values; throws Error(invalid_argument) for a key the
// variant does not take or a value of the wrong JSON type.
Params merge_params(const Variant& v, const Params& overrides);

// The host backends as variants ("reference" and "cpu" for every operator): host_variants.cpp.
std::vector<Variant> host_variants();

}  // namespace fdstencil
