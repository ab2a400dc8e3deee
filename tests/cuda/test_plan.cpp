// The plan API on the GPU: for every operator, radius and type, the plan's own choice (the
// built-in defaults, no cache) against the reference on odd sizes; views over a caller's device
// memory with unusual strides; streams; the tuning cache steering a plan, and every bad cache
// falling back to the defaults with a warning; a small tuning run end to end; the device-side
// comparison the tuner verifies with. Skipped, never passed, without a GPU.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cuda_runtime.h>

#include <filesystem>
#include <fstream>
#include <random>

#include "bench/harness.hpp"
#include "cuda/common/compare.hpp"
#include "fdstencil/device.hpp"
#include "fdstencil/device_field.hpp"
#include "fdstencil/plan.hpp"
#include "fdstencil/tune.hpp"
#include "fdstencil/tuning_cache.hpp"
#include "plan/device_identity.hpp"
#include "plan/verify.hpp"
#include "test_util.hpp"

using namespace fdstencil;
namespace fs = std::filesystem;

namespace {

#define REQUIRE_GPU() \
  if (gpu_count() == 0) GTEST_SKIP() << "no GPU: " << gpu_unavailable_reason()

constexpr Op kOps[] = {Op::laplacian7, Op::d2x, Op::d2y, Op::d2z, Op::d2xy, Op::d2xyz};

// Random input, NaN-poisoned output, one application through the plan, then the harness's own
// comparison against the reference (tolerance, every interior point written, halo untouched).
template <class T>
bench::Check run_and_check(const Plan& plan, Stream stream = nullptr) {
  const Layout& l = plan.layout();
  HostField<T> in(l), out(l), ref(l);
  fill_random(in, kDefaultSeed);
  ref.fill(std::numeric_limits<T>::quiet_NaN());
  reference_backend().apply(plan.stencil(), in, ref);
  DeviceField<T> d_in(l), d_out(l);
  d_in.upload(in);
  d_out.poison(stream);
  plan.apply(d_in, d_out, stream);
  cuda::synchronize();
  d_out.download(out);
  return bench::compare_to_reference(out, ref, dtype_of<T>(), plan.stencil());
}

PlanOptions no_cache() {
  PlanOptions o;
  o.backend = "cuda";
  o.use_cache = false;
  return o;
}

// A folder of the test's own (CTest runs tests in parallel).
fs::path scratch(const std::string& name) {
  const fs::path d = fs::temp_directory_path() / ("fds-plan-" + std::to_string(getpid()) + "-" + name);
  fs::remove_all(d);
  fs::create_directories(d);
  return d;
}

}  // namespace

TEST(CudaPlan, EveryOperatorRadiusAndTypeOnOddSizes) {
  REQUIRE_GPU();
  for (Op op : kOps)
    for (int r = 1; r <= kMaxRadius; ++r) {
      if (op == Op::laplacian7 && r > 1) break;
      for (Extents n : {Extents{37, 23, 19}, Extents{133, 41, 9}, Extents{3, 2, 5}})
        for (DType t : {DType::f32, DType::f64}) {
          const Stencil s{op, r, {0.5, 0.25, 2.0}};
          const Plan plan(s, Layout::make(n, r, dtype_bytes(t)), no_cache());
          const bench::Check c = t == DType::f32 ? run_and_check<float>(plan) : run_and_check<double>(plan);
          EXPECT_TRUE(c.ok) << op_name(op) << " R=" << r << " " << dtype_name(t) << " " << n.nx << "x" << n.ny
                            << "x" << n.nz << " " << plan.describe().dump() << ": " << c.message;
          EXPECT_NE(plan.source().find("defaults"), std::string::npos) << plan.source();
        }
    }
}

// The plan's choice at the sizes the defaults table was tuned for is the table's, not a fallback.
TEST(CudaPlan, TheDefaultsTableServesTheTunedSizes) {
  REQUIRE_GPU();
  for (Op op : kOps)
    for (int r : {1, 4, 8}) {
      if (op == Op::laplacian7 && r > 1) break;
      const Plan plan({op, r, {}}, Layout::make({512, 512, 512}, r, 4), no_cache());
      EXPECT_NE(plan.source().find("built-in defaults"), std::string::npos) << op_name(op) << " R=" << r;
      EXPECT_NE(plan.variant(), "baseline") << op_name(op) << " R=" << r;
    }
}

