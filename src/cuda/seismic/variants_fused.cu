// The fused families as registry entries: d2xy in one pass (seismic part 3, and ours from L1), d2xyz in one pass
// the seed's way and ours (software-pipelined), and the multi-pass d2xyz pipelines the posts
// only estimated: x + y + z (three passes) and xy + z (two passes), each pass adding into the
// output of the last.
#include "cuda/seismic/launch.hpp"
#include "cuda/seismic/strips.hpp"
#include "cuda/seismic/variants.hpp"
#include "cuda/seismic/x_window.cuh"
#include "cuda/seismic/xy_fused.cuh"
#include "cuda/seismic/xy_l1.cuh"
#include "cuda/seismic/xyz_l1march.cuh"
#include "cuda/seismic/xyz_onepass.cuh"
#include "cuda/seismic/xyz_pipelined.cuh"
#include "cuda/seismic/xyz_pipelined_rows.cuh"
#include "cuda/seismic/y_smem.cuh"
#include "cuda/seismic/z_window.cuh"

namespace fdstencil::cuda::seismic {

namespace {

enum class Fused { xy, onepass, pipelined };

// pipelined's `regs` 64: the march compiled under 64 registers (xyz_pipelined's Blocks = 2), so 8
// blocks of 128 threads share an SM (0.5 occupancy) where R = 3's queue takes 73 (0.38). In float
// it fits without a spill and ran faster at 512^3 and 1024^3
// (pipelined-small-blocks/seis-pipe-cap*.json). Without `zq` only R = 3 has the instance: at
// R = 4 and 5 the cap spilled 40 and 72 bytes and lost. With `zq` every R has it. In double, R = 3
// takes 62 registers uncapped, and the cap (8 bytes of spill) lost a little.
inline constexpr int kPipelinedCap = 64;
inline constexpr int kCappedRadius = 3;
// pipelined's `zq`: how much of the z queue lives in shared memory (xyz_pipelined's ZQ): 0 none,
// 1 the R planes below the centre, 2 all but the newest (2R). Instances from R = 2 for 1 and from
// R = 4 for 2; below those the queue already fits the registers of 8 blocks.
inline constexpr int kMinZqHalfRadius = 2;
inline constexpr int kMinZqAllRadius = 4;
// pipelined's `my` 2 (two rows a thread: xyz_pipelined_rows), with `zq` 0 or 1 and no register
// cap, up to R = 4: there the two queues already take 125-128 registers (ptxas, sm_90, float),
// and under the cap of 64 they spilled 112-272 bytes at R = 2..4.
inline constexpr int kMaxRadiusPipelinedMy2 = 4;

size_t fused_smem(Fused f, const Problem& p, const Block& b, int zq = 0, int my = 1) {
  const size_t tile = tile_bytes(b.x, my * b.y, p.stencil.radius, int(dtype_bytes(p.dtype())));
  // The pipelined kernel double-buffers, and its ring holds zq x R queue planes of one 16-byte
  // vector a thread and row (`my` rows a thread).
  const size_t ring = size_t(zq) * p.stencil.radius * b.x * b.y * my * 16;
  return f == Fused::pipelined ? 2 * tile + ring : tile;
}

template <class T, Fused F>
std::vector<Launch> plan_fused(const Problem& p, const Params& params) {
  constexpr int V = kVec16<T>;
  Block b;
  parse_block(params, b);
  Launch l;
  const bool capped = F == Fused::pipelined && params.value("regs", 0) == kPipelinedCap;
  const int zq = F == Fused::pipelined ? params.value("zq", 0) : 0;
  const int my = F == Fused::pipelined ? params.value("my", 1) : 1;
  l.kernel = pick_radius(p.stencil.radius, [capped, zq, my](auto r) -> const void* {
    constexpr int R = decltype(r)::value;
    if constexpr (F == Fused::xy) return reinterpret_cast<const void*>(xy_fused<T, R, V>);
    if constexpr (F == Fused::onepass) return reinterpret_cast<const void*>(xyz_onepass<T, R, V>);
    if (my == 2) {  // no instance (nullptr) where cannot_run refuses: never my 1's kernel on my 2's grid
      if constexpr (R <= kMaxRadiusPipelinedMy2) {
        if (capped || zq == 2) return nullptr;
        if (zq == 1) {
          if constexpr (R >= kMinZqHalfRadius)
            return reinterpret_cast<const void*>(xyz_pipelined_rows<T, R, V, 0, R, 2>);
          return nullptr;
        }
        return reinterpret_cast<const void*>(xyz_pipelined_rows<T, R, V, 0, 0, 2>);
      }
      return nullptr;
    }
    if constexpr (R >= kMinZqHalfRadius) {
      if (zq == 1 && capped) return reinterpret_cast<const void*>(xyz_pipelined<T, R, V, 2, R>);
      if (zq == 1) return reinterpret_cast<const void*>(xyz_pipelined<T, R, V, 0, R>);
    }
    if constexpr (R >= kMinZqAllRadius) {
      if (zq == 2 && capped) return reinterpret_cast<const void*>(xyz_pipelined<T, R, V, 2, 2 * R>);
      if (zq == 2) return reinterpret_cast<const void*>(xyz_pipelined<T, R, V, 0, 2 * R>);
    }
    if constexpr (R == kCappedRadius)
      if (capped) return reinterpret_cast<const void*>(xyz_pipelined<T, R, V, 2>);
    return reinterpret_cast<const void*>(xyz_pipelined<T, R, V>);
  });
  l.block = dim3(b.x, b.y, 1);
  l.smem = fused_smem(F, p, b, zq, my);
  if (F == Fused::xy) {
    l.grid = plane_grid(p, b, V);
    return {l};
  }
  parse_nw(params, l.nw);
  if (F == Fused::pipelined) return strip_launches(p, params, l, V, kPipelinedL2Share, my);
  l.grid = march_grid(p, b, V, l.nw);
  return {l};
}

template <Fused F>
std::string fused_cannot_run(const Problem& p, const Params& params) {
  Block b;
  std::string why = common_cannot_run(p, params, true, int(16 / dtype_bytes(p.dtype())), b,
                                      F == Fused::xy ? 1024 : kMarchThreads);
  if (!why.empty()) return why;
  const int zq = F == Fused::pipelined ? params.value("zq", 0) : 0;
  const int R = p.stencil.radius;
  if (zq < 0 || zq > 2)
    return "zq " + std::to_string(zq) + " must be 0, 1 or 2 (none, R or 2R queue planes in shared memory)";
  if (zq == 1 && R < kMinZqHalfRadius)
    return "zq 1 is compiled from R = 2 (at R = 1 the queue is 3 registers)";
  if (zq == 2 && R < kMinZqAllRadius)
    return "zq 2 is compiled from R = 4 (below it zq 1 already fits 64 registers)";
  const int my = F == Fused::pipelined ? params.value("my", 1) : 1;
  if (my != 1 && my != 2) return "my " + std::to_string(my) + " must be 1 or 2 (rows a thread marches)";
  if (my == 2) {
    if (R > kMaxRadiusPipelinedMy2)
      return "my 2 is compiled up to R = 4 (there its two queues take 128 registers)";
    if (zq == 2)
      return "my 2 is compiled with zq 0 or 1 (zq 2 reads more from shared memory than my 2 saves)";
    if (params.value("regs", 0) != 0)
      return "my 2 is compiled without the register cap (under 64 its queues spilled)";
  }
  const size_t smem = fused_smem(F, p, b, zq, my);
  if (smem > kMaxSmemPerBlock)
    return "shared memory of " + std::to_string(smem) + " bytes (block " +
           params.value("block", std::string()) + ", R " + std::to_string(p.stencil.radius) +
           ") exceeds 227 KB";
  if (F == Fused::xy) return grid_cannot_run(plane_grid(p, b, 1));
  int nw = 0;
  why = parse_nw(params, nw);
  if (!why.empty()) return why;
  if (F == Fused::pipelined) {
    const int regs = params.value("regs", 0);
    if (regs != 0 && regs != kPipelinedCap)
      return "regs " + std::to_string(regs) + " must be 0 (the compiler's choice) or 64 (a register cap)";
    if (regs == kPipelinedCap && zq == 0 && R != kCappedRadius)
      return "regs 64 with zq 0 is compiled for R = 3 only (below it the march takes 64 or fewer; above it "
             "the cap spilled and lost); with zq 1 or 2 it is compiled wherever they are";
    return strips_cannot_run(params, march_grid(p, b, 1, nw));
  }
  return grid_cannot_run(march_grid(p, b, 1, nw));
}

// ---- ours: the barrier-free L1 march -------------------------------------------------------------
// `my` lines per thread (register blocking along y): 2 halves the y loads per output, at twice
// the queue's registers, which fit the 128 a 512-thread block allows only up to R = 4.
constexpr int kMaxRadiusMy2 = 4;

template <class T, int V>
const void* l1march_kernel(int radius, int my) {
  return pick_radius(radius, [my](auto r) -> const void* {
    constexpr int R = decltype(r)::value;
    if (my == 1) return reinterpret_cast<const void*>(xyz_l1march<T, R, V, 1>);
    if constexpr (R <= kMaxRadiusMy2) return reinterpret_cast<const void*>(xyz_l1march<T, R, V, 2>);
    return nullptr;
  });
}

// ---- ours: d2xy from L1 ---------------------------------------------------------------------------
// xy_l1: the L1 march's thread without its z queue, so two lines a thread fit at every R.

template <class T, int V>
const void* xy_l1_kernel(int radius, int my) {
  return pick_radius(radius, [my](auto r) -> const void* {
    constexpr int R = decltype(r)::value;
    return my == 1 ? reinterpret_cast<const void*>(xy_l1<T, R, V, 1>)
                   : reinterpret_cast<const void*>(xy_l1<T, R, V, 2>);
  });
}

// ---- the launch of both L1 kernels ------------------------------------------------------------------
// `block`, `my` lines a thread, `nw` planes a thread, `vec_bytes` 16 (float4 / double2) or 8
// (float2 / double: narrower vectors halve the march's queue).
struct L1March {
  template <class T, int V>
  static const void* kernel(int radius, int my) {
    return l1march_kernel<T, V>(radius, my);
  }
};
struct XyL1 {
  template <class T, int V>
  static const void* kernel(int radius, int my) {
    return xy_l1_kernel<T, V>(radius, my);
  }
};

template <class T, class K>
std::vector<Launch> plan_l1(const Problem& p, const Params& params) {
  Block b;
  parse_block(params, b);
  const int my = params.value("my", 1);
  const int vec = params.value("vec_bytes", 16) / int(sizeof(T));
  Launch l;
  l.kernel = vec == kVec16<T> ? K::template kernel<T, kVec16<T>>(p.stencil.radius, my)
                              : K::template kernel<T, kVec16<T> / 2>(p.stencil.radius, my);
  l.block = dim3(b.x, b.y, 1);
  parse_nw(params, l.nw);
  l.grid = march_grid(p, Block{b.x, b.y * my, 1}, vec, l.nw);
  return {l};
}

// `queue`: the kernel holds a z queue, whose two lines a thread fit only up to kMaxRadiusMy2.
std::string l1_cannot_run(const Problem& p, const Params& params, bool queue) {
  const int bytes = params.value("vec_bytes", 16);
  if (bytes != 8 && bytes != 16) return "vec_bytes " + std::to_string(bytes) + " must be 8 or 16";
  Block b;
  std::string why = common_cannot_run(p, params, true, int(bytes / dtype_bytes(p.dtype())), b, kMarchThreads);
  if (!why.empty()) return why;
  const int my = params.value("my", 1);
  if (my != 1 && my != 2) return "my " + std::to_string(my) + " must be 1 or 2 (lines per thread)";
  if (queue && my == 2 && p.stencil.radius > kMaxRadiusMy2)
    return "my 2 needs R <= 4: a queue of 2 x (2R + 3) vectors exceeds the 128 registers per thread";
  int nw = 0;
  why = parse_nw(params, nw);
  return why.empty() ? grid_cannot_run(march_grid(p, Block{b.x, b.y * my, 1}, 1, nw)) : why;
}

std::string l1march_cannot_run(const Problem& p, const Params& params) {
  return l1_cannot_run(p, params, true);
}
std::string xy_l1_cannot_run(const Problem& p, const Params& params) {
  return l1_cannot_run(p, params, false);
}

// ---- multi-pass d2xyz ---------------------------------------------------------------------------
// Each pass is the family's best single-axis (or xy) kernel at its default block; the z pass
// takes `nw`. Passes after the first read the output back and add to it.

constexpr Block kPassX{64, 4, 1}, kPassY{32, 16, 1}, kPassZ{32, 4, 1}, kPassXY{16, 16, 1};

template <class T>
Launch z_pass(const Problem& p, int nw) {
  constexpr int V = kVec16<T>;
  Launch l;
  l.kernel = pick_radius(p.stencil.radius, [](auto r) {
    return reinterpret_cast<const void*>(z_window<T, decltype(r)::value, V, true>);
  });
  l.block = dim3(kPassZ.x, kPassZ.y, 1);
  l.grid = march_grid(p, kPassZ, V, nw);
  l.nw = nw;
  return l;
}

template <class T, bool Three>
std::vector<Launch> plan_passes(const Problem& p, const Params& params) {
  constexpr int V = kVec16<T>;
  const int R = p.stencil.radius;
  int nw = 0;
  parse_nw(params, nw);
  if constexpr (Three) {
    Launch x, y;
    x.kernel = pick_radius(
        R, [](auto r) { return reinterpret_cast<const void*>(x_window<T, decltype(r)::value, V>); });
    x.block = dim3(kPassX.x, kPassX.y, 1);
    x.grid = pointwise_grid(p, kPassX, V);
    y.kernel = pick_radius(
        R, [](auto r) { return reinterpret_cast<const void*>(y_smem<T, decltype(r)::value, V, true>); });
    y.block = dim3(kPassY.x, kPassY.y, 1);
    y.grid = plane_grid(p, kPassY, V);
    y.smem = y_smem_bytes(kPassY.x, kPassY.y, R);
    return {x, y, z_pass<T>(p, nw)};
  } else {
    Launch xy;
    xy.kernel = pick_radius(
        R, [](auto r) { return reinterpret_cast<const void*>(xy_fused<T, decltype(r)::value, V>); });
    xy.block = dim3(kPassXY.x, kPassXY.y, 1);
    xy.grid = plane_grid(p, kPassXY, V);
    xy.smem = tile_bytes(kPassXY.x, kPassXY.y, R, sizeof(T));
    return {xy, z_pass<T>(p, nw)};
  }
}

std::string passes_cannot_run(const Problem& p, const Params& params) {
  Block b;
  std::string why = common_cannot_run(p, params, false, int(16 / dtype_bytes(p.dtype())), b);
  if (!why.empty()) return why;
  int nw = 0;
  why = parse_nw(params, nw);
  if (!why.empty()) return why;
  for (const Block& pb : {kPassX, kPassY, kPassZ, kPassXY}) {
    why = grid_cannot_run(pointwise_grid(p, pb, 1));
    if (!why.empty()) return why;
  }
  return grid_cannot_run(plane_grid(p, kPassY, 1));
}

}  // namespace

std::vector<Variant> fused_variants() {
  const Params tile = {{"block", "16x16x1"}};
  // Defaults from the tuning sweeps on the H100 at 512^3 (bench/results/, docs/seismic.md).
  const Params seed_march = {{"block", "16x16x1"}, {"nw", 16}};
  // pipelined: a tall block; whole planes in the plain order unless asked (seismic/strips.hpp).
  const Params pipelined = {{"block", "8x32x1"}, {"nw", 16}, {"order", "xyz"}, {"strips", 1},
                            {"regs", 0},         {"zq", 0},  {"my", 1}};
  // The tuner's spaces: the shapes and lengths of the seis-shapes, seis-tune* and seis-best1024
  // sweeps that came within a few points of the best (docs/seismic.md).
  const Params tile_space = {{"block", {"16x16x1", "32x8x1", "32x16x1", "64x4x1", "16x8x1"}}};
  const Params march_space = {{"block", {"16x16x1", "32x8x1", "8x32x1", "16x32x1", "8x16x1"}},
                              {"nw", {4, 8, 16, 32}}};
  // pipelined: blocks of 128 threads (seis-pipe3: 16 x 8 and 8 x 16 at nw 6-8 led at R = 2 and
  // 3), the Laplacian pipelined's short wide ones, the tall one of R = 8, strips whole or auto, the register cap
  // (without zq R = 3 only; other radii refuse it without a launch), the z queue in shared memory
  // (zq: it led at R = 4, pipelined-z-queue-smem/seis-zq.json), and two rows a thread (my 2: it
  // led at R = 1 in double, two-rows-a-thread/seis-my1.json; refused above R = 4).
  const Params pipelined_space = {{"block", {"16x8x1", "8x16x1", "32x8x1", "32x4x1", "16x16x1", "8x32x1"}},
                                  {"nw", {4, 6, 8, 16, 32}},
                                  {"strips", {1, 0}},
                                  {"regs", {0, kPipelinedCap}},
                                  {"zq", {0, 1, 2}},
                                  {"my", {1, 2}}};
  const Params l1_space = {{"block", {"32x4x1", "16x16x1", "32x8x1", "64x2x1", "16x8x1"}},
                           {"nw", {8, 16, 32, 64}},
                           {"my", {1, 2}},
                           {"vec_bytes", {8, 16}}};
  const Params pass_space = {{"nw", {8, 16, 32}}};
  return {
      make_variant(Op::d2xy, "fused",
                   "seismic part 3: xy in one pass, plane tile in shared memory, streaming stores", tile,
                   tile_space, fused_cannot_run<Fused::xy>, plan_fused<float, Fused::xy>,
                   plan_fused<double, Fused::xy>),
      make_variant(Op::d2xy, "l1", "ours: barrier-free, y and x taps straight from L1, nw planes a thread",
                   {{"block", "32x4x1"}, {"nw", 16}, {"my", 1}, {"vec_bytes", 16}}, l1_space,
                   xy_l1_cannot_run, plan_l1<float, XyL1>, plan_l1<double, XyL1>),
      make_variant(
          Op::d2xyz, "onepass",
          "seismic part 3: one pass, x and y from a shared-memory tile, z sliding window of nw planes",
          seed_march, march_space, fused_cannot_run<Fused::onepass>, plan_fused<float, Fused::onepass>,
          plan_fused<double, Fused::onepass>),
      make_variant(
          Op::d2xyz, "pipelined",
          "ours: the one-pass kernel software-pipelined, halo of plane k+1 by cp.async while k computes",
          pipelined, pipelined_space, fused_cannot_run<Fused::pipelined>, plan_fused<float, Fused::pipelined>,
          plan_fused<double, Fused::pipelined>),
      make_variant(Op::d2xyz, "l1march",
                   "ours: barrier-free z-march, register queue for z, x and y taps straight from L1",
                   {{"block", "32x4x1"}, {"nw", 16}, {"my", 1}, {"vec_bytes", 8}}, l1_space,
                   l1march_cannot_run, plan_l1<float, L1March>, plan_l1<double, L1March>),
      make_variant(Op::d2xyz, "3pass", "three passes: x vec4, then y vec_smem and z window_vec adding into f",
                   {{"nw", 8}}, pass_space, passes_cannot_run, plan_passes<float, true>,
                   plan_passes<double, true>),
      make_variant(Op::d2xyz, "2pass", "two passes: xy fused, then z window_vec adding into f", {{"nw", 8}},
                   pass_space, passes_cannot_run, plan_passes<float, false>, plan_passes<double, false>),
  };
}

}  // namespace fdstencil::cuda::seismic
