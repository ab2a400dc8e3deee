// The GPU state of an acoustic run: the fields, the CPML memory, the taps sorted into the step
// kernel's blocks, and the launch of acoustic_step for each radius and vector width.
#include "cuda/wave/acoustic.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <numeric>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cuda/common/check.hpp"
#include "cuda/common/dependent_launch.cuh"
#include "cuda/common/resources.hpp"
#include "cuda/common/tensor_map.hpp"
#include "fdstencil/device.hpp"
#include "cuda/wave/acoustic_layers.cuh"
#include "cuda/wave/for_radius.hpp"
#include "cuda/wave/acoustic_record.cuh"
#include "cuda/wave/acoustic_step.cuh"
#include "cuda/wave/acoustic_step_beside.cuh"
#include "cuda/wave/acoustic_resident.hpp"
#include "cuda/wave/acoustic_temporal.hpp"
#include "cuda/wave/device_array.hpp"
#include "fdstencil/error.hpp"

namespace fdstencil::cuda::wave {

namespace {

// The receivers' samples of u^n at step n (acoustic_record.cuh), one warp a receiver.
__global__ void __launch_bounds__(kRecordThreads) acoustic_record(RecordArgs a, int64_t n) {
  join_dependent_chain();
  const int r = int((blockIdx.x * blockDim.x + threadIdx.x) / 32);
  if (r >= a.nrec) return;  // a whole warp leaves together: the shuffles stay full
  record_receiver(a, r, int(threadIdx.x % 32), n);
}

// The default launch shape per radius, plane size and CPML (any layer or none): each row the
// fastest of its call's candidates on the H100 in float (issue 13; the tables, with the figures,
// are docs/wave.md's "Performance on the GPU", from bench/results/nvidia-h100/wave-split/,
// wave-tma/ and wave-rules/). Why each kind of row wins:
// - no CPML, planes of up to kTilePlanePoints: the tile's march at R = 1 and 2 (its two tiles hold
//   the z queue), tma from R = 4 (its ring keeps R + 1 + ahead planes in flight; without a tile
//   ahead the march waits for each plane);
// - larger planes: the tile's chunks of 8 planes re-read their 2R seam planes from DRAM, so the
//   l1 march in one kernel leads at R = 1 and 2, and tma takes longer chunks at R = 4;
// - R = 3: tma ties the l1 march within the run-to-run spread, and l1 stays;
// - with CPML layers the blocks that touch a layer decide: tma's boundary by the tile's march,
//   and 8x16 blocks, which put fewer interior points into boundary blocks, from R = 4;
// - split pays where the interior kernel keeps the registers it needs (the tile's interior blocks
//   drop from 114-164 registers to 60-127; the l1 march's interior kernel at R = 4 did not).
// 2D: rows of 64 threads, each block marching a few rows: 2-wide vectors in short chunks with the
// CPML in the march (shape_2d); where every march block is plain, their own shapes with layers
// (plain_shape_2d) and without (bare_shape_2d).
constexpr int64_t kTilePlanePoints = 512 * 512;
// Without CPML, planes of up to kTinyPlanePoints (steps of ~0.1 ms, where 16x16 tiles of 16 planes
// make only 2.6-3.9 rounds of the device's resident blocks at R = 4-8) have rows of their own.
// Above it, chunks of 64 planes two tiles ahead at R = 6..8 (at R = 4 and 5 above 512^2 only), so
// that a chunk's 2R seam planes, which the next chunk reads again long after, weigh a quarter as
// much as at nw 16. With CPML layers the chunks stay at 16: a chunk that touches a z layer runs the
// boundary march.
constexpr int64_t kTinyPlanePoints = 256 * 256;

// The l1 march's own shapes (the rows above that name it; R = 5..8 the shape R = 8 had before
// the tile), for the defaults and for "design": "l1" by hand.
// (3D; the 2D step's shapes are shape_2d's and its neighbours', below.)
KernelConfig l1_shape(int radius) {
  if (radius == 1) return {32, 8, 2, 16};
  if (radius == 2) return {16, 16, 2, 32};
  if (radius <= 4) return {32, 4, 4, 32};
  return {32, 4, 2, 32};
}

// The tile design's shape by hand where the table names none: R = 8's row before tma took it.
constexpr KernelConfig kTileShape{8, 16, kTileVec, 16, StepDesign::tile, 0, 1};

// The tma design's shapes: 16x16 (d2xyz tma's first shape at R = 5..8, src/plan/defaults.cpp; the
// table's R = 4, 7 and 8 without CPML) and 8x16 (R = 5, 6, and from R = 4 with CPML), nw 16, two
// tiles ahead, the boundary by the tile's march; default_for lengthens the chunks to 64 where the
// table says, and "design": "tma" by hand starts from them where the table names another design.
constexpr KernelConfig kTmaShape{16, 16, kTileVec, 16, StepDesign::tma, 0, 1, 2, StepDesign::tile};
constexpr KernelConfig kTmaNarrow{8, 16, kTileVec, 16, StepDesign::tma, 0, 1, 2, StepDesign::tile};

// The 2D step's shape for a radius and rows of nx points: 64x1 threads, vec 2, and chunks of a
// few rows, so that even a 1000^2 model makes thousands of blocks and the two CPML columns, whose
// blocks run the layer's arithmetic, hold few of each block's points. The chunk length, from the
// campaign wave-2d-chunks on the H100 (bench/results/nvidia-h100/campaigns/wave-2d-chunks.json,
// chunks of 1-16 rows at R = 2, 4, 8 on 1000^2, 2000^2 and 4000^2 models with a 20-point CPML): 2
// rows on rows of up to kShortRow points and 4 above at R <= 4 (a chunk re-reads 2R rows of its
// neighbours, from L2); 4, and 8 from kLongRow points, at R = 8, where the re-read rows weigh more.
// R = 5..7 take R = 8's, unmeasured. 128x1 threads, the old default of 32-row chunks, ran 1.3-3x
// slower there.
constexpr int64_t kShortRow = 1200, kLongRow = 3000;
KernelConfig shape_2d(int radius, int64_t nx) {
  const int nw = radius <= 4 ? (nx <= kShortRow ? 2 : 4) : (nx < kLongRow ? 4 : 8);
  return {64, 1, 2, nw};
}

// The 2D step's shape where every march block is plain (the CPML apart, its layers' points beside
// the march or after it): 64x1 threads of 4-wide vectors in chunks of 4 rows, from R = 5 of 16 on
// rows of more than kShortRow points. shape_2d's short chunks and 2-wide vectors were chosen when
// the blocks at the CPML columns computed the layers; without them, 4-wide vectors (half the x
// taps' loads a point) and longer chunks (fewer of the 2R rows a chunk reads again) lead. From the
// campaigns wave-2d-beside-shapes and wave-2d-beside-shapes-radius (bench/results/nvidia-h200/
// campaigns/: 32-256 threads, vec 2 and 4, chunks of 2-32 rows, R = 1, 2, 4, 8, 1000^2-4000^2
// with the 10-point layer; wave-2d-beside-short-rows repeated 1000^2 at R = 1 and 2, where chunks
// of 2 led at R = 1; wave-2d-apart-shapes under the CPML apart, a slab's placement). R = 3 takes
// R = 2's and 4's, R = 5..7 R = 8's, unmeasured. The figures: docs/wave.md, "2D launches where
// every march block is plain".
KernelConfig plain_shape_2d(int radius, int64_t nx) {
  if (radius == 1 && nx <= kShortRow) return {64, 1, 4, 2};  // wave-2d-beside-short-rows
  return {64, 1, 4, radius >= 5 && nx > kShortRow ? 16 : 4};
}

// Without layers (the march plain, no layers' kernel beside it), from the campaign
// wave-2d-plain-shapes (bench/results/nvidia-h200/campaigns/: 64x1 threads, vec 2 and 4, chunks of
// 2-16 rows, R = 1, 2, 4, 8, 1000^2-4000^2): 4-wide vectors in chunks of 4 rows on rows of up to
// kShortRow points; above, at R <= 4 2-wide vectors in chunks of 16 rows (8 from kLongRow
// points), from R = 5 4-wide in chunks of 8: at every point measured, near the fastest of the eight
// launches, where shape_2d's fell behind (docs/wave.md, the same section).
KernelConfig bare_shape_2d(int radius, int64_t nx) {
  if (nx <= kShortRow) return {64, 1, 4, 4};
  if (radius <= 4) return {64, 1, 2, nx < kLongRow ? 16 : 8};
  return {64, 1, 4, 8};
}

// With CPML layers on small planes: the l1 march in one kernel, 2-wide vectors in short chunks
// (campaigns wave-3d-small-launch, wave-3d-small-l1 and wave-3d-layer-defaults,
// bench/results/nvidia-h100/campaigns/). There the blocks that touch a layer take most of the step
// (216^3 + 20 points at R = 4: the tile's boundary march 268 us a step, tma's interior 65 us), and
// short chunks of narrow blocks put fewer interior points into them and more blocks in flight.
// It won on the H100 (1000 steps) at R = 2 on every plane measured, up to 492^2; at R = 4 up to
// 256^2 (256^2 with a 20-point layer, the others with 10), not at 364^2; at R = 8 on 148^2, not
// on 236^2 in 32x4 blocks, but in 16x8 blocks (below) it led tma there (wave-3d-narrow-blocks
// against wave-3d-layers-32x4), so from R = 5 the rule takes planes of up to 240^2. R = 3 takes
// R = 2's and 4's rule, R = 5..7 R = 8's, unmeasured; R = 1 keeps its tile.
// The block, 16x8 threads (32 points along x): 64-point columns leave most lanes of a row's last
// column idle and put whole columns of interior points into the x layers' blocks (Nsight Compute,
// docs/wave.md "Narrower blocks for the layers' l1 march"); wave-3d-narrow-blocks measured 16x8
// ahead of 32x4, 16x4, 8x16 and 8x8 at 128^3 and 216^3, R = 2, 4 and 8. Chunks of 4 planes on
// planes of up to kLayerShortChunkPlane and at R = 2 (4 led 8 on 148^2 at every radius, and on
// 236^2 at R = 2), 8 above it (236^2 at R = 4 and 8).
constexpr int64_t kLayerShortChunkPlane = 192 * 192;  // between 148^2 and 236^2
KernelConfig layer_l1_shape(int radius, int64_t plane_points) {
  return {16, 8, 2, radius <= 2 || plane_points <= kLayerShortChunkPlane ? 4 : 8};
}
constexpr int64_t kLayerL1PlaneWide = 240 * 240;  // R >= 5: 236^2 measured, 256^2 not
bool layer_l1(int radius, int64_t plane_points) {
  if (radius == 2) return plane_points <= kTilePlanePoints;
  if (radius == 3 || radius == 4) return plane_points <= kTinyPlanePoints;
  return radius >= 5 && plane_points <= kLayerL1PlaneWide;
}

// The table's row before the layers' small-plane rule: each design by hand on those planes starts
// from it (design_default).
KernelConfig table_row(int dim, int radius, int64_t plane_points, bool layers, bool slabs) {
  const bool small_plane = plane_points <= kTilePlanePoints, tiny_plane = plane_points <= kTinyPlanePoints;
  if (dim == 2) return layers ? shape_2d(radius, plane_points) : bare_shape_2d(radius, plane_points);
  if (radius == 1)
    return small_plane ? KernelConfig{8, 16, kTileVec, 8, StepDesign::tile, 0, 1} : l1_shape(1);
  if (radius == 2)
    return small_plane ? KernelConfig{8, 16, kTileVec, 8, StepDesign::tile, 1, 1} : l1_shape(2);
  if (radius == 3) return l1_shape(3);
  if (layers) return kTmaNarrow;
  if (tiny_plane) {
    if (radius == 4) return l1_shape(4);
    if (radius == 5) return {8, 16, kTileVec, 8, StepDesign::tma, 0, 1, 2, StepDesign::tile};
    if (radius == 6) return {8, 16, kTileVec, 8, StepDesign::tile, 0, 1};
    return kTmaShape;
  }
  // Chunks of 64 planes, two tiles ahead: from R = 6 on every plane above 256^2, at R = 4 and 5
  // on those above 512^2 (on 512^2 planes nw 16 led there). Not in a slab of a split run: its
  // faces are whole chunks, updated before the halo exchange that the inner chunks hide
  // (launch_split), and chunks of 64 would leave few or no inner planes to hide it behind.
  const bool long_chunks = !slabs && (radius >= 6 || !small_plane);
  KernelConfig c = radius == 5 || radius == 6 ? kTmaNarrow : kTmaShape;
  if (long_chunks) c.nw = 64;
  return c;
}

// Steps a CUDA graph holds by default (KernelConfig::graph): 32 led 0, 8 and 128 at every radius
// and model of the campaign wave-graphs (bench/results/nvidia-h100/campaigns/: 2D 1000^2 and
// 2000^2, 3D 128^3 and 216^3, R = 2, 4, 8); 128 lost in 2D, where a longer graph cuts the run
// into fewer, longer blocks. Every 2D model and 3D planes of up to kTilePlanePoints; larger 3D
// steps take a millisecond or more, where a launch's few microseconds are lost in the noise and
// the time loop's blocks of graphs would hold a stop for seconds.
constexpr int kGraphSteps = 32;

// The CPML apart from the march (KernelConfig::cpml_apart), from the campaigns wave-3d-cpml-apart-shapes
// and wave-2d-cpml-apart (bench/results/nvidia-h200/campaigns/; the march computing the CPML
// against the march without it and the layers' kernel, 10-point layers on 128^3-600^3 models and
// 20 on 216^3, R = 2, 4, 8). It led wherever the layers hold at most kApartShare of the points, and
// at R = 8 with more (216^3 with 20 points, two fifths of its points in layers). In 2D every row
// length takes it, its layers' points computed beside the march (beside_leads). At R = 1 it led at
// every share too (wave-2d-r1-cpml, wave-3d-r1-cpml: 128^3-472^3 with 10 points and 216^3 with 20,
// in 3D the tile's shape leading tma's; 1000^2-4000^2 in 2D, beside). R = 3 takes R = 2's and 4's
// rule, R = 5..7 R = 4's and 8's, unmeasured.
constexpr double kApartShare = 0.375;  // led at 0.353 (128^3 + 10), lost at R = 2, 4 at 0.399 (216^3 + 20)
bool apart_leads(int dim, int radius, double layer_share) {
  if (layer_share <= 0) return false;
  if (dim == 2) return true;
  return radius == 1 || radius >= 6 || layer_share <= kApartShare;
}
// The layers' points beside the march (KernelConfig::cpml_beside), from the campaigns
// wave-2d-cpml-beside and wave-3d-cpml-beside (bench/results/nvidia-h200/campaigns/): in 2D it led
// the CPML apart after the march and the march itself on 1000^2 to 4000^2 at R = 2, 4, 8 (the
// layers, a few per cent of the points, no longer wait for the march, nor it for them); in 3D,
// whose layers hold 12-40 % of the points, computing them whole lost to adding their terms after
// the march everywhere measured. A slab adds them after its march: the same bits.
bool beside_leads(int dim, bool slabs) { return dim == 2 && !slabs; }
// KernelConfig::side's default, from the campaign wave-2d-side (bench/results/nvidia-h200/campaigns/:
// 1000^2-2800^2 models, 10- and 20-point layers, R = 1, 2, 4, 8, sides 0, 1, 2 and 4). What led
// was a count of side threads per row point: about kSideThreads at R <= 2 and at R >= 5 on rows of
// up to kShortRow points, half that at R = 3 and 4 (a 10-point layer, 4 x 10 layer points a row
// point, then takes 1 point a thread, or 2; a 20-point one 2, or 4). The one kernel did not lead
// at R >= 5 on longer rows, nor on rows above kLongRow (4000^2, R = 4), which keep the layers'
// kernel on a second stream. Rectangular models take a square one's rule, unmeasured.
constexpr double kSideThreads = 40;
int side_points_2d(int radius, int64_t nx, double layer_share) {
  if (nx > kLongRow || (radius >= 5 && nx > kShortRow)) return 0;
  const double per_row = layer_share * double(nx);  // a square model's layer points per row point
  const double threads = radius == 3 || radius == 4 ? kSideThreads / 2 : kSideThreads;
  return std::clamp(int(std::lround(per_row / threads)), 1, kMaxSidePoints);
}

// KernelConfig::pdl's default, from the campaign wave-2d-pdl (bench/results/nvidia-h200/campaigns/:
// 1000^2-2000^2 with the default 10-point layer, its points in the march's launch, and without
// layers; R = 1, 2, 4, 8): programmatic launches led from R = 4 and at R = 1 with the layers in the
// march's launch, and lost at R = 2 and at R = 1 without layers, why not established. R = 3 takes
// R = 4's rule. 3D launches plainly: even at 128^3 and 216^3, behind at R = 8 on 344^3 and 472^3
// (tma; wave-3d-layers-pdl.json against the plain launches of wave-3d-layers-cpml-apart.json).
bool pdl_leads(int dim, int radius, int side) {
  return dim == 2 && (radius >= 3 || (radius == 1 && side > 0));
}
// The march's shape under the CPML apart: the tile 8x16 in chunks of 8, with its z ring at R = 2..5
// (it led at R = 2 on every plane to 620^2, at R = 4 on planes to 492^2; R = 1, which has no ring,
// on every plane to 740^2); from R = 6 without the ring, which led on planes to
// 276^2; larger planes tma 16x16 (at R = 4 on 620^2, at R = 8 on 492^2 in chunks of 16, on 620^2
// of 64, kTilePlanePoints lying between).
constexpr int64_t kApartTilePlane = 300 * 300;  // R >= 6: the tile led on 276^2, tma on 492^2
KernelConfig apart_shape(int dim, int radius, int64_t plane_points, bool slabs) {
  KernelConfig c = dim == 2 ? plain_shape_2d(radius, plane_points)
                            : KernelConfig{8, 16, kTileVec, 8, StepDesign::tile, 1, 1};
  if (dim == 3 && (radius == 1 || radius >= 6)) c.zq = 0;  // the ring is compiled from R = 2
  const bool tile =
      radius <= 3 || (radius <= 5 ? plane_points <= kTilePlanePoints : plane_points <= kApartTilePlane);
  if (dim == 3 && !tile) {
    c = kTmaShape;
    if (radius >= 6 && plane_points > kTilePlanePoints && !slabs) c.nw = 64;  // table_row's long_chunks
  }
  c.cpml_apart = true;
  return c;
}

// `apart`: the CPML's placement given ("cpml" by hand: each placement starts from its own row), else
// the rule's. A slab of a split run places its CPML as one GPU would (its layers' terms after its
// march where one GPU computes them beside it: the same bits), so that a split run gives one
// GPU's bits.
KernelConfig default_for(int dim, int radius, int64_t plane_points, double layer_share, bool slabs,
                         std::optional<bool> apart = std::nullopt) {
  const bool layers = layer_share > 0;
  const bool use_apart = layers && apart.value_or(apart_leads(dim, radius, layer_share));
  KernelConfig c = use_apart ? apart_shape(dim, radius, plane_points, slabs)
                   : dim == 3 && layers && layer_l1(radius, plane_points)
                       ? layer_l1_shape(radius, plane_points)
                       : table_row(dim, radius, plane_points, layers, slabs);
  c.cpml_apart = use_apart || apart.value_or(false);  // apart without layers: the layers' kernel has none
  c.cpml_beside = use_apart && beside_leads(dim, slabs);
  c.side = c.cpml_beside && dim == 2 ? side_points_2d(radius, plane_points, layer_share) : 0;
  c.pdl = pdl_leads(dim, radius, c.side) ? 1 : 0;
  if (!slabs && (dim == 2 || plane_points <= kTilePlanePoints)) c.graph = kGraphSteps;
  return c;
}

// `ahead` as d2xyz tma's (seismic/variants_tma.cu kMaxAhead): beyond 8 tiles the ring holds more
// shared memory than a gain measured there could repay.
constexpr int kMaxAhead = 8;

const char* design_name(StepDesign d) {
  return d == StepDesign::tile ? "tile" : d == StepDesign::tma ? "tma" : "l1";
}

int64_t tap_key_host(const acoustic::Tap& t, const acoustic::Setup<float>& s) {
  return (int64_t(t.k) * s.ny + t.j) * s.nx + t.i;
}

// A step's two kernels: the interior box's (no CPML compiled) and the boundary blocks'
// (acoustic_step.cuh).
struct StepKernels {
  const void* interior = nullptr;
  const void* boundary = nullptr;
};

template <int R, int V>
StepKernels kernels_for(bool y) {
  if (y)
    return {reinterpret_cast<const void*>(acoustic_step<R, V, true, true>),
            reinterpret_cast<const void*>(acoustic_step<R, V, true, false>)};
  if constexpr (rows_lead(R))
    return {reinterpret_cast<const void*>(acoustic_step_rows<R, V>),
            reinterpret_cast<const void*>(acoustic_step<R, V, false, false>)};
  else
    return {reinterpret_cast<const void*>(acoustic_step<R, V, false, true>),
            reinterpret_cast<const void*>(acoustic_step<R, V, false, false>)};
}

// The tma design's kernels: the ring for the interior box, the l1 march (4-wide) or the tile's
// (zq 0) for the rest.
// With the CPML apart, the blocks outside the ring's box (those a block's lanes overhang) take the
// l1 march compiled without the CPML.
template <int R>
StepKernels tma_kernels_for(StepDesign boundary, bool cpml_apart) {
  const void* ring = reinterpret_cast<const void*>(acoustic_step_tma<R>);
  if (cpml_apart)
    return {ring, reinterpret_cast<const void*>(acoustic_step<R, kTileVec, true, false, false>)};
  return {ring, boundary == StepDesign::tile
                    ? reinterpret_cast<const void*>(acoustic_step_tile<R, 0, false>)
                    : reinterpret_cast<const void*>(acoustic_step<R, kTileVec, true, false>)};
}

// The tile design's kernels: zq 0 at every R, zq 1 (ZQ = R) from R = 2.
template <int R>
StepKernels tile_kernels_for(int zq) {
  if constexpr (R >= 2)
    if (zq == 1)
      return {reinterpret_cast<const void*>(acoustic_step_tile<R, R, true>),
              reinterpret_cast<const void*>(acoustic_step_tile<R, R, false>)};
  return {reinterpret_cast<const void*>(acoustic_step_tile<R, 0, true>),
          reinterpret_cast<const void*>(acoustic_step_tile<R, 0, false>)};
}

StepKernels step_kernels(const KernelConfig& c, int radius, bool y) {
  const auto pick = [&]<int R>() -> StepKernels {
    if (c.design == StepDesign::tile) return tile_kernels_for<R>(c.zq);
    if (c.design == StepDesign::tma) return tma_kernels_for<R>(c.boundary, c.cpml_apart);
    return c.vec == 2 ? kernels_for<R, 2>(y) : kernels_for<R, 4>(y);
  };
  return for_radius(radius, pick);
}

// The dynamic shared memory of the interior kernel's launch: the tile design's two tiles of the
// block's plane, and with zq 1 a ring of R 16-byte vectors per thread; the tma design's ring of
// tiles and its mbarriers. The boundary kernel takes the same, except under tma: its boundary
// march's, none for l1, two tiles for the tile.
size_t step_smem(const KernelConfig& c, int radius) {
  if (c.design == StepDesign::tma)
    return seismic::tma_smem_bytes(c.bx, c.by, radius, int(sizeof(float)), c.ahead);
  if (c.design != StepDesign::tile) return 0;
  return 2 * seismic::tile_bytes(c.bx, c.by, radius, int(sizeof(float))) +
         size_t(c.zq) * radius * c.bx * c.by * 16;
}
size_t boundary_smem(const KernelConfig& c, int radius) {
  if (c.design != StepDesign::tma) return step_smem(c, radius);
  if (c.cpml_apart) return 0;  // its blocks outside the ring's box take the l1 march (tma_kernels_for)
  return c.boundary == StepDesign::tile ? 2 * seismic::tile_bytes(c.bx, c.by, radius, int(sizeof(float))) : 0;
}

// The tensor map of one time level for the tma design (march_tma): u^n from point (-P, -R, -R),
// its x extent reaching R past the last point (the box reads zeros beyond), y and z the halo's
// rows and planes; the box one tile. `level` is the array's first element.
CUtensorMap level_map(const acoustic::Setup<float>& s, const KernelConfig& c, const float* level) {
  const int64_t R = s.radius, P = (R + kTileVec - 1) / kTileVec * kTileVec;
  TiledMap3d m;
  m.origin = level + (s.origin - P - R * s.line - R * s.slice);
  m.elem_bytes = int(sizeof(float));
  m.extent = {uint64_t(P + s.nx + R), uint64_t(s.ny + 2 * R), uint64_t(s.nz + 2 * R)};
  m.stride = {uint64_t(s.line) * sizeof(float), uint64_t(s.slice) * sizeof(float)};
  m.box = {uint32_t(int64_t(kTileVec) * c.bx + 2 * P), uint32_t(c.by + 2 * R), 1};
  return encode_tiled_map(m);
}

// The interior box of a launch grid (StepArgs::interior): per axis, the blocks (x, y) or chunks
// (z) where acoustic_step.cuh's with_block_pml finds no CPML layer, by the same test. Each axis's
// test depends on that axis alone, so the blocks with none form a box; per axis the blocks with
// none are one run (those clear of both layers), found by a scan.
void interior_box(const acoustic::Setup<float>& s, const KernelConfig& c, dim3 grid, int (&box)[3][2]) {
  const auto run = [](int count, auto clear) {
    int first = 0;
    while (first < count && !clear(first)) ++first;
    int end = first;
    while (end < count && clear(end)) ++end;
    return std::array<int, 2>{first, end};
  };
  const int64_t xs = int64_t(c.vec) * c.bx;
  const auto x =
      run(int(grid.x), [&](int b) { return !(b * xs < s.axis[0].lo || b * xs + xs > s.nx - s.axis[0].hi); });
  const auto y = s.dim == 3 ? run(int(grid.y),
                                  [&](int b) {
                                    return !(int64_t(b) * c.by < s.axis[1].lo ||
                                             int64_t(b) * c.by + c.by > s.ny - s.axis[1].hi);
                                  })
                            : std::array<int, 2>{0, int(grid.y)};
  const auto z = run(int(grid.z), [&](int ch) {
    const int64_t k0 = int64_t(ch) * c.nw, k1 = std::min<int64_t>(k0 + c.nw, s.nz);
    const int64_t off = s.axis[2].offset;
    return !(k0 + off < s.axis[2].lo || k1 + off > s.axis[2].n - s.axis[2].hi);
  });
  for (int i = 0; i < 2; ++i) {
    box[0][i] = x[size_t(i)];
    box[1][i] = y[size_t(i)];
    box[2][i] = z[size_t(i)];
  }
}

// The box of blocks the interior kernel runs when the CPML is added apart: every block (l1 and the
// tile, whose marches take partial blocks), or under tma those whose lanes and planes all lie in
// the domain (the ring's march stores from every lane).
void apart_box(const acoustic::Setup<float>& s, const KernelConfig& c, dim3 grid, int (&box)[3][2]) {
  const int64_t xs = int64_t(c.vec) * c.bx;
  const bool whole = c.design != StepDesign::tma;
  const int64_t full[3] = {s.nx / xs, s.dim == 3 ? s.ny / c.by : 1, s.nz / c.nw};
  const unsigned count[3] = {grid.x, grid.y, grid.z};
  for (int ax = 0; ax < 3; ++ax) {
    box[ax][0] = 0;
    box[ax][1] = whole ? int(count[ax]) : int(full[ax]);
  }
}

// StepArgs::keep: every point, or (keep_box, the CPML beside) the points clear of every layer, per
// axis those between its lower layer's end and its upper layer's start (layer_boxes' split).
void keep_all(const acoustic::SetupFrame<float>& s, int (&keep)[3][2]) {
  const int64_t n[3] = {s.nx, s.ny, s.nz};
  for (int ax = 0; ax < 3; ++ax) {
    keep[ax][0] = 0;
    keep[ax][1] = int(n[ax]);
  }
}
void keep_box(const acoustic::SetupFrame<float>& s, int (&keep)[3][2]) {
  const int64_t n[3] = {s.nx, s.ny, s.nz};
  for (int ax = 0; ax < 3; ++ax) {
    const acoustic::PmlAxis& a = s.axis[ax];
    const int64_t lo_end = std::clamp<int64_t>(a.lo - a.offset, 0, n[ax]);
    keep[ax][0] = int(lo_end);
    keep[ax][1] = int(std::clamp<int64_t>(a.n - a.hi - a.offset, lo_end, n[ax]));
  }
}

// KernelConfig::side's chunks: enough rows of the march's blocks that each of their threads takes
// at most `side` of the layers' points (at least one row, for the receivers), within the grid's
// kMaxGridRows along z (check_launch leaves one): past that each thread takes more.
int count_side_chunks(const LayerBoxes& b, int side, dim3 grid, dim3 block) {
  const int64_t per_chunk = int64_t(grid.x) * block.x;
  const int64_t threads = (b.first[b.count] + side - 1) / side;
  const int64_t chunks = std::max<int64_t>(1, (threads + per_chunk - 1) / per_chunk);
  return int(std::min<int64_t>(chunks, kMaxGridRows - int64_t(grid.z)));
}

int64_t interior_blocks(const StepArgs& a) {
  int64_t n = 1;
  for (const auto& r : a.interior) n *= std::max(0, r[1] - r[0]);
  return n;
}

}  // namespace

KernelConfig default_config(int dim, int radius, int64_t plane_points, double layer_share, bool slabs) {
  return default_for(dim, radius, plane_points, layer_share, slabs);
}

// The cards the defaults above were measured on: each table row's campaign ran on the H100, and
// the H200's runs of them (bench/results/nvidia-h200/campaigns/) found the same crossovers.
// A space before the model, so that a GH200 (another card) is not taken for an H200.
constexpr std::string_view kMeasuredCards[] = {" H100", " H200"};

std::string untuned_card_notice(std::string_view device) {
  for (std::string_view card : kMeasuredCards)
    if (device.find(card) != std::string_view::npos) return "";
  return "the wave step's default launch was measured on the H100 and the H200, not on this " +
         std::string(device) +
         ": --kernel-params picks another (docs/wave.md), and the campaigns wave-2d-sizes-layers and "
         "wave-3d-sizes (bench/run.py) time the defaults on it";
}

std::string describe(const KernelConfig& c) {
  return "acoustic_step block=" + std::to_string(c.bx) + "x" + std::to_string(c.by) +
         " vec=" + std::to_string(c.vec) + " nw=" + std::to_string(c.nw) +
         " design=" + design_name(c.design) + (c.zq ? " zq=" + std::to_string(c.zq) : "") +
         " split=" + std::to_string(c.split) +
         (c.design == StepDesign::tma
              ? " ahead=" + std::to_string(c.ahead) + " boundary=" + design_name(c.boundary)
              : "") +
         (c.cpml_apart ? " cpml=apart" : "") + (c.cpml_beside ? " layers=beside" : "") +
         (c.side ? " side=" + std::to_string(c.side) : "") + (c.pdl ? "" : " pdl=0") +
         " faces=" + std::to_string(c.faces) + " graph=" + std::to_string(c.graph) +
         (c.temporal ? " temporal=" + std::to_string(c.temporal) + " temporal_block=" +
                           std::to_string(c.temporal_block) + " temporal_nw=" + std::to_string(c.temporal_nw)
                     : "") +
         (c.resident ? " resident=" + std::to_string(c.resident) : "");
}

// A design by hand where the defaults name another: its shape (design_default).
static KernelConfig other_design(int dim, int radius, int64_t plane_points, double layer_share, bool slabs,
                                 StepDesign design) {
  // Where the layers' rule took the l1 march, a design by hand starts from the table's own row.
  const KernelConfig row = table_row(dim, radius, plane_points, layer_share > 0, slabs);
  if (row.design == design) return row;
  if (design == StepDesign::l1) return l1_shape(radius);
  if (design == StepDesign::tile) return kTileShape;
  // tma by hand where the table's row names another design (R = 4 and 6 on planes of up to 256^2,
  // R = 1..3): the block the table gives tma at that radius elsewhere, in chunks of 16.
  return radius == 5 || radius == 6 ? kTmaNarrow : kTmaShape;
}

// The defaults of one design for a radius and plane: the table's where it names that design;
// else l1_shape, kTileShape or kTmaShape. A "design" given by hand starts from these, not from
// the other design's block, vector and chunk.
KernelConfig design_default(int dim, int radius, int64_t plane_points, double layer_share, bool slabs,
                            StepDesign design, std::optional<bool> apart) {
  const KernelConfig c = default_for(dim, radius, plane_points, layer_share, slabs, apart);
  if (c.design == design) return c;
  KernelConfig other = other_design(dim, radius, plane_points, layer_share, slabs, design);
  other.graph = c.graph;            // the launches' batching is the run's, whichever design
  other.cpml_apart = c.cpml_apart;  // and where the CPML is computed
  other.cpml_beside = c.cpml_beside;
  other.side = c.side;
  other.pdl = c.pdl;
  return other;
}

// The resident launch's parameters (acoustic_resident.cuh): 2D, a whole model, one step at a time
// for nothing else; it computes the CPML apart, with its layers' points beside the march for the
// single steps it leaves to the one-step kernels, unless "cpml" says otherwise.
static void check_resident_params(KernelConfig& c, int dim, bool cpml_given, bool slabs) {
  const auto bad = [](const std::string& why) { throw Error(ErrorKind::invalid_argument, why); };
  if (c.resident != 0 && c.resident != 1)
    bad("kernel parameter resident must be 0 or 1, got " + std::to_string(c.resident));
  if (c.resident == 0) return;
  if (dim != 2) bad("kernel parameter resident (a block of steps in one kernel) is 2D only");
  if (slabs) bad("kernel parameter resident runs a whole model: a split run's slabs step one at a time");
  if (c.temporal != 0) bad("kernel parameters resident and temporal exclude each other");
  if (cpml_given && !c.cpml_apart)
    bad("the resident launch computes the CPML apart: kernel parameter cpml \"march\" is not its");
  if (!cpml_given) c.cpml_apart = c.cpml_beside = true;
}

// KernelConfig::side: the 2D layers' points beside the march only; where the placement given by
// hand is another, the default's side goes with it.
static void check_side_param(KernelConfig& c, int dim, bool side_given) {
  if (c.side < 0 || c.side > kMaxSidePoints)
    throw Error(ErrorKind::invalid_argument, "kernel parameter side must be 0.." +
                                                 std::to_string(kMaxSidePoints) + ", got " +
                                                 std::to_string(c.side));
  if (c.cpml_beside && dim == 2) return;
  if (side_given && c.side != 0)
    throw Error(ErrorKind::invalid_argument,
                "kernel parameter side places the layers' points of a 2D step beside the march: it needs "
                "cpml \"beside\" in 2D");
  c.side = 0;
}

KernelConfig parse_config(const std::string& text, int dim, int radius, int64_t plane_points,
                          double layer_share, bool slabs) {
  KernelConfig c = default_for(dim, radius, plane_points, layer_share, slabs);
  if (text.empty()) return c;
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(text);
  } catch (const std::exception& e) {
    throw Error(ErrorKind::invalid_argument, "kernel parameters are not JSON: " + std::string(e.what()));
  }
  if (!j.is_object()) throw Error(ErrorKind::invalid_argument, "kernel parameters must be a JSON object");
  // "cpml" first: the march and the CPML apart each start from their own default row.
  std::optional<bool> apart;
  if (const auto p = j.find("cpml");
      p != j.end() && p->is_string() && (*p == "march" || *p == "apart" || *p == "beside")) {
    apart = *p != "march";
    c = default_for(dim, radius, plane_points, layer_share, slabs, apart);
  }
  if (const auto d = j.find("design");
      d != j.end() && d->is_string() && (*d == "l1" || *d == "tile" || *d == "tma"))
    c = design_default(dim, radius, plane_points, layer_share, slabs,
                       *d == "l1"     ? StepDesign::l1
                       : *d == "tile" ? StepDesign::tile
                                      : StepDesign::tma,
                       apart);
  bool vec_given = false, ahead_given = false, boundary_given = false, graph_given = false,
       cpml_given = false, side_given = false, pdl_given = false;
  for (const auto& [key, value] : j.items()) {
    if (key == "design") {
      const std::string v = value.is_string() ? value.get<std::string>() : "";
      if (v == "l1") {
        c.design = StepDesign::l1;
      } else if (v == "tile") {
        c.design = StepDesign::tile;
      } else if (v == "tma") {
        c.design = StepDesign::tma;
      } else {
        throw Error(ErrorKind::invalid_argument,
                    "kernel parameter design must be \"l1\", \"tile\" or \"tma\", got " + value.dump());
      }
    } else if (key == "block") {
      const std::string b = value.is_string() ? value.get<std::string>() : "";
      const auto x = b.find('x');
      try {
        if (x == std::string::npos) throw std::invalid_argument(b);
        c.bx = std::stoi(b.substr(0, x));
        c.by = std::stoi(b.substr(x + 1));
      } catch (const std::exception&) {
        throw Error(ErrorKind::invalid_argument,
                    "kernel parameter block must be \"BXxBY\", got " + value.dump());
      }
    } else if (key == "vec" && value.is_number_integer()) {
      c.vec = value.get<int>();
      vec_given = true;
    } else if (key == "nw" && value.is_number_integer()) {
      c.nw = value.get<int>();
    } else if (key == "zq" && value.is_number_integer()) {
      c.zq = value.get<int>();
    } else if (key == "split" && value.is_number_integer()) {
      c.split = value.get<int>();
    } else if (key == "faces" && value.is_number_integer()) {
      c.faces = value.get<int>();
    } else if (key == "graph" && value.is_number_integer()) {
      c.graph = value.get<int>();
      graph_given = true;
    } else if (key == "temporal" && value.is_number_integer()) {
      c.temporal = value.get<int>();
    } else if (key == "temporal_block" && value.is_number_integer()) {
      c.temporal_block = value.get<int>();
    } else if (key == "temporal_nw" && value.is_number_integer()) {
      c.temporal_nw = value.get<int>();
    } else if (key == "resident" && value.is_number_integer()) {
      c.resident = value.get<int>();
    } else if (key == "pdl" && value.is_number_integer()) {
      c.pdl = value.get<int>();
      pdl_given = true;
    } else if (key == "side" && value.is_number_integer()) {
      c.side = value.get<int>();
      side_given = true;
    } else if (key == "ahead" && value.is_number_integer()) {
      c.ahead = value.get<int>();
      ahead_given = true;
    } else if (key == "cpml") {
      const std::string v = value.is_string() ? value.get<std::string>() : "";
      if (v != "march" && v != "apart" && v != "beside")
        throw Error(ErrorKind::invalid_argument,
                    "kernel parameter cpml must be \"march\", \"apart\" or \"beside\", got " + value.dump());
      c.cpml_apart = v != "march";
      // A slab adds its layers' terms after its march (the same bits): beside is one GPU's.
      c.cpml_beside = v == "beside" && !slabs;
      cpml_given = true;
    } else if (key == "boundary") {
      const std::string v = value.is_string() ? value.get<std::string>() : "";
      if (v != "l1" && v != "tile")
        throw Error(ErrorKind::invalid_argument,
                    "kernel parameter boundary must be \"l1\" or \"tile\", got " + value.dump());
      c.boundary = v == "l1" ? StepDesign::l1 : StepDesign::tile;
      boundary_given = true;
    } else {
      throw Error(ErrorKind::invalid_argument,
                  "unknown or mistyped kernel parameter '" + key + "': " + value.dump() +
                      " (valid: block \"BXxBY\", vec 2|4, nw N, design \"l1\"|\"tile\"|\"tma\", zq 0|1, "
                      "split 0|1, ahead 0..8, boundary \"l1\"|\"tile\", faces 0|1, graph 0|2..1024 "
                      "even, cpml \"march\"|\"apart\"|\"beside\", side 0..16, pdl 0|1, temporal 0|2..4, "
                      "temporal_block N, "
                      "temporal_nw N, resident 0|1)");
    }
  }
  if (c.design != StepDesign::l1) {
    const std::string name = design_name(c.design);
    if (dim == 2)
      throw Error(ErrorKind::invalid_argument,
                  "kernel parameter design \"" + name + "\" is 3D only: a 2D model has no y to tile");
    if (!vec_given) c.vec = kTileVec;
    if (c.vec != kTileVec)
      throw Error(ErrorKind::invalid_argument,
                  "kernel parameter design \"" + name + "\" (" +
                      std::string(j.contains("design") ? "given" : "the default here") +
                      ") copies 16-byte vectors: vec must be 4, got " + std::to_string(c.vec) +
                      (j.contains("design") ? "" : "; add \"design\": \"l1\" for vec 2"));
  }
  if (ahead_given && c.design != StepDesign::tma)
    throw Error(ErrorKind::invalid_argument,
                "kernel parameter ahead is the tma design's: add \"design\": \"tma\"");
  if (boundary_given && c.design != StepDesign::tma)
    throw Error(ErrorKind::invalid_argument,
                "kernel parameter boundary is the tma design's: add \"design\": \"tma\"");
  if (c.ahead < 0 || c.ahead > kMaxAhead)
    throw Error(ErrorKind::invalid_argument, "kernel parameter ahead must be 0.." +
                                                 std::to_string(kMaxAhead) + ", got " +
                                                 std::to_string(c.ahead));
  // Two widths only: each is 32 kernels (R x 2D/3D x interior and boundary) to compile.
  if (c.vec != 2 && c.vec != 4)
    throw Error(ErrorKind::invalid_argument,
                "kernel parameter vec must be 2 or 4, got " + std::to_string(c.vec));
  if (c.bx < 1 || c.by < 1 || c.bx > kStepThreads || c.by > kStepThreads || c.bx * c.by > kStepThreads ||
      (c.bx * c.by) % 32 != 0)
    throw Error(ErrorKind::invalid_argument, "kernel parameter block " + std::to_string(c.bx) + "x" +
                                                 std::to_string(c.by) + " must be whole warps of at most " +
                                                 std::to_string(kStepThreads) + " threads");
  if (dim == 2 && c.by != 1)
    throw Error(ErrorKind::invalid_argument, "a 2D model has no y: kernel parameter block must be BXx1");
  if (c.nw < 1) throw Error(ErrorKind::invalid_argument, "kernel parameter nw must be at least 1");
  if (c.split != 0 && c.split != 1)
    throw Error(ErrorKind::invalid_argument,
                "kernel parameter split must be 0 or 1, got " + std::to_string(c.split));
  if (c.faces != 0 && c.faces != 1)
    throw Error(ErrorKind::invalid_argument,
                "kernel parameter faces must be 0 or 1, got " + std::to_string(c.faces));
  if (c.design == StepDesign::tma && c.split != 1)
    throw Error(ErrorKind::invalid_argument,
                "kernel parameter design \"tma\" (" +
                    std::string(j.contains("design") ? "given" : "the default here") +
                    ") runs the interior box (its boundary blocks the l1 march): split must be 1" +
                    (j.contains("design") ? "" : "; add \"design\": \"l1\" or \"tile\" for one kernel"));
  if (c.zq != 0 && c.zq != 1)
    throw Error(ErrorKind::invalid_argument,
                "kernel parameter zq must be 0 or 1, got " + std::to_string(c.zq));
  if (c.graph < 0 || c.graph > kMaxGraphSteps || c.graph % 2 != 0)
    throw Error(ErrorKind::invalid_argument,
                "kernel parameter graph must be 0 or an even count of steps up to " +
                    std::to_string(kMaxGraphSteps) +
                    " (a graph ends on the time level it starts from), got " + std::to_string(c.graph));
  if (c.zq == 1 && c.design != StepDesign::tile)
    throw Error(ErrorKind::invalid_argument,
                "kernel parameter zq 1 is the tile design's: add \"design\": \"tile\"");
  if (c.temporal != 0 && (c.temporal < 2 || c.temporal > kMaxTemporalSteps))
    throw Error(ErrorKind::invalid_argument, "kernel parameter temporal must be 0 or 2.." +
                                                 std::to_string(kMaxTemporalSteps) + ", got " +
                                                 std::to_string(c.temporal));
  if (c.temporal != 0 && dim != 2)
    throw Error(ErrorKind::invalid_argument, "kernel parameter temporal (temporal blocking) is 2D only");
  // The launch's own limits that need no device (acoustic_temporal.cu's check_temporal checks them
  // again, with the model's rows and the device's shared memory, for a config built by hand).
  if (c.temporal != 0 &&
      (c.temporal_block % 32 != 0 || c.temporal_block < 32 || c.temporal_block > kTemporalMaxThreads))
    throw Error(ErrorKind::invalid_argument,
                "kernel parameter temporal_block must be whole warps of at most " +
                    std::to_string(kTemporalMaxThreads) + " threads, got " +
                    std::to_string(c.temporal_block));
  if (c.temporal != 0 && c.temporal_block - 2 * c.temporal * radius < 32)
    throw Error(ErrorKind::invalid_argument,
                "kernel parameter temporal_block " + std::to_string(c.temporal_block) + " leaves " +
                    std::to_string(c.temporal_block - 2 * c.temporal * radius) +
                    " columns beside the 2 T R = " + std::to_string(2 * c.temporal * radius) +
                    " of halo: at least 32 (a larger block or a smaller temporal)");
  if (c.temporal != 0 && c.temporal_nw < 1)
    throw Error(ErrorKind::invalid_argument, "kernel parameter temporal_nw must be at least 1");
  if (c.temporal != 0 && c.graph % (2 * c.temporal) != 0) {
    // A graph of temporal passes ends on the arrays it starts from after an even count of them.
    if (graph_given)
      throw Error(ErrorKind::invalid_argument,
                  "kernel parameter graph must be a multiple of 2 x temporal = " +
                      std::to_string(2 * c.temporal) + " steps, got " + std::to_string(c.graph));
    c.graph -= c.graph % (2 * c.temporal);
  }
  if (c.zq == 1 && radius < 2)
    throw Error(ErrorKind::invalid_argument,
                "kernel parameter zq 1 is compiled from R = 2 (at R = 1 the queue is 3 vectors)");
  if (c.temporal != 0 && !cpml_given)
    c.cpml_apart = c.cpml_beside = false;  // temporal blocking computes its CPML in its pass
  if (c.cpml_apart && c.temporal != 0)
    throw Error(ErrorKind::invalid_argument, std::string("kernel parameter cpml \"") +
                                                 (c.cpml_beside ? "beside" : "apart") +
                                                 "\" steps one at a time: temporal must be 0");
  check_resident_params(c, dim, cpml_given, slabs);
  check_side_param(c, dim, side_given);
  if (!pdl_given) c.pdl = pdl_leads(dim, radius, c.side) ? 1 : 0;  // the side given, or dropped with "cpml"
  if (c.pdl != 0 && c.pdl != 1)
    throw Error(ErrorKind::invalid_argument,
                "kernel parameter pdl must be 0 or 1, got " + std::to_string(c.pdl));
  return c;
}

