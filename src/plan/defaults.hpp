// The built-in choices of the cuda backend: for each operator, band of radii and size class,
// the variant and parameters that measured best in the committed tuning runs (defaults.cpp says
// which run and figure each row rests on). A plan takes these when the tuning cache has no entry
// for its case.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/variant.hpp"

namespace fdstencil {

// By interior points: where the tuned parameters were seen to change. small: below 2^25 (e.g.
// 256^3); medium: below 2^28 (e.g. 512^3; a float plane of 1 MB, whose 2R z-neighbours stay in
// the 50 MB L2); large: from 2^28 (e.g. 1024^3, 4 MB planes, where the z-marching kernels want
// the chunk-first order and longer marches).
enum class SizeClass { small, medium, large };
SizeClass size_class(Extents interior);
std::string_view size_class_name(SizeClass c);

// The built-in choices for `p` on the cuda backend, preferred first: a plan takes the first that
// can run. Every operator and radius has at least one row.
std::vector<std::pair<std::string, Params>> default_choices(const Problem& p);

}  // namespace fdstencil
