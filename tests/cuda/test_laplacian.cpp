// Every CUDA Laplacian variant, every parameter value, against the reference on odd sizes with
// padded strides (the harness NaN-poisons the output and checks the halo stays untouched).
// Skipped, never passed, without a GPU.
#include <gtest/gtest.h>

#include "bench/harness.hpp"
#include "core/variant.hpp"
#include "fdstencil/device.hpp"
#include "plan/registry.hpp"
#include "fdstencil/error.hpp"

using namespace fdstencil;
using namespace fdstencil::bench;

namespace {

// GTEST_SKIP returns from the function it is in, so it must stand in each test body.
#define REQUIRE_GPU() \
  if (cuda::device_count() == 0) GTEST_SKIP() << "no GPU: " << cuda::no_device_reason()

Problem grid_problem(Extents size, DType t, int64_t align = kAlignBytes) {
  return make_problem({Op::laplacian7, 1, {0.5, 0.25, 2.0}}, interior_from_size(Op::laplacian7, size), t,
                      align);
}

BenchOptions verify_only() {
  BenchOptions o;
  o.warmup = 0;
  o.reps = 0;
  return o;
}

const Variant& variant(const std::string& name) {
  for (const Variant* v : find_variants(Op::laplacian7, "cuda"))
    if (v->name == name) return *v;
  throw std::runtime_error("no variant " + name);
}

void expect_ok(const std::string& name, Extents size, const Params& params) {
  for (DType t : {DType::f32, DType::f64}) {
    const auto rec = run_variant(variant(name), grid_problem(size, t), params, verify_only(), 1.0);
    EXPECT_EQ(rec["status"], "verified") << name << " " << params.dump() << " " << rec.dump();
    EXPECT_TRUE(rec["verified"].get<bool>());
  }
}

}  // namespace

TEST(CudaLaplacian, RegistryHoldsTheSeries) {
  std::vector<std::string> names;
  for (const Variant* v : find_variants(Op::laplacian7, "cuda")) names.push_back(v->name);
  EXPECT_EQ(names, (std::vector<std::string>{"k1", "k2", "k3", "k4", "k5", "k6_block", "k6", "k7",
                                             "shfl_march", "bulk_ring", "pipelined"}));
}

// Result files and tuning caches from before issue 32 name ours k8_shfl, k8 and k9: they still
// find the kernels, and no other operator's variant is renamed.
TEST(CudaLaplacian, FormerNamesFindTheRenamedKernels) {
  const std::pair<const char*, const char*> renamed[] = {
      {"k8_shfl", "shfl_march"}, {"k8", "bulk_ring"}, {"k9", "pipelined"}};
  for (const auto& [former, current] : renamed) {
    const Variant* v = find_variant(Op::laplacian7, "cuda", former);
    ASSERT_NE(v, nullptr) << former;
    EXPECT_EQ(v->name, current);
  }
  EXPECT_EQ(find_variant(Op::d2xyz, "cuda", "k9"), nullptr);
  EXPECT_EQ(current_variant_name(Op::d2xyz, "k9"), "k9");
  EXPECT_EQ(current_variant_name(Op::laplacian7, "k7"), "k7");
}

TEST(CudaLaplacian, EveryVariantDefaultsOnOddSizes) {
  REQUIRE_GPU();
  // ny + 2 = 48 takes every tiling factor; nx and nz are odd and the lines padded.
  for (const Variant* v : find_variants(Op::laplacian7, "cuda"))
    for (Extents size : {Extents{37, 48, 19}, Extents{131, 16, 7}})
      expect_ok(v->name, size, Params::object());
}

TEST(CudaLaplacian, EveryTilingFactorAndLaunchBound) {
  REQUIRE_GPU();
  for (const std::string name : {"k2", "k3", "k4", "k5", "k6", "k7"})
    for (int m : {1, 2, 4, 8, 16}) {
      Params p = {{"m", m}, {"block", "64x2x1"}};
      if (name != "k2" && name != "k3") p["lb"] = 128;
      expect_ok(name, {37, 48, 19}, p);
    }
  for (int lb : {128, 256, 512, 1024}) expect_ok("k5", {37, 48, 19}, {{"lb", lb}, {"block", "128x1x1"}});
  expect_ok("k1", {37, 48, 19}, {{"block", "32x4x2"}});
  expect_ok("k6_block", {37, 48, 19}, Params::object());
}

TEST(CudaLaplacian, EverySubdomainCount) {
  REQUIRE_GPU();
  for (int s : {0, 1, 2, 3, 5}) expect_ok("k7", {37, 48, 19}, {{"subdomains", s}, {"m", 4}});
}