// Views over a caller's cudaMalloc'd memory: lines padded to an odd length (4-byte alignment
// only: the plan must pick a scalar kernel), to 16 bytes but not 128, and not padded at all.
TEST(CudaPlan, DeviceViewsWithUnusualStrides) {
  REQUIRE_GPU();
  const Extents n{45, 21, 17};
  for (const int R : {1, 4, 8})
    for (const Op op : {Op::d2x, Op::d2z, Op::d2xyz})
      for (const int64_t pad : {int64_t(3), int64_t(4 - (45 + 2 * R) % 4), int64_t(0)}) {
        const int64_t line = n.nx + 2 * R + pad, slice = line * (n.ny + 2 * R) + pad;
        const int64_t total = slice * (n.nz + 2 * R), corner = R + R * line + R * slice;
        float *a = nullptr, *b = nullptr;
        ASSERT_EQ(cudaMalloc(&a, size_t(total) * 4), cudaSuccess);
        ASSERT_EQ(cudaMalloc(&b, size_t(total) * 4), cudaSuccess);
        const auto vin = view_of<const float>(a + corner, Memory::device, n, R, line, slice);
        const auto vout = view_of<float>(b + corner, Memory::device, n, R, line, slice);
        // The same points on the library's layout, for the reference.
        HostField<float> in(n, R), ref(n, R);
        fill_random(in, kDefaultSeed + pad);
        std::vector<float> host_a(static_cast<size_t>(total), 0.5f), host_b(static_cast<size_t>(total));
        for (int64_t k = -R; k < n.nz + R; ++k)
          for (int64_t j = -R; j < n.ny + R; ++j)
            for (int64_t i = -R; i < n.nx + R; ++i)
              host_a[size_t(vin.layout().index(i, j, k))] = in.at(i, j, k);
        ASSERT_EQ(cudaMemcpy(a, host_a.data(), size_t(total) * 4, cudaMemcpyHostToDevice), cudaSuccess);
        ASSERT_EQ(cudaMemset(b, 0xff, size_t(total) * 4), cudaSuccess);  // NaN everywhere
        const Stencil s{op, R, {1.0, 0.5, 2.0}};
        const Plan plan(s, vin.layout(), no_cache());
        plan.apply(vin, vout);
        cuda::synchronize();
        ASSERT_EQ(cudaMemcpy(host_b.data(), b, size_t(total) * 4, cudaMemcpyDeviceToHost), cudaSuccess);
        reference_backend().apply(s, in, ref);
        double worst = 0, scale = 0;
        int64_t unwritten = 0, stray = 0;
        for (int64_t e = 0; e < total; ++e) {
          const int64_t k = e / slice - R, j = e % slice / line - R, i = e % slice % line - R;
          const bool inside = i >= 0 && i < n.nx && j >= 0 && j < n.ny && k >= 0 && k < n.nz;
          const float got = host_b[size_t(e)];
          if (!inside) {
            stray += !std::isnan(got);
            continue;
          }
          if (!std::isfinite(got))
            ++unwritten;
          else
            worst = std::max(worst, std::abs(double(got) - double(ref.at(i, j, k))));
          scale = std::max(scale, std::abs(double(ref.at(i, j, k))));
        }
        const std::string what = std::string(op_name(op)) + " R=" + std::to_string(R) + " line " +
                                 std::to_string(line) + ": " + plan.describe().dump();
        EXPECT_EQ(unwritten, 0) << what;
        EXPECT_EQ(stray, 0) << what;
        EXPECT_LE(worst, tolerance_for(DType::f32, s) * scale) << what;
        // What the plan relies on is what the view gives.
        EXPECT_LE(plan.describe()["requires"]["align_bytes"].get<int64_t>(), vin.layout().align_bytes())
            << what;
        EXPECT_EQ(plan.describe()["requires"]["tail_bytes"].get<int64_t>(), 0) << what;
        cudaFree(a);
        cudaFree(b);
      }
}