int64_t state_bytes(const acoustic::Setup<float>& s) {
  int64_t b = 3 * s.alloc * int64_t(sizeof(float));
  for (int a = 0; a < 3; ++a) b += 3 * s.points_per_slot(a) * s.axis[a].slots() * int64_t(sizeof(float));
  b += int64_t(s.sources.size()) * int64_t(sizeof(acoustic::Tap) + sizeof(int64_t));
  b += int64_t(s.receivers.size()) * int64_t(sizeof(int64_t) + sizeof(float)) +
       (s.nrec + 1) * int64_t(sizeof(int));
  b += (int64_t(s.nsrc) + s.nrec) * s.nt * int64_t(sizeof(float));
  return b;
}

// What the CPML beside the march adds to the state: the sources' taps in the layers, at most all.
static int64_t beside_bytes(const acoustic::Setup<float>& s, const KernelConfig& c) {
  return c.cpml_beside ? int64_t(s.sources.size()) * int64_t(sizeof(acoustic::Tap) + sizeof(int64_t)) : 0;
}

struct AcousticGpu::Impl {
  acoustic::Setup<float> s;  // the host description, without its fields
  KernelConfig c;
  DeviceArray<float> u, prev, m;
  DeviceArray<acoustic::PmlCoef<float>> coef[3];
  DeviceArray<float> pml[3][3];
  DeviceArray<int> tap_start;
  DeviceArray<int64_t> tap_key;
  DeviceArray<acoustic::Tap> taps;  // the sources'
  DeviceArray<int> rec_start;       // the receivers' taps, by receiver: acoustic_record's
  DeviceArray<int64_t> rec_offset;
  DeviceArray<float> rec_weight;
  DeviceArray<float> wavelets, traces;
  // Temporal blocking (KernelConfig::temporal): the pass's launch, and the second pair of time
  // levels and CPML memory its outputs go to; the two sets swap after each pass (`flipped`
  // counts them, odd or even: a graph is captured for one parity).
  std::unique_ptr<TemporalLaunch> temporal;
  std::unique_ptr<ResidentLaunch> resident;  // KernelConfig::resident's
  DeviceArray<float> u2, prev2;
  DeviceArray<float> pml2[3][3];
  bool flipped = false;
  dim3 grid, block;
  StepKernels kernels;
  size_t smem = 0;           // dynamic shared memory of the interior kernel's launch (step_smem)
  size_t boundary_smem = 0;  // and of the boundary kernel's
  // The tma design's tensor maps (level_map) of the two time-level arrays, by their first element:
  // the interior kernel takes the one whose array holds u^n.
  const float* level[2] = {nullptr, nullptr};
  CUtensorMap map[2] = {};
  StepArgs args{};
  LayerBoxes layer_points{};  // KernelConfig::cpml_apart's
  // KernelConfig::cpml_beside's: the sources' taps at the layers' points, and the stream the
  // layers' kernel runs on beside the march, forked from and joined to the run's stream each step.
  DeviceArray<int64_t> layer_tap_key;
  DeviceArray<acoustic::Tap> layer_taps;
  LayerTaps layer_tap_args{};
  cudaStream_t side = nullptr;
  cudaEvent_t fork = nullptr, join = nullptr;
  int keep_chunks[2] = {0, 0};  // the chunks that hold points the march writes
  int side_chunks = 0;          // KernelConfig::side's: the one-kernel step's chunks of layers' points
  RecordArgs record{};
  // The run's own stream (non-blocking: it never waits for the legacy default stream), so that
  // runs in threads of one process, a survey's batched shots, overlap on the device.
  cudaStream_t stream = nullptr;
  // A slab of a split run: its chunks of nw planes, those writing the first R planes [0,
  // lower_end) and the last R [upper_begin, chunks); the halo exchange's stream; the event the
  // face chunks wait for on the run's stream (u^n whole and the receivers sampled: faces 1) or
  // the exchange waits for (the face chunks done: faces 0), and the one step n + 1 waits for (the
  // exchange done); and event quadruples timing the exchange and the inner chunks of sampled steps.
  struct Split {
    bool ready = false;
    int chunks = 0, lower_end = 0, upper_begin = 0;
    cudaStream_t stream = nullptr;
    cudaEvent_t handover = nullptr, exchanged = nullptr;
    std::vector<std::array<cudaEvent_t, 4>> samples;
    int64_t calls = 0;
    int64_t sampled_from = 0;                 // the call that sampling (re)started at
    LayerBoxes face_layers[2], inner_layers;  // KernelConfig::cpml_apart's, on the chunks' planes
  } split;
  // CUDA graphs of c.graph steps (AcousticGpu::steps): one for each array that holds u^n where a
  // graph starts (an odd run of single steps between graphs swaps the two), and the device word
  // their steps count from.
  struct Graph {
    const float* u = nullptr;
    bool flipped = false;
    cudaGraphExec_t exec = nullptr;
  };
  Graph graphs[4];
  DeviceArray<int64_t> step_base;
  cudaEvent_t marks[2] = {nullptr, nullptr};  // AcousticGpu::mark's
  cudaGraphExec_t graph_now();                // the graph for u^n where it is now, captured once
  cudaGraphExec_t capture();
  void drop_graphs() {
    for (Graph& g : graphs) {
      if (g.exec) cudaGraphExecDestroy(g.exec);
      g = Graph{};
    }
  }
  // The constructor's steps, in order.
  void allocate(const acoustic::Setup<float>& s, const KernelConfig& c, size_t step_smem_bytes,
                const MediumOnGpu* medium);
  void upload_sources(const acoustic::Setup<float>& s);
  void upload_layer_taps(const acoustic::Setup<float>& s);  // KernelConfig::cpml_beside's
  void upload_receivers(const acoustic::Setup<float>& s);
  void fill_args(const acoustic::Setup<float>& s, const KernelConfig& c);
  void ready_temporal(const acoustic::Setup<float>& s);  // after the sources and receivers
  void ready_resident(const acoustic::Setup<float>& s);  // likewise
  // Steps n .. n + T - 1 by one temporal pass, then the swap of the two sets of arrays.
  void temporal_pass(int64_t n);
  void swap_sets();
  void point_args_at_memory();       // StepArgs' CPML memory: the current set's
  void ready_split();                // makes `split`'s stream, events and chunk ranges once
  Halo halo_of(float* level) const;  // a time level's face and halo planes
  ~Impl() {
    drop_graphs();
    for (cudaEvent_t e : marks)
      if (e) cudaEventDestroy(e);
    for (auto& q : split.samples)
      for (cudaEvent_t e : q) cudaEventDestroy(e);
    if (split.handover) cudaEventDestroy(split.handover);
    if (split.exchanged) cudaEventDestroy(split.exchanged);
    if (split.stream) cudaStreamDestroy(split.stream);
    if (fork) cudaEventDestroy(fork);
    if (join) cudaEventDestroy(join);
    if (side) cudaStreamDestroy(side);
    if (stream) cudaStreamDestroy(stream);
  }
  // Samples the receivers' u^n on `on`.
  void record_step(int64_t n, cudaStream_t on) {
    if (record.nrec == 0) return;
    record.u = u.p + s.origin;
    const unsigned blocks = unsigned((int64_t(record.nrec) * 32 + kRecordThreads - 1) / kRecordThreads);
    acoustic_record<<<blocks, kRecordThreads, 0, on>>>(record, n);
    FDS_CUDA_CHECK_LAUNCH();
  }
  // Points the step's arguments at u^n and u^{n-1}, first sampling the receivers' u^n on the run's
  // stream, before the step, which reads u^n and overwrites none of it: in a slab's step (in parts:
  // step_faces), and in a whole step that does not sample them beside its march (launch_step).
  void begin_step(int64_t n, bool slab) {
    if (slab || !(c.cpml_beside || c.graph > 0)) record_step(n, stream);
    args.u = u.p + s.origin;
    args.out = prev.p + s.origin;
  }
  // Step n's chunks [first, end) of nw planes, on `on`: the boundary kernel over all their blocks
  // (it skips the interior box's), unless every one is interior, then the interior kernel over
  // their part of the interior box.
  void launch_chunks(int first, int end, int64_t n, cudaStream_t on, bool dependent = false) {
    if (first >= end) return;
    const int(&box)[3][2] = args.interior;
    const int c0 = std::max(first, box[2][0]), c1 = std::min(end, box[2][1]);
    const bool inner = c0 < c1 && box[0][0] < box[0][1] && box[1][0] < box[1][1];
    const bool all_inner = inner && c0 == first && c1 == end && box[0][0] == 0 && box[0][1] == int(grid.x) &&
                           box[1][0] == 0 && box[1][1] == int(grid.y);
    StepArgs a = args;
    // The tma kernel's third parameter: the map of the array that holds u^n.
    const CUtensorMap& map_u = map[a.u == level[1] + s.origin ? 1 : 0];
    void* params[] = {&a, &n, const_cast<CUtensorMap*>(&map_u)};
    if (!all_inner) {
      a.block_first[0] = a.block_first[1] = 0;
      a.chunk_first = first;
      FDS_CUDA_CHECK(launch_kernel(kernels.boundary, dim3(grid.x, grid.y, unsigned(end - first)), block,
                                   params, boundary_smem, on, dependent));
      FDS_CUDA_CHECK_LAUNCH();
    }
    if (inner) {
      a.block_first[0] = box[0][0];
      a.block_first[1] = box[1][0];
      a.chunk_first = c0;
      const dim3 g(unsigned(box[0][1] - box[0][0]), unsigned(box[1][1] - box[1][0]), unsigned(c1 - c0));
      FDS_CUDA_CHECK(launch_kernel(kernels.interior, g, block, params, smem, on, dependent));
      FDS_CUDA_CHECK_LAUNCH();
    }
  }
  // Step n whole on `on`: the march's chunks, then with the CPML apart the layers' kernel; beside,
  // the layers' kernel on `side` while the march's chunks that hold points clear of the layers run
  // on `on`.
  //
  // The receivers sample u^n on `side` too, which no kernel of the step writes; the join ends them
  // before step n + 1 writes u^{n+2} over it. Off the march's path, a small model's step no longer
  // waits for them. Without the layers beside, only in runs that take CUDA graphs (c.graph > 0),
  // where the fork and join are the graph's edges, costing no host call (as measured; the few
  // steps such a run enqueues alone, a tail shorter than a graph, fork too); a run without graphs
  // keeps them in order, without four host calls a step.
  void launch_step(int64_t n, cudaStream_t on) {
    if (c.side > 0) {
      launch_beside(n, on);
      return;
    }
    const bool fork_side = c.cpml_beside || (record.nrec > 0 && c.graph > 0);
    // A step of one stream's kernels launches each as a programmatic dependent of the one before
    // (cuda/common/dependent_launch.cuh); with a second stream it gained nothing, or lost.
    const bool dep = c.pdl == 1 && !fork_side;
    if (fork_side) {
      FDS_CUDA_CHECK(cudaEventRecord(fork, on));
      FDS_CUDA_CHECK(cudaStreamWaitEvent(side, fork, 0));
      record_step(n, side);
    }
    if (c.cpml_beside) {
      launch_layers_whole(args, layer_points, layer_tap_args, s.radius, s.dim == 3, n, side);
      launch_chunks(keep_chunks[0], keep_chunks[1], n, on);
    } else {
      launch_chunks(0, int(grid.z), n, on, dep);
      if (c.cpml_apart) launch_layers(args, layer_points, s.radius, s.dim == 3, on, dep);
    }
    if (fork_side) {
      FDS_CUDA_CHECK(cudaEventRecord(join, side));
      FDS_CUDA_CHECK(cudaStreamWaitEvent(on, join, 0));
    }
  }
  // Step n whole in one kernel (KernelConfig::side, acoustic_step_beside.cuh): the side's chunks
  // first, then the march's; a programmatic dependent of the step before.
  void launch_beside(int64_t n, cudaStream_t on) {
    record.u = u.p + s.origin;
    BesideArgs b{layer_points, layer_tap_args, record, side_chunks};
    StepArgs a = args;
    a.chunk_first = keep_chunks[0] - side_chunks;
    const dim3 g(grid.x, 1, unsigned(side_chunks + keep_chunks[1] - keep_chunks[0]));
    void* params[] = {&a, &b, &n};
    FDS_CUDA_CHECK(launch_kernel(beside_kernel(s.radius, c.vec), g, block, params, 0, on, c.pdl == 1));
    FDS_CUDA_CHECK_LAUNCH();
  }
  // The state's array i in physics/acoustic.hpp's order: u, u_prev, each axis's psi, chi, phi, traces.
  const DeviceArray<float>& state_array(int i) const {
    return i == 0                           ? u
           : i == 1                         ? prev
           : i < acoustic::kStateArrays - 1 ? pml[(i - 2) / 3][(i - 2) % 3]
                                            : traces;
  }
};

