// The harness must verify before it times, and catch each way a kernel goes wrong. Here every
// host variant runs through run_variant(), and deliberately broken variants must be FAILED.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "bench/harness.hpp"
#include "core/variant.hpp"
#include "fdstencil/backend.hpp"
#include "fdstencil/error.hpp"
#include "plan/registry.hpp"

using namespace fdstencil;
using namespace fdstencil::bench;

namespace {

Problem small_problem(Op op, int radius, DType t) {
  const Extents size = op == Op::laplacian7 ? Extents{19, 13, 11} : Extents{17, 11, 9};
  return make_problem({op, radius, {0.5, 0.25, 2.0}}, interior_from_size(op, size), t);
}

BenchOptions quick() {
  BenchOptions o;
  o.warmup = 1;
  o.reps = 3;
  return o;
}

}  // namespace

TEST(Harness, EveryHostVariantVerifiesAndIsTimed) {
  for (const Variant& v : all_variants()) {
    if (v.backend == "cuda") continue;
    for (DType t : {DType::f32, DType::f64}) {
      for (int r : {1, 3, 8}) {
        if (v.op == Op::laplacian7 && r != 1) continue;
        const Problem p = small_problem(v.op, r, t);
        const auto rec = run_variant(v, p, Params::object(), quick(), 10.0);
        SCOPED_TRACE(rec.dump());
        EXPECT_EQ(rec["status"], "ok");
        EXPECT_TRUE(rec["verified"].get<bool>());
        EXPECT_GT(rec["median_ms"].get<double>(), 0.0);
        EXPECT_GT(rec["effective_gbps"].get<double>(), 0.0);
        EXPECT_LE(rec["analytic_err"].get<double>(), rec["analytic_bound"].get<double>());
      }
    }
  }
}

TEST(Harness, RecordCarriesTheDocumentedFields) {
  const auto vs = find_variants(Op::d2xyz, "cpu");
  ASSERT_EQ(vs.size(), 1u);
  const auto rec =
      run_variant(*vs[0], small_problem(Op::d2xyz, 2, DType::f32), Params::object(), quick(), 10.0);
  for (const char* key :
       {"op", "variant", "backend", "dtype", "radius", "nx", "ny", "nz", "params", "verified", "max_rel_err",
        "median_ms", "min_ms", "max_ms", "effective_gbps", "pct_of_copy", "gpts"})
    EXPECT_TRUE(rec.contains(key)) << key;
  EXPECT_NEAR(rec["pct_of_copy"].get<double>(), 100.0 * rec["effective_gbps"].get<double>() / 10.0, 1e-9);
  EXPECT_LE(rec["min_ms"].get<double>(), rec["median_ms"].get<double>());
  EXPECT_LE(rec["median_ms"].get<double>(), rec["max_ms"].get<double>());
}

// ---- broken variants: each fault must be caught ------------------------------------------------

namespace {

enum class Fault { none, analytic_only, skip_point, write_halo, wrong_weight, nan_out, off_by_one_x };

template <class T>
class BrokenLauncher final : public Launcher {
 public:
  BrokenLauncher(const Problem& p, Fault f) : p_(p), fault_(f) {}
  void run(const void* in_data, void* out_data, Stream) const override {
    // The launcher contract: pointers at interior point (0, 0, 0).
    const FieldView<const T> in(static_cast<const T*>(in_data) - p_.layout.origin(), p_.layout, Memory::host);
    const FieldView<T> out(static_cast<T*>(out_data) - p_.layout.origin(), p_.layout, Memory::host);
    Stencil s = p_.stencil;
    if (fault_ == Fault::wrong_weight) s.h.hx *= 1.001;
    cpu_backend().apply(s, in, out);
    const Extents n = p_.interior();
    if (fault_ == Fault::skip_point)
      out.at(n.nx / 2, n.ny / 2, n.nz / 2) = std::numeric_limits<T>::quiet_NaN();
    if (fault_ == Fault::write_halo) out.at(-1, 0, 0) = T(0);
    if (fault_ == Fault::nan_out) out.at(0, 0, 0) = std::numeric_limits<T>::infinity();
    // Right on random input, off by 1 at one point on the posts' i + j + k field (whose (0,0,0) is
    // 0 and (1,0,0) is 1, where the exact result is 0): only the analytic pass can catch it.
    if (fault_ == Fault::analytic_only && in.at(0, 0, 0) == T(0) && in.at(1, 0, 0) == T(1))
      out.at(n.nx / 2, n.ny / 2, n.nz / 2) += T(1);
    if (fault_ == Fault::off_by_one_x)
      for (int64_t i = n.nx - 1; i > 0; --i) out.at(i, 1, 1) = out.at(i - 1, 1, 1);
  }
  nlohmann::json resources() const override { return {{"regs", 42}, {"occupancy", 0.5}}; }

 private:
  Problem p_;
  Fault fault_;
};

Variant broken(Fault f) {
  Variant v;
  v.op = Op::d2xyz;
  v.name = "broken";
  v.backend = "test";
  v.cannot_run = [](const Problem&, const Params&) { return std::string(); };
  v.prepare = [f](const Problem& p, const Params&) -> std::unique_ptr<Launcher> {
    if (p.dtype() == DType::f32) return std::make_unique<BrokenLauncher<float>>(p, f);
    return std::make_unique<BrokenLauncher<double>>(p, f);
  };
  return v;
}

}  // namespace

