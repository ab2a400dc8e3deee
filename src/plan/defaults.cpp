// The built-in choices (see defaults.hpp). Each row is the winner of `fdstencil tune` on the
// H100 for its operator, radius and size class (defaults.hpp), as committed under
// bench/results/nvidia-h100/: small from tune-256.json (256^3), medium from tune-512.json
// (512^3), large from tune-1024a.json and tune-1024b.json (1024^3); the comment gives the winner's median time and
// its share of the copy bandwidth measured in the same run. A band of radii takes the choice
// tuned at the radius inside it (R = 1 for 1, R = 4 for 2..5, R = 8 for 6..8). The seismic rows
// serve double too: where a float choice cannot run in double (four-element vectors), the row
// after it does. docs/library.md shows how these choices fare at sizes they were not tuned at.
#include "plan/defaults.hpp"

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
  // d2x: float4 x windows at every size (96.3-99.6 %); the block matters within noise only.
  {Op::d2x, 1, 1, S, Type::any, "vec4", R"({"block": "32x8x1"})"},    // 0.0460 ms, 97.3 %
  {Op::d2x, 2, 5, S, Type::any, "vec4", R"({"block": "64x4x1"})"},    // 0.0470 ms, 96.3 %
  {Op::d2x, 6, 8, S, Type::any, "vec4", R"({"block": "128x2x1"})"},   // 0.0467 ms, 98.8 %
  {Op::d2x, 1, 8, M, Type::any, "vec4", R"({"block": "256x1x1"})"},   // 0.3663-0.3668 ms, 97.5-98.8 %
  {Op::d2x, 1, 8, L, Type::any, "vec4", R"({"block": "256x1x1"})"},   // 2.8913-2.8948 ms, 98.9-99.6 %
  {Op::d2x, 1, 8, Any, Type::any, "vec2", R"({"block": "64x4x1"})"},  // double: 16-byte vectors of 2
  // d2y: 16-byte vectors straight from global memory.
  {Op::d2y, 1, 1, S, Type::any, "vec", R"({"block": "32x8x1"})"},     // 0.0442 ms, 101.5 %
  {Op::d2y, 2, 5, S, Type::any, "vec", R"({"block": "32x16x1"})"},    // 0.0463 ms, 98.3 %
  {Op::d2y, 6, 8, S, Type::any, "vec", R"({"block": "32x4x1"})"},     // 0.0571 ms, 80.4 %
  {Op::d2y, 1, 1, M, Type::any, "vec", R"({"block": "32x16x1"})"},    // 0.3546 ms, 100.6 %
  {Op::d2y, 2, 5, M, Type::any, "vec", R"({"block": "16x16x1"})"},    // 0.3608 ms, 99.7 %
  {Op::d2y, 6, 8, M, Type::any, "vec", R"({"block": "32x8x1"})"},     // 0.4124 ms, 87.7 %
  {Op::d2y, 1, 1, L, Type::any, "vec", R"({"block": "64x4x1"})"},     // 2.8461 ms, 100.6 %
  {Op::d2y, 2, 5, L, Type::any, "vec", R"({"block": "16x16x1"})"},    // 2.8940 ms, 99.2 %
  {Op::d2y, 6, 8, L, Type::any, "vec", R"({"block": "32x8x1"})"},     // 3.2370 ms, 89.0 %
  // d2z: the vectorized sliding window; from 1024^3 (4 MB planes) the chunk-first order; beyond
  // them our ring march without its register floor, 4 planes ahead (issue 13: ring-floor/
  // ring-floor-z512.json, ring-floor-z1024.json and ring-floor-zwin1024.json, the window beside the
  // ring in the same call; R = 8 from ring/ring-z-nw512.json and ring-z1024.json, where the floor
  // measured the same). At 1024^3 chunks of 512 planes at R = 4, one chunk per column from R = 5:
  // each chunk seam's 2R planes are read twice, and with 4 MB planes the second read misses L2
  // (ring-znw1024.json: +0.8 to +2.5 points over 128).
  {Op::d2z, 1, 1, S, Type::any, "window_vec", R"({"block": "16x8x1", "nw": 4, "order": "xyz", "vec_bytes": 8})"},    // 0.0454 ms, 98.6 %
  {Op::d2z, 2, 5, S, Type::any, "window_vec", R"({"block": "32x4x1", "nw": 8, "order": "xyz", "vec_bytes": 16})"},   // 0.0494 ms, 91.7 %
  {Op::d2z, 6, 8, S, Type::any, "window_vec", R"({"block": "64x2x1", "nw": 8, "order": "xyz", "vec_bytes": 16})"},   // 0.0555 ms, 83.2 %
  {Op::d2z, 1, 1, M, Type::any, "window_vec", R"({"block": "32x8x1", "nw": 4, "order": "xyz", "vec_bytes": 16})"},   // 0.3592 ms, 99.3 %
  {Op::d2z, 2, 5, M, Type::any, "window_vec", R"({"block": "32x4x1", "nw": 4, "order": "xyz", "vec_bytes": 16})"},   // 0.3695 ms, 97.1 %
  {Op::d2z, 6, 8, M, Type::any, "ring", R"({"ahead": 4, "block": "32x8x1", "floor": 0, "nw": 128, "order": "xyz", "vec_bytes": 16})"},  // R = 6, 7, 8: 92.7, 92.1, 91.4 % (floor 1: 83.5, 92.2, 91.6 %)
  {Op::d2z, 1, 1, L, Type::any, "window_vec", R"({"block": "64x4x1", "nw": 4, "order": "xyz", "vec_bytes": 16})"},   // 3.1158 ms, 91.9 %
  {Op::d2z, 2, 3, L, Type::any, "window_vec", R"({"block": "64x4x1", "nw": 4, "order": "zxy", "vec_bytes": 16})"},   // R = 2, 3: 91.1, 90.7 %
  {Op::d2z, 4, 4, L, Type::any, "ring", R"({"ahead": 4, "block": "32x8x1", "floor": 0, "nw": 512, "order": "xyz", "vec_bytes": 16})"},  // 90.2 % (nw 128: 89.4 %, ring-znw1024.json); window_vec 88.8 %
  // R = 5..8: one chunk per column up to 1024 planes, no seam read twice (ring-floor/ring-z-1024.json:
  // 90.0, 90.0, 90.2, 90.1 % against 89.8, 89.6, 89.8, 89.8 % at nw 512 in the same call; nw 128:
  // 88.8, 88.2, 87.8, 87.4 %); window_vec at R = 5..7: 85.5, 77.2, 76.0 %
  {Op::d2z, 5, 8, L, Type::any, "ring", R"({"ahead": 4, "block": "32x8x1", "floor": 0, "nw": 1024, "order": "xyz", "vec_bytes": 16})"},
  {Op::d2z, 1, 8, Any, Type::any, "window", R"({"block": "32x4x1", "nw": 16})"},  // scalar: any alignment
  // d2xy: the fused plane tile.
  {Op::d2xy, 1, 1, S, Type::any, "fused", R"({"block": "16x8x1"})"},   // 0.0542 ms, 82.8 %
  {Op::d2xy, 2, 8, S, Type::any, "fused", R"({"block": "16x16x1"})"},  // R = 4: 0.0680 ms, 67.5 %; R = 8: 0.0823 ms, 57.5 %
  {Op::d2xy, 1, 1, M, Type::any, "fused", R"({"block": "64x4x1"})"},   // 0.4008 ms, 89.3 %
  {Op::d2xy, 2, 5, M, Type::any, "fused", R"({"block": "32x16x1"})"},  // 0.5305 ms, 68.2 %
  {Op::d2xy, 6, 8, M, Type::any, "fused", R"({"block": "32x8x1"})"},   // 0.6203 ms, 59.2 %
  {Op::d2xy, 1, 1, L, Type::any, "fused", R"({"block": "64x4x1"})"},   // 3.1908 ms, 89.8 %
  {Op::d2xy, 2, 5, L, Type::any, "fused", R"({"block": "32x16x1"})"},  // 4.1976 ms, 68.7 %
  {Op::d2xy, 6, 8, L, Type::any, "fused", R"({"block": "16x8x1"})"},   // 5.5018 ms, 52.7 %
  // d2xyz: our pipelined one-pass tile at R = 1 to 4 and 8 and for small planes (at R = 4 in
  // float with the z queue's lower half in shared memory, zq 1: bench/results/nvidia-h100/zq/),
  // our ring march between, without its register floor where that measured faster (issue 13: 512^3 from
  // bench/results/nvidia-h100/ring-floor/ring-floor512.json, 1024^3 from ring-floor1024.json and,
  // for R = 6, ring/ring-r1024-high.json; R = 7 and double at 1024^3 take 512^3's choice: a spill
  // is the instance's, whatever the size). At R = 2 and 3 the pipelined tile in small blocks
  // (bench/results/nvidia-h100/pipe-small/seis-pipe3*.json and seis-pipe4*.json), from 1024^2
  // planes in strips of a quarter of the L2 (strips 0); at R = 3 in float with the queue's lower
  // planes in shared memory (zq 1), and at R = 1 in double two rows a thread (my 2).
  {Op::d2xyz, 1, 1, S, Type::any, "pipelined", R"({"block": "16x16x1", "nw": 4})"},  // 0.0527 ms, 85.7 %
  {Op::d2xyz, 2, 5, S, Type::any, "pipelined", R"({"block": "8x16x1", "nw": 6})"},   // R = 2..5: 81.5, 72.7, 69.5, 58.4 % (nw 4: 80.0, 73.5, 68.4, 57.4 %; seis-pipe4-256.json)
  {Op::d2xyz, 6, 8, S, Type::any, "pipelined", R"({"block": "8x32x1", "nw": 8})"},   // 0.0988 ms, 49.3 %
  {Op::d2xyz, 1, 1, M, Type::f64, "pipelined", R"({"block": "32x4x1", "nw": 4, "my": 2})"},  // double, two rows a thread: 96.5 % (one: 92.2 %; my2/seis-my1.json)
  {Op::d2xyz, 1, 1, M, Type::any, "pipelined", R"({"block": "16x16x1", "nw": 4})"},  // 0.3790 ms, 94.5 %
  {Op::d2xyz, 2, 2, M, Type::any, "pipelined", R"({"block": "8x16x1", "nw": 8})"},   // 89.0 % (16 x 8: 88.4 %; the ring: 78.6 %)
  {Op::d2xyz, 3, 3, M, Type::f32, "pipelined", R"({"block": "8x16x1", "nw": 6, "zq": 1})"},  // 85.7 %, the queue's lower planes in shared memory, 56 registers (under the 64 cap without: 84.9 %, seis-pipe-cap.json; my2/seis-zq3-1024.json)
  {Op::d2xyz, 3, 3, M, Type::any, "pipelined", R"({"block": "16x8x1", "nw": 6})"},   // double: 82.9 % (capped: 81.9 %); float 79.6 %
  // From R = 5 in float and at R = 4 in double: our TMA tile ring (issue 13, eighth session:
  // bench/results/nvidia-h100/tma/, each beside the plan's previous choice in the same call or,
  // for the register caps (regs), beside the uncapped kernel: tma-caps*.json; R = 8 from
  // tma-radii.json and tma-1024.json). Double at R = 5..8 was not run and keeps the rows after.
  {Op::d2xyz, 4, 4, M, Type::f64, "tma", R"({"block": "16x16x1", "nw": 16, "ahead": 2, "regs": 80, "strips": 0})"},  // double: 77.0 % in 4 strips (uncapped: 76.2 %; the ring: 75.2 %)
  {Op::d2xyz, 5, 5, M, Type::f32, "tma", R"({"block": "16x16x1", "nw": 16, "ahead": 2, "regs": 80})"},  // 83.7 % (uncapped: 76.8 %; the ring: 74.3 %)
  // R = 6 (and R = 7, 8 until the eleventh session): chunks of 64 planes (tenth session,
  // tma-nw-r6/7/8.json, each beside nw 16 in the same call; the wave step's tma design gained the
  // same way, docs/wave.md): 2R seam planes a chunk that L2 no longer holds weigh a quarter as much.
  {Op::d2xyz, 6, 6, M, Type::f32, "tma", R"({"block": "8x16x1", "nw": 64, "ahead": 2, "regs": 96})"},   // 77.5 % (nw 16: 75.3 %; nw 16 ahead 1, before: 75.7 %; uncapped: 69.9 %; the ring: 61.6 %)
  // R = 7, 8: chunks of 128 (eleventh session, tma-long/tma-nw128-r67.json, -r8.json and again
  // tma-nw128b-r7.json, -r8.json: ahead of 64 in both calls, at both sizes).
  {Op::d2xyz, 7, 7, M, Type::f32, "tma", R"({"block": "16x16x1", "nw": 128, "ahead": 2, "regs": 96})"},  // 70.9 % twice (nw 64: 70.2 % twice, 69.9 % the tenth session; nw 16: 67.5 %; uncapped: 67.1 %; the ring: 65.5-66.1 %)
  {Op::d2xyz, 8, 8, M, Type::f32, "tma", R"({"block": "16x16x1", "nw": 128, "ahead": 2})"},  // 62.6, 62.1 % (nw 64: 62.1, 61.8 %; nw 16: 59.0 %; pipelined: 53.1 %)
  {Op::d2xyz, 4, 4, M, Type::f64, "ring", R"({"ahead": 2, "block": "16x16x1", "my": 1, "nw": 128, "order": "xyz", "vec_bytes": 16})"},  // double: 75.3 % (my 0, i.e. 2: 51.8 %; ring-floor-double.json)
  {Op::d2xyz, 4, 4, M, Type::any, "pipelined", R"({"block": "8x16x1", "nw": 8, "zq": 1})"},  // 82.2 %, the queue's R planes below the centre in shared memory (without: 70.5 %; the ring: 75.2 %; zq/seis-zq.json)
  {Op::d2xyz, 5, 5, M, Type::any, "ring", R"({"ahead": 2, "block": "16x16x1", "floor": 0, "my": 0, "nw": 128, "order": "xyz", "vec_bytes": 16})"},  // 73.9 % (floor 1: 64.9 %)
  {Op::d2xyz, 6, 6, M, Type::any, "ring", R"({"ahead": 2, "block": "16x16x1", "my": 1, "nw": 128, "order": "xyz", "vec_bytes": 8})"},   // 61.4 % (floor 0: 53.5 %)
  {Op::d2xyz, 7, 7, M, Type::any, "ring", R"({"ahead": 2, "block": "16x16x1", "my": 2, "nw": 128, "order": "xyz", "vec_bytes": 8})"},   // 65.4 % (my 1: 48.5 %)
  {Op::d2xyz, 8, 8, M, Type::any, "pipelined", R"({"block": "8x32x1", "nw": 16})"},  // 0.7068 ms, 53.1 %
  {Op::d2xyz, 1, 1, L, Type::f64, "pipelined", R"({"block": "32x4x1", "nw": 4, "strips": 0, "my": 2})"},  // double: 94.6 % (one row a thread: 91.5 %; my2/seis-my-1024.json)
  {Op::d2xyz, 1, 1, L, Type::any, "pipelined", R"({"block": "32x8x1", "nw": 4})"},   // 3.0632 ms, 93.6 %
  {Op::d2xyz, 2, 2, L, Type::any, "pipelined", R"({"block": "16x8x1", "nw": 6, "strips": 0})"},  // 84.8 % in 4 strips (whole: 73.3 %, 32 x 8 nw 8; the ring: 77.3 %); double through the plan: 85.0 % (plan-check2.json)
  {Op::d2xyz, 3, 3, L, Type::f32, "pipelined", R"({"block": "16x8x1", "nw": 6, "strips": 0, "zq": 1})"},  // 82.4 % (under the 64 cap without zq: 82.0 %, seis-pipe-cap-1024.json; my2/seis-zq3-1024.json)
  {Op::d2xyz, 3, 3, L, Type::any, "pipelined", R"({"block": "16x8x1", "nw": 6, "strips": 0})"},  // double through the plan: 81.9 % (plan-check2.json)
  {Op::d2xyz, 4, 4, L, Type::f64, "tma", R"({"block": "16x16x1", "nw": 16, "ahead": 2, "regs": 80, "strips": 0})"},  // double: 77.3 % in 16 strips (uncapped: 77.1 %; the ring: 69.2 %)
  {Op::d2xyz, 5, 5, L, Type::f32, "tma", R"({"block": "16x16x1", "nw": 16, "ahead": 2, "regs": 80, "strips": 0})"},  // 75.5 % (uncapped: 73.7 %; the ring: 69.5 %)
  // R = 6..8 at 1024^3: long chunks over whole planes (strips 1; eleventh session,
  // tma-long/tma-long1024-r67.json and -r48.json, every row beside nw 16 and 32, whole and in
  // automatic strips, in one call): a layer of 64 + 2R planes outgrows L2 either way, and the 2R
  // seam planes weigh a quarter as much as at nw 16; R = 7, 8 in chunks of 128 as at 512^3.
  {Op::d2xyz, 6, 6, L, Type::f32, "tma", R"({"block": "8x16x1", "nw": 64, "ahead": 2, "regs": 96, "strips": 1})"},  // 74.2 % (16 x 16: 73.5 %; nw 16 in strips, before: 70.1-70.6 %; the ring: 61.2 %)
  {Op::d2xyz, 7, 7, L, Type::f32, "tma", R"({"block": "16x16x1", "nw": 128, "ahead": 2, "regs": 96, "strips": 1})"},  // nw 128: 70.0, 70.2 % (nw 64: 68.8, 69.0 %; nw 32: 67.4 %; nw 16 in strips, before: 64.6 %; the ring: 60.6 %)
  {Op::d2xyz, 8, 8, L, Type::f32, "tma", R"({"block": "16x16x1", "nw": 128, "ahead": 2, "strips": 1})"},  // nw 128: 63.6, 63.3 % (nw 64: 63.2, 62.9 %; nw 32: 60.5 %; nw 16 in strips, before: 56.8 %; pipelined: 48.8 %)
  {Op::d2xyz, 4, 4, L, Type::f64, "ring", R"({"ahead": 2, "block": "16x16x1", "my": 1, "nw": 128, "order": "xyz", "vec_bytes": 16})"},  // double, as at 512^3 (not run at 1024^3): my 2 spills there
  {Op::d2xyz, 4, 4, L, Type::any, "pipelined", R"({"block": "8x16x1", "nw": 8, "strips": 0, "zq": 1})"},  // 76.3 % in strips (without zq: 69.7 %; the ring: 73.1 %; zq/seis-zq-1024.json)
  {Op::d2xyz, 5, 5, L, Type::any, "ring", R"({"ahead": 2, "block": "16x16x1", "floor": 0, "my": 0, "nw": 128, "order": "xyz", "vec_bytes": 16})"},  // 69.5 % (floor 1: 65.1 %)
  {Op::d2xyz, 6, 6, L, Type::any, "ring", R"({"ahead": 2, "block": "16x16x1", "my": 1, "nw": 128, "order": "xyz", "vec_bytes": 8})"},   // 4.7396 ms, 61.2 %
  {Op::d2xyz, 7, 7, L, Type::any, "ring", R"({"ahead": 2, "block": "16x16x1", "my": 2, "nw": 128, "order": "xyz", "vec_bytes": 8})"},   // as at 512^3 (not run at 1024^3), where my 1 measured 48.5 %
  {Op::d2xyz, 8, 8, L, Type::any, "pipelined", R"({"block": "8x32x1", "nw": 32})"},  // 6.0128 ms, 48.6 %
  {Op::d2xyz, 1, 8, Any, Type::any, "l1march", R"({"block": "32x4x1", "nw": 16, "my": 1, "vec_bytes": 8})"},
  // A layout no vector kernel can take (a view whose lines are not 8- or 16-byte aligned): the
  // seeds' baselines, one point per thread, which run on any layout.
  {Op::d2x, 1, 8, Any, Type::any, "baseline", R"({"block": "256x1x1"})"},
  {Op::d2y, 1, 8, Any, Type::any, "baseline", R"({"block": "256x1x1"})"},
  {Op::d2xy, 1, 8, Any, Type::any, "baseline", R"({"block": "256x1x1"})"},
  {Op::d2xyz, 1, 8, Any, Type::any, "baseline", R"({"block": "256x1x1"})"},
  // laplacian7 (radius 1 only): ours, k9 (issue 13: the seismic pipelined tile at R = 1), in both
  // types at every size class, from bench/results/nvidia-h100/lap-k9/. `strips` 0 cuts a plane
  // along y only where a chunk layer outgrows half the L2, so it leaves the small and medium
  // sizes whole. Figures: lap-k9-regs-*.json, regs=0 (the compiler's registers). Double at nw 4
  // against 8 in the same call: 92.0 / 86.0 % at 256^3, 94.4 / 90.2 at 512x256x256, 92.1 / 92.4
  // at 512^3, 91.3 / 91.1 at 1024^3.
  {Op::laplacian7, 1, 1, S, Type::f32, "k9", R"({"block": "32x4x1", "nw": 4, "order": "xyz", "strips": 0})"},  // 256^3 and 512x256x256: 88.4, 93.2 % (k8_shfl: 85.5 % at 256^3, tune-256.json)
  {Op::laplacian7, 1, 1, S, Type::f64, "k9", R"({"block": "32x4x1", "nw": 4, "order": "xyz", "strips": 0, "my": 2})"},  // 256^3: 93.4 % (one row a thread: 92.0 %; my2/lap-my-sizes.json)
  {Op::laplacian7, 1, 1, M, Type::f32, "k9", R"({"block": "32x4x1", "nw": 4, "order": "xyz", "strips": 0})"},  // 94.7-96.1 % from 512x512x256 to 768x512x512 (k8_shfl: 86.4 % at 512^3)
  {Op::laplacian7, 1, 1, M, Type::f64, "k9", R"({"block": "32x4x1", "nw": 4, "order": "xyz", "strips": 0, "my": 2})"},  // 96.2-97.6 % from 512x256x256 to 512^3 (one row a thread: 92.2-94.7 %; my2/lap-my-sizes.json)
  {Op::laplacian7, 1, 1, L, Type::f32, "k9", R"({"block": "32x4x1", "nw": 4, "order": "xyz", "strips": 0})"},  // 94.8-95.7 % from 768x768x512 to 1024^3; 89.1 % with 32 MB planes in 8 strips (79.5 % whole)
  {Op::laplacian7, 1, 1, L, Type::f64, "k9", R"({"block": "32x4x1", "nw": 4, "order": "xyz", "strips": 0, "my": 2})"},  // 94.7-97.4 % from 768x512x512 to 1024^3 (one row a thread: 91.3-93.1 %; my2/lap-my-sizes.json)
  // Where the tuned choice cannot run (a grid ny that m does not divide, an unaligned layout):
  // ours at the lap-k8/lap-nzc defaults, then the posts' k5 with m = 1, which runs on anything.
  {Op::laplacian7, 1, 1, Any, Type::any, "k8", R"({"ty": 16, "stages": 4, "nzc": 16})"},
  {Op::laplacian7, 1, 1, Any, Type::any, "k5", R"({"block": "256x1x1", "m": 1, "lb": 256})"},
};
// clang-format on

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

std::vector<std::pair<std::string, Params>> default_choices(const Problem& p) {
  const SizeClass c = size_class(p.interior(), p.dtype());
  const Class want = c == SizeClass::small    ? Class::small
                     : c == SizeClass::medium ? Class::medium
                                              : Class::large;
  const Type type = p.dtype() == DType::f32 ? Type::f32 : Type::f64;
  std::vector<std::pair<std::string, Params>> out;
  for (const Row& r : kRows)
    if (r.op == p.stencil.op && p.stencil.radius >= r.r_lo && p.stencil.radius <= r.r_hi &&
        (r.size == Class::any || r.size == want) && (r.type == Type::any || r.type == type))
      out.emplace_back(r.variant, Params::parse(r.params));
  return out;
}

std::vector<std::pair<std::string, Params>> all_default_choices(Op op) {
  std::vector<std::pair<std::string, Params>> out;
  for (const Row& r : kRows)
    if (r.op == op) out.emplace_back(r.variant, Params::parse(r.params));
  return out;
}

}  // namespace fdstencil