// A plan built for the library's own layout (DeviceField's) serves views over a caller's memory
// with the same strides: every launcher addresses points from the origin, not from element 0.
TEST(CudaPlan, APlanForOwnedFieldsServesViewsWithTheSameStrides) {
  REQUIRE_GPU();
  const Extents n{70, 30, 20};
  for (const Op op : {Op::d2x, Op::d2y, Op::d2z, Op::d2xy, Op::d2xyz})
    for (const int R : {1, 4, 8}) {
      const Layout owned = Layout::make(n, R, 4);
      const Plan plan({op, R, {1.0, 0.5, 2.0}}, owned, no_cache());
      // The caller's storage: its halo corner `pad` floats into the allocation, so that the
      // origin is on 128 bytes as in the owned layout, and room behind the far corner.
      const int64_t corner = R + R * owned.line() + R * owned.slice();
      const int64_t pad = (32 - corner % 32) % 32;
      const int64_t total =
          pad + corner + (n.nx + R) + (n.ny + R) * owned.line() + (n.nz + R) * owned.slice() + 1024;
      float *base_a = nullptr, *base_b = nullptr;
      ASSERT_EQ(cudaMalloc(&base_a, size_t(total) * 4), cudaSuccess);
      ASSERT_EQ(cudaMalloc(&base_b, size_t(total) * 4), cudaSuccess);
      float *a = base_a + pad, *b = base_b + pad;  // the halo corners
      const auto vin = view_of<const float>(a + corner, Memory::device, n, R, owned.line(), owned.slice());
      const auto vout = view_of<float>(b + corner, Memory::device, n, R, owned.line(), owned.slice());
      ASSERT_EQ(vin.layout().align_bytes(), kAlignBytes);
      HostField<float> in(owned), ref(owned), got(owned);
      fill_random(in, kDefaultSeed + R);
      reference_backend().apply(plan.stencil(), in, ref);
      // Upload the field's points from its origin onwards, then run.
      ASSERT_EQ(cudaMemcpy(a, in.data() + owned.origin() - corner,
                           size_t(owned.alloc_elems() - owned.origin() + corner) * 4, cudaMemcpyHostToDevice),
                cudaSuccess);
      ASSERT_EQ(cudaMemset(base_b, 0xff, size_t(total) * 4), cudaSuccess);
      const std::string what =
          std::string(op_name(op)) + " R=" + std::to_string(R) + " " + plan.describe().dump();
      if (plan.describe()["requires"]["head_bytes"].get<int64_t>() > 0 ||
          plan.describe()["requires"]["tail_bytes"].get<int64_t>() > 0) {
        EXPECT_THROW(plan.apply(vin, vout), Error) << what;  // a view has no head or tail to give
      } else {
        plan.apply(vin, vout);
        cuda::synchronize();
        got.fill(std::numeric_limits<float>::quiet_NaN());
        ASSERT_EQ(
            cudaMemcpy(got.data() + owned.origin() - corner, b,
                       size_t(owned.alloc_elems() - owned.origin() + corner) * 4, cudaMemcpyDeviceToHost),
            cudaSuccess);
        const bench::Check c = bench::compare_to_reference(got, ref, DType::f32, plan.stencil());
        EXPECT_TRUE(c.ok) << what << ": " << c.message;
      }
      cudaFree(base_a);
      cudaFree(base_b);
    }
}

// A plan built for the aligned layout refuses a view that lacks the alignment its kernel needs.
TEST(CudaPlan, ApplyRefusesAViewTooWeaklyAligned) {
  REQUIRE_GPU();
  const Extents n{64, 16, 16};
  const int R = 4;
  PlanOptions o = no_cache();
  o.variant = "window_vec";
  const Plan plan({Op::d2z, R, {}}, Layout::make(n, R, 4), o);
  DeviceField<float> in(n, R), out(n, R);
  EXPECT_NO_THROW(plan.apply(in, out));
  // The same storage seen one float later: every x-line 4 bytes off its 16-byte boundary.
  const Layout& l = in.layout();
  const FieldView<const float> shifted(in.data() + 1, l, Memory::device);
  EXPECT_TRUE(
      test::throws_error([&] { plan.apply(shifted, out.view()); }, ErrorKind::invalid_argument, {"aligned"}));
  HostField<float> h(n, R);
  EXPECT_TRUE(test::throws_error([&] { plan.apply(std::as_const(h).view(), out.view()); },
                                 ErrorKind::invalid_argument, {"host memory"}));
  cuda::synchronize();
}

