// Every CUDA seismic variant, every radius, float and double, on odd sizes with the aligned and
// the unaligned layout, against the reference (NaN-poisoned output, halo untouched, then the
// posts' i+j+k field whose second derivative is 0). Skipped, never passed, without a GPU.
#include <gtest/gtest.h>

#include <array>
#include <cstring>
#include <cstdio>
#include <string>
#include <tuple>
#include <vector>

#include "bench/harness.hpp"
#include "core/variant.hpp"
#include "fdstencil/device.hpp"
#include "plan/registry.hpp"
#include "plan/verify.hpp"
#include "fdstencil/device_field.hpp"
#include "fdstencil/tune.hpp"

using namespace fdstencil;
using namespace fdstencil::bench;

namespace {

// GTEST_SKIP returns from the function it is in, so it must stand in each test body.
#define REQUIRE_GPU() \
  if (cuda::device_count() == 0) GTEST_SKIP() << "no GPU: " << cuda::no_device_reason()

constexpr Op kSeismicOps[] = {Op::d2x, Op::d2y, Op::d2z, Op::d2xy, Op::d2xyz};

nlohmann::json expect_verified(const Variant& v, Extents n, int radius, DType t, int64_t align,
                               const Params& params) {
  const Problem p = make_problem({v.op, radius, {0.5, 0.25, 2.0}}, n, t, align);
  BenchOptions o;
  o.warmup = 0;
  o.reps = 0;  // verify only
  const auto rec = run_variant(v, p, params, o, 1.0);
  // A named string: comparing the json with a literal inlines into a false GCC 12 -Warray-bounds.
  const std::string status = rec.value("status", std::string());
  EXPECT_EQ(status, "verified") << v.name << " R=" << radius << " align " << align << " " << rec.dump();
  return rec;
}

// The launch grid a record reports ("GXxGYxGZ"), so a test can see that a parameter took effect:
// a planner that ignored nw, vec_bytes, my or order would still verify, with the default grid.
std::array<long, 3> grid_of(const nlohmann::json& rec) {
  std::array<long, 3> g{-1, -1, -1};
  if (!rec.contains("grid")) return g;
  // A pipeline of passes reports one grid per pass: the last is the z march.
  const nlohmann::json& grid = rec["grid"].is_array() ? rec["grid"].back() : rec["grid"];
  const std::string s = grid.get<std::string>();
  std::sscanf(s.c_str(), "%ldx%ldx%ld", &g[0], &g[1], &g[2]);
  return g;
}

long ceil_div(long n, long d) { return (n + d - 1) / d; }

// d2xyz `pipelined` in the CUDA registry (nullptr if it is missing).
const Variant* pipelined_variant() {
  for (const Variant* c : find_variants(Op::d2xyz, "cuda"))
    if (c->name == "pipelined") return c;
  return nullptr;
}

// Which (variant, type, layout) pairs are refused by design, with the word the reason must carry.
// A variant is scalar when it loads one element at a time: the baselines, the scalar window, and
// a vec_bytes that holds one element (ours in double at its default of 8 bytes).
const char* expected_refusal(const Variant& v, DType t, int64_t align) {
  const int64_t vec_bytes = v.defaults.value("vec_bytes", int64_t(16));
  const bool scalar = v.name == "baseline" || v.name == "window" || vec_bytes <= dtype_bytes(t);
  if (!scalar && align < 16) return "aligned";
  if (v.name == "vec4" && t == DType::f64) return "16 bytes";
  return nullptr;
}

// The shared memory of a ring variant at its default parameters but `block` (xyz_ring.cuh's
// ring_bytes, restated): R + ahead + 1 tiles of (bx V + 2P) x (by my + 2R), P = R rounded up to 16
// bytes; d2z's tiles have no halo.
size_t ring_smem(const Variant& v, const std::string& block, int radius, DType t) {
  int bx = 0, by = 0;
  std::sscanf(block.c_str(), "%dx%d", &bx, &by);
  const int e = int(dtype_bytes(t)), g = 16 / e, vec = int(v.defaults["vec_bytes"].get<int>()) / e;
  const bool xy = v.op == Op::d2xyz;
  int my = 1;
  if (xy) my = (2 * radius + 1) * vec * 2 * e / 4 <= 72 ? 2 : 1;  // my 0: two lines where they fit
  const int p = xy ? (radius + g - 1) / g * g : 0, h = xy ? radius : 0;
  const int stages = radius + v.defaults["ahead"].get<int>() + 1;
  return size_t(bx * vec + 2 * p) * size_t(by * my + 2 * h) * size_t(stages) * size_t(e);
}

void expect_result(const Variant& v, Extents n, int radius, DType t, int64_t align, const Params& params) {
  if (const char* word = expected_refusal(v, t, align)) {
    const Problem p = make_problem({v.op, radius, {0.5, 0.25, 2.0}}, n, t, align);
    const std::string why = v.cannot_run(p, merge_params(v, params));
    EXPECT_NE(why.find(word), std::string::npos) << v.name << ": '" << why << "'";
    return;
  }
  expect_verified(v, n, radius, t, align, params);
}

}  // namespace

TEST(CudaSeismic, RegistryHoldsEveryFamily) {
  const std::vector<std::pair<Op, std::vector<std::string>>> expected = {
      {Op::d2x, {"baseline", "vec2", "vec4"}},
      {Op::d2y, {"baseline", "vec", "vec_smem"}},
      {Op::d2z, {"baseline", "window", "window_vec", "ring"}},
      {Op::d2xy, {"baseline", "fused", "l1"}},
      {Op::d2xyz, {"baseline", "onepass", "pipelined", "l1march", "3pass", "2pass", "ring", "tma"}},
  };
  for (const auto& [op, names] : expected) {
    std::vector<std::string> have;
    for (const Variant* v : find_variants(op, "cuda")) have.push_back(v->name);
    EXPECT_EQ(have, names) << op_name(op);
  }
}