// The tma design's tile as the copy engine takes it: its box edges, and the halo points the map
// starts before each line.
static void check_tma_box(const acoustic::Setup<float>& s, const KernelConfig& c) {
  // The copy engine's boxes: at most seismic::kMaxBoxEdge elements an edge; the map starts P points
  // before each line (Domain::make's x halo is R rounded up to 16 bytes, P).
  const int64_t R = s.radius, P = (R + kTileVec - 1) / kTileVec * kTileVec;
  const int64_t box_x = int64_t(kTileVec) * c.bx + 2 * P, box_y = c.by + 2 * R;
  if (box_x > seismic::kMaxBoxEdge || box_y > seismic::kMaxBoxEdge)
    throw Error(ErrorKind::invalid_argument,
                "the tma design's tile of a " + std::to_string(c.bx) + "x" + std::to_string(c.by) +
                    " block is " + std::to_string(box_x) + " x " + std::to_string(box_y) +
                    " points, above the copy engine's " + std::to_string(seismic::kMaxBoxEdge) +
                    " an edge: a smaller block");
  if (s.origin - P - R * s.line - R * s.slice < 0 || s.origin % s.line < P)
    throw Error(ErrorKind::invalid_argument,
                "the tma design needs " + std::to_string(P) + " halo points before each line of the storage");
}

