// Every CUDA seismic variant, every radius, float and double, on odd sizes with the aligned and
// the unaligned layout, against the reference (NaN-poisoned output, halo untouched, then the
// posts' i+j+k field whose second derivative is 0). Skipped, never passed, without a GPU.
#include <gtest/gtest.h>

#include "bench/harness.hpp"
#include "bench/variant.hpp"
#include "cuda/device.hpp"

using namespace fdstencil;
using namespace fdstencil::bench;

namespace {

// GTEST_SKIP returns from the function it is in, so it must stand in each test body.
#define REQUIRE_GPU() \
  if (cuda::device_count() == 0) GTEST_SKIP() << "no GPU: " << cuda::no_device_reason()

constexpr Op kSeismicOps[] = {Op::d2x, Op::d2y, Op::d2z, Op::d2xy, Op::d2xyz};

void expect_verified(const Variant& v, Extents n, int radius, DType t, int64_t align, const Params& params) {
  Problem p;
  p.stencil = {v.op, radius, {0.5, 0.25, 2.0}};
  p.size = n;
  p.interior = n;
  p.dtype = t;
  p.align_bytes = align;
  BenchOptions o;
  o.warmup = 0;
  o.reps = 0;  // verify only
  const auto rec = run_variant(v, p, params, o, 1.0);
  // A named string: comparing the json with a literal inlines into a false GCC 12 -Warray-bounds.
  const std::string status = rec.value("status", std::string());
  EXPECT_EQ(status, "verified") << v.name << " R=" << radius << " align " << align << " " << rec.dump();
}

}  // namespace

TEST(CudaSeismic, RegistryHasABaselinePerOperator) {
  for (Op op : kSeismicOps) {
    bool found = false;
    for (const Variant* v : find_variants(op, "cuda")) found |= v->name == "baseline";
    EXPECT_TRUE(found) << op_name(op);
  }
}

TEST(CudaSeismic, EveryVariantEveryRadiusBothLayouts) {
  REQUIRE_GPU();
  for (Op op : kSeismicOps)
    for (const Variant* v : find_variants(op, "cuda"))
      for (int r = 1; r <= kMaxRadius; ++r)
        for (DType t : {DType::f32, DType::f64})
          for (int64_t align : {kAlignBytes, int64_t(1)})
            for (Extents n : {Extents{37, 23, 19}, Extents{5, 3, 2}}) expect_verified(*v, n, r, t, align, Params::object());
}

TEST(CudaSeismic, BlockShapes) {
  REQUIRE_GPU();
  for (Op op : kSeismicOps)
    for (const Variant* v : find_variants(op, "cuda"))
      for (const char* block : {"32x4x2", "64x1x1", "1024x1x1"})
        expect_verified(*v, {37, 23, 19}, 4, DType::f32, kAlignBytes, {{"block", block}});
}

TEST(CudaSeismic, BadBlockSaysWhy) {
  for (const Variant* v : find_variants(Op::d2x, "cuda")) {
    Problem p;
    p.stencil = {Op::d2x, 2, {}};
    p.size = p.interior = {16, 16, 16};
    for (const char* block : {"0x1x1", "2048x1x1", "abc", "64x1x1x", "1x1x128"}) {
      const auto rec = run_variant(*v, p, {{"block", block}}, BenchOptions{}, 1.0);
      EXPECT_EQ(rec["status"], "unsupported") << block;
      EXPECT_NE(rec["reason"].get<std::string>().find("block"), std::string::npos) << block;
    }
  }
}
