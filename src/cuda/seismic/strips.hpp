// The z-marching tile kernels' launch orders and y-strips (issue 13): the `order` and `strips`
// parameters of the pipelined one-pass tile, as the Laplacian's and d2xyz's `pipelined` run it.
//
// In the plain order every tile of one chunk layer (nw planes and their 2R seam planes) runs
// before the next layer, whose seam planes are then read again: from L2 while the layer fits
// in it, from DRAM beyond (H100, Laplacian at R = 1, lap-k9-planes: float at nw 4 fell steeply
// between 4 MB and 8 MB planes). `strips` launches the plane as that many strips
// along y, one after the other, so a layer is a strip's rows only; 0 picks enough strips that a
// layer fits in a share of the L2 the caller names (kLaplacianL2Share, kPipelinedL2Share: each the
// share its kernel measured best). `order` zxy launches the chunks of one column together
// instead (Args::z_first), which keeps seams in L2 at any plane size but spreads a layer's
// tiles in time.
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "cuda/common/check.hpp"
#include "cuda/seismic/launch.hpp"

namespace fdstencil::cuda::seismic {

// The automatic strip count keeps a chunk layer within 1 / share of the L2.
// The Laplacian's pipelined (R = 1): a half. lap-k9-strips: float 1024^3 (a 24 MB layer) lost nothing as one
// strip, and double gained much in 2 strips over the whole plane.
inline constexpr int kLaplacianL2Share = 2;
// d2xyz pipelined (R = 2, 3): a quarter. seis-pipe4-1024 (16 x 8, nw 6, 1024^3, 2, 4 and 8
// strips): 4 led at R = 2 and was within noise of 8 at R = 3.
inline constexpr int kPipelinedL2Share = 4;

// The strip count of `params` ("strips", 1 when absent), the automatic one for 0. At most one
// strip per interior row, so a strip is never empty.
inline int strip_count(const Problem& p, const Params& params, int nw, int l2_share) {
  const int64_t ny = p.interior().ny;
  const int asked = params.value("strips", 1);
  if (asked > 0) return int(std::min<int64_t>(asked, ny));
  int device = 0, l2 = 0;
  FDS_CUDA_CHECK(cudaGetDevice(&device));
  FDS_CUDA_CHECK(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, device));
  const int64_t budget = std::max<int64_t>(l2 / l2_share, 1);
  const int64_t planes = std::min<int64_t>(nw, p.interior().nz) + 2 * p.stencil.radius;  // a chunk, its seams
  const int64_t layer = planes * p.layout.line() * ny * p.layout.elem_bytes();
  return int(std::clamp<int64_t>((layer + budget - 1) / budget, 1, ny));
}

// `base` (kernel, block, nw, smem) launched over the plane in strips of whole tile rows (only the
// last strip has a partial one), each a march grid of `vec`-point threads in the asked order, a
// thread marching `my` rows (a tile has my x block.y rows).
inline std::vector<Launch> strip_launches(const Problem& p, const Params& params, Launch base, int vec,
                                          int l2_share, int my = 1) {
  const int ny = int(p.interior().ny);
  const int by = int(base.block.y) * my;
  const int rows = int(ceil_div(ceil_div(ny, strip_count(p, params, base.nw, l2_share)), by)) * by;
  const bool z_first = params.value("order", std::string("xyz")) == "zxy";
  std::vector<Launch> out;
  for (int y = 0; y < ny; y += rows) {
    Launch l = base;
    l.y_begin = y;
    l.y_count = std::min(rows, ny - y);
    l.grid = dim3(ceil_div(p.interior().nx, int64_t(base.block.x) * vec), ceil_div(l.y_count, by),
                  ceil_div(p.interior().nz, base.nw));
    if (z_first) {
      l.z_first = true;
      l.grid = dim3(l.grid.z, l.grid.x, l.grid.y);
    }
    out.push_back(l);
  }
  return out;
}

// Why `order` and `strips` cannot run on `whole`, the march grid of the whole plane in the plain
// order; "" when they can.
inline std::string strips_cannot_run(const Params& params, dim3 whole) {
  const int strips = params.value("strips", 1);
  if (strips < 0) return "strips " + std::to_string(strips) + " must be 0 (auto) or more";
  const std::string order = params.value("order", std::string("xyz"));
  if (order == "xyz") return grid_cannot_run(whole);
  if (order != "zxy") return "order '" + order + "' must be xyz (z chunks last) or zxy (z chunks first)";
  return grid_cannot_run(dim3(whole.z, whole.x, whole.y));
}

}  // namespace fdstencil::cuda::seismic
