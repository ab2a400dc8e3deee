// The theoretical-traffic model (theoretical_bytes) against values computed by hand from the
// seeds' formulas, and the two size conventions (interior_from_size / size_from_interior): the
// Laplacian posts count the boundary in their grid size, the seismic posts do not.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>

#include "fdstencil/bytes_model.hpp"
#include "fdstencil/stencil.hpp"
#include "test_util.hpp"

namespace fdstencil {
namespace {

// The posts' headline case: a 512^3 double grid whose boundary is not updated, i.e. a 510^3
// interior. By hand, with N = 512:
//   fetch = (N^3 - 8 corners - 12 edges of N-2 points) * 8
//         = (134,217,728 - 8 - 6,120) * 8 = 134,211,600 * 8 = 1,073,692,800
//   write = 510^3 * 8 = 132,651,000 * 8 = 1,061,208,000
// which the posts quote as 1.074 GB and 1.061 GB.
TEST(BytesModel, Laplacian512CubedDouble) {
  const TheoreticalBytes b = theoretical_bytes(Op::laplacian7, {510, 510, 510}, 1, 8);
  EXPECT_EQ(b.fetch, int64_t{1'073'692'800});
  EXPECT_EQ(b.write, int64_t{1'061'208'000});
  EXPECT_EQ(b.total(), int64_t{1'073'692'800} + int64_t{1'061'208'000});
  EXPECT_EQ(std::llround(static_cast<double>(b.fetch) / 1e6), 1074);  // 1.074 GB
  EXPECT_EQ(std::llround(static_cast<double>(b.write) / 1e6), 1061);  // 1.061 GB
}

// A non-cubic Laplacian: interior 10 x 20 x 30, grid N = 12 x 22 x 32.
//   fetch = (12*22*32 - 8 - 4*10 - 4*20 - 4*30) = 8448 - 248 = 8200 points
//   write = 10*20*30 = 6000 points
// The three edge terms differ, so swapping axes in the formula would be caught.
TEST(BytesModel, LaplacianNonCubic) {
  const TheoreticalBytes d = theoretical_bytes(Op::laplacian7, {10, 20, 30}, 1, 8);
  EXPECT_EQ(d.fetch, 65'600);
  EXPECT_EQ(d.write, 48'000);
  const TheoreticalBytes f = theoretical_bytes(Op::laplacian7, {10, 20, 30}, 1, 4);
  EXPECT_EQ(f.fetch, 32'800);
  EXPECT_EQ(f.write, 24'000);
}

// Seismic ops on a 37 x 23 x 19 interior, R = 4: 16,169 points; the planes across x, y and z
// hold ny*nz = 437, nx*nz = 703 and nx*ny = 851 points; 2R = 8.
//   d2x:   16,169 + 8*437             = 19,665 points -> float 78,660 B
//   d2y:   16,169 + 8*703             = 21,793        -> 87,172
//   d2z:   16,169 + 8*851             = 22,977        -> 91,908
//   d2xy:  16,169 + 8*(437+703)       = 25,289        -> 101,156
//   d2xyz: 16,169 + 8*(437+703+851)   = 32,097        -> 128,388
//   write: 16,169 points              -> float 64,676 B, double 129,352 B
TEST(BytesModel, SeismicNonCubicHandComputed) {
  const Extents n{37, 23, 19};
  struct Row {
    Op op;
    int64_t fetch_float;
  };
  const Row rows[] = {
      {Op::d2x, 78'660}, {Op::d2y, 87'172}, {Op::d2z, 91'908}, {Op::d2xy, 101'156}, {Op::d2xyz, 128'388}};
  for (const Row& row : rows) {
    const TheoreticalBytes f = theoretical_bytes(row.op, n, 4, 4);
    EXPECT_EQ(f.fetch, row.fetch_float) << op_name(row.op);
    EXPECT_EQ(f.write, 64'676) << op_name(row.op);
    const TheoreticalBytes d = theoretical_bytes(row.op, n, 4, 8);
    EXPECT_EQ(d.fetch, 2 * row.fetch_float) << op_name(row.op);
    EXPECT_EQ(d.write, 129'352) << op_name(row.op);
  }
}

// The halo term grows with R: d2z, 8 x 6 x 4 interior (192 points, plane nx*ny = 48), float:
//   R = 1: (192 + 2*48) * 4 = 1,152;  R = 8: (192 + 16*48) * 4 = 3,840.
TEST(BytesModel, SeismicRadiusDependence) {
  EXPECT_EQ(theoretical_bytes(Op::d2z, {8, 6, 4}, 1, 4).fetch, 1'152);
  EXPECT_EQ(theoretical_bytes(Op::d2z, {8, 6, 4}, 8, 4).fetch, 3'840);
  EXPECT_EQ(theoretical_bytes(Op::d2z, {8, 6, 4}, 8, 4).write, 768);
}

// Above about 1290^3 the posts' 32-bit arithmetic overflows. 2048^3, d2xyz, R = 8, float:
//   points = 2^33 = 8,589,934,592; halo = 16 * 3 * 2048^2 = 201,326,592
//   fetch = (8,589,934,592 + 201,326,592) * 4 = 35,165,044,736; write = 2^35 = 34,359,738,368
// and the Laplacian on a 2048^3 interior (N = 2050), double:
//   fetch = (2050^3 - 8 - 12*2048) * 8 = 68,920,803,328; write = 2048^3 * 8 = 68,719,476,736
TEST(BytesModel, LargeSizesUse64BitArithmetic) {
  const TheoreticalBytes s = theoretical_bytes(Op::d2xyz, {2048, 2048, 2048}, 8, 4);
  EXPECT_EQ(s.fetch, int64_t{35'165'044'736});
  EXPECT_EQ(s.write, int64_t{34'359'738'368});
  const TheoreticalBytes z = theoretical_bytes(Op::d2z, {2048, 2048, 2048}, 8, 4);
  EXPECT_EQ(z.fetch, int64_t{34'628'173'824});
  const TheoreticalBytes l = theoretical_bytes(Op::laplacian7, {2048, 2048, 2048}, 1, 8);
  EXPECT_EQ(l.fetch, int64_t{68'920'803'328});
  EXPECT_EQ(l.write, int64_t{68'719'476'736});
}

// laplacian7: the posts' size includes the boundary, so size = interior + 2 on every axis.
// Seismic ops: the size is the interior.
TEST(SizeConvention, LaplacianCountsTheBoundary) {
  EXPECT_EQ(interior_from_size(Op::laplacian7, {512, 512, 512}), (Extents{510, 510, 510}));
  EXPECT_EQ(size_from_interior(Op::laplacian7, {510, 510, 510}), (Extents{512, 512, 512}));
  EXPECT_EQ(interior_from_size(Op::laplacian7, {37, 23, 19}), (Extents{35, 21, 17}));
  EXPECT_EQ(size_from_interior(Op::laplacian7, {35, 21, 17}), (Extents{37, 23, 19}));
}

TEST(SizeConvention, SeismicSizeIsTheInterior) {
  for (Op op : {Op::d2x, Op::d2y, Op::d2z, Op::d2xy, Op::d2xyz}) {
    EXPECT_EQ(interior_from_size(op, {37, 23, 19}), (Extents{37, 23, 19})) << op_name(op);
    EXPECT_EQ(size_from_interior(op, {37, 23, 19}), (Extents{37, 23, 19})) << op_name(op);
  }
}

TEST(SizeConvention, RoundTrips) {
  for (Op op : kAllOps)
    for (const Extents e : {Extents{3, 4, 5}, Extents{512, 256, 128}, Extents{1, 1, 1}})
      EXPECT_EQ(interior_from_size(op, size_from_interior(op, e)), e) << op_name(op);
}

}  // namespace
}  // namespace fdstencil