TEST(CudaLaplacian, ZmarchShapesAndChunks) {
  REQUIRE_GPU();
  for (int ty : {4, 8, 16})
    for (int nzc : {0, 1, 3, 64})
      for (Extents size : {Extents{37, 48, 19}, Extents{3, 3, 3}, Extents{258, 21, 9}, Extents{67, 70, 33}}) {
        expect_ok("shfl_march", size, {{"ty", ty}, {"nzc", nzc}});
        for (int stages : {4, 6, 8})
          expect_ok("bulk_ring", size, {{"ty", ty}, {"nzc", nzc}, {"stages", stages}});
      }
}

// pipelined (the seismic pipelined tile at R = 1): block shapes narrower and shorter than a vector's
// halo, 512-thread blocks, window lengths from 1 to more planes than the grid, both launch
// orders, on grids down to one interior point.
TEST(CudaLaplacian, PipelinedTileShapesAndWindows) {
  REQUIRE_GPU();
  for (const char* block : {"16x16x1", "32x8x1", "1x1x1", "3x5x1", "64x8x1"})
    for (int nw : {1, 2, 4, 7, 300})
      for (Extents size : {Extents{37, 48, 19}, Extents{3, 3, 3}, Extents{258, 21, 9}, Extents{67, 70, 33}})
        for (const char* order : {"xyz", "zxy"})
          expect_ok("pipelined", size, {{"block", block}, {"nw", nw}, {"order", order}});
}

// pipelined in strips along y, launched in turn: strips of whole tiles and a short last one, more
// strips than tile rows and than rows, and the automatic count (one strip on these small planes;
// the benchmarks verified it at 2 to 16 strips, lap-k9-strips-*.json).
TEST(CudaLaplacian, PipelinedTileInStrips) {
  REQUIRE_GPU();
  for (int strips : {0, 2, 3, 7, 100})
    for (int nw : {1, 4})
      for (const char* block : {"32x4x1", "3x5x1"})
        for (Extents size : {Extents{37, 48, 19}, Extents{3, 3, 3}, Extents{67, 70, 33}})
          for (const char* order : {"xyz", "zxy"})
            expect_ok("pipelined", size,
                      {{"block", block}, {"nw", nw}, {"order", order}, {"strips", strips}});
}

// pipelined with two rows a thread (my 2): odd row counts leave threads whose second row is outside,
// with strips and both orders; 1 x 1 blocks make tiles of two rows.
TEST(CudaLaplacian, PipelinedTileTwoRowsAThread) {
  const auto bad = run_variant(variant("pipelined"), grid_problem({37, 48, 19}, DType::f32), {{"my", 3}},
                               verify_only(), 1.0);
  EXPECT_EQ(bad["status"], "unsupported");
  EXPECT_NE(bad["reason"].get<std::string>().find("my 3"), std::string::npos) << bad.dump();
  REQUIRE_GPU();
  for (const char* block : {"32x4x1", "3x5x1", "1x1x1"})
    for (int nw : {1, 4, 300})
      for (int strips : {1, 3})
        for (Extents size : {Extents{37, 49, 19}, Extents{3, 3, 3}, Extents{67, 70, 33}})
          for (const char* order : {"xyz", "zxy"})
            expect_ok("pipelined", size,
                      {{"block", block}, {"nw", nw}, {"order", order}, {"strips", strips}, {"my", 2}});
}

// The launches pipelined makes, as the record reports them: one grid per strip, chunk-first under zxy.
// A planner that ignored `strips` or `order` would still verify, with one whole-plane grid.
TEST(CudaLaplacian, PipelinedTileLaunchesOneGridPerStrip) {
  REQUIRE_GPU();
  // Interior 65 x 68 x 31; 32 x 4 blocks of 4-float vectors: 1 x tile, 17 tile rows, nw 4: 8 chunks.
  const auto grids = [](const Params& params) {
    const auto rec =
        run_variant(variant("pipelined"), grid_problem({67, 70, 33}, DType::f32), params, verify_only(), 1.0);
    EXPECT_EQ(rec["status"], "verified") << rec.dump();
    const nlohmann::json g = rec.value("grid", nlohmann::json());
    return g.is_array() ? g : nlohmann::json::array({g});
  };
  const Params base = {{"block", "32x4x1"}, {"nw", 4}};
  auto with = [&](const Params& extra) {
    Params p = base;
    p.update(extra);
    return p;
  };
  EXPECT_EQ(grids(with({{"strips", 1}})), nlohmann::json::array({"1x17x8"}));
  // 3 strips: ceil(68 / 3) = 23 rows, rounded up to whole tiles: 24, 24, 20 rows.
  EXPECT_EQ(grids(with({{"strips", 3}})), nlohmann::json::array({"1x6x8", "1x6x8", "1x5x8"}));
  // More strips than tile rows: one tile row each.
  EXPECT_EQ(grids(with({{"strips", 100}})).size(), 17u);
  EXPECT_EQ(grids(with({{"strips", 2}, {"order", "zxy"}})), nlohmann::json::array({"8x1x9", "8x1x8"}));
  // Two rows a thread: 8 rows a tile, 9 tile rows; in 3 strips of 24, 24 and 20 rows, 3 each.
  EXPECT_EQ(grids(with({{"my", 2}})), nlohmann::json::array({"1x9x8"}));
  EXPECT_EQ(grids(with({{"my", 2}, {"strips", 3}})), nlohmann::json::array({"1x3x8", "1x3x8", "1x3x8"}));
}

