// The built-in defaults table, host-side (CI runs it): every row names a registered CUDA variant
// with parameters it takes, and at each size class's tuned size every operator and radius gets a
// choice from the table that can run, in float and double, the first row in float being it.
#include <gtest/gtest.h>

#include <tuple>

#include "core/variant.hpp"
#include "plan/defaults.hpp"
#include "plan/registry.hpp"

using namespace fdstencil;

// The classes go by the bytes of a plane: 1000 x 600 x 300 has fewer points than 768^3 but the
// same plane, and the z window wants the same choice for both.
TEST(Defaults, SizeClassesGoByThePlane) {
  EXPECT_EQ(size_class({1000, 600, 300}, DType::f32), SizeClass::large);
  EXPECT_EQ(size_class({768, 768, 768}, DType::f32), SizeClass::large);
  EXPECT_EQ(size_class({512, 512, 4096}, DType::f32), SizeClass::medium);
  EXPECT_EQ(size_class({363, 363, 10}, DType::f64), SizeClass::medium);  // 1 MB of doubles
  EXPECT_EQ(size_class({64, 64, 64}, DType::f32), SizeClass::small);
}

TEST(Defaults, EveryChoiceIsARegisteredVariantThatCanRun) {
  for (const char* card : {"NVIDIA H100 80GB HBM3", "NVIDIA H200"}) {
    SCOPED_TRACE(card);
    const Extents tuned[] = {{256, 256, 256}, {512, 512, 512}, {1024, 1024, 1024}};
    const SizeClass classes[] = {SizeClass::small, SizeClass::medium, SizeClass::large};
    for (int c = 0; c < 3; ++c) {
      EXPECT_EQ(size_class(tuned[c], DType::f32), classes[c]);
      EXPECT_EQ(size_class(tuned[c], DType::f64), classes[c]);
      for (Op op : kAllOps)
        for (int r = 1; r <= kMaxRadius; ++r) {
          if (op == Op::laplacian7 && r > 1) break;
          for (DType t : {DType::f32, DType::f64}) {
            const Problem p = make_problem({op, r, {}}, interior_from_size(op, tuned[c]), t);
            const auto choices = default_choices(p, card);
            ASSERT_FALSE(choices.empty()) << op_name(op) << " R=" << r;
            bool first_runnable_found = false;
            for (size_t i = 0; i < choices.size(); ++i) {
              const auto& [name, params] = choices[i];
              const Variant* v = find_variant(op, "cuda", name);
              ASSERT_NE(v, nullptr) << name;
              const Params merged = merge_params(*v, params);  // throws for a parameter it does not take
              const std::string why = v->cannot_run(p, merged);
              if (why.empty()) {
                first_runnable_found = true;
                // In float the table's first row is the tuned choice itself, never a fallback.
                if (t == DType::f32) {
                  EXPECT_EQ(i, 0u) << op_name(op) << " R=" << r << " " << name;
                }
                break;
              }
            }
            EXPECT_TRUE(first_runnable_found) << op_name(op) << " R=" << r << " " << dtype_name(t);
            // An awkward size (odd extents) and the unaligned layout still find a row that runs.
            for (int64_t align : {kAlignBytes, int64_t(1)}) {
              const Problem q = make_problem({op, r, {}}, {257, 131, 67}, t, align);
              bool any = false;
              for (const auto& [name, params] : default_choices(q, card))
                any = any || find_variant(op, "cuda", name)
                                 ->cannot_run(q, merge_params(*find_variant(op, "cuda", name), params))
                                 .empty();
              EXPECT_TRUE(any) << op_name(op) << " R=" << r << " " << dtype_name(t) << " align " << align;
            }
          }
        }
    }
  }
}

// The table is the H100's own (each row's comment names an nvidia-h100 result or none), and the
// H200 has rows of its own for the fused operators; on any other card, or for another operator on
// the H200, a plan says so once, with the tune command that measures the case there.
TEST(Defaults, OnlyTheMeasuredCardHasTheTableAsItsOwn) {
  for (Op op : kAllOps) {
    EXPECT_TRUE(card_has_defaults("NVIDIA H100 80GB HBM3", op));
    EXPECT_TRUE(card_has_defaults("NVIDIA H100 PCIe", op));
    EXPECT_EQ(card_has_defaults("NVIDIA H200", op), op == Op::d2xyz || op == Op::d2xy) << op_name(op);
    EXPECT_FALSE(card_has_defaults("NVIDIA A100-SXM4-80GB", op));
    EXPECT_FALSE(card_has_defaults("", op));
    EXPECT_FALSE(card_has_defaults("NVIDIA GH200 480GB", op));  // another card, whose name holds H200
  }
  const std::string n = untuned_card_notice("NVIDIA A100-SXM4-80GB", Op::d2xyz, 4, {512, 256, 128});
  EXPECT_NE(n.find("NVIDIA A100-SXM4-80GB"), std::string::npos) << n;
  EXPECT_NE(n.find("`fdstencil tune --op d2xyz --radius 4 --size 512,256,128`"), std::string::npos) << n;
  // laplacian7's plan counts the points it writes; tune's --size the grid with its boundary.
  const std::string l = untuned_card_notice("NVIDIA H200", Op::laplacian7, 1, {510, 510, 510});
  EXPECT_NE(l.find("--op laplacian7 --radius 1 --size 512,512,512`"), std::string::npos) << l;
}

// On an H200 its own rows come first where it was tuned (float, d2xyz R <= 4, d2xy every R);
// elsewhere, and in double, it takes the H100's choices in their order.
TEST(Defaults, TheH200TakesItsOwnRowsFirst) {
  const auto first = [](Op op, int r, int64_t n, DType t, const char* card) {
    return default_choices(make_problem({op, r, {}}, {n, n, n}, t), card).front();
  };
  const auto [tma, params] = first(Op::d2xyz, 4, 512, DType::f32, "NVIDIA H200");
  EXPECT_EQ(tma, "tma");
  EXPECT_EQ(params["nw"], 32);
  EXPECT_EQ(first(Op::d2xyz, 4, 512, DType::f32, "NVIDIA H100 80GB HBM3").first, "pipelined");
  const auto [l1, xy] = first(Op::d2xy, 2, 256, DType::f32, "NVIDIA H200");
  EXPECT_EQ(l1, "l1");
  EXPECT_EQ(xy["block"], "32x8x1");
  EXPECT_EQ(first(Op::d2xy, 2, 256, DType::f32, "NVIDIA H100 80GB HBM3").first, "fused");
  EXPECT_EQ(first(Op::d2xyz, 4, 512, DType::f32, "NVIDIA GH200 480GB").first, "pipelined");
  for (const auto& [op, r, n, t] :
       {std::tuple{Op::d2xyz, 4, int64_t(512), DType::f64},
        std::tuple{Op::d2xyz, 6, int64_t(512), DType::f32}, std::tuple{Op::d2x, 4, int64_t(256), DType::f32},
        std::tuple{Op::d2xy, 4, int64_t(512), DType::f64}}) {
    const Problem p = make_problem({op, r, {}}, {n, n, n}, t);
    EXPECT_EQ(default_choices(p, "NVIDIA H200"), default_choices(p, "NVIDIA H100 80GB HBM3"))
        << op_name(op) << " R=" << r;
  }
}