// Refuses, before anything is allocated, a launch the kernels cannot take: the step kernel's
// 32-bit indices and grid, the parameters' ranges for a config built by hand, and each design's
// needs (shared memory, alignment, the copy engine's box). Returns the interior launch's dynamic
// shared memory.
static size_t check_launch(const acoustic::Setup<float>& s, const KernelConfig& c) {
  // The launch's limits, before anything is allocated: 32-bit indices in the kernel, 65535 blocks
  // along grid y and z.
  const int64_t gy = s.dim == 3 ? (s.ny + c.by - 1) / c.by : 1, gz = (s.nz + c.nw - 1) / c.nw;
  const int64_t gx = (s.nx + int64_t(c.vec) * c.bx - 1) / (int64_t(c.vec) * c.bx);
  if (s.nx > (int64_t(1) << 30) || s.ny > (int64_t(1) << 30) || s.nz > (int64_t(1) << 30) ||
      gx * gy * gz >= (int64_t(1) << 31))
    throw Error(ErrorKind::invalid_argument, "the domain is too large for the step kernel's 32-bit indices");
  if (gy > kMaxGridRows || gz > kMaxGridRows)
    throw Error(ErrorKind::invalid_argument, "the step kernel's grid needs " + std::to_string(gy) + " x " +
                                                 std::to_string(gz) +
                                                 " blocks along y and z, above 65535: raise by or nw");
  // parse_config's range, again for a config built by hand: the ring's size follows from it.
  if (c.ahead < 0 || c.ahead > kMaxAhead)
    throw Error(ErrorKind::invalid_argument,
                "ahead must be 0.." + std::to_string(kMaxAhead) + ", got " + std::to_string(c.ahead));
  // The tile's 16-byte copies need every line and plane of the storage on a 16-byte boundary
  // (Domain::make aligns them; a hand-made Setup may not), and its two tiles in shared memory.
  const size_t smem = step_smem(c, s.radius);
  if (c.zq != 0 && (c.zq != 1 || c.design != StepDesign::tile || s.radius < 2))
    throw Error(ErrorKind::invalid_argument,
                "zq " + std::to_string(c.zq) + " needs the tile design and R >= 2 (zq 1)");
  if (c.split != 0 && c.split != 1) throw Error(ErrorKind::invalid_argument, "split must be 0 or 1");
  if (c.faces != 0 && c.faces != 1) throw Error(ErrorKind::invalid_argument, "faces must be 0 or 1");
  // An odd graph would end on the other time level than it starts from (AcousticGpu::steps).
  if (c.graph < 0 || c.graph > kMaxGraphSteps || c.graph % 2 != 0)
    throw Error(ErrorKind::invalid_argument, "graph must be 0 or an even count of steps up to " +
                                                 std::to_string(kMaxGraphSteps) + ", got " +
                                                 std::to_string(c.graph));
  // Every design loads vec-wide vectors along x (the l1 march too: 4-wide is the 2D default).
  if (s.origin % c.vec != 0 || s.line % c.vec != 0 || s.slice % c.vec != 0)
    throw Error(ErrorKind::invalid_argument, "vec " + std::to_string(c.vec) + " needs lines and planes on " +
                                                 std::to_string(4 * c.vec) + "-byte boundaries");
  if (c.design == StepDesign::tma && (c.split != 1 || c.vec != kTileVec || c.boundary == StepDesign::tma))
    throw Error(
        ErrorKind::invalid_argument,
        "the tma design runs the interior box (split 1) in 4-wide vectors, its boundary by l1 or the tile");
  if (c.design != StepDesign::l1) {
    const std::string name = design_name(c.design);
    if (s.dim != 3)
      throw Error(ErrorKind::invalid_argument, "the " + name + " design of the step kernel is 3D only");
    if (s.origin % kTileVec != 0 || s.line % kTileVec != 0 || s.slice % kTileVec != 0)
      throw Error(ErrorKind::invalid_argument,
                  "the " + name + " design needs lines and planes on 16-byte boundaries");
    int device = 0, optin = 0;
    FDS_CUDA_CHECK(cudaGetDevice(&device));
    FDS_CUDA_CHECK(cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, device));
    if (smem > size_t(optin))
      throw Error(ErrorKind::invalid_argument,
                  "the " + name + " design's " +
                      (c.design == StepDesign::tile
                           ? std::string("two tiles (and zq ring)")
                           : std::to_string(seismic::tma_ring_tiles(s.radius, c.ahead)) + " tiles") +
                      " of a " + std::to_string(c.bx) + "x" + std::to_string(c.by) + " block take " +
                      std::to_string(smem) + " bytes of shared memory, above the device's " +
                      std::to_string(optin) +
                      (c.design == StepDesign::tile ? ": a smaller block" : ": a smaller block or ahead"));
  }
  if (c.design == StepDesign::tma) check_tma_box(s, c);
  if (c.temporal != 0 && c.graph % (2 * c.temporal) != 0)
    throw Error(ErrorKind::invalid_argument, "graph must be a multiple of 2 x temporal steps");
  if (c.cpml_apart && c.temporal != 0)
    throw Error(ErrorKind::invalid_argument, "the CPML apart steps one at a time: temporal must be 0");
  // The layers beside the march: the CPML apart's kernels and arithmetic, on one GPU's whole domain
  // (a slab adds its layers' terms after its march, around its halo exchange).
  if (c.cpml_beside && !c.cpml_apart)
    throw Error(ErrorKind::invalid_argument,
                "the layers beside the march are the CPML apart's: cpml_apart too");
  if (c.cpml_beside && (s.axis[2].offset != 0 || s.axis[2].n != s.nz))
    throw Error(ErrorKind::invalid_argument,
                "a slab of a split run adds its layers' terms after its march, not beside");
  if (c.side < 0 || c.side > kMaxSidePoints || (c.side > 0 && !(c.cpml_beside && s.dim == 2)))
    throw Error(ErrorKind::invalid_argument, "side must be 0, or 1.." + std::to_string(kMaxSidePoints) +
                                                 " with the layers beside the march in 2D");
  // The side's receivers take a whole warp each, and its blocks one row of the grid at least.
  if (c.side > 0 && (c.bx % 32 != 0 || c.by != 1))
    throw Error(ErrorKind::invalid_argument,
                "side needs rows of whole warps: block BXx1, BX a multiple of 32");
  if (c.side > 0 && gz >= kMaxGridRows)
    throw Error(ErrorKind::invalid_argument, "the one-kernel step needs a row of blocks beside the march's " +
                                                 std::to_string(gz) + ": side 0, or a larger nw");
  if (c.pdl != 0 && c.pdl != 1) throw Error(ErrorKind::invalid_argument, "pdl must be 0 or 1");
  check_temporal(s, c);  // its host checks, then the device's shared memory
  check_resident(s, c);
  return smem;
}