TEST(CudaPlan, ApplyOnAStream) {
  REQUIRE_GPU();
  cudaStream_t stream = nullptr;
  ASSERT_EQ(cudaStreamCreate(&stream), cudaSuccess);
  for (Op op : {Op::d2y, Op::d2xyz}) {
    const Plan plan({op, 4, {}}, Layout::make({67, 35, 29}, 4, 4), no_cache());
    const bench::Check c = run_and_check<float>(plan, stream);
    EXPECT_TRUE(c.ok) << c.message;
  }
  cudaStreamDestroy(stream);
}

// A cache entry steers the plan; one this build cannot use, a corrupt file and another version's
// file each give a warning naming the file, and the plan takes the defaults.
TEST(CudaPlan, TheTuningCacheSteersThePlanAndABadOneFallsBack) {
  REQUIRE_GPU();
  const fs::path dir = scratch("cache");
  const fs::path file = dir / "tuning.json";
  const Extents n{96, 40, 33};
  const Stencil s{Op::d2z, 4, {}};
  const Layout l = Layout::make(n, 4, 4);
  TuningEntry e;
  e.key = current_key(Op::d2z, 4, DType::f32, n);
  e.variant = "window_vec";
  e.params = {{"nw", 4}, {"block", "32x2x1"}, {"vec_bytes", 8}, {"order", "zxy"}};
  TuningCache::store(file, e, nullptr);
  std::vector<std::string> warnings;
  PlanOptions o;
  o.cache_file = file.string();
  // The cache's warnings: on a card other than the H100 the built-in defaults also say once that
  // they were measured elsewhere (untuned_card_notice), which is not about the cache.
  o.warn = [&](const std::string& w) {
    if (w.find("launch choices were measured on") == std::string::npos) warnings.push_back(w);
  };
  {
    const Plan plan(s, l, o);
    EXPECT_EQ(plan.variant(), "window_vec");
    EXPECT_EQ(plan.params()["nw"], 4);
    EXPECT_EQ(plan.params()["order"], "zxy");
    EXPECT_NE(plan.source().find("tuning cache"), std::string::npos) << plan.source();
    EXPECT_TRUE(run_and_check<float>(plan).ok);
    // A nearby size borrows it, and says from which size.
    const Plan near(s, Layout::make({100, 44, 30}, 4, 4), o);
    EXPECT_EQ(near.params()["nw"], 4);
    EXPECT_NE(near.source().find("nearest tuned size 96x40x33"), std::string::npos) << near.source();
    // use_cache = false ignores it.
    PlanOptions off = o;
    off.use_cache = false;
    EXPECT_NE(Plan(s, l, off).source().find("built-in defaults"), std::string::npos);
  }
  EXPECT_TRUE(warnings.empty());
  // An entry this build cannot run: unknown variant, a bad parameter value.
  for (const auto& [variant, params] : {std::pair<std::string, nlohmann::json>{"window_hyper", {{"nw", 4}}},
                                        {"window_vec", {{"nw", 0}}},
                                        {"window_vec", {{"nw", "eight"}}}}) {
    e.variant = variant;
    e.params = params;
    TuningCache::store(file, e, nullptr);
    warnings.clear();
    const Plan plan(s, l, o);
    EXPECT_NE(plan.source().find("built-in defaults"), std::string::npos) << variant << " " << params.dump();
    ASSERT_EQ(warnings.size(), 1u) << variant << " " << params.dump();
    EXPECT_NE(warnings[0].find(file.string()), std::string::npos) << warnings[0];
    EXPECT_TRUE(run_and_check<float>(plan).ok);
  }
  // A corrupt file, and another version's.
  std::ofstream(file) << "{\"format\": \"fdstencil-tuning-cache\", \"entries\": [";
  warnings.clear();
  EXPECT_NE(Plan(s, l, o).source().find("built-in defaults"), std::string::npos);
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_NE(warnings[0].find(file.string()), std::string::npos);
  std::ofstream(file)
      << R"({"format": "fdstencil-tuning-cache", "format_version": 1, "library_version": "0.0.1", "entries": []})";
  warnings.clear();
  EXPECT_NE(Plan(s, l, o).source().find("built-in defaults"), std::string::npos);
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_NE(warnings[0].find("0.0.1"), std::string::npos);
  fs::remove_all(dir);
}

