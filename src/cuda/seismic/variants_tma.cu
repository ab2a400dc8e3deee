// d2xyz `tma` as a registry entry: the one-pass tile of `pipelined` fed by the tensor memory
// accelerator, a ring of whole plane tiles in shared memory (xyz_tma.cuh). Parameters: `block`,
// `nw`, `ahead` (tiles in flight beyond the newest one read), `regs` (a register cap), `strips`
// and `order` (seismic/strips.hpp).
#include <string>

#include "cuda/seismic/launch.hpp"
#include "cuda/seismic/strips.hpp"
#include "cuda/seismic/variants.hpp"
#include "cuda/seismic/xyz_tma.cuh"

namespace fdstencil::cuda::seismic {

namespace {

// `ahead` beyond 8 tiles holds more shared memory than any measured gain could repay: at 8 a
// 16 x 16 tile of floats at R = 4 already keeps 55 KB a block in flight.
constexpr int kMaxAhead = 8;
// `regs`: a register cap (xyz_tma_capped), compiled where ptxas fits it in float without a spill
// (sm_90; float registers without it in parentheses): 64 at R = 4 (73; from R = 5, in its first
// form, __launch_bounds__(512, 2), it spilled 56-252 bytes; R = 3 takes 64 without it, and a cap
// there was never measured, so none is compiled), 80 at R = 4 and 5 (73, 82; 72
// spilled at R = 5), 96 at R = 6 and 7 (98, 99; at R = 8 it spilled 16 bytes). In double ptxas -v
// reports 4 bytes of spill at 64 and R = 4 and 16 at 96 and R = 6; no default takes those. Only
// some cross an occupancy step; those that pay, measured in docs/seismic.md ("The TMA tile ring"):
// 80 at R = 5 (+6.9 points at 512^3 in 16 x 16 blocks) and 96 at R = 6 (+5.8 in 8 x 16).
struct TmaCap {
  int regs, r_lo, r_hi;
};
constexpr TmaCap kTmaCaps[] = {{64, 4, 4}, {80, 4, 5}, {96, 6, 7}};

template <class T, int R, int V, int Regs>
const void* capped_instance() {
  constexpr auto fits = [](const TmaCap& c) { return c.regs == Regs && R >= c.r_lo && R <= c.r_hi; };
  if constexpr (fits(kTmaCaps[0]) || fits(kTmaCaps[1]) || fits(kTmaCaps[2]))
    return reinterpret_cast<const void*>(xyz_tma_capped<T, R, V, Regs>);
  return nullptr;  // refused by tma_cannot_run
}

template <class T>
std::vector<Launch> plan_tma(const Problem& p, const Params& params) {
  constexpr int V = kVec16<T>;
  const int R = p.stencil.radius;
  Block b;
  parse_block(params, b);
  Launch l;
  const int regs = params.value("regs", 0);
  l.kernel = pick_radius(R, [regs](auto r) -> const void* {
    constexpr int RR = decltype(r)::value;
    switch (regs) {
      case 0: return reinterpret_cast<const void*>(xyz_tma<T, RR, V>);
      case 64: return capped_instance<T, RR, V, 64>();
      case 80: return capped_instance<T, RR, V, 80>();
      case 96: return capped_instance<T, RR, V, 96>();
      default: return nullptr;
    }
  });
  l.block = dim3(b.x, b.y, 1);
  l.ahead = params.value("ahead", 0);
  l.smem = tma_smem_bytes(b.x, b.y, R, int(sizeof(T)), l.ahead);
  const int pad = (R + V - 1) / V * V;  // kPad<R, V>, at run time
  l.tensor_box.pad = pad;
  l.tensor_box.box_x = unsigned(b.x * V + 2 * pad);
  l.tensor_box.box_y = unsigned(b.y + 2 * R);
  parse_nw(params, l.nw);
  return strip_launches(p, params, l, V, kPipelinedL2Share);
}

std::string tma_cannot_run(const Problem& p, const Params& params) {
  Block b;
  const int elem = int(dtype_bytes(p.dtype()));
  const int vec = 16 / elem;
  std::string why = common_cannot_run(p, params, true, vec, b, kMarchThreads);
  if (!why.empty()) return why;
  const int R = p.stencil.radius;
  const int pad = (R + vec - 1) / vec * vec;
  const std::string block = params.value("block", std::string());
  if (b.x * vec + 2 * pad > kMaxBoxEdge || b.y + 2 * R > kMaxBoxEdge)
    return "block " + block + " makes a tile of " + std::to_string(b.x * vec + 2 * pad) + " x " +
           std::to_string(b.y + 2 * R) + " elements; the copy engine moves boxes of at most 256 a side";
  const int regs = params.value("regs", 0);
  if (regs != 0) {
    const TmaCap* cap = nullptr;
    for (const TmaCap& c : kTmaCaps)
      if (c.regs == regs) cap = &c;
    if (cap == nullptr)
      return "regs " + std::to_string(regs) +
             " must be 0 (the compiler's choice) or a cap of 64, 80 or 96 registers";
    if (R < cap->r_lo || R > cap->r_hi) {
      const std::string radii =
          cap->r_lo == cap->r_hi ? "R = " + std::to_string(cap->r_lo)
                                 : "R = " + std::to_string(cap->r_lo) + " and " + std::to_string(cap->r_hi);
      return "regs " + std::to_string(regs) + " is compiled at " + radii +
             " only (elsewhere the compiler's choice is below it, the cap spilled, or it was not measured)";
    }
  }
  const int ahead = params.value("ahead", 0);
  if (ahead < 0 || ahead > kMaxAhead)
    return "ahead " + std::to_string(ahead) + " must be 0.." + std::to_string(kMaxAhead) +
           " (tiles in flight beyond the newest one read)";
  // No readable head or tail is needed: a box starts pad - R elements left of the x halo but never
  // below plane 0, R planes past the halo corner, and reads nothing past the map's extents (the
  // queue's first R planes come by the same guarded vector loads as pipelined's).
  const size_t smem = tma_smem_bytes(b.x, b.y, R, elem, ahead);
  if (smem > kMaxSmemPerBlock)
    return "shared memory of " + std::to_string(smem) + " bytes (" +
           std::to_string(tma_ring_tiles(R, ahead)) + " tiles, block " + block + ", R " + std::to_string(R) +
           ") exceeds 227 KB";
  int nw = 0;
  why = parse_nw(params, nw);
  if (!why.empty()) return why;
  return strips_cannot_run(params, march_grid(p, b, 1, nw));
}

}  // namespace

std::vector<Variant> tma_variants() {
  // First defaults: pipelined's R = 4 shape (8 x 16, nw 8), two tiles ahead; the plan's defaults
  // table names the measured choice per R and size class.
  const Params defaults = {{"block", "8x16x1"}, {"nw", 8},     {"ahead", 2},
                           {"regs", 0},         {"strips", 1}, {"order", "xyz"}};
  const Params space = {
      {"block", {"8x16x1", "16x8x1", "16x16x1", "32x8x1", "32x4x1", "8x32x1"}},
      // 64, 128: the defaults' chunk lengths from R = 6 (docs/seismic.md, "Chunks of 64 planes" and
      // "Chunks of 64 at 1024^3, over whole planes")
      {"nw", {4, 8, 16, 32, 64, 128}},
      {"ahead", {1, 2, 3, 4}},
      {"regs", {0, 64, 80, 96}},
      {"strips", {1, 0}}};
  return {make_variant(Op::d2xyz, "tma",
                       "ours: the one-pass tile fed by the tensor memory accelerator, a ring of plane tiles "
                       "in shared memory, nothing in flight in registers",
                       defaults, space, tma_cannot_run, plan_tma<float>, plan_tma<double>)};
}

}  // namespace fdstencil::cuda::seismic