TEST(Harness, BrokenVariantsAreFailedAndNotTimed) {
  for (Fault f : {Fault::analytic_only, Fault::skip_point, Fault::write_halo, Fault::wrong_weight,
                  Fault::nan_out, Fault::off_by_one_x})
    for (DType t : {DType::f32, DType::f64}) {
      const auto rec =
          run_variant(broken(f), small_problem(Op::d2xyz, 4, t), Params::object(), quick(), 10.0);
      SCOPED_TRACE(rec.dump());
      EXPECT_EQ(rec["status"], "FAILED");
      EXPECT_FALSE(rec["verified"].get<bool>());
      EXPECT_TRUE(rec["median_ms"].is_null());
      EXPECT_FALSE(rec["reason"].get<std::string>().empty());
    }
}

TEST(Harness, ResourcesAndVerifyOnlyReachTheRecord) {
  const auto rec = run_variant(broken(Fault::none), small_problem(Op::d2xyz, 2, DType::f32), Params::object(),
                               quick(), 10.0);
  EXPECT_EQ(rec["status"], "ok") << rec.dump();
  EXPECT_EQ(rec["regs"], 42);
  EXPECT_EQ(rec["occupancy"], 0.5);
  BenchOptions verify = quick();
  verify.reps = 0;
  const auto v = run_variant(broken(Fault::none), small_problem(Op::d2xyz, 2, DType::f64), Params::object(),
                             verify, 10.0);
  EXPECT_EQ(v["status"], "verified");
  EXPECT_TRUE(v["verified"].get<bool>());
  EXPECT_TRUE(v["median_ms"].is_null());
}

TEST(Harness, ProfileChildTimesWithoutVerifyingAndSaysSo) {
  // Only bench --profile's child turns verification off; its record must never claim it.
  BenchOptions child = quick();
  child.verify = false;
  const auto rec = run_variant(broken(Fault::wrong_weight), small_problem(Op::d2xyz, 2, DType::f32),
                               Params::object(), child, 10.0);
  EXPECT_EQ(rec["status"], "ok") << rec.dump();
  EXPECT_FALSE(rec["verified"].get<bool>());
  EXPECT_NE(rec["verification"].get<std::string>().find("skipped"), std::string::npos);
  EXPECT_TRUE(rec["max_rel_err"].is_null());
  EXPECT_GT(rec["median_ms"].get<double>(), 0.0);
  EXPECT_NE(table_row(rec).find("unchecked"), std::string::npos);  // printed, not thrown
}

TEST(Harness, AnalyticPassCatchesWhatRandomInputMisses) {
  const auto rec = run_variant(broken(Fault::analytic_only), small_problem(Op::d2xyz, 3, DType::f64),
                               Params::object(), quick(), 10.0);
  EXPECT_EQ(rec["status"], "FAILED") << rec.dump();
  EXPECT_LE(rec["max_rel_err"].get<double>(), rec["tolerance"].get<double>());  // pass 1 was fine
  EXPECT_NE(rec["reason"].get<std::string>().find("analytic"), std::string::npos);
}

TEST(Harness, LaplacianQuadraticIsExactOnADyadicGrid) {
  Problem p = small_problem(Op::laplacian7, 1, DType::f32);
  p.stencil.h = {0.5, 0.5, 0.5};
  const auto vs = find_variants(Op::laplacian7, "cpu");
  ASSERT_EQ(vs.size(), 1u);
  const auto rec = run_variant(*vs[0], p, Params::object(), quick(), 10.0);
  EXPECT_TRUE(rec["analytic_exact"].get<bool>()) << rec.dump();
  EXPECT_EQ(rec["analytic_bound"].get<double>(), 0.0);
  EXPECT_EQ(rec["analytic_err"].get<double>(), 0.0);
}

TEST(Harness, UnsupportedVariantSaysWhy) {
  Variant v = broken(Fault::skip_point);
  v.cannot_run = [](const Problem&, const Params&) { return std::string("nx must be a multiple of 4"); };
  const auto rec = run_variant(v, small_problem(Op::d2xyz, 1, DType::f32), Params::object(), quick(), 10.0);
  EXPECT_EQ(rec["status"], "unsupported");
  EXPECT_EQ(rec["reason"], "nx must be a multiple of 4");
}

TEST(Harness, UnknownParameterIsRejected) {
  const auto vs = find_variants(Op::d2x, "cpu");
  ASSERT_EQ(vs.size(), 1u);
  EXPECT_THROW(merge_params(*vs[0], Params{{"m", 4}}), Error);
}

TEST(Harness, RandomFillIsDeterministicAndNotZero) {
  HostField<float> a({9, 7, 5}, 2), b({9, 7, 5}, 2);
  fill_random(a, 42);
  fill_random(b, 42);
  int64_t zeros = 0;
  for (int64_t n = 0; n < a.layout().alloc_elems(); ++n) {
    ASSERT_EQ(a.data()[n], b.data()[n]);
    ASSERT_GE(a.data()[n], -1.0f);
    ASSERT_LT(a.data()[n], 1.0f);
    zeros += a.data()[n] == 0.0f;
  }
  EXPECT_LT(zeros, 2);
  fill_random(b, 43);
  EXPECT_NE(a.at(3, 3, 3), b.at(3, 3, 3));
}
