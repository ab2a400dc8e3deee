// The built-in choices (see defaults.hpp). Each row cites the measurement it rests on: the
// tuner's runs on the H100 committed under bench/results/nvidia-h100/, float, with the share of
// the copy bandwidth measured in the same run. A band of radii takes the choice tuned at the
// radius inside it (R = 1 for 1, R = 4 for 2..5, R = 8 for 6..8). Double shares the float rows;
// where a float choice cannot run in double (16-byte vectors of 4 elements), the next row does.
#include "plan/defaults.hpp"

namespace fdstencil {

namespace {

enum class Class { small, medium, large, any };

struct Row {
  Op op;
  int r_lo, r_hi;
  Class size;
  const char* variant;
  const char* params;  // JSON over the variant's defaults
};

// clang-format off
constexpr Row kRows[] = {
  // d2x: the x window of float4 loads holds 97-99 % of copy at every R and size
  // (seis-r512/seis-r1024: 97.2-99.4 %); block 64x4x1 throughout.
  {Op::d2x, 1, 8, Class::any, "vec4", R"({"block": "64x4x1"})"},
  {Op::d2x, 1, 8, Class::any, "vec2", R"({"block": "64x4x1"})"},  // double: 16-byte vec2
  // d2y: 16-byte vectors straight from global; 32x8x1 (seis-tune3-y: 98.0-100.1 % for R <= 4,
  // 88.6-89.5 % at R = 8).
  {Op::d2y, 1, 8, Class::any, "vec", R"({"block": "32x8x1"})"},
  // d2z: the vectorized window. 512^3: nw 8 (R <= 4, 97.0-97.7 %), nw 32 at R = 8 (83.3 %).
  // 1024^3: the chunk-first order with nw 8 (R = 4: 87.9 %, R = 8: 84.6 %), nw 64 at R = 1 (91.2 %).
  {Op::d2z, 1, 5, Class::small,  "window_vec", R"({"block": "32x4x1", "nw": 8, "vec_bytes": 16, "order": "xyz"})"},
  {Op::d2z, 6, 8, Class::small,  "window_vec", R"({"block": "32x4x1", "nw": 32, "vec_bytes": 16, "order": "xyz"})"},
  {Op::d2z, 1, 5, Class::medium, "window_vec", R"({"block": "32x4x1", "nw": 8, "vec_bytes": 16, "order": "xyz"})"},
  {Op::d2z, 6, 8, Class::medium, "window_vec", R"({"block": "32x4x1", "nw": 32, "vec_bytes": 16, "order": "xyz"})"},
  {Op::d2z, 1, 1, Class::large,  "window_vec", R"({"block": "32x4x1", "nw": 64, "vec_bytes": 16, "order": "xyz"})"},
  {Op::d2z, 2, 8, Class::large,  "window_vec", R"({"block": "32x4x1", "nw": 8, "vec_bytes": 16, "order": "zxy"})"},
  {Op::d2z, 1, 8, Class::any,    "window", R"({"block": "32x4x1", "nw": 16})"},
  // d2xy: the fused plane tile, 16x16x1 (seis-shapes: within 1 point of the best shape at R = 4
  // and 8; 64x4x1 at R = 1, 89.6 % at 512^3).
  {Op::d2xy, 1, 1, Class::any, "fused", R"({"block": "64x4x1"})"},
  {Op::d2xy, 1, 8, Class::any, "fused", R"({"block": "16x16x1"})"},
  // d2xyz: the pipelined tile at R = 1 (93.6 % at 512^3 with nw 4, 86.9 % at 1024^3 with nw 16)
  // and R >= 5 (nw 16: 52.8 % at 512^3; nw 32: 48.9 % at 1024^3); ours, the L1 march, for
  // 2 <= R <= 4 (70.2 % at 512^3 with nw 16, 65.3 % at 1024^3 with nw 32).
  {Op::d2xyz, 1, 1, Class::small,  "pipelined", R"({"block": "8x32x1", "nw": 4})"},
  {Op::d2xyz, 1, 1, Class::medium, "pipelined", R"({"block": "8x32x1", "nw": 4})"},
  {Op::d2xyz, 1, 1, Class::large,  "pipelined", R"({"block": "8x32x1", "nw": 16})"},
  {Op::d2xyz, 2, 5, Class::small,  "l1march", R"({"block": "32x4x1", "nw": 16, "my": 1, "vec_bytes": 8})"},
  {Op::d2xyz, 2, 5, Class::medium, "l1march", R"({"block": "32x4x1", "nw": 16, "my": 1, "vec_bytes": 8})"},
  {Op::d2xyz, 2, 5, Class::large,  "l1march", R"({"block": "32x4x1", "nw": 32, "my": 1, "vec_bytes": 8})"},
  {Op::d2xyz, 6, 8, Class::small,  "pipelined", R"({"block": "8x32x1", "nw": 16})"},
  {Op::d2xyz, 6, 8, Class::medium, "pipelined", R"({"block": "8x32x1", "nw": 16})"},
  {Op::d2xyz, 6, 8, Class::large,  "pipelined", R"({"block": "8x32x1", "nw": 32})"},
  {Op::d2xyz, 1, 8, Class::any,    "l1march", R"({"block": "32x4x1", "nw": 16, "my": 1, "vec_bytes": 8})"},
  // laplacian7: the posts' k5 in double at 1024^3 (prof-lap, H100: 88.8 %), ours k8 elsewhere
  // (H200 lap-quick/lap-k8: 75.5-79.3 %).
  {Op::laplacian7, 1, 1, Class::large, "k5", R"({"block": "256x1x1", "m": 8, "lb": 256})"},
  {Op::laplacian7, 1, 1, Class::any,   "k8", R"({"ty": 16, "stages": 4, "nzc": 16})"},
  {Op::laplacian7, 1, 1, Class::any,   "k5", R"({"block": "256x1x1", "m": 8, "lb": 256})"},
};
// clang-format on

}  // namespace

SizeClass size_class(Extents n) {
  const int64_t points = n.points();
  if (points < (int64_t(1) << 25)) return SizeClass::small;
  if (points < (int64_t(1) << 28)) return SizeClass::medium;
  return SizeClass::large;
}

std::string_view size_class_name(SizeClass c) {
  switch (c) {
    case SizeClass::small: return "small";
    case SizeClass::medium: return "medium";
    case SizeClass::large: return "large";
  }
  return "?";
}

std::vector<std::pair<std::string, Params>> default_choices(const Problem& p) {
  const SizeClass c = size_class(p.interior());
  const Class want = c == SizeClass::small ? Class::small : c == SizeClass::medium ? Class::medium : Class::large;
  std::vector<std::pair<std::string, Params>> out;
  for (const Row& r : kRows)
    if (r.op == p.stencil.op && p.stencil.radius >= r.r_lo && p.stencil.radius <= r.r_hi &&
        (r.size == Class::any || r.size == want))
      out.emplace_back(r.variant, Params::parse(r.params));
  return out;
}

}  // namespace fdstencil
