// The ring marches (xyz_ring.cuh) as registry entries: d2xyz `ring` and d2z `ring`.
#include "cuda/seismic/launch.hpp"
#include "cuda/seismic/variants.hpp"
#include "cuda/seismic/ring_instances.cuh"

namespace fdstencil::cuda::seismic {

namespace {

// `ahead`: planes in flight beyond the one consumed; cp.async.wait_group takes up to 3 pending.
constexpr int kMaxAhead = 4;

// The instance for the parameters: with the register floor where `floor`, else without.
template <class T, bool XY>
const void* ring_kernel(int radius, int vec, int my, bool floor) {
  return floor ? ring_instance<T, XY, true>(radius, vec, my)
               : ring_unbounded_instance<T, XY>(radius, vec, my);
}

struct RingParams {
  Block b;
  int vec = 0, my = 1, nw = 0, ahead = 0;
  bool z_first = false, floor = true;
};

// Reads and checks the parameters; "" when they are good.
template <bool XY>
std::string parse_ring(const Problem& p, const Params& params, RingParams& rp) {
  const int e = int(dtype_bytes(p.dtype()));
  const int bytes = params.value("vec_bytes", 16);
  if (bytes != 8 && bytes != 16) return "vec_bytes " + std::to_string(bytes) + " must be 8 or 16";
  rp.vec = bytes / e;
  // The copies are 16-byte granules, so the layout must keep lines 16-byte aligned even for 8-byte vectors.
  std::string why = common_cannot_run(p, params, true, 16 / e, rp.b, kRingThreads);
  if (!why.empty()) return why;
  // A tile row's last 16-byte copy starts before x = nx + R and may end up to 16 - e bytes past
  // it: on the far halo corner's row, past the field's last point.
  if (p.layout.tail_bytes() < 16 - e)
    return "reads up to " + std::to_string(16 - e) +
           " bytes past the field's last point (its copies are 16-byte granules), and this layout has " +
           std::to_string(p.layout.tail_bytes()) + " readable there";
  const int R = p.stencil.radius;
  // my 0 (the default): two lines per thread where their queues fit, else one.
  rp.my = XY ? params.value("my", 0) : 1;
  if (rp.my == 0) rp.my = queue_fits(R, rp.vec, 2, e) ? 2 : 1;
  if (rp.my != 1 && rp.my != 2)
    return "my " + std::to_string(rp.my) +
           " must be 1 or 2 (lines per thread), or 0 (2 where the queue fits)";
  if (!queue_fits(R, rp.vec, rp.my, e))
    return "vec_bytes " + std::to_string(bytes) + " with my " + std::to_string(rp.my) + " at R " +
           std::to_string(R) + ": a z queue of " + std::to_string((2 * R + 1) * rp.vec * rp.my * e / 4) +
           " registers exceeds " + std::to_string(kRingQueueRegisters) + " (use vec_bytes 8 or my 1)";
  if (rp.b.x * bytes % 16 != 0)
    return "block x " + std::to_string(rp.b.x) + " times vec_bytes " + std::to_string(bytes) +
           " must be a multiple of 16 bytes (the tile's rows are copied in 16-byte granules)";
  why = parse_nw(params, rp.nw);
  if (!why.empty()) return why;
  rp.ahead = params.value("ahead", 2);
  if (rp.ahead < 1 || rp.ahead > kMaxAhead)
    return "ahead " + std::to_string(rp.ahead) + " must be 1.." + std::to_string(kMaxAhead) +
           " (planes in flight)";
  const std::string order = params.value("order", std::string("xyz"));
  if (order != "xyz" && order != "zxy")
    return "order '" + order + "' must be xyz (z chunks last) or zxy (z chunks first)";
  rp.z_first = order == "zxy";
  const int floor = params.value("floor", 1);
  if (floor != 0 && floor != 1)
    return "floor " + std::to_string(floor) +
           " must be 1 (registers capped so 2-4 blocks fit an SM) or 0 (uncapped)";
  rp.floor = floor == 1;
  const size_t smem = ring_bytes(rp.b.x * rp.vec, rp.b.y * rp.my, R, XY, rp.ahead, e);
  if (smem > kMaxSmemPerBlock)
    return "a ring of " + std::to_string(ring_stages(R, rp.ahead)) + " plane tiles takes " +
           std::to_string(smem) + " bytes of shared memory (block " + params.value("block", std::string()) +
           ", R " + std::to_string(R) + "), above 227 KB";
  const dim3 g = march_grid(p, Block{rp.b.x, rp.b.y * rp.my, 1}, rp.vec, rp.nw);
  return grid_cannot_run(rp.z_first ? dim3(g.z, g.x, g.y) : g);
}

template <bool XY>
std::string ring_cannot_run(const Problem& p, const Params& params) {
  RingParams rp;
  return parse_ring<XY>(p, params, rp);
}

template <class T, bool XY>
std::vector<Launch> plan_ring(const Problem& p, const Params& params) {
  RingParams rp;
  parse_ring<XY>(p, params, rp);
  Launch l;
  l.kernel = ring_kernel<T, XY>(p.stencil.radius, rp.vec, rp.my, rp.floor);
  l.block = dim3(rp.b.x, rp.b.y, 1);
  l.nw = rp.nw;
  l.ahead = rp.ahead;
  l.grid = march_grid(p, Block{rp.b.x, rp.b.y * rp.my, 1}, rp.vec, rp.nw);
  if (rp.z_first) {
    l.z_first = true;
    l.grid = dim3(l.grid.z, l.grid.x, l.grid.y);
  }
  l.smem = ring_bytes(rp.b.x * rp.vec, rp.b.y * rp.my, p.stencil.radius, XY, rp.ahead, int(sizeof(T)));
  return {l};
}

}  // namespace

std::vector<Variant> ring_variants() {
  // Defaults and spaces from the H100 sweeps at 512^3 and 1024^3 (bench/results/nvidia-h100/ring/,
  // docs/seismic.md "The ring march"): 16x16 threads, nw 64-128 and ahead 2 won for d2xyz at every
  // R; order zxy never won. d2z's defaults are its R = 8 best (ahead 4), the radius where the
  // ring is the fastest d2z; at R <= 4 ahead 2 was 1-4 points better. floor: with the register
  // floor some instances spill and others gain occupancy, so neither wins everywhere
  // (ring-floor/, docs/seismic.md); the plan's defaults table picks it per radius.
  const Params xyz_space = {{"block", {"16x16x1", "8x32x1", "16x8x1", "8x16x1", "32x8x1"}},
                            {"nw", {32, 64, 128}},
                            {"my", {0, 1}},
                            {"vec_bytes", {16, 8}},
                            {"ahead", {2, 3}},
                            {"order", {"xyz", "zxy"}},
                            {"floor", {1, 0}}};
  const Params z_space = {{"block", {"32x8x1", "32x4x1", "16x8x1", "64x4x1"}},
                          {"nw", {32, 64, 128}},
                          {"vec_bytes", {16, 8}},
                          {"ahead", {2, 3, 4}},
                          {"order", {"xyz", "zxy"}},
                          {"floor", {1, 0}}};
  return {
      make_variant(
          Op::d2z, "ring",
          "ours: z-march fed by cp.async into a ring of R+ahead+1 planes in shared memory, queue in "
          "registers",
          {{"block", "32x8x1"}, {"nw", 128}, {"vec_bytes", 16}, {"ahead", 4}, {"order", "xyz"}, {"floor", 1}},
          z_space, ring_cannot_run<false>, plan_ring<float, false>, plan_ring<double, false>),
      make_variant(Op::d2xyz, "ring",
                   "ours: z-march over a ring of plane tiles filled by cp.async ahead, z queue fed from the "
                   "ring, V x my outputs per thread",
                   {{"block", "16x16x1"},
                    {"nw", 128},
                    {"my", 0},
                    {"vec_bytes", 16},
                    {"ahead", 2},
                    {"order", "xyz"},
                    {"floor", 1}},
                   xyz_space, ring_cannot_run<true>, plan_ring<float, true>, plan_ring<double, true>),
  };
}

}  // namespace fdstencil::cuda::seismic