// Host-side, so CI checks it: at the default parameters a variant refuses exactly the designed
// (type, layout) pairs, with the reason's key word, and accepts every other pair at every R.
TEST(CudaSeismic, RefusalsAreExactlyTheDesignedOnes) {
  for (Op op : kSeismicOps)
    for (const Variant* v : find_variants(op, "cuda"))
      for (int r = 1; r <= kMaxRadius; ++r)
        for (DType t : {DType::f32, DType::f64})
          for (int64_t align : {kAlignBytes, int64_t(1)}) {
            const Problem p = make_problem({op, r, {}}, Extents{37, 23, 19}, t, align);
            const std::string why = v->cannot_run(p, merge_params(*v, Params::object()));
            const char* word = expected_refusal(*v, t, align);
            if (word == nullptr)
              EXPECT_EQ(why, "") << v->name << " R=" << r << " " << dtype_name(t) << " align " << align;
            else
              EXPECT_NE(why.find(word), std::string::npos) << v->name << ": '" << why << "'";
          }
}

// Host-side, so CI checks it: the two L1 kernels (d2xyz l1march, d2xy l1) refuse a bad width,
// line count or chunk by name; two lines a thread beyond R = 4 only where a z queue holds them.
TEST(CudaSeismic, TheL1KernelsRefuseBadParametersByName) {
  for (const auto& [op, name] : {std::pair{Op::d2xyz, "l1march"}, std::pair{Op::d2xy, "l1"}})
    for (const Variant* v : find_variants(op, "cuda")) {
      if (v->name != name) continue;
      const Problem p = make_problem({op, 8, {}}, Extents{67, 35, 29}, DType::f32, kAlignBytes);
      const auto why = [&](const Params& params) { return v->cannot_run(p, merge_params(*v, params)); };
      EXPECT_NE(why({{"vec_bytes", 4}}).find("vec_bytes 4 must be 8 or 16"), std::string::npos) << name;
      EXPECT_NE(why({{"my", 3}}).find("my 3 must be 1 or 2"), std::string::npos) << name;
      EXPECT_NE(why({{"nw", 0}}).find("nw 0 must be at least 1"), std::string::npos) << name;
      const std::string deep = why({{"my", 2}});
      if (op == Op::d2xyz)
        EXPECT_NE(deep.find("my 2 needs R <= 4"), std::string::npos) << deep;
      else
        EXPECT_EQ(deep, "") << name;
    }
}

TEST(CudaSeismic, EveryVariantEveryRadiusBothLayouts) {
  REQUIRE_GPU();
  for (Op op : kSeismicOps)
    for (const Variant* v : find_variants(op, "cuda"))
      for (int r = 1; r <= kMaxRadius; ++r)
        for (DType t : {DType::f32, DType::f64})
          for (int64_t align : {kAlignBytes, int64_t(1)})
            for (Extents n : {Extents{37, 23, 19}, Extents{5, 3, 2}, Extents{133, 41, 9}})
              expect_result(*v, n, r, t, align, Params::object());
}

// The sliding-window kernels restart their window every nw planes: seams at every block boundary,
// a last block of fewer planes, one plane per block, and more planes than the grid has.
TEST(CudaSeismic, WindowLengths) {
  REQUIRE_GPU();
  for (Op op : {Op::d2z, Op::d2xy, Op::d2xyz})
    for (const Variant* v : find_variants(op, "cuda")) {
      if (!v->defaults.contains("nw")) continue;
      for (int nw : {1, 2, 7, 300})
        for (int r : {1, 4, 8})
          for (DType t : {DType::f32, DType::f64}) {
            const auto rec = expect_verified(*v, {67, 35, 29}, r, t, kAlignBytes, {{"nw", nw}});
            EXPECT_EQ(rec.value("nw_used", 0), nw) << v->name;
            EXPECT_EQ(grid_of(rec)[2], ceil_div(29, nw))
                << v->name << " " << rec.value("grid", nlohmann::json()).dump();
          }
    }
}

// The vector widths and line blocking of the z window and of ours, at every R: runs where it can,
// and where it cannot (a 4-byte vector of doubles, d2xyz's two lines per thread beyond R = 4) says why.
TEST(CudaSeismic, VectorWidthsAndLineBlocking) {
  REQUIRE_GPU();
  struct Case {
    Op op;
    const char* variant;
    Params params;
  };
  std::vector<Case> cases;
  for (int bytes : {4, 8, 16}) cases.push_back({Op::d2z, "window_vec", {{"vec_bytes", bytes}}});
  for (int bytes : {8, 16})
    for (int my : {1, 2}) {
      cases.push_back({Op::d2xyz, "l1march", {{"vec_bytes", bytes}, {"my", my}}});
      cases.push_back({Op::d2xy, "l1", {{"vec_bytes", bytes}, {"my", my}}});
    }
  for (const Case& c : cases)
    for (const Variant* v : find_variants(c.op, "cuda")) {
      if (v->name != c.variant) continue;
      for (int r = 1; r <= kMaxRadius; ++r)
        for (DType t : {DType::f32, DType::f64}) {
          const bool narrow = c.params["vec_bytes"] == 4 && t == DType::f64;
          const bool deep = c.op == Op::d2xyz && c.params.value("my", 1) == 2 && r > 4;  // xy has no z queue
          if (narrow || deep) {
            const Problem p = make_problem({c.op, r, {}}, Extents{67, 35, 29}, t, kAlignBytes);
            const std::string why = v->cannot_run(p, merge_params(*v, c.params));
            EXPECT_NE(why.find(narrow ? "narrower" : "R <= 4"), std::string::npos) << why;
          } else {
            const auto rec = expect_verified(*v, {67, 35, 29}, r, t, kAlignBytes, c.params);
            // Default blocks 32x4x1: V = vec_bytes / element points per thread along x, my lines
            // per thread along y.
            const long vec = c.params["vec_bytes"].get<int>() / long(dtype_bytes(t));
            EXPECT_EQ(grid_of(rec)[0], ceil_div(67, 32 * vec))
                << c.variant << " " << rec.value("grid", nlohmann::json()).dump();
            EXPECT_EQ(grid_of(rec)[1], ceil_div(35, 4 * c.params.value("my", 1))) << c.variant;
          }
        }
    }
}