// A small case tuned end to end: every candidate verified, the winner stored, and a plan built
// afterwards takes it from the cache.
TEST(CudaPlan, TuningStoresAWinnerThatPlansThenUse) {
  REQUIRE_GPU();
  const fs::path dir = scratch("tune");
  TuneOptions o;
  o.cache_file = (dir / "tuning.json").string();
  o.budget_seconds = 30;
  o.reps = 3;
  o.final_reps = 5;
  o.progress = [](const std::string&) {};
  const Extents n{130, 70, 50};
  const TuneResult r = tune(Op::d2z, 2, DType::f32, n, o);
  EXPECT_GT(r.timed, 3);
  EXPECT_EQ(r.failed, 0) << r.candidates.dump();
  EXPECT_GT(r.best.median_ms, 0);
  EXPECT_GT(r.best.pct_of_copy, 0);
  EXPECT_GT(r.best.copy_gbps, 0);
  EXPECT_EQ(r.cache_file, o.cache_file);
  int ok = 0;
  for (const auto& c : r.candidates) ok += c["status"] == "ok";
  EXPECT_EQ(ok, r.timed);
  PlanOptions po;
  po.cache_file = o.cache_file;
  const Plan plan({Op::d2z, 2, {1, 1, 1}}, Layout::make(n, 2, 4), po);
  EXPECT_EQ(plan.variant(), r.best.variant);
  EXPECT_EQ(plan.params(), r.best.params);
  EXPECT_NE(plan.source().find("tuning cache"), std::string::npos);
  EXPECT_TRUE(run_and_check<float>(plan).ok);
  fs::remove_all(dir);
}

// The comparison that stands between a wrong kernel and the tuner's table: each fault is seen.
TEST(CudaPlan, TheDeviceComparisonSeesEveryFault) {
  REQUIRE_GPU();
  const Extents n{33, 17, 9};
  const int R = 3;
  HostField<float> ref(n, R), out(n, R);
  fill_random(ref, 5);
  for (int64_t e = 0; e < ref.layout().alloc_elems(); ++e)
    out.data()[e] = std::numeric_limits<float>::quiet_NaN();
  for (int64_t k = 0; k < n.nz; ++k)
    for (int64_t j = 0; j < n.ny; ++j)
      for (int64_t i = 0; i < n.nx; ++i) out.at(i, j, k) = ref.at(i, j, k);
  DeviceField<float> d_ref(ref.layout()), d_out(ref.layout());
  d_ref.upload(ref);
  const auto diff = [&](const HostField<float>& o) {
    d_out.upload(o);
    return cuda::compare_on_device(d_out.data(), d_ref.data(), ref.layout());
  };
  cuda::FieldDiff d = diff(out);
  EXPECT_EQ(d.max_abs_diff, 0.0);
  EXPECT_EQ(d.nonfinite, 0);
  EXPECT_EQ(d.halo_written, 0);
  EXPECT_GT(d.max_abs_ref, 0.5);
  HostField<float> bad(ref.layout());
  std::copy_n(out.data(), out.layout().alloc_elems(), bad.data());
  bad.at(n.nx - 1, n.ny - 1, n.nz - 1) = std::numeric_limits<float>::quiet_NaN();  // a point not written
  EXPECT_EQ(diff(bad).nonfinite, 1);
  std::copy_n(out.data(), out.layout().alloc_elems(), bad.data());
  bad.at(-1, 0, 0) = 0.f;  // a halo point written
  bad.at(0, n.ny + R - 1, n.nz) = 1.f;
  EXPECT_EQ(diff(bad).halo_written, 2);
  std::copy_n(out.data(), out.layout().alloc_elems(), bad.data());
  bad.at(5, 6, 7) += 0.25f;  // a wrong value
  EXPECT_NEAR(diff(bad).max_abs_diff, 0.25, 1e-6);
}