// The launch's shape and kernels, the state's arrays (zeroed), m and the CPML coefficients
// uploaded, and the run's stream.
void AcousticGpu::Impl::allocate(const acoustic::Setup<float>& s, const KernelConfig& c,
                                 size_t step_smem_bytes, const MediumOnGpu* medium) {
  Impl& d = *this;
  ensure_device_memory(state_bytes(s) + temporal_bytes(s, c) + beside_bytes(s, c) + resident_bytes(s, c),
                       "the wave solver's state");
  d.c = c;
  d.smem = step_smem_bytes;
  d.boundary_smem = wave::boundary_smem(c, s.radius);  // the free function, not the member
  const bool y = s.dim == 3;
  d.block = dim3(unsigned(c.bx), unsigned(y ? c.by : 1), 1);
  d.grid = dim3(unsigned((s.nx + int64_t(c.vec) * c.bx - 1) / (int64_t(c.vec) * c.bx)),
                unsigned(y ? (s.ny + c.by - 1) / c.by : 1), unsigned((s.nz + c.nw - 1) / c.nw));
  d.kernels = step_kernels(c, s.radius, y);
  // Above the default limit a kernel must opt in.
  if (d.smem > 48 * 1024)
    FDS_CUDA_CHECK(
        cudaFuncSetAttribute(d.kernels.interior, cudaFuncAttributeMaxDynamicSharedMemorySize, int(d.smem)));
  if (d.boundary_smem > 48 * 1024)
    FDS_CUDA_CHECK(cudaFuncSetAttribute(d.kernels.boundary, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                        int(d.boundary_smem)));
  d.u = DeviceArray<float>(s.alloc);
  d.prev = DeviceArray<float>(s.alloc);
  if (c.graph > 0) d.step_base = DeviceArray<int64_t>(1);
  if (medium) {
    d.m = DeviceArray<float>(s.alloc);  // its halo zero
    fill_m(d.m.p, s.origin, s.line, s.slice, s.nx, s.ny, s.nz, *medium);
  } else {
    if (int64_t(s.m.size()) != s.alloc)
      throw std::logic_error("the wave state needs m: " + std::to_string(s.alloc) +
                             " elements, or a medium on the GPU");
    d.m = DeviceArray<float>(s.m.data(), s.alloc);
  }
  if (c.design == StepDesign::tma)  // the two time levels' maps, u^n being either in turn
    for (int l = 0; l < 2; ++l) {
      d.level[l] = (l == 0 ? d.u : d.prev).p;
      d.map[l] = level_map(s, c, d.level[l]);
    }
  for (int a = 0; a < 3; ++a) {
    d.coef[a] = DeviceArray<acoustic::PmlCoef<float>>(s.coef[a].data(), int64_t(s.coef[a].size()));
    for (auto& v : d.pml[a]) v = DeviceArray<float>(s.points_per_slot(a) * s.axis[a].slots());
    if (c.temporal)
      for (auto& v : d.pml2[a]) v = DeviceArray<float>(s.points_per_slot(a) * s.axis[a].slots());
  }
  if (c.temporal) {
    d.u2 = DeviceArray<float>(s.alloc);
    d.prev2 = DeviceArray<float>(s.alloc);
  }
  FDS_CUDA_CHECK(cudaStreamCreateWithFlags(&d.stream, cudaStreamNonBlocking));
  // The side stream, for the layers beside the march or the receivers beside it; made whatever
  // the receivers, since a kept state's next shot may bring some (at the default priority: a
  // graph's kernels, as measured, take no other).
  FDS_CUDA_CHECK(cudaStreamCreateWithFlags(&d.side, cudaStreamNonBlocking));
  FDS_CUDA_CHECK(cudaEventCreateWithFlags(&d.fork, cudaEventDisableTiming));
  FDS_CUDA_CHECK(cudaEventCreateWithFlags(&d.join, cudaEventDisableTiming));
}