// The z window launched chunk-first (order zxy): same results at every seam, and a bad order
// value is refused by name.
TEST(CudaSeismic, ZWindowChunkFirstOrder) {
  for (const Variant* v : find_variants(Op::d2z, "cuda")) {
    if (v->name != "window_vec") continue;
    const Problem p = make_problem({Op::d2z, 4, {}}, Extents{67, 35, 29}, DType::f32, kAlignBytes);
    EXPECT_NE(v->cannot_run(p, merge_params(*v, {{"order", "yxz"}})).find("order"), std::string::npos);
    if (cuda::device_count() == 0) continue;
    for (int nw : {1, 7, 300})
      for (int r : {1, 4, 8})
        for (DType t : {DType::f32, DType::f64}) {
          const auto rec =
              expect_verified(*v, {67, 35, 29}, r, t, kAlignBytes, {{"order", "zxy"}, {"nw", nw}});
          const long vec = 16 / dtype_bytes(t);  // default block 32x4x1, 16-byte vectors
          const std::array<long, 3> want{ceil_div(29, nw), ceil_div(67, 32 * vec), ceil_div(35, 4)};
          EXPECT_EQ(grid_of(rec), want) << rec.value("grid", nlohmann::json()).dump();
        }
  }
}

// d2xyz `pipelined` in strips along y and chunk-first (seismic/strips.hpp), every R and type: each
// strip's y halo is its neighbours' rows, R of them. Strips of whole tiles and a short last one,
// more strips than rows, and the grids the record reports (one per strip, chunks first under zxy).
// The automatic count is one strip on a field this small; above one it ran only in the benchmarks
// (4 strips at 1024^3, plan-check-xyz.json), which verify before they time.
TEST(CudaSeismic, PipelinedInStripsAndOrders) {
  const Variant* v = pipelined_variant();
  ASSERT_NE(v, nullptr);
  const Problem p = make_problem({Op::d2xyz, 4, {}}, Extents{67, 35, 29}, DType::f32, kAlignBytes);
  EXPECT_NE(v->cannot_run(p, merge_params(*v, {{"order", "yxz"}})).find("order 'yxz'"), std::string::npos);
  EXPECT_NE(v->cannot_run(p, merge_params(*v, {{"strips", -2}})).find("strips -2"), std::string::npos);
  if (cuda::device_count() == 0) GTEST_SKIP() << "no GPU: " << cuda::no_device_reason();
  for (int r = 1; r <= kMaxRadius; ++r)
    for (DType t : {DType::f32, DType::f64})
      for (int strips : {0, 3, 100})
        for (const char* order : {"xyz", "zxy"})
          for (int nw : {1, 8})
            expect_verified(*v, {67, 35, 29}, r, t, kAlignBytes,
                            {{"block", "32x4x1"}, {"nw", nw}, {"order", order}, {"strips", strips}});
  // Interior 67 x 35 x 29, 32 x 4 blocks of 4 floats: 1 x tile, 9 tile rows, nw 8: 4 chunks.
  // 3 strips: ceil(35 / 3) = 12 rows, whole tiles already: 12, 12, 11 rows.
  const auto rec = expect_verified(*v, {67, 35, 29}, 2, DType::f32, kAlignBytes,
                                   {{"block", "32x4x1"}, {"nw", 8}, {"strips", 3}});
  EXPECT_EQ(rec["grid"], nlohmann::json::array({"1x3x4", "1x3x4", "1x3x4"})) << rec.dump();
  const auto rec2 = expect_verified(*v, {67, 35, 29}, 2, DType::f32, kAlignBytes,
                                    {{"block", "32x4x1"}, {"nw", 8}, {"strips", 2}, {"order", "zxy"}});
  EXPECT_EQ(rec2["grid"], nlohmann::json::array({"4x1x5", "4x1x4"})) << rec2.dump();
}

// d2xyz `pipelined` under its register cap (`regs` 64, R = 3 only): another kernel instance,
// verified in both types, shapes, strips and orders. In float the record shows the switch (the
// uncapped march takes more than 64 registers, the capped at most 64); in double the uncapped one
// already fits in 64 (62 on the H100), so there only the field is checked.
TEST(CudaSeismic, PipelinedUnderARegisterCap) {
  const Variant* v = pipelined_variant();
  ASSERT_NE(v, nullptr);
  for (int r : {1, 2, 4, 5, 8}) {
    const Problem p = make_problem({Op::d2xyz, r, {}}, Extents{67, 35, 29}, DType::f32, kAlignBytes);
    EXPECT_NE(v->cannot_run(p, merge_params(*v, {{"regs", 64}})).find("R = 3 only"), std::string::npos) << r;
  }
  const Problem p3 = make_problem({Op::d2xyz, 3, {}}, Extents{67, 35, 29}, DType::f32, kAlignBytes);
  EXPECT_NE(v->cannot_run(p3, merge_params(*v, {{"regs", 40}})).find("regs 40"), std::string::npos);
  if (cuda::device_count() == 0) GTEST_SKIP() << "no GPU: " << cuda::no_device_reason();
  for (DType t : {DType::f32, DType::f64})
    for (const char* block : {"16x8x1", "3x5x1", "32x16x1"})
      for (int strips : {1, 3})
        for (const char* order : {"xyz", "zxy"}) {
          const auto rec = expect_verified(
              *v, {67, 35, 29}, 3, t, kAlignBytes,
              {{"block", block}, {"nw", 6}, {"strips", strips}, {"order", order}, {"regs", 64}});
          EXPECT_LE(rec.value("regs", 1000), 64) << rec.dump();
        }
  const auto free =
      expect_verified(*v, {67, 35, 29}, 3, DType::f32, kAlignBytes, {{"block", "16x8x1"}, {"regs", 0}});
  EXPECT_GT(free.value("regs", 0), 64) << free.dump();
}

