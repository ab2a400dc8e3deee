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

// By the bytes of one xy-plane (nx ny elements): what decides whether a z-march's neighbouring
// planes and seams stay in the 50 MB L2, and so where the tuned z-marching choices change.
// small: up to 512 KiB (256^2 float or double); medium: up to 2 MiB (512^2 float or double);
// large: beyond (768^2 and 1000 x 600 float, 2.4 MB; 1024^2 float, 4 MiB), where the z window
// wants the chunk-first order. Classes by total points misplaced 1000 x 600 x 300 (fewer points
// than 768^3 but the same plane): its d2z R = 4 default ran far below its tuned choice
// (plan-defaults.json against tune-odd.json; docs/library.md).
enum class SizeClass { small, medium, large };
SizeClass size_class(Extents interior, DType t);
std::string_view size_class_name(SizeClass c);

// The built-in choices for `p` on the cuda backend, preferred first: a plan takes the first that
// can run. Every operator and radius has at least one row.
// On a card whose `device` name holds H200, its own rows come first.
std::vector<std::pair<std::string, Params>> default_choices(const Problem& p, std::string_view device = {});

// Whether `op` has rows measured on the card named `device` (cudaDeviceProp::name): the H100's
// rows serve every card and are an H100's own; an H200 has rows of its own for d2xyz and d2xy.
bool card_has_defaults(std::string_view device, Op op);

// What a plan says, once, where it takes the built-in choices on a card without its own: which
// card they were measured on, and the `fdstencil tune` command that measures this case here.
// `interior` as the plan's (for laplacian7 the tune's --size adds the boundary back).
std::string untuned_card_notice(std::string_view device, Op op, int radius, Extents interior);

// Every row of the table for `op`, whatever its size class, radii and type: the tuner's first
// round tries them all, so a size between the classes starts from each class's best.
std::vector<std::pair<std::string, Params>> all_default_choices(Op op);

}  // namespace fdstencil
