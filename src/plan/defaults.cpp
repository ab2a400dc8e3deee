// The built-in choices (see defaults.hpp). Each row is the fastest launch measured on the H100 for
// its operator, radius band, size class (defaults.hpp) and type: the winner of `fdstencil tune`
// (small from tune-256.json, medium from tune-512.json, large from tune-1024a.json and
// tune-1024b.json) or of a later study that beat it. A row's comment is its provenance: the device
// folder under bench/results/ and the result file it was chosen from ("none" for the fallbacks,
// which are chosen for what they can run). docs/defaults.md, generated from those files
// (bench/report.py defaults), gives each row's figures. A band of radii takes the choice measured
// at the radius inside it (R = 1 for 1, R = 4 for 2..5, R = 8 for 6..8) unless its rows split it.
// The seismic rows serve double too: where a float choice cannot run in double (four-element
// vectors), the row after it does. docs/library.md shows how these choices fare at sizes they
// were not tuned at.
#include "plan/defaults.hpp"

#include <algorithm>
#include <iterator>

namespace fdstencil {

namespace {

enum class Class { small, medium, large, any };
enum class Type { any, f32, f64 };

struct Row {
  Op op;
  int r_lo, r_hi;
  Class size;
  Type type;
  const char* variant;
  const char* params;  // JSON over the variant's defaults
};

constexpr Class S = Class::small, M = Class::medium, L = Class::large, Any = Class::any;

// clang-format off
constexpr Row kRows[] = {
  // d2x: float4 x windows at every size; the block matters within noise only.
  {Op::d2x, 1, 1, S, Type::any, "vec4", R"({"block": "32x8x1"})"},  // nvidia-h100: tune-256.json
  {Op::d2x, 2, 5, S, Type::any, "vec4", R"({"block": "64x4x1"})"},  // nvidia-h100: tune-256.json
  {Op::d2x, 6, 8, S, Type::any, "vec4", R"({"block": "128x2x1"})"},  // nvidia-h100: tune-256.json
  {Op::d2x, 1, 8, M, Type::any, "vec4", R"({"block": "256x1x1"})"},  // nvidia-h100: tune-512.json
  {Op::d2x, 1, 8, L, Type::any, "vec4", R"({"block": "256x1x1"})"},  // nvidia-h100: tune-1024a.json, tune-1024b.json
  {Op::d2x, 1, 8, Any, Type::any, "vec2", R"({"block": "64x4x1"})"},  // none: double, where four-element vectors cannot run
  // d2y: 16-byte vectors straight from global memory.
  {Op::d2y, 1, 1, S, Type::any, "vec", R"({"block": "32x8x1"})"},  // nvidia-h100: tune-256.json
  {Op::d2y, 2, 5, S, Type::any, "vec", R"({"block": "32x16x1"})"},  // nvidia-h100: tune-256.json
  {Op::d2y, 6, 8, S, Type::any, "vec", R"({"block": "32x4x1"})"},  // nvidia-h100: tune-256.json
  {Op::d2y, 1, 1, M, Type::any, "vec", R"({"block": "32x16x1"})"},  // nvidia-h100: tune-512.json
  {Op::d2y, 2, 5, M, Type::any, "vec", R"({"block": "16x16x1"})"},  // nvidia-h100: tune-512.json
  {Op::d2y, 6, 8, M, Type::any, "vec", R"({"block": "32x8x1"})"},  // nvidia-h100: tune-512.json
  {Op::d2y, 1, 1, L, Type::any, "vec", R"({"block": "64x4x1"})"},  // nvidia-h100: tune-1024a.json, tune-1024b.json
  {Op::d2y, 2, 5, L, Type::any, "vec", R"({"block": "16x16x1"})"},  // nvidia-h100: tune-1024a.json, tune-1024b.json
  {Op::d2y, 6, 8, L, Type::any, "vec", R"({"block": "32x8x1"})"},  // nvidia-h100: tune-1024a.json, tune-1024b.json
  // d2z: the vectorized sliding window; from 1024^3 (4 MB planes) the chunk-first order; beyond
  // them our ring march without its register floor, 4 planes ahead, each measured beside the
  // window in the same call. At 1024^3 chunks of 512 planes at R = 4, one chunk per column from
  // R = 5: each chunk seam's 2R planes are read twice, and with 4 MB planes the second read
  // misses L2.
  {Op::d2z, 1, 1, S, Type::any, "window_vec", R"({"block": "16x8x1", "nw": 4, "order": "xyz", "vec_bytes": 8})"},  // nvidia-h100: tune-256.json
  {Op::d2z, 2, 5, S, Type::any, "window_vec", R"({"block": "32x4x1", "nw": 8, "order": "xyz", "vec_bytes": 16})"},  // nvidia-h100: tune-256.json
  {Op::d2z, 6, 8, S, Type::any, "window_vec", R"({"block": "64x2x1", "nw": 8, "order": "xyz", "vec_bytes": 16})"},  // nvidia-h100: tune-256.json
  {Op::d2z, 1, 1, M, Type::any, "window_vec", R"({"block": "32x8x1", "nw": 4, "order": "xyz", "vec_bytes": 16})"},  // nvidia-h100: tune-512.json
  {Op::d2z, 2, 5, M, Type::any, "window_vec", R"({"block": "32x4x1", "nw": 4, "order": "xyz", "vec_bytes": 16})"},  // nvidia-h100: tune-512.json
  {Op::d2z, 6, 8, M, Type::any, "ring", R"({"ahead": 4, "block": "32x8x1", "floor": 0, "nw": 128, "order": "xyz", "vec_bytes": 16})"},  // nvidia-h100: ring-register-floor/ring-floor-z512.json
  {Op::d2z, 1, 1, L, Type::any, "window_vec", R"({"block": "64x4x1", "nw": 4, "order": "xyz", "vec_bytes": 16})"},  // nvidia-h100: tune-1024a.json
  {Op::d2z, 2, 3, L, Type::any, "window_vec", R"({"block": "64x4x1", "nw": 4, "order": "zxy", "vec_bytes": 16})"},  // nvidia-h100: ring-register-floor/ring-floor-zwin1024.json
  {Op::d2z, 4, 4, L, Type::any, "ring", R"({"ahead": 4, "block": "32x8x1", "floor": 0, "nw": 512, "order": "xyz", "vec_bytes": 16})"},  // nvidia-h100: ring-register-floor/ring-znw1024.json
  // R = 5..8: one chunk per column up to 1024 planes, no seam read twice (beside nw 512 and 128
  // and window_vec in the same call).
  {Op::d2z, 5, 8, L, Type::any, "ring", R"({"ahead": 4, "block": "32x8x1", "floor": 0, "nw": 1024, "order": "xyz", "vec_bytes": 16})"},  // nvidia-h100: ring-register-floor/ring-z-1024.json
  {Op::d2z, 1, 8, Any, Type::any, "window", R"({"block": "32x4x1", "nw": 16})"},  // none: any alignment
  // d2xy: the fused plane tile.
  {Op::d2xy, 1, 1, S, Type::any, "fused", R"({"block": "16x8x1"})"},  // nvidia-h100: tune-256.json
  {Op::d2xy, 2, 8, S, Type::any, "fused", R"({"block": "16x16x1"})"},  // nvidia-h100: tune-256.json
  {Op::d2xy, 1, 1, M, Type::any, "fused", R"({"block": "64x4x1"})"},  // nvidia-h100: tune-512.json
  {Op::d2xy, 2, 5, M, Type::any, "fused", R"({"block": "32x16x1"})"},  // nvidia-h100: tune-512.json
  {Op::d2xy, 6, 8, M, Type::any, "fused", R"({"block": "32x8x1"})"},  // nvidia-h100: tune-512.json
  {Op::d2xy, 1, 1, L, Type::any, "fused", R"({"block": "64x4x1"})"},  // nvidia-h100: tune-1024a.json, tune-1024b.json
  {Op::d2xy, 2, 5, L, Type::any, "fused", R"({"block": "32x16x1"})"},  // nvidia-h100: tune-1024a.json, tune-1024b.json
  {Op::d2xy, 6, 8, L, Type::any, "fused", R"({"block": "16x8x1"})"},  // nvidia-h100: tune-1024a.json, tune-1024b.json
  // d2xyz: our pipelined one-pass tile at R = 1 to 4 and 8 and for small planes (at R = 4 in
  // float with the z queue's lower half in shared memory, zq 1), our ring march between, without
  // its register floor where that measured faster; R = 7 and double at 1024^3 take 512^3's choice
  // (a spill is the instance's, whatever the size, and my 2 spills there). At R = 2 and 3 the
  // pipelined tile in small blocks, from 1024^2 planes in strips of a quarter of the L2 (strips
  // 0); at R = 3 in float with the queue's lower planes in shared memory (zq 1), and at R = 1 in
  // double two rows a thread (my 2).
  {Op::d2xyz, 1, 1, S, Type::any, "pipelined", R"({"block": "16x16x1", "nw": 4})"},  // nvidia-h100: tune-256.json
  {Op::d2xyz, 2, 5, S, Type::any, "pipelined", R"({"block": "8x16x1", "nw": 6})"},  // nvidia-h100: pipelined-small-blocks/seis-pipe4-256.json
  {Op::d2xyz, 6, 8, S, Type::any, "pipelined", R"({"block": "8x32x1", "nw": 8})"},  // nvidia-h100: tune-256.json
  {Op::d2xyz, 1, 1, M, Type::f64, "pipelined", R"({"block": "32x4x1", "nw": 4, "my": 2})"},  // nvidia-h100: two-rows-a-thread/seis-my1.json
  {Op::d2xyz, 1, 1, M, Type::any, "pipelined", R"({"block": "16x16x1", "nw": 4})"},  // nvidia-h100: tune-512.json
  {Op::d2xyz, 2, 2, M, Type::any, "pipelined", R"({"block": "8x16x1", "nw": 8})"},  // nvidia-h100: pipelined-small-blocks/seis-pipe3.json
  {Op::d2xyz, 3, 3, M, Type::f32, "pipelined", R"({"block": "8x16x1", "nw": 6, "zq": 1})"},  // nvidia-h100: two-rows-a-thread/seis-zq3-1024.json
  {Op::d2xyz, 3, 3, M, Type::any, "pipelined", R"({"block": "16x8x1", "nw": 6})"},  // nvidia-h100: pipelined-small-blocks/seis-pipe3.json
  // From R = 5 in float and at R = 4 in double: our TMA tile ring, each beside the plan's previous
  // choice in the same call or, for the register caps (regs), beside the uncapped kernel. Double
  // at R = 5..8 was not run and keeps the rows after.
  {Op::d2xyz, 4, 4, M, Type::f64, "tma", R"({"block": "16x16x1", "nw": 16, "ahead": 2, "regs": 80, "strips": 0})"},  // nvidia-h100: tma/tma-caps-double.json
  {Op::d2xyz, 5, 5, M, Type::f32, "tma", R"({"block": "16x16x1", "nw": 16, "ahead": 2, "regs": 80})"},  // nvidia-h100: tma/tma-caps512.json
  // R = 6: chunks of 64 planes, beside nw 16 in the same call (the wave step's tma design gained
  // the same way, docs/wave.md): 2R seam planes a chunk that L2 no longer holds weigh a quarter as
  // much.
  {Op::d2xyz, 6, 6, M, Type::f32, "tma", R"({"block": "8x16x1", "nw": 64, "ahead": 2, "regs": 96})"},  // nvidia-h100: tma/tma-nw-r6.json
  // R = 7, 8: chunks of 128, ahead of 64 in two calls, at both sizes.
  {Op::d2xyz, 7, 7, M, Type::f32, "tma", R"({"block": "16x16x1", "nw": 128, "ahead": 2, "regs": 96})"},  // nvidia-h100: tma-long/tma-nw128-r67.json, tma-long/tma-nw128b-r7.json
  {Op::d2xyz, 8, 8, M, Type::f32, "tma", R"({"block": "16x16x1", "nw": 128, "ahead": 2})"},  // nvidia-h100: tma-long/tma-nw128-r8.json, tma-long/tma-nw128b-r8.json
  {Op::d2xyz, 4, 4, M, Type::f64, "ring", R"({"ahead": 2, "block": "16x16x1", "my": 1, "nw": 128, "order": "xyz", "vec_bytes": 16})"},  // nvidia-h100: ring-register-floor/ring-floor-double.json
  {Op::d2xyz, 4, 4, M, Type::any, "pipelined", R"({"block": "8x16x1", "nw": 8, "zq": 1})"},  // nvidia-h100: pipelined-z-queue-smem/seis-zq.json
  {Op::d2xyz, 5, 5, M, Type::any, "ring", R"({"ahead": 2, "block": "16x16x1", "floor": 0, "my": 0, "nw": 128, "order": "xyz", "vec_bytes": 16})"},  // nvidia-h100: ring-register-floor/ring-floor1024.json
  {Op::d2xyz, 6, 6, M, Type::any, "ring", R"({"ahead": 2, "block": "16x16x1", "my": 1, "nw": 128, "order": "xyz", "vec_bytes": 8})"},  // nvidia-h100: ring-register-floor/ring-floor512.json
  {Op::d2xyz, 7, 7, M, Type::any, "ring", R"({"ahead": 2, "block": "16x16x1", "my": 2, "nw": 128, "order": "xyz", "vec_bytes": 8})"},  // nvidia-h100: ring-register-floor/ring-floor512.json
  {Op::d2xyz, 8, 8, M, Type::any, "pipelined", R"({"block": "8x32x1", "nw": 16})"},  // nvidia-h100: tune-512.json
  {Op::d2xyz, 1, 1, L, Type::f64, "pipelined", R"({"block": "32x4x1", "nw": 4, "strips": 0, "my": 2})"},  // nvidia-h100: two-rows-a-thread/seis-my-1024.json
  {Op::d2xyz, 1, 1, L, Type::any, "pipelined", R"({"block": "32x8x1", "nw": 4})"},  // nvidia-h100: tune-1024a.json
  {Op::d2xyz, 2, 2, L, Type::any, "pipelined", R"({"block": "16x8x1", "nw": 6, "strips": 0})"},  // nvidia-h100: pipelined-small-blocks/seis-pipe3-1024.json
  {Op::d2xyz, 3, 3, L, Type::f32, "pipelined", R"({"block": "16x8x1", "nw": 6, "strips": 0, "zq": 1})"},  // nvidia-h100: two-rows-a-thread/seis-zq3-1024.json
  {Op::d2xyz, 3, 3, L, Type::any, "pipelined", R"({"block": "16x8x1", "nw": 6, "strips": 0})"},  // nvidia-h100: pipelined-small-blocks/seis-pipe3-1024.json
  {Op::d2xyz, 4, 4, L, Type::f64, "tma", R"({"block": "16x16x1", "nw": 16, "ahead": 2, "regs": 80, "strips": 0})"},  // nvidia-h100: tma/tma-caps-double.json
  {Op::d2xyz, 5, 5, L, Type::f32, "tma", R"({"block": "16x16x1", "nw": 16, "ahead": 2, "regs": 80, "strips": 0})"},  // nvidia-h100: tma/tma-caps1024.json
  // R = 6..8 at 1024^3: long chunks over whole planes (strips 1; beside nw 16 and 32, whole and
  // in automatic strips, in one call): a layer of 64 + 2R planes outgrows L2 either way, and the
  // 2R seam planes weigh a quarter as much as at nw 16; R = 7, 8 in chunks of 128 as at 512^3.
  {Op::d2xyz, 6, 6, L, Type::f32, "tma", R"({"block": "8x16x1", "nw": 64, "ahead": 2, "regs": 96, "strips": 1})"},  // nvidia-h100: tma-long/tma-long1024-r67.json
  {Op::d2xyz, 7, 7, L, Type::f32, "tma", R"({"block": "16x16x1", "nw": 128, "ahead": 2, "regs": 96, "strips": 1})"},  // nvidia-h100: tma-long/tma-long1024-r67.json, tma-long/tma-nw128b-r7.json
  {Op::d2xyz, 8, 8, L, Type::f32, "tma", R"({"block": "16x16x1", "nw": 128, "ahead": 2, "strips": 1})"},  // nvidia-h100: tma-long/tma-nw128b-r8.json
  {Op::d2xyz, 4, 4, L, Type::f64, "ring", R"({"ahead": 2, "block": "16x16x1", "my": 1, "nw": 128, "order": "xyz", "vec_bytes": 16})"},  // nvidia-h100: ring-register-floor/ring-floor-double.json
  {Op::d2xyz, 4, 4, L, Type::any, "pipelined", R"({"block": "8x16x1", "nw": 8, "strips": 0, "zq": 1})"},  // nvidia-h100: pipelined-z-queue-smem/seis-zq-1024.json
  {Op::d2xyz, 5, 5, L, Type::any, "ring", R"({"ahead": 2, "block": "16x16x1", "floor": 0, "my": 0, "nw": 128, "order": "xyz", "vec_bytes": 16})"},  // nvidia-h100: ring-register-floor/ring-floor1024.json
  {Op::d2xyz, 6, 6, L, Type::any, "ring", R"({"ahead": 2, "block": "16x16x1", "my": 1, "nw": 128, "order": "xyz", "vec_bytes": 8})"},  // nvidia-h100: ring/ring-r1024-high.json
  {Op::d2xyz, 7, 7, L, Type::any, "ring", R"({"ahead": 2, "block": "16x16x1", "my": 2, "nw": 128, "order": "xyz", "vec_bytes": 8})"},  // nvidia-h100: ring-register-floor/ring-floor512.json
  {Op::d2xyz, 8, 8, L, Type::any, "pipelined", R"({"block": "8x32x1", "nw": 32})"},  // nvidia-h100: tune-1024b.json
  {Op::d2xyz, 1, 8, Any, Type::any, "l1march", R"({"block": "32x4x1", "nw": 16, "my": 1, "vec_bytes": 8})"},  // none: runs where the rows above cannot
  // A layout no vector kernel can take (a view whose lines are not 8- or 16-byte aligned): the
  // seeds' baselines, one point per thread, which run on any layout.
  {Op::d2x, 1, 8, Any, Type::any, "baseline", R"({"block": "256x1x1"})"},  // none: any layout
  {Op::d2y, 1, 8, Any, Type::any, "baseline", R"({"block": "256x1x1"})"},  // none: any layout
  {Op::d2xy, 1, 8, Any, Type::any, "baseline", R"({"block": "256x1x1"})"},  // none: any layout
  {Op::d2xyz, 1, 8, Any, Type::any, "baseline", R"({"block": "256x1x1"})"},  // none: any layout
  // laplacian7 (radius 1 only): ours, pipelined (k9 before issue 32: the seismic pipelined tile at R = 1), in both
  // types at every size class. `strips` 0 cuts a plane along y only where a chunk layer outgrows
  // half the L2, so it leaves the small and medium sizes whole. Double at nw 4 against 8 in the
  // same call: nw 4 led or tied at every size; in double two rows a thread (my 2).
  {Op::laplacian7, 1, 1, S, Type::f32, "pipelined", R"({"block": "32x4x1", "nw": 4, "order": "xyz", "strips": 0})"},  // nvidia-h100: lap-k9/lap-k9-regs-float.json
  {Op::laplacian7, 1, 1, S, Type::f64, "pipelined", R"({"block": "32x4x1", "nw": 4, "order": "xyz", "strips": 0, "my": 2})"},  // nvidia-h100: two-rows-a-thread/lap-my-sizes.json
  {Op::laplacian7, 1, 1, M, Type::f32, "pipelined", R"({"block": "32x4x1", "nw": 4, "order": "xyz", "strips": 0})"},  // nvidia-h100: lap-k9/lap-k9-regs-float.json
  {Op::laplacian7, 1, 1, M, Type::f64, "pipelined", R"({"block": "32x4x1", "nw": 4, "order": "xyz", "strips": 0, "my": 2})"},  // nvidia-h100: two-rows-a-thread/lap-my-sizes.json
  {Op::laplacian7, 1, 1, L, Type::f32, "pipelined", R"({"block": "32x4x1", "nw": 4, "order": "xyz", "strips": 0})"},  // nvidia-h100: lap-k9/lap-k9-regs-float.json
  {Op::laplacian7, 1, 1, L, Type::f64, "pipelined", R"({"block": "32x4x1", "nw": 4, "order": "xyz", "strips": 0, "my": 2})"},  // nvidia-h100: two-rows-a-thread/lap-my-sizes.json
  // Where the tuned choice cannot run (a grid ny that m does not divide, an unaligned layout):
  // bulk_ring at the lap-k8/lap-nzc defaults, then the posts' k5 with m = 1, which runs on anything.
  {Op::laplacian7, 1, 1, Any, Type::any, "bulk_ring", R"({"ty": 16, "stages": 4, "nzc": 16})"},  // none: where pipelined cannot run
  {Op::laplacian7, 1, 1, Any, Type::any, "k5", R"({"block": "256x1x1", "m": 1, "lb": 256})"},  // none: runs on anything
};
// clang-format on

// The H200's own rows, tried ahead of kRows on a card whose name holds kH200: the winners of
// `fdstencil tune` on an H200 in float at 256^3 (small) and 512^3 (medium), kept where they beat
// kRows' choice as the plan ran it on the same card (fused-plan-cards-h200.json; d2xy against the
// fused tile in one call, d2xy-l1-h200.json). Their comments name the device folder and file as above.
constexpr std::string_view kH200 = " H200";  // "NVIDIA H200 ...", not "NVIDIA GH200 ..."
// clang-format off
constexpr Row kH200Rows[] = {
  {Op::d2xyz, 1, 1, S, Type::f32, "tma", R"({"ahead": 4, "block": "16x16x1", "nw": 64, "order": "xyz", "regs": 0, "strips": 1})"},  // nvidia-h200: campaigns/tune-fused-h200.json
  {Op::d2xyz, 2, 2, S, Type::f32, "tma", R"({"ahead": 1, "block": "16x16x1", "nw": 32, "order": "xyz", "regs": 0, "strips": 0})"},  // nvidia-h200: campaigns/tune-fused-h200.json
  {Op::d2xyz, 3, 3, S, Type::f32, "tma", R"({"ahead": 1, "block": "16x16x1", "nw": 32, "order": "xyz", "regs": 0, "strips": 1})"},  // nvidia-h200: campaigns/tune-fused-h200.json
  {Op::d2xyz, 4, 4, S, Type::f32, "tma", R"({"ahead": 2, "block": "16x16x1", "nw": 32, "order": "xyz", "regs": 64, "strips": 1})"},  // nvidia-h200: campaigns/tune-fused-h200.json
  {Op::d2xyz, 1, 1, M, Type::f32, "l1march", R"({"block": "32x4x1", "my": 1, "nw": 8, "vec_bytes": 16})"},  // nvidia-h200: campaigns/tune-fused-h200.json
  {Op::d2xyz, 2, 2, M, Type::f32, "pipelined", R"({"block": "8x16x1", "my": 2, "nw": 6, "order": "xyz", "regs": 0, "strips": 1, "zq": 1})"},  // nvidia-h200: campaigns/tune-fused-h200.json
  {Op::d2xyz, 3, 3, M, Type::f32, "tma", R"({"ahead": 1, "block": "16x16x1", "nw": 128, "order": "xyz", "regs": 0, "strips": 1})"},  // nvidia-h200: campaigns/tune-fused-h200.json
  {Op::d2xyz, 4, 4, M, Type::f32, "tma", R"({"ahead": 4, "block": "16x16x1", "nw": 32, "order": "xyz", "regs": 80, "strips": 1})"},  // nvidia-h200: campaigns/tune-fused-h200.json
  // d2xy: ours from L1 (`l1`) at every radius, each band at the winner of its measured radius
  // (R = 1, 2, 4, 8), tuned beside the fused tile, which lost to it at each (tune-d2xy-l1-h200.json;
  // at its default launch l1 lost at R = 8 on 256^3, d2xy-l1-h200.json). Through the plan, R = 3
  // at R = 2's launch beat the fused tile too (d2xy-plan-l1-rows/); R = 5-7 unmeasured.
  {Op::d2xy, 1, 1, S, Type::f32, "l1", R"({"block": "64x2x1", "my": 1, "nw": 8, "vec_bytes": 16})"},  // nvidia-h200: campaigns/tune-d2xy-l1-h200.json
  {Op::d2xy, 2, 3, S, Type::f32, "l1", R"({"block": "32x8x1", "my": 1, "nw": 16, "vec_bytes": 16})"},  // nvidia-h200: campaigns/tune-d2xy-l1-h200.json
  {Op::d2xy, 4, 5, S, Type::f32, "l1", R"({"block": "32x8x1", "my": 2, "nw": 8, "vec_bytes": 8})"},  // nvidia-h200: campaigns/tune-d2xy-l1-h200.json
  {Op::d2xy, 6, 8, S, Type::f32, "l1", R"({"block": "32x4x1", "my": 2, "nw": 8, "vec_bytes": 16})"},  // nvidia-h200: campaigns/tune-d2xy-l1-h200.json
  {Op::d2xy, 1, 5, M, Type::f32, "l1", R"({"block": "32x8x1", "my": 1, "nw": 8, "vec_bytes": 16})"},  // nvidia-h200: campaigns/tune-d2xy-l1-h200.json
  {Op::d2xy, 6, 8, M, Type::f32, "l1", R"({"block": "32x4x1", "my": 2, "nw": 8, "vec_bytes": 16})"},  // nvidia-h200: campaigns/tune-d2xy-l1-h200.json
};
// clang-format on

bool on_h200(std::string_view device) { return device.find(kH200) != std::string_view::npos; }

}  // namespace

SizeClass size_class(Extents n, DType t) {
  const int64_t plane = n.nx * n.ny * dtype_bytes(t);
  if (plane <= (int64_t(512) << 10)) return SizeClass::small;
  if (plane <= (int64_t(2) << 20)) return SizeClass::medium;
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

std::vector<std::pair<std::string, Params>> default_choices(const Problem& p, std::string_view device) {
  const SizeClass c = size_class(p.interior(), p.dtype());
  const Class want = c == SizeClass::small    ? Class::small
                     : c == SizeClass::medium ? Class::medium
                                              : Class::large;
  const Type type = p.dtype() == DType::f32 ? Type::f32 : Type::f64;
  std::vector<std::pair<std::string, Params>> out;
  const auto take = [&](const Row& r) {
    if (r.op == p.stencil.op && p.stencil.radius >= r.r_lo && p.stencil.radius <= r.r_hi &&
        (r.size == Class::any || r.size == want) && (r.type == Type::any || r.type == type))
      out.emplace_back(r.variant, Params::parse(r.params));
  };
  if (on_h200(device))
    for (const Row& r : kH200Rows) take(r);
  for (const Row& r : kRows) take(r);
  return out;
}

// The card every row with a device folder in its comment was measured on (nvidia-h100): its name
// as CUDA gives it, "NVIDIA H100 80GB HBM3", "NVIDIA H100 PCIe", holds this.
constexpr std::string_view kMeasuredCard = " H100";  // "NVIDIA H100 ...", not "NVIDIA GH100 ..."

bool card_has_defaults(std::string_view device, Op op) {
  if (device.find(kMeasuredCard) != std::string_view::npos) return true;
  return on_h200(device) &&
         std::any_of(std::begin(kH200Rows), std::end(kH200Rows), [op](const Row& r) { return r.op == op; });
}

std::string untuned_card_notice(std::string_view device, Op op, int radius, Extents interior) {
  const int64_t edge = op == Op::laplacian7 ? 2 : 0;  // tune's --size counts laplacian7's boundary
  return "the built-in launch choices were measured on an H100, not on this " + std::string(device) +
         ": `fdstencil tune --op " + std::string(op_name(op)) + " --radius " + std::to_string(radius) +
         " --size " + std::to_string(interior.nx + edge) + "," + std::to_string(interior.ny + edge) + "," +
         std::to_string(interior.nz + edge) +
         "` measures this card's into the tuning cache, which plans then take (docs/library.md)";
}

std::vector<std::pair<std::string, Params>> all_default_choices(Op op) {
  std::vector<std::pair<std::string, Params>> out;
  for (const Row& r : kH200Rows)
    if (r.op == op) out.emplace_back(r.variant, Params::parse(r.params));
  for (const Row& r : kRows)
    if (r.op == op) out.emplace_back(r.variant, Params::parse(r.params));
  return out;
}

}  // namespace fdstencil