// d2xyz `pipelined` with its z queue partly or wholly in shared memory (`zq` 1: the R planes below
// the centre; 2: all 2R but the newest), alone and under the register cap: every R it is compiled
// for, both types, odd shapes, strips and orders, nw 1 (one plane a chunk: the ring filled and
// never turned) and 6 (turned several times, and the last chunk short). Where it is not compiled
// the refusal says so, on the host.
TEST(CudaSeismic, PipelinedWithTheQueueInSharedMemory) {
  const Variant* v = pipelined_variant();
  ASSERT_NE(v, nullptr);
  const auto problem = [](int r) {
    return make_problem({Op::d2xyz, r, {}}, Extents{67, 35, 29}, DType::f32, kAlignBytes);
  };
  EXPECT_NE(v->cannot_run(problem(4), merge_params(*v, {{"zq", 3}})).find("zq 3"), std::string::npos);
  EXPECT_NE(v->cannot_run(problem(1), merge_params(*v, {{"zq", 1}})).find("from R = 2"), std::string::npos);
  EXPECT_NE(v->cannot_run(problem(3), merge_params(*v, {{"zq", 2}})).find("from R = 4"), std::string::npos);
  EXPECT_NE(v->cannot_run(problem(4), merge_params(*v, {{"regs", 64}})).find("R = 3 only"),
            std::string::npos);
  EXPECT_EQ(v->cannot_run(problem(4), merge_params(*v, {{"regs", 64}, {"zq", 1}})), "");
  // The ring counts against the 227 KB: 256 x 2 threads at R = 8 in float take two tiles of
  // 1040 x 18 floats (150 KB) and fit alone, but not with a 16-plane ring of 512 vectors (128 KB).
  EXPECT_EQ(v->cannot_run(problem(8), merge_params(*v, {{"block", "256x2x1"}, {"zq", 0}})), "");
  EXPECT_NE(v->cannot_run(problem(8), merge_params(*v, {{"block", "256x2x1"}, {"zq", 2}})).find("227 KB"),
            std::string::npos);
  if (cuda::device_count() == 0) GTEST_SKIP() << "no GPU: " << cuda::no_device_reason();
  for (int r = 2; r <= kMaxRadius; ++r)
    for (DType t : {DType::f32, DType::f64})
      for (int zq : {1, 2}) {
        if (zq == 2 && r < 4) continue;
        for (int regs : {0, 64}) {
          const auto rec = expect_verified(
              *v, {67, 35, 29}, r, t, kAlignBytes,
              {{"block", "16x8x1"}, {"nw", 6}, {"strips", 3}, {"order", "zxy"}, {"regs", regs}, {"zq", zq}});
          if (regs == 64) {
            EXPECT_LE(rec.value("regs", 1000), 64) << rec.dump();
          }
          expect_verified(*v, {67, 35, 29}, r, t, kAlignBytes,
                          {{"block", "3x5x1"}, {"nw", 1}, {"regs", regs}, {"zq", zq}});
        }
      }
  // The ring's whole point: at R = 8 the queue leaves the registers (128 in float without it).
  const auto all =
      expect_verified(*v, {67, 35, 29}, 8, DType::f32, kAlignBytes, {{"block", "16x8x1"}, {"zq", 2}});
  const auto none =
      expect_verified(*v, {67, 35, 29}, 8, DType::f32, kAlignBytes, {{"block", "16x8x1"}, {"zq", 0}});
  EXPECT_LT(all.value("regs", 1000), none.value("regs", 0)) << all.dump() << none.dump();
}

// my 2: two adjacent rows a thread (xyz_pipelined_rows). 35 rows in tiles of 16 leave a last
// tile whose threads have their first row inside and their second outside; 3 x 5 blocks at nw 1
// make short marches, 1 x 1 and 8 x 1 blocks tiles narrower (1 x 1 in double) and shorter (two
// rows) than the halo.
TEST(CudaSeismic, PipelinedTwoRowsAThread) {
  const Variant* v = pipelined_variant();
  ASSERT_NE(v, nullptr);
  const auto problem = [](int r) {
    return make_problem({Op::d2xyz, r, {}}, Extents{67, 35, 29}, DType::f32, kAlignBytes);
  };
  EXPECT_NE(v->cannot_run(problem(4), merge_params(*v, {{"my", 3}})).find("my 3"), std::string::npos);
  EXPECT_NE(v->cannot_run(problem(5), merge_params(*v, {{"my", 2}})).find("up to R = 4"), std::string::npos);
  EXPECT_NE(v->cannot_run(problem(4), merge_params(*v, {{"my", 2}, {"zq", 2}})).find("zq 0 or 1"),
            std::string::npos);
  EXPECT_NE(v->cannot_run(problem(3), merge_params(*v, {{"my", 2}, {"regs", 64}})).find("register cap"),
            std::string::npos);
  EXPECT_EQ(v->cannot_run(problem(4), merge_params(*v, {{"my", 2}, {"zq", 1}})), "");
  if (cuda::device_count() == 0) GTEST_SKIP() << "no GPU: " << cuda::no_device_reason();
  for (int r = 1; r <= 4; ++r)
    for (DType t : {DType::f32, DType::f64})
      for (int zq : {0, 1}) {
        if (zq == 1 && r < 2) continue;
        const auto two = expect_verified(
            *v, {67, 35, 29}, r, t, kAlignBytes,
            {{"block", "16x8x1"}, {"nw", 6}, {"strips", 3}, {"order", "zxy"}, {"my", 2}, {"zq", zq}});
        // The launch covers 16 rows a block: a tile of 2 x 8 + 2R rows, twice (the double buffer).
        const int vec = t == DType::f32 ? 4 : 2, pad = (r + vec - 1) / vec * vec,
                  elem = t == DType::f32 ? 4 : 8;
        EXPECT_EQ(two.value("dynamic_smem_bytes", 0),
                  2 * (16 * vec + 2 * pad) * (16 + 2 * r) * elem + zq * r * 128 * 2 * 16)
            << two.dump();
        expect_verified(*v, {67, 35, 29}, r, t, kAlignBytes,
                        {{"block", "3x5x1"}, {"nw", 1}, {"my", 2}, {"zq", zq}});
        expect_verified(*v, {67, 35, 29}, r, t, kAlignBytes,
                        {{"block", "1x1x1"}, {"nw", 5}, {"my", 2}, {"zq", zq}});
        expect_verified(*v, {67, 35, 29}, r, t, kAlignBytes,
                        {{"block", "8x1x1"}, {"nw", 4}, {"my", 2}, {"zq", zq}});
        // 32 rows a block: 35 rows take two tile rows.
        const auto tall = expect_verified(*v, {67, 35, 29}, r, t, kAlignBytes,
                                          {{"block", "8x16x1"}, {"nw", 8}, {"my", 2}, {"zq", zq}});
        EXPECT_EQ(grid_of(tall), (std::array<long, 3>{ceil_div(67, 8 * vec), 2, ceil_div(29, 8)}))
            << tall.dump();
      }
}