// The sources' taps on the device, sorted by the block that owns their point, then by point,
// with each block's first tap (tap_start) and the taps' keys.
void AcousticGpu::Impl::upload_sources(const acoustic::Setup<float>& s) {
  Impl& d = *this;
  const bool y = s.dim == 3;
  std::vector<acoustic::Tap> taps = s.sources;
  const int64_t xs = int64_t(c.vec) * c.bx;
  const auto block_of = [&](const acoustic::Tap& t) {
    return (int64_t(t.k / c.nw) * d.grid.y + (y ? t.j / c.by : 0)) * d.grid.x + t.i / xs;
  };
  std::stable_sort(taps.begin(), taps.end(), [&](const acoustic::Tap& p, const acoustic::Tap& q) {
    const int64_t bp = block_of(p), bq = block_of(q);
    return bp != bq ? bp < bq : tap_key_host(p, s) < tap_key_host(q, s);
  });
  const int64_t blocks = int64_t(d.grid.x) * d.grid.y * d.grid.z;
  std::vector<int> start(size_t(blocks + 1), 0);
  for (const auto& t : taps) ++start[size_t(block_of(t) + 1)];
  std::partial_sum(start.begin(), start.end(), start.begin());
  std::vector<int64_t> keys(taps.size());
  for (size_t t = 0; t < taps.size(); ++t) keys[t] = tap_key_host(taps[t], s);
  d.tap_start = DeviceArray<int>(start.data(), int64_t(start.size()));
  d.tap_key = DeviceArray<int64_t>(keys.data(), int64_t(keys.size()));
  d.taps = DeviceArray<acoustic::Tap>(taps.data(), int64_t(taps.size()));
  if (c.cpml_beside) upload_layer_taps(s);
}

// The sources' taps at the layers' points, by point (the march's order at each point: stable).
void AcousticGpu::Impl::upload_layer_taps(const acoustic::Setup<float>& s) {
  std::vector<acoustic::Tap> in_layers;
  int keep[3][2];
  keep_box(s, keep);
  for (const acoustic::Tap& t : s.sources) {
    const int p[3] = {t.i, t.j, t.k};
    bool kept = true;
    for (int ax = 0; ax < 3; ++ax) kept = kept && p[ax] >= keep[ax][0] && p[ax] < keep[ax][1];
    if (!kept) in_layers.push_back(t);
  }
  std::stable_sort(in_layers.begin(), in_layers.end(), [&](const acoustic::Tap& p, const acoustic::Tap& q) {
    return tap_key_host(p, s) < tap_key_host(q, s);
  });
  std::vector<int64_t> keys(in_layers.size());
  for (size_t t = 0; t < in_layers.size(); ++t) keys[t] = tap_key_host(in_layers[t], s);
  layer_tap_key = DeviceArray<int64_t>(keys.data(), int64_t(keys.size()));
  layer_taps = DeviceArray<acoustic::Tap>(in_layers.data(), int64_t(in_layers.size()));
  layer_tap_args = {layer_tap_key.p, layer_taps.p, int(in_layers.size())};
}

// The receivers' taps on the device, by receiver, in the Setup's order within each (the order of
// the sum), and the wavelets and the traces.
void AcousticGpu::Impl::upload_receivers(const acoustic::Setup<float>& s) {
  Impl& d = *this;
  std::vector<acoustic::Tap> rec = s.receivers;
  std::stable_sort(rec.begin(), rec.end(),
                   [](const acoustic::Tap& p, const acoustic::Tap& q) { return p.id < q.id; });
  std::vector<int> rec_start(size_t(s.nrec) + 1, 0);
  std::vector<int64_t> rec_offset(rec.size());
  std::vector<float> rec_weight(rec.size());
  for (size_t t = 0; t < rec.size(); ++t) {
    ++rec_start[size_t(rec[t].id) + 1];
    rec_offset[t] = rec[t].i + rec[t].j * s.line + rec[t].k * s.slice;
    rec_weight[t] = rec[t].w;
  }
  std::partial_sum(rec_start.begin(), rec_start.end(), rec_start.begin());
  d.rec_start = DeviceArray<int>(rec_start.data(), int64_t(rec_start.size()));
  d.rec_offset = DeviceArray<int64_t>(rec_offset.data(), int64_t(rec_offset.size()));
  d.rec_weight = DeviceArray<float>(rec_weight.data(), int64_t(rec_weight.size()));
  d.wavelets = DeviceArray<float>(s.wavelets.data(), int64_t(s.wavelets.size()));
  d.traces = DeviceArray<float>(int64_t(s.nrec) * s.nt);
}