TEST(CudaLaplacian, PipelinedTileNamesABadOrderOrStripCount) {
  const auto rec = run_variant(variant("pipelined"), grid_problem({37, 48, 19}, DType::f32),
                               {{"order", "yxz"}}, verify_only(), 1.0);
  EXPECT_EQ(rec["status"], "unsupported");
  EXPECT_NE(rec["reason"].get<std::string>().find("order 'yxz'"), std::string::npos) << rec.dump();
  const auto rec2 = run_variant(variant("pipelined"), grid_problem({37, 48, 19}, DType::f32),
                                {{"strips", -1}}, verify_only(), 1.0);
  EXPECT_EQ(rec2["status"], "unsupported");
  EXPECT_NE(rec2["reason"].get<std::string>().find("strips -1"), std::string::npos) << rec2.dump();
}

TEST(CudaLaplacian, UnsupportedShapesSayWhy) {
  // No GPU needed: can_run is a host-side check.
  const auto rec =
      run_variant(variant("k5"), grid_problem({37, 47, 19}, DType::f32), {{"m", 8}}, verify_only(), 1.0);
  EXPECT_EQ(rec["status"], "unsupported");
  EXPECT_NE(rec["reason"].get<std::string>().find("multiple of m"), std::string::npos);
  const auto rec2 = run_variant(variant("k4"), grid_problem({37, 48, 19}, DType::f32),
                                {{"lb", 128}, {"block", "256x1x1"}}, verify_only(), 1.0);
  EXPECT_EQ(rec2["status"], "unsupported");
  EXPECT_NE(rec2["reason"].get<std::string>().find("launch bound"), std::string::npos);
}

// Host-side checks of the registry: no GPU needed, so CI runs them.
TEST(CudaLaplacian, VectorKernelsRefuseTheUnalignedLayout) {
  for (const std::string name : {"bulk_ring", "shfl_march", "pipelined"}) {
    const Problem p = grid_problem({66, 48, 19}, DType::f32, 1);
    const auto rec = run_variant(variant(name), p, Params::object(), verify_only(), 1.0);
    EXPECT_EQ(rec["status"], "unsupported") << name;
    EXPECT_NE(rec["reason"].get<std::string>().find("aligned"), std::string::npos) << rec.dump();
  }
}

TEST(CudaLaplacian, WrongTypedParameterIsAClearError) {
  EXPECT_THROW(merge_params(variant("k2"), {{"m", "abc"}}), Error);
  EXPECT_THROW(merge_params(variant("k1"), {{"block", 256}}), Error);
  EXPECT_THROW(merge_params(variant("bulk_ring"), {{"ty", "abc"}}), Error);
  try {
    merge_params(variant("k2"), {{"m", "abc"}});
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::invalid_argument);
    EXPECT_NE(std::string(e.what()).find("'m'"), std::string::npos) << e.what();
  }
}

TEST(CudaLaplacian, BlockBeyondTheDeviceLimitsIsUnsupported) {
  for (const char* block : {"1x1x128", "2048x1x1", "32x1x1junk", "0x4x1"}) {
    const auto rec = run_variant(variant("k1"), grid_problem({37, 48, 19}, DType::f32), {{"block", block}},
                                 verify_only(), 1.0);
    EXPECT_EQ(rec["status"], "unsupported") << block << " " << rec.dump();
  }
}

// bulk_ring stages rows from one vector left of the tile: it needs 16 - sizeof(T) readable bytes before
// the halo corner, and 1 KiB after the last point; a view without them is refused by name.
TEST(CudaLaplacian, BulkCopyNeedsReadableBytesAroundTheField) {
  const Extents n{62, 46, 17};
  const int64_t line = 64, slice = line * 48;  // 16-byte aligned strides
  const Stencil s{Op::laplacian7, 1, {}};
  const auto why = [&](int64_t tail, int64_t head) {
    return variant("bulk_ring")
        .cannot_run({s, Layout::strided(n, 1, 4, line, slice, 16, tail, head)},
                    merge_params(variant("bulk_ring"), Params::object()));
  };
  EXPECT_NE(why(256, 0).find("before the field's halo corner"), std::string::npos) << why(256, 0);
  EXPECT_NE(why(0, 4).find("past the field's last point"), std::string::npos) << why(0, 4);
  EXPECT_EQ(why(256, 3), "");
  // shfl_march reads nothing before the halo corner.
  EXPECT_EQ(variant("shfl_march")
                .cannot_run({s, Layout::strided(n, 1, 4, line, slice, 16, 256, 0)},
                            merge_params(variant("shfl_march"), Params::object())),
            "");
}