namespace {

// The output of one launch of d2xyz pipelined with `params` on a random field (NaN-poisoned first).
template <class T>
HostField<T> pipelined_output(const Variant& v, const Problem& p, const Params& params) {
  HostField<T> in(p.layout), out(p.layout);
  fill_random(in, kDefaultSeed);
  DeviceField<T> d_in(p.layout), d_out(p.layout);
  d_in.upload(in);
  d_out.poison();
  v.prepare(p, merge_params(v, params))->run(d_in.origin(), d_out.origin(), nullptr);
  cuda::synchronize();
  d_out.download(out);
  return out;
}

// The interior points whose bits differ between two outputs.
template <class T>
long differing_points(const HostField<T>& a, const HostField<T>& b, Extents n) {
  long count = 0;
  for (int64_t k = 0; k < n.nz; ++k)
    for (int64_t j = 0; j < n.ny; ++j)
      for (int64_t i = 0; i < n.nx; ++i) count += std::memcmp(&a.at(i, j, k), &b.at(i, j, k), sizeof(T)) != 0;
  return count;
}

template <class T>
void expect_my_changes_no_bit(const Variant& v, int r, int zq) {
  const Problem p =
      make_problem({Op::d2xyz, r, {0.5, 0.25, 2.0}}, Extents{67, 35, 29}, dtype_of<T>(), kAlignBytes);
  const Params one = {{"block", "16x8x1"}, {"nw", 6}, {"zq", zq}, {"my", 1}};
  Params two = one;
  two["my"] = 2;
  EXPECT_EQ(differing_points(pipelined_output<T>(v, p, one), pipelined_output<T>(v, p, two), p.interior()), 0)
      << "R " << r << " zq " << zq << " " << sizeof(T) << "-byte";
}

}  // namespace

// xy_rows_from_tile adds each point's taps in xy_from_tile's order: my 2 gives my 1's bits.
TEST(CudaSeismic, PipelinedTwoRowsAThreadGiveTheSameBits) {
  REQUIRE_GPU();
  const Variant* v = pipelined_variant();
  ASSERT_NE(v, nullptr);
  for (int r = 1; r <= 4; ++r)
    for (int zq : {0, 1}) {
      if (zq == 1 && r < 2) continue;
      expect_my_changes_no_bit<float>(*v, r, zq);
      expect_my_changes_no_bit<double>(*v, r, zq);
    }
}

// Shapes for every R (the posts' 64 * (4 / R) rule breaks beyond R = 4): tiles narrower and
// shorter than the radius, one thread, a full 1024-thread block.
TEST(CudaSeismic, BlockShapes) {
  REQUIRE_GPU();
  for (Op op : kSeismicOps)
    for (const Variant* v : find_variants(op, "cuda"))
      for (const char* block : {"32x4x1", "64x1x1", "1x1x1", "2x3x1", "128x4x1", "8x64x1"}) {
        if (!v->defaults.contains("block")) continue;  // the pass pipelines fix their blocks
        for (int r : {1, 5, 8}) {
          int bx = 0, by = 0;
          std::sscanf(block, "%dx%d", &bx, &by);
          const bool ring_too_many = v->name == "ring" && bx * by > 256;
          if (v->name == "ring" && (ring_too_many || ring_smem(*v, block, r, DType::f32) > 227 * 1024)) {
            const Problem p = make_problem({op, r, {}}, Extents{37, 23, 19}, DType::f32, kAlignBytes);
            const std::string why = v->cannot_run(p, merge_params(*v, {{"block", block}}));
            EXPECT_NE(why.find(ring_too_many ? "at most 256" : "227 KB"), std::string::npos)
                << block << ": " << why;
            continue;
          }
          // tma: one box a tile, at most 256 elements a side (64 x 4 floats and the halo are 264).
          const int pad = (r + 3) / 4 * 4;
          if (v->name == "tma" && (bx * 4 + 2 * pad > 256 || by + 2 * r > 256)) {
            const Problem p = make_problem({op, r, {}}, Extents{37, 23, 19}, DType::f32, kAlignBytes);
            const std::string why = v->cannot_run(p, merge_params(*v, {{"block", block}}));
            EXPECT_NE(why.find("256 a side"), std::string::npos) << block << ": " << why;
            continue;
          }
          expect_result(*v, {37, 23, 19}, r, DType::f32, kAlignBytes, {{"block", block}});
        }
      }
}