// The step's and the receivers' kernel arguments, pointing at the arrays allocated above.
void AcousticGpu::Impl::fill_args(const acoustic::Setup<float>& s, const KernelConfig& c) {
  Impl& d = *this;
  StepArgs& a = d.args;
  a.m = d.m.p + s.origin;
  a.nx = int(s.nx);
  a.ny = int(s.ny);
  a.nz = int(s.nz);
  a.nw = c.nw;
  a.chunk_first = 0;
  a.block_first[0] = a.block_first[1] = 0;
  a.grid_blocks[0] = int(d.grid.x);
  a.grid_blocks[1] = int(d.grid.y);
  keep_all(s, a.keep);
  if (c.cpml_apart) {
    apart_box(s, c, d.grid, a.interior);
    d.layer_points = layer_boxes(s, 0, s.nz);
    if (c.cpml_beside) {
      keep_box(s, a.keep);
      d.keep_chunks[0] = a.keep[2][0] / c.nw;
      d.keep_chunks[1] = a.keep[2][1] <= a.keep[2][0] ? d.keep_chunks[0] : (a.keep[2][1] + c.nw - 1) / c.nw;
      d.side_chunks = c.side > 0 ? count_side_chunks(d.layer_points, c.side, d.grid, d.block) : 0;
    }
  } else {
    interior_box(s, c, d.grid, a.interior);
    if (!c.split)  // an empty box: the boundary kernel runs every block
      for (auto& r : a.interior) r[0] = r[1] = 0;
  }
  a.line = s.line;
  a.slice = s.slice;
  a.ahead = c.ahead;
  for (int r = 0; r < kMaxTaps; ++r) {
    a.w2[r] = s.w2[size_t(r)];
    a.w1[r] = s.w1[size_t(r)];
  }
  for (int ax = 0; ax < 3; ++ax) {
    a.axis[ax] = s.axis[ax];
    a.coef[ax] = d.coef[ax].p;
  }
  d.point_args_at_memory();
  a.free_surface = s.free_surface;
  a.tap_start = d.tap_start.p;
  a.tap_key = d.tap_key.p;
  a.taps = d.taps.p;
  a.wavelets = d.wavelets.p;
  a.nt = s.nt;
  RecordArgs& r = d.record;
  r.start = d.rec_start.p;
  r.offset = d.rec_offset.p;
  r.weight = d.rec_weight.p;
  r.traces = d.traces.p;
  r.nrec = s.nrec;
  r.nt = s.nt;
}

void AcousticGpu::Impl::point_args_at_memory() {
  for (int ax = 0; ax < 3; ++ax) {
    args.psi[ax] = pml[ax][0].p;
    args.chi[ax] = pml[ax][1].p;
    args.phi[ax] = pml[ax][2].p;
  }
}

void AcousticGpu::Impl::ready_temporal(const acoustic::Setup<float>& s) {
  temporal.reset();
  if (!c.temporal) return;
  const acoustic::PmlCoef<float>* const coefs[3] = {coef[0].p, coef[1].p, coef[2].p};
  temporal = std::make_unique<TemporalLaunch>(s, c, m.p, coefs, wavelets.p,
                                              TemporalReceivers{rec_start.p, rec_weight.p, traces.p});
}

void AcousticGpu::Impl::ready_resident(const acoustic::Setup<float>& s) {
  resident.reset();
  if (c.resident) resident = std::make_unique<ResidentLaunch>(s, c, traces.p);
}

void AcousticGpu::Impl::swap_sets() {
  std::swap(u, u2);
  std::swap(prev, prev2);
  for (int a = 0; a < 3; ++a)
    for (int v = 0; v < 3; ++v) std::swap(pml[a][v], pml2[a][v]);
  flipped = !flipped;
  point_args_at_memory();
}

void AcousticGpu::Impl::temporal_pass(int64_t n) {
  TemporalLevels l{};
  l.u = u.p + s.origin;
  l.prev = prev.p + s.origin;
  l.u_out = u2.p + s.origin;
  l.prev_out = prev2.p + s.origin;
  for (int a = 0; a < 3; ++a)
    for (int v = 0; v < 3; ++v) {
      l.pml_in[a][v] = pml[a][v].p;
      l.pml_out[a][v] = pml2[a][v].p;
    }
  temporal->launch(l, n, args.step_base, stream);
  swap_sets();
}

AcousticGpu::AcousticGpu(const acoustic::Setup<float>& s, const KernelConfig& c, const MediumOnGpu* medium)
    : impl_(std::make_unique<Impl>()) {
  Impl& d = *impl_;
  const size_t smem = check_launch(s, c);
  d.allocate(s, c, smem, medium);
  d.upload_sources(s);
  d.upload_receivers(s);
  static_cast<acoustic::SetupFrame<float>&>(d.s) = s;  // m is on the device now
  d.fill_args(s, c);
  d.ready_temporal(s);
  d.ready_resident(s);
  // The memsets and uploads above ran on the legacy stream, which the run's non-blocking stream
  // does not wait for (and a memset, or a pageable upload's last DMA, may still be in flight):
  // done before any step, receiver sample or resume's upload is enqueued on the run's stream.
  FDS_CUDA_CHECK(cudaStreamSynchronize(cudaStreamLegacy));
}

AcousticGpu::~AcousticGpu() = default;

std::string AcousticGpu::describe() const {
  const Impl& d = *impl_;
  const int threads = int(d.block.x * d.block.y);
  const int64_t inner = interior_blocks(d.args);
  // regs, spill_bytes, occupancy: the kernel that runs the interior (the boundary kernel where the
  // box is empty, split 0 among them); then the boundary kernel's.
  const nlohmann::json b = kernel_resources(d.kernels.boundary, threads, d.boundary_smem);
  const nlohmann::json r = inner > 0 ? kernel_resources(d.kernels.interior, threads, d.smem) : b;
  return wave::describe(d.c) + " R=" + std::to_string(d.s.radius) + (d.s.dim == 3 ? " 3D" : " 2D") +
         (d.temporal ? d.temporal->describe() : "") + (d.resident ? d.resident->describe() : "") +
         " regs=" + r.value("regs", nlohmann::json()).dump() +
         " spill_bytes=" + r.value("spill_bytes", nlohmann::json()).dump() +
         " occupancy=" + r.value("occupancy", nlohmann::json()).dump() +
         " boundary_regs=" + b.value("regs", nlohmann::json()).dump() +
         " boundary_spill_bytes=" + b.value("spill_bytes", nlohmann::json()).dump() +
         " boundary_occupancy=" + b.value("occupancy", nlohmann::json()).dump() +
         " interior_blocks=" + std::to_string(inner) +
         (d.c.side > 0 ? " side_regs=" + kernel_resources(beside_kernel(d.s.radius, d.c.vec), threads, 0)
                                             .value("regs", nlohmann::json())
                                             .dump()
                       : "");
}

namespace {

// Steps of a split run whose exchange and inner chunks are timed: from the third on (the first
// pay for NCCL's connection setup), this many.
constexpr int64_t kSplitWarmup = 2, kSplitSamples = 128;

}  // namespace

void AcousticGpu::step(int64_t n) {
  Impl& d = *impl_;
  d.begin_step(n, false);
  d.launch_step(n, d.stream);
  std::swap(d.u, d.prev);
}

namespace {

__global__ void set_step_base(int64_t* base, int64_t step) { *base = step; }
__global__ void advance_step_base(int64_t* base, int64_t steps) { *base += steps; }

}  // namespace

// c.graph steps from a step base: the kernels of step() with steps 0, 1, ... relative to
// *step_base, then the base advanced past them. The arguments are the state's as they are now
// (renew drops the graphs).
cudaGraphExec_t AcousticGpu::Impl::capture() {
  args.step_base = record.step_base = step_base.p;
  const float* first_u = u.p;
  const bool first_flipped = flipped;
  cudaGraph_t graph = nullptr;
  FDS_CUDA_CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
  try {
    for (int k = 0; k < c.graph;) {
      if (temporal) {  // c.graph is a multiple of 2 T: the passes end on the arrays they start from
        temporal_pass(k);
        k += temporal->steps();
        continue;
      }
      begin_step(k, false);
      launch_step(k, stream);
      std::swap(u, prev);
      ++k;
    }
    advance_step_base<<<1, 1, 0, stream>>>(step_base.p, c.graph);
    FDS_CUDA_CHECK_LAUNCH();
  } catch (...) {
    cudaStreamEndCapture(stream, &graph);
    if (graph) cudaGraphDestroy(graph);
    if (flipped != first_flipped) swap_sets();
    if (u.p != first_u) std::swap(u, prev);
    args.step_base = record.step_base = nullptr;
    throw;
  }
  args.step_base = record.step_base = nullptr;
  FDS_CUDA_CHECK(cudaStreamEndCapture(stream, &graph));
  cudaGraphExec_t exec = nullptr;
  const cudaError_t made = cudaGraphInstantiate(&exec, graph, 0);
  cudaGraphDestroy(graph);
  FDS_CUDA_CHECK(made);
  return exec;
}

cudaGraphExec_t AcousticGpu::Impl::graph_now() {
  for (const Graph& g : graphs)
    if (g.exec && g.u == u.p && g.flipped == flipped) return g.exec;
  // Each (array holding u^n, set of arrays) has its graph: two without temporal blocking, four
  // with. A free slot, or the last one again.
  Graph* free = &graphs[3];
  for (Graph& g : graphs)
    if (!g.exec) {
      free = &g;
      break;
    }
  if (free->exec) cudaGraphExecDestroy(free->exec);
  free->exec = capture();
  free->u = u.p;
  free->flipped = flipped;
  return free->exec;
}

void AcousticGpu::steps(int64_t first, int64_t count) {
  Impl& d = *impl_;
  if (d.resident && count > 0) {  // the whole block in one kernel; it leaves the levels as count steps do
    d.resident->launch(d.args, d.u.p, d.prev.p, first, count, d.stream);
    if (count % 2 == 1) std::swap(d.u, d.prev);
    return;
  }
  const int64_t g = d.c.graph, end = first + count;
  int64_t n = first;
  if (g > 0 && count >= g) {
    const cudaGraphExec_t exec = d.graph_now();
    set_step_base<<<1, 1, 0, d.stream>>>(d.step_base.p, n);
    FDS_CUDA_CHECK_LAUNCH();
    for (; n + g <= end; n += g) FDS_CUDA_CHECK(cudaGraphLaunch(exec, d.stream));
  }
  if (d.temporal)
    for (const int T = d.temporal->steps(); n + T <= end; n += T) d.temporal_pass(n);
  for (; n < end; ++n) step(n);
}

int AcousticGpu::graph_steps() const { return impl_->c.graph; }