// A block with BZ > 1 runs where points are independent, and is refused, with the reason, where
// the kernel tiles the plane or marches along z.
TEST(CudaSeismic, DeepBlocks) {
  for (Op op : kSeismicOps)
    for (const Variant* v : find_variants(op, "cuda")) {
      if (!v->defaults.contains("block")) continue;  // the pass pipelines fix their blocks
      const Problem p = make_problem({op, 3, {}}, {37, 23, 19}, DType::f32);
      const std::string why = v->cannot_run(p, merge_params(*v, {{"block", "32x4x2"}}));
      const bool pointwise =
          v->name == "baseline" || v->name == "vec2" || v->name == "vec4" || v->name == "vec";
      if (pointwise) {
        EXPECT_EQ(why, "") << v->name;
        if (cuda::device_count() > 0)
          expect_verified(*v, p.interior(), 3, DType::f32, kAlignBytes, {{"block", "32x4x2"}});
      } else {
        EXPECT_NE(why.find("BZ must be 1"), std::string::npos) << v->name << ": " << why;
      }
    }
}

TEST(CudaSeismic, BadParametersSayWhy) {
  for (Op op : kSeismicOps)
    for (const Variant* v : find_variants(op, "cuda")) {
      const Problem p = make_problem({op, 2, {}}, Extents{16, 16, 16}, DType::f32, kAlignBytes);
      for (const char* block : {"0x1x1", "2048x1x1", "abc", "64x1x1x", "1x1x128"}) {
        if (!v->defaults.contains("block")) break;  // the pass pipelines fix their blocks
        const auto rec = run_variant(*v, p, {{"block", block}}, BenchOptions{}, 1.0);
        EXPECT_EQ(rec["status"], "unsupported") << block;
        EXPECT_NE(rec["reason"].get<std::string>().find("block"), std::string::npos) << block;
      }
      if (v->defaults.contains("nw")) {
        const auto rec = run_variant(*v, p, {{"nw", 0}}, BenchOptions{}, 1.0);
        EXPECT_EQ(rec["status"], "unsupported");
        EXPECT_NE(rec["reason"].get<std::string>().find("nw"), std::string::npos);
      }
    }
}

// The z-marching kernels take at most 512 threads (their register queue), and say so.
TEST(CudaSeismic, MarchingBlocksAtMost512) {
  for (Op op : {Op::d2z, Op::d2xyz})
    for (const Variant* v : find_variants(op, "cuda")) {
      if (!v->defaults.contains("nw") || !v->defaults.contains("block")) continue;
      const Problem p = make_problem({op, 8, {}}, Extents{64, 64, 64}, DType::f32, kAlignBytes);
      const std::string why = v->cannot_run(p, merge_params(*v, {{"block", "256x4x1"}}));
      // The ring marches hold at most 256, so that nvcc keeps their registers to a floor of blocks.
      EXPECT_NE(why.find(v->name == "ring" ? "at most 256" : "at most 512"), std::string::npos)
          << v->name << ": " << why;
    }
}

// Parameter values outside their sets are refused by name, on the host (CI runs this).
TEST(CudaSeismic, BadVectorWidthOrLineBlockingSaysWhy) {
  const std::vector<std::tuple<Op, std::string, Params, std::string>> cases = {
      {Op::d2z, "window_vec", {{"vec_bytes", 12}}, "vec_bytes 12"},
      {Op::d2xyz, "l1march", {{"vec_bytes", 4}}, "vec_bytes 4"},
      {Op::d2xyz, "l1march", {{"my", 3}}, "my 3"},
      {Op::d2xyz, "ring", {{"my", 3}}, "my 3"},
      {Op::d2xyz, "ring", {{"vec_bytes", 4}}, "vec_bytes 4"},
      {Op::d2xyz, "ring", {{"ahead", 0}}, "ahead 0"},
      {Op::d2xyz, "ring", {{"ahead", 5}}, "ahead 5"},
      {Op::d2xyz, "ring", {{"order", "yxz"}}, "order"},
      {Op::d2xyz, "ring", {{"floor", 2}}, "floor 2"},
      {Op::d2xyz, "ring", {{"vec_bytes", 8}, {"block", "7x4x1"}}, "multiple of 16 bytes"},
      {Op::d2z, "ring", {{"ahead", 9}}, "ahead 9"},
      {Op::d2z, "ring", {{"vec_bytes", 12}}, "vec_bytes 12"},
  };
  for (const auto& [op, name, params, word] : cases)
    for (const Variant* v : find_variants(op, "cuda")) {
      if (v->name != name) continue;
      const Problem p = make_problem({op, 2, {}}, Extents{64, 64, 64}, DType::f32, kAlignBytes);
      const std::string why = v->cannot_run(p, merge_params(*v, params));
      EXPECT_NE(why.find(word), std::string::npos) << name << ": " << why;
    }
}

// Above 227 KB of shared memory a tile cannot be launched: refused with the size, not a launch error.
TEST(CudaSeismic, OversizedTileSaysWhy) {
  const std::vector<std::tuple<Op, std::string, std::string>> cases = {{Op::d2y, "vec_smem", "1024x1x1"},
                                                                       {Op::d2xy, "fused", "1024x1x1"},
                                                                       {Op::d2xyz, "pipelined", "512x1x1"},
                                                                       {Op::d2xyz, "ring", "256x1x1"}};
  for (const auto& [op, name, block] : cases)
    for (const Variant* v : find_variants(op, "cuda")) {
      if (v->name != name) continue;
      const Problem p = make_problem({op, 8, {}}, Extents{64, 64, 64}, DType::f64, kAlignBytes);
      const std::string why = v->cannot_run(p, merge_params(*v, {{"block", block}}));
      EXPECT_NE(why.find("227 KB"), std::string::npos) << v->name << ": " << why;
    }
}

// The ring marches at every vector width, line blocking, depth (ahead 1..4: every wait count)
// and launch order, every R, both types; the grid shows each parameter took effect, and
// a queue beyond the register budget is refused by name.
TEST(CudaSeismic, RingWidthsLinesDepthsAndOrders) {
  struct Case {
    Op op;
    int vec_bytes, my;
  };
  std::vector<Case> cases;
  for (int bytes : {8, 16}) {
    cases.push_back({Op::d2z, bytes, 1});
    for (int my : {1, 2}) cases.push_back({Op::d2xyz, bytes, my});
  }
  const Extents n{67, 35, 29};
  for (const Case& c : cases)
    for (const Variant* v : find_variants(c.op, "cuda")) {
      if (v->name != "ring") continue;
      for (int r = 1; r <= kMaxRadius; ++r)
        for (DType t : {DType::f32, DType::f64}) {
          const int e = int(dtype_bytes(t));
          Params params = {{"vec_bytes", c.vec_bytes}, {"block", "16x4x1"}, {"nw", 7}};
          if (c.op == Op::d2xyz) params["my"] = c.my;
          const Problem p = make_problem({c.op, r, {}}, n, t, kAlignBytes);
          const bool fits = (2 * r + 1) * (c.vec_bytes / e) * c.my * e / 4 <= 72;
          if (!fits) {
            const std::string why = v->cannot_run(p, merge_params(*v, params));
            EXPECT_NE(why.find("registers"), std::string::npos) << why;
            continue;
          }
          if (cuda::device_count() == 0) continue;
          for (int ahead : {1, 2, 3, 4})  // every cp.async.wait_group count the kernel can ask for
            for (const char* order : {"xyz", "zxy"}) {
              params["ahead"] = ahead;
              params["order"] = order;
              const auto rec = expect_verified(*v, n, r, t, kAlignBytes, params);
              const long vec = c.vec_bytes / e;
              std::array<long, 3> want{ceil_div(67, 16 * vec), ceil_div(35, 4 * c.my), ceil_div(29, 7)};
              if (std::string(order) == "zxy") want = {want[2], want[0], want[1]};
              EXPECT_EQ(grid_of(rec), want) << v->name << " " << rec.value("grid", nlohmann::json()).dump();
            }
        }
    }
  if (cuda::device_count() == 0) GTEST_SKIP() << "no GPU: the refusals were checked, the runs were not";
}

// The ring's instances without the register floor (floor=0) beside those with it, every R,
// width, line blocking and type, at the defaults' block shapes on a field no tile divides; both
// are verified against the reference, and the registers they report show that `floor` chose
// other instances (nvcc gives many of those without the floor more than the 64-128 it allows).
TEST(CudaSeismic, RingWithAndWithoutTheRegisterFloor) {
  if (cuda::device_count() == 0) GTEST_SKIP() << "no GPU";
  const Extents n{83, 41, 23};
  int cases = 0, more_registers = 0;
  for (Op op : {Op::d2xyz, Op::d2z})
    for (const Variant* v : find_variants(op, "cuda")) {
      if (v->name != "ring") continue;
      const char* block = op == Op::d2xyz ? "16x16x1" : "32x8x1";
      for (int r = 1; r <= kMaxRadius; ++r)
        for (DType t : {DType::f32, DType::f64})
          for (int bytes : {8, 16})
            for (int my : {1, 2}) {
              if (op == Op::d2z && my == 2) continue;
              const int e = int(dtype_bytes(t));
              if ((2 * r + 1) * (bytes / e) * my * e / 4 > 72) continue;  // refused: see above
              int regs[2] = {0, 0};
              for (int floor : {1, 0}) {
                Params params = {{"vec_bytes", bytes}, {"block", block}, {"nw", 9}, {"floor", floor}};
                if (op == Op::d2xyz) params["my"] = my;
                regs[floor] = expect_verified(*v, n, r, t, kAlignBytes, params).value("regs", 0);
              }
              ++cases;
              more_registers += regs[0] > regs[1];
            }
    }
  EXPECT_GT(more_registers, cases / 4)
      << "of " << cases << " instances, those with more registers without the floor";
}

// The ring copies 16-byte granules: the last one of the far halo corner's row may reach 16 - e
// bytes past the field's last point, so a view without them is refused by name.
TEST(CudaSeismic, RingNeedsReadableBytesPastTheField) {
  const Extents n{62, 46, 17};
  for (Op op : {Op::d2xyz, Op::d2z})
    for (const Variant* v : find_variants(op, "cuda")) {
      if (v->name != "ring") continue;
      for (int r : {1, 4}) {
        const int64_t line = 128, slice = line * (46 + 2 * r);  // 16-byte aligned strides, float
        const auto why = [&](int64_t tail) {
          return v->cannot_run({{op, r, {}}, Layout::strided(n, r, 4, line, slice, 16, tail, 0)},
                               merge_params(*v, Params::object()));
        };
        EXPECT_NE(why(0).find("past the field's last point"), std::string::npos) << why(0);
        EXPECT_NE(why(2).find("past the field's last point"), std::string::npos) << why(2);
        EXPECT_EQ(why(3), "");  // 3 floats = 12 bytes
      }
    }
}

namespace {

// d2xyz `tma` in the CUDA registry (nullptr if it is missing).
const Variant* tma_variant() {
  for (const Variant* c : find_variants(Op::d2xyz, "cuda"))
    if (c->name == "tma") return c;
  return nullptr;
}

}  // namespace