void AcousticGpu::mark(int slot) {
  cudaEvent_t& e = impl_->marks[slot];
  if (!e) FDS_CUDA_CHECK(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
  FDS_CUDA_CHECK(cudaEventRecord(e, impl_->stream));
}

void AcousticGpu::wait_mark(int slot) {
  if (impl_->marks[slot]) FDS_CUDA_CHECK(cudaEventSynchronize(impl_->marks[slot]));
}

void AcousticGpu::Impl::ready_split() {
  Split& sp = split;
  if (sp.ready) return;
  const int64_t R = s.radius, nz = s.nz;
  sp.chunks = int(grid.z);
  sp.lower_end = int((R + c.nw - 1) / c.nw);
  sp.upper_begin = int((nz - R) / c.nw);
  if (sp.lower_end >= sp.upper_begin) sp.lower_end = sp.upper_begin = sp.chunks;  // all faces, no inside
  if (c.cpml_apart) {  // the layers' points of the face chunks' planes and of the inner chunks'
    const int64_t lower = std::min<int64_t>(int64_t(sp.lower_end) * c.nw, nz);
    const int64_t upper = std::min<int64_t>(int64_t(std::max(sp.lower_end, sp.upper_begin)) * c.nw, nz);
    sp.face_layers[0] = layer_boxes(s, 0, lower);
    sp.face_layers[1] = layer_boxes(s, upper, nz);
    sp.inner_layers = layer_boxes(s, lower, upper);
  }
  // The exchange's stream at the device's highest priority: its kernels (NCCL's copies) become
  // ready when the face chunks end, as the inner chunks' thousands of blocks do, and at the same
  // priority the block scheduler fills the SMs with the latter first, so the exchange ended only
  // with them (H200 pair: measured as long as the inner chunks, hiding nothing).
  int least = 0, greatest = 0;
  FDS_CUDA_CHECK(cudaDeviceGetStreamPriorityRange(&least, &greatest));
  FDS_CUDA_CHECK(cudaStreamCreateWithPriority(&sp.stream, cudaStreamNonBlocking, greatest));
  FDS_CUDA_CHECK(cudaEventCreateWithFlags(&sp.handover, cudaEventDisableTiming));
  FDS_CUDA_CHECK(cudaEventCreateWithFlags(&sp.exchanged, cudaEventDisableTiming));
  // The timed steps' events, made now rather than inside the time loop.
  sp.samples.resize(size_t(kSplitSamples));
  for (auto& q : sp.samples)
    for (cudaEvent_t& e : q) FDS_CUDA_CHECK(cudaEventCreate(&e));
  sp.ready = true;
}

AcousticGpu::Halo AcousticGpu::Impl::halo_of(float* level) const {
  const int64_t R = s.radius, nz = s.nz;
  float* plane0 = level + (s.origin - s.origin % s.slice);
  return Halo{plane0,
              plane0 - R * s.slice,
              plane0 + (nz - R) * s.slice,
              plane0 + nz * s.slice,
              R * s.slice * int64_t(sizeof(float)),
              split.stream};
}

AcousticGpu::Halo AcousticGpu::current_halo() {
  Impl& d = *impl_;
  d.ready_split();
  FDS_CUDA_CHECK(cudaStreamSynchronize(d.stream));  // u^n is written
  return d.halo_of(d.u.p);
}

AcousticGpu::Halo AcousticGpu::step_faces(int64_t n) {
  Impl& d = *impl_;
  Impl::Split& sp = d.split;
  // The layers beside the march are one GPU's: a slab steps in parts.
  if (d.c.cpml_beside)
    throw Error(ErrorKind::invalid_argument,
                "a slab of a split run adds its layers' terms after its march, not beside");
  d.ready_split();
  d.begin_step(n, true);
  // faces 1: the face chunks on the exchange's stream, at its priority, so that the inner chunks'
  // blocks fill the SMs the faces' launches leave idle (their ramps and tails) instead of
  // starting only after them. Both write u^{n+1} at planes of their own and read u^n, whole once
  // the run's stream reaches this step.
  const bool beside = d.c.faces == 1;
  if (beside) {
    FDS_CUDA_CHECK(cudaEventRecord(sp.handover, d.stream));
    FDS_CUDA_CHECK(cudaStreamWaitEvent(sp.stream, sp.handover, 0));
  }
  const cudaStream_t on = beside ? sp.stream : d.stream;
  d.launch_chunks(0, sp.lower_end, n, on);
  d.launch_chunks(std::max(sp.lower_end, sp.upper_begin), sp.chunks, n, on);
  if (d.c.cpml_apart)  // the faces' layer points complete before they go out
    for (const LayerBoxes& b : sp.face_layers) launch_layers(d.args, b, d.s.radius, d.s.dim == 3, on);
  if (!beside) {
    FDS_CUDA_CHECK(cudaEventRecord(sp.handover, d.stream));
    FDS_CUDA_CHECK(cudaStreamWaitEvent(sp.stream, sp.handover, 0));
  }
  const int64_t sample = sp.calls - sp.sampled_from - kSplitWarmup;
  if (sample >= 0 && sample < kSplitSamples)
    FDS_CUDA_CHECK(cudaEventRecord(sp.samples[size_t(sample)][0], sp.stream));
  // u^{n+1} is being written over u^{n-1}: its planes 0..R-1 and nz-R..nz-1 go out, its halo
  // planes -R..-1 and nz..nz+R-1 come in.
  return d.halo_of(d.prev.p);
}

void AcousticGpu::step_inside(int64_t n, bool overlap) {
  Impl& d = *impl_;
  Impl::Split& sp = d.split;
  if (!sp.ready) throw Error(ErrorKind::invalid_argument, "step_inside without step_faces");
  const int64_t sample = sp.calls - sp.sampled_from - kSplitWarmup;
  const bool timed = sample >= 0 && sample < kSplitSamples;
  if (timed) FDS_CUDA_CHECK(cudaEventRecord(sp.samples[size_t(sample)][1], sp.stream));
  FDS_CUDA_CHECK(cudaEventRecord(sp.exchanged, sp.stream));
  if (!overlap) FDS_CUDA_CHECK(cudaStreamWaitEvent(d.stream, sp.exchanged, 0));
  if (timed) FDS_CUDA_CHECK(cudaEventRecord(sp.samples[size_t(sample)][2], d.stream));
  d.launch_chunks(sp.lower_end, sp.upper_begin, n, d.stream);
  if (d.c.cpml_apart) launch_layers(d.args, sp.inner_layers, d.s.radius, d.s.dim == 3, d.stream);
  if (timed) FDS_CUDA_CHECK(cudaEventRecord(sp.samples[size_t(sample)][3], d.stream));
  FDS_CUDA_CHECK(cudaStreamWaitEvent(d.stream, sp.exchanged, 0));
  ++sp.calls;
  std::swap(d.u, d.prev);
}

AcousticGpu::SplitTiming AcousticGpu::split_timing() {
  Impl& d = *impl_;
  SplitTiming t;
  const int64_t timed =
      std::clamp<int64_t>(d.split.calls - d.split.sampled_from - kSplitWarmup, 0, kSplitSamples);
  if (timed == 0) return t;
  FDS_CUDA_CHECK(cudaStreamSynchronize(d.stream));
  FDS_CUDA_CHECK(cudaStreamSynchronize(d.split.stream));
  std::vector<double> x, in;
  for (int64_t i = 0; i < timed; ++i) {
    const auto& q = d.split.samples[size_t(i)];
    float a = 0, b = 0;
    FDS_CUDA_CHECK(cudaEventElapsedTime(&a, q[0], q[1]));
    FDS_CUDA_CHECK(cudaEventElapsedTime(&b, q[2], q[3]));
    x.push_back(a);
    in.push_back(b);
  }
  const auto median = [](std::vector<double>& v) {
    std::nth_element(v.begin(), v.begin() + std::ptrdiff_t(v.size() / 2), v.end());
    return v[v.size() / 2];
  };
  t.samples = int64_t(x.size());
  t.exchange_ms = median(x);
  t.inside_ms = median(in);
  return t;
}

void AcousticGpu::restart_split_timing() {
  synchronize();  // both streams: the sampled events are not recorded again while in flight
  impl_->split.sampled_from = impl_->split.calls;
}

void AcousticGpu::synchronize() {
  FDS_CUDA_CHECK(cudaStreamSynchronize(impl_->stream));
  if (impl_->split.ready) FDS_CUDA_CHECK(cudaStreamSynchronize(impl_->split.stream));
}

void AcousticGpu::download_current(float* host) { impl_->u.download(host, impl_->stream); }

std::vector<float> AcousticGpu::traces() {
  std::vector<float> t(size_t(impl_->traces.n));
  impl_->traces.download(t.data(), impl_->stream);
  return t;
}

int64_t AcousticGpu::state_array_bytes(int i) const { return impl_->state_array(i).bytes(); }

void AcousticGpu::copy_state_array(int i, void* host) {
  impl_->state_array(i).download(static_cast<float*>(host), impl_->stream);
}

void AcousticGpu::restore(const acoustic::State<float>& st) {
  Impl& d = *impl_;
  const auto put = [&](DeviceArray<float>& a, const std::vector<float>& v, const char* what) {
    if (int64_t(v.size()) != a.n)
      throw Error(ErrorKind::invalid_argument, std::string("restore: ") + what + " has " +
                                                   std::to_string(v.size()) + " elements, the run's " +
                                                   std::to_string(a.n));
    a.upload(v.data(), d.stream);
  };
  put(d.u, st.u, "u");
  put(d.prev, st.u_prev, "u_prev");
  for (int a = 0; a < 3; ++a)
    for (int v = 0; v < 3; ++v) put(d.pml[a][v], st.pml[a][v], "a CPML memory variable");
  put(d.traces, st.traces, "traces");
}

namespace {

// Whether two setups have one storage and one set of absorbing layers: a state built for one takes
// the other's run (AcousticGpu::renew).
bool same_grid(const acoustic::Setup<float>& a, const acoustic::Setup<float>& b) {
  bool same = a.dim == b.dim && a.radius == b.radius && a.nx == b.nx && a.ny == b.ny && a.nz == b.nz &&
              a.line == b.line && a.slice == b.slice && a.origin == b.origin && a.alloc == b.alloc;
  for (int ax = 0; ax < 3; ++ax)
    same = same && a.axis[ax].lo == b.axis[ax].lo && a.axis[ax].hi == b.axis[ax].hi &&
           a.axis[ax].n == b.axis[ax].n && a.axis[ax].offset == b.axis[ax].offset &&
           a.coef[ax].size() == b.coef[ax].size();
  return same;
}

}  // namespace

void AcousticGpu::renew(const acoustic::Setup<float>& s) {
  Impl& d = *impl_;
  if (!same_grid(d.s, s))
    throw Error(ErrorKind::invalid_argument,
                "a kept GPU state renewed for another grid: it takes runs of its own storage and layers");
  if (d.split.ready)
    throw Error(ErrorKind::invalid_argument, "a split run's GPU state is not kept for another run");
  FDS_CUDA_CHECK(cudaStreamSynchronize(d.stream));  // the last run's steps and downloads are over
  d.drop_graphs();                                  // they hold the last run's taps, wavelets and traces
  // The taps, wavelets and traces are this run's own, and may need more than the last run's.
  if (const int64_t grow =
          state_bytes(s) + temporal_bytes(s, d.c) + beside_bytes(s, d.c) + resident_bytes(s, d.c) - bytes();
      grow > 0)
    ensure_device_memory(grow, "the wave solver's state");
  d.u.zero();
  d.prev.zero();
  d.traces = DeviceArray<float>();  // freed before the new run's, which may be larger
  for (int a = 0; a < 3; ++a) {
    d.coef[a] = DeviceArray<acoustic::PmlCoef<float>>(s.coef[a].data(), int64_t(s.coef[a].size()));
    for (auto& v : d.pml[a]) v.zero();
  }
  d.upload_sources(s);
  d.upload_receivers(s);
  static_cast<acoustic::SetupFrame<float>&>(d.s) = s;  // the kept m is the state's own
  d.fill_args(s, d.c);
  d.ready_temporal(s);
  d.ready_resident(s);
  // As the constructor's: the legacy stream's memsets and uploads done before the run's stream goes.
  FDS_CUDA_CHECK(cudaStreamSynchronize(cudaStreamLegacy));
}

const float* AcousticGpu::current_device() const { return impl_->u.p; }
float* AcousticGpu::current_device() { return impl_->u.p; }
const float* AcousticGpu::previous_device() const { return impl_->prev.p; }
const float* AcousticGpu::medium_device() const { return impl_->m.p; }
void* AcousticGpu::stream() const { return impl_->stream; }

int64_t AcousticGpu::snapshot_elements() const {
  int64_t n = 0;
  for (int i = 0; i < acoustic::kStateArrays - 1; ++i) n += impl_->state_array(i).n;
  return n;
}

// Arrays 0 .. kStateArrays - 2 back to back. The temporal design's second set is not used by
// step(), the only stepping these snapshots serve.
void AcousticGpu::snapshot(float* device) const {
  for (int i = 0; i < acoustic::kStateArrays - 1; ++i) {
    const DeviceArray<float>& a = impl_->state_array(i);
    if (a.n == 0) continue;
    FDS_CUDA_CHECK(cudaMemcpyAsync(device, a.p, size_t(a.bytes()), cudaMemcpyDeviceToDevice, impl_->stream));
    device += a.n;
  }
}

void AcousticGpu::resume(const float* device) {
  for (int i = 0; i < acoustic::kStateArrays - 1; ++i) {
    const DeviceArray<float>& a = impl_->state_array(i);
    if (a.n == 0) continue;
    FDS_CUDA_CHECK(cudaMemcpyAsync(a.p, device, size_t(a.bytes()), cudaMemcpyDeviceToDevice, impl_->stream));
    device += a.n;
  }
}

int64_t AcousticGpu::bytes() const {
  const Impl& d = *impl_;
  int64_t b = d.u.bytes() + d.prev.bytes() + d.m.bytes() + d.tap_start.bytes() + d.tap_key.bytes() +
              d.taps.bytes() + d.layer_tap_key.bytes() + d.layer_taps.bytes() + d.rec_start.bytes() +
              d.rec_offset.bytes() + d.rec_weight.bytes() + d.wavelets.bytes() + d.traces.bytes();
  for (int a = 0; a < 3; ++a) {
    b += d.coef[a].bytes();
    for (const auto& v : d.pml[a]) b += v.bytes();
    for (const auto& v : d.pml2[a]) b += v.bytes();
  }
  b += d.u2.bytes() + d.prev2.bytes() + (d.temporal ? d.temporal->bytes() : 0) +
       (d.resident ? d.resident->bytes() : 0);
  return b;
}

}  // namespace fdstencil::cuda::wave