// d2xyz `tma`: plane tiles by the tensor memory accelerator into a ring of R + 1 + `ahead` tiles.
// Every R, both types; ahead 0 (the newest tile asked for in the step that reads it) to 3; nw 1
// (a chunk shorter than the ring), 6 and 300 (more planes than the field: one chunk); strips and
// chunk-first; blocks of 1 x 1 (a tile narrower and shorter than its halo), 3 x 5 and 16 x 8; and
// an x-line of 30 elements in a 32-element line, where the map's x extent (pad + nx + R: 35 floats
// or 33 doubles at R = 1) runs past the line stride. The register caps (regs 64, 80, 96) where
// they are compiled. Refusals on the host.
TEST(CudaSeismic, TmaTileRing) {
  const Variant* v = tma_variant();
  ASSERT_NE(v, nullptr);
  const auto problem = [](int r, DType t) {
    return make_problem({Op::d2xyz, r, {}}, Extents{67, 35, 29}, t, kAlignBytes);
  };
  EXPECT_NE(v->cannot_run(problem(4, DType::f32), merge_params(*v, {{"ahead", 9}})).find("ahead 9"),
            std::string::npos);
  EXPECT_NE(v->cannot_run(problem(4, DType::f32), merge_params(*v, {{"ahead", -1}})).find("ahead -1"),
            std::string::npos);
  // 62 x 4 floats and 4 + 4 of halo: 256, the largest box; 63 x 4 + 8 is 260.
  EXPECT_EQ(v->cannot_run(problem(4, DType::f32), merge_params(*v, {{"block", "62x2x1"}})), "");
  EXPECT_NE(v->cannot_run(problem(4, DType::f32), merge_params(*v, {{"block", "63x2x1"}})).find("256 a side"),
            std::string::npos);
  EXPECT_NE(
      v->cannot_run(problem(8, DType::f32), merge_params(*v, {{"block", "1x241x1"}})).find("256 a side"),
      std::string::npos);
  // R = 8, ahead 8: 17 tiles of (32 x 4 + 16) x (16 + 16) floats, 18 KB each.
  EXPECT_NE(v->cannot_run(problem(8, DType::f32), merge_params(*v, {{"block", "32x16x1"}, {"ahead", 8}}))
                .find("227 KB"),
            std::string::npos);
  EXPECT_NE(v->cannot_run(problem(4, DType::f32), merge_params(*v, {{"order", "yxz"}})).find("order"),
            std::string::npos);
  EXPECT_NE(v->cannot_run(problem(4, DType::f32), merge_params(*v, {{"regs", 32}})).find("regs 32"),
            std::string::npos);
  for (int r : {1, 2, 3, 5, 8})
    EXPECT_NE(v->cannot_run(problem(r, DType::f32), merge_params(*v, {{"regs", 64}})).find("at R = 4 only"),
              std::string::npos);
  EXPECT_NE(v->cannot_run(problem(6, DType::f32), merge_params(*v, {{"regs", 80}})).find("R = 4 and 5"),
            std::string::npos);
  EXPECT_NE(v->cannot_run(problem(8, DType::f32), merge_params(*v, {{"regs", 96}})).find("R = 6 and 7"),
            std::string::npos);
  // A view with nothing readable before its halo corner or after its far corner runs: a box starts
  // 3 floats left of the x halo at R = 1, but in plane 0, R planes past the corner.
  for (int r : {1, 5}) {
    const Extents n{67, 35, 29};
    const Problem bare{{Op::d2xyz, r, {}}, Layout::strided(n, r, 4, 96, 96 * (35 + 2 * r), 128, 0, 0)};
    EXPECT_EQ(v->cannot_run(bare, merge_params(*v, Params::object())), "") << r;
  }
  if (cuda::device_count() == 0) GTEST_SKIP() << "no GPU: " << cuda::no_device_reason();
  for (int r = 1; r <= kMaxRadius; ++r)
    for (DType t : {DType::f32, DType::f64}) {
      const int e = int(dtype_bytes(t)), vec = 16 / e, pad = (r + vec - 1) / vec * vec;
      const auto rec =
          expect_verified(*v, {67, 35, 29}, r, t, kAlignBytes,
                          {{"block", "16x8x1"}, {"nw", 6}, {"strips", 3}, {"order", "zxy"}, {"ahead", 1}});
      // The ring: R + 1 + ahead tiles of (16 V + 2 pad) x (8 + 2R), each on 128 bytes, and two
      // 8-byte barriers a tile.
      const long tiles = r + 1 + 1, tile = (16L * vec + 2 * pad) * (8 + 2 * r) * e;
      EXPECT_EQ(rec.value("dynamic_smem_bytes", 0L), tiles * ((tile + 127) / 128 * 128) + 16 * tiles)
          << rec.dump();
      expect_verified(*v, {67, 35, 29}, r, t, kAlignBytes, {{"block", "3x5x1"}, {"nw", 1}, {"ahead", 0}});
      expect_verified(*v, {67, 35, 29}, r, t, kAlignBytes, {{"block", "1x1x1"}, {"nw", 5}, {"ahead", 3}});
      const auto one = expect_verified(*v, {67, 35, 29}, r, t, kAlignBytes,
                                       {{"block", "8x16x1"}, {"nw", 300}, {"ahead", 2}});
      EXPECT_EQ(grid_of(one), (std::array<long, 3>{ceil_div(67, 8 * vec), 3, 1})) << one.dump();
      expect_verified(*v, {30, 9, 7}, r, t, kAlignBytes, {{"block", "4x4x1"}, {"nw", 3}, {"ahead", 2}});
    }
  // The register caps: other instances, each within its count.
  for (const auto& [cap, r_lo, r_hi] : {std::array<int, 3>{64, 4, 4}, {80, 4, 5}, {96, 6, 7}})
    for (int r = r_lo; r <= r_hi; ++r)
      for (DType t : {DType::f32, DType::f64})
        for (const char* block : {"16x16x1", "3x5x1", "16x32x1"}) {
          const auto rec =
              expect_verified(*v, {67, 35, 29}, r, t, kAlignBytes,
                              {{"block", block}, {"nw", 6}, {"strips", 2}, {"ahead", 2}, {"regs", cap}});
          EXPECT_LE(rec.value("regs", 1000), cap) << rec.dump();
        }
}
