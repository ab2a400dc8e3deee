// The plan API on the host backends (CI runs these): every operator, radius and type against the
// reference on odd sizes, views over a caller's arrays with unusual strides, and every refusal of
// a plan or of apply with the reason a user needs. The cuda backend's plans: tests/cuda/test_plan.cpp.
#include <gtest/gtest.h>

#include <cstring>
#include <numeric>

#include "fdstencil/device.hpp"
#include "fdstencil/device_field.hpp"
#include "fdstencil/plan.hpp"
#include "plan/verify.hpp"
#include "test_util.hpp"

using namespace fdstencil;
using fdstencil::test::throws_error;

namespace {

std::string describe_case(const Stencil& s) { return test::describe(s); }

template <class T>
void check_against_reference(const Plan& plan, const Stencil& s, Extents n) {
  HostField<T> in(n, s.radius), out(n, s.radius), ref(n, s.radius);
  test::fill_random(in, test::announce_seed(7 + s.radius, describe_case(s)));
  test::poison_output(out);
  const std::vector<T> before = test::snapshot(out);
  plan.apply(in, out);
  reference_backend().apply(s, in, ref);
  const double tol = tolerance_for(dtype_of<T>(), s) * test::max_abs_read(ref) + 1e-300;
  EXPECT_TRUE(test::fields_match(out, ref, tol)) << describe_case(s) << " " << plan.describe().dump();
  EXPECT_TRUE(test::outside_interior_unchanged(out, before));
  EXPECT_TRUE(test::interior_not_all_zero(out));
}

}  // namespace

TEST(Plan, HostBackendsMatchTheReferenceForEveryOperatorRadiusAndType) {
  for (const std::string backend : {"cpu", "reference"})
    for (const test::OpCase c : test::all_op_cases())
      for (Extents n : {Extents{13, 7, 5}, Extents{1, 2, 3}}) {
        const Stencil s{c.op, c.radius, {0.5, 0.25, 2.0}};
        PlanOptions o;
        o.backend = backend;
        const Plan pf(s, Layout::make(n, c.radius, 4), o);
        EXPECT_EQ(pf.backend(), backend);
        EXPECT_EQ(pf.variant(), backend);
        check_against_reference<float>(pf, s, n);
        const Plan pd(s, Layout::make(n, c.radius, 8), o);
        EXPECT_EQ(pd.dtype(), DType::f64);
        check_against_reference<double>(pd, s, n);
      }
}

TEST(Plan, AutoIsTheGpuWhenThereIsOneElseTheCpu) {
  const Plan p({Op::d2xyz, 2, {}}, Layout::make({9, 8, 7}, 2, 4));
  EXPECT_EQ(p.backend(), gpu_count() > 0 ? "cuda" : "cpu") << p.describe().dump();
  EXPECT_FALSE(p.source().empty());
  const nlohmann::json d = p.describe();
  for (const char* key :
       {"op", "radius", "dtype", "interior", "backend", "variant", "params", "source", "resources"})
    EXPECT_TRUE(d.contains(key)) << key;
}

TEST(Plan, CudaWithoutAGpuSaysWhy) {
  if (gpu_count() > 0) GTEST_SKIP() << "a GPU is present";
  PlanOptions o;
  o.backend = "cuda";
  EXPECT_TRUE(throws_error(
      [&] {
        Plan({Op::d2z, 4, {}}, Layout::make({16, 16, 16}, 4, 4), o);
      },
      ErrorKind::unsupported, {"cuda", "gpu", "driver"}));
  EXPECT_TRUE(throws_error(
      [] {
        DeviceField<float> f({8, 8, 8}, 1);
      },
      ErrorKind::unsupported, {"device", "gpu", "cuda"}));
}

// The public device header (fdstencil/device.hpp) links in every build: without a GPU it says why
// instead of answering.
TEST(Plan, DeviceQueriesWithoutAGpuSayWhy) {
  if (cuda::device_count() > 0) GTEST_SKIP() << "a GPU is present";
  EXPECT_FALSE(cuda::no_device_reason().empty());
  EXPECT_THROW(cuda::device_free_bytes(), Error);
  EXPECT_THROW(cuda::ensure_device_memory(1, "a test's byte"), Error);
}

TEST(Plan, BadPlansAreRefusedWithTheReason) {
  const Layout l4 = Layout::make({16, 16, 16}, 4, 4);
  EXPECT_TRUE(throws_error(
      [&] {
        Plan({Op::d2z, 3, {}}, l4);
      },
      ErrorKind::invalid_argument, {"halo", "radius"}));
  EXPECT_TRUE(throws_error(
      [&] {
        Plan({Op::d2z, 4, {0, 1, 1}}, l4);
      },
      ErrorKind::invalid_argument, {"spacing"}));
  EXPECT_TRUE(throws_error(
      [&] {
        Plan({Op::laplacian7, 4, {}}, l4);
      },
      ErrorKind::invalid_argument, {"laplacian7"}));
  PlanOptions o;
  o.backend = "fpga";
  EXPECT_TRUE(throws_error([&] { Plan({Op::d2z, 4, {}}, l4, o); }, ErrorKind::invalid_argument, {"fpga"}));
  o.backend = "cpu";
  o.variant = "window_vec";  // a cuda variant, not the cpu backend's
  EXPECT_TRUE(throws_error(
      [&] {
        Plan({Op::d2z, 4, {}}, l4, o);
      },
      ErrorKind::invalid_argument, {"window_vec"}));
  o.variant = "cpu";
  o.params = {{"nw", 8}};  // the cpu backend takes no parameters
  EXPECT_TRUE(throws_error([&] { Plan({Op::d2z, 4, {}}, l4, o); }, ErrorKind::invalid_argument, {"nw"}));
}

TEST(Plan, ApplyRefusesViewsThatDoNotFit) {
  PlanOptions o;
  o.backend = "cpu";
  const Stencil s{Op::d2xyz, 2, {}};
  const Plan p(s, Layout::make({12, 10, 8}, 2, 4), o);
  HostField<float> in({12, 10, 8}, 2), out({12, 10, 8}, 2), other({12, 10, 9}, 2);
  HostField<double> din({12, 10, 8}, 2), dout({12, 10, 8}, 2);
  in.fill(1.0f);
  EXPECT_TRUE(throws_error([&] { p.apply(in, other); }, ErrorKind::invalid_argument, {"output", "12x10x9"}));
  EXPECT_TRUE(throws_error([&] { p.apply(din, dout); }, ErrorKind::invalid_argument, {"float", "double"}));
  EXPECT_TRUE(throws_error([&] { p.apply(std::as_const(in).view(), in.view()); }, ErrorKind::invalid_argument,
                           {"same field", "in-place"}));
  // A view that claims device memory is not for a host plan.
  const FieldView<float> on_device(out.data(), out.layout(), Memory::device);
  EXPECT_TRUE(throws_error([&] { p.apply(std::as_const(in).view(), on_device); }, ErrorKind::invalid_argument,
                           {"device memory"}));
}

// A caller's arrays with strides of its own: padded lines of odd length, planes with a gap, and
// the tightest strides (no padding at all); the plan is built for the view's layout.
TEST(Plan, HostViewsOverACallersArraysWithUnusualStrides) {
  const Extents n{11, 6, 5};
  for (const int R : {1, 3})
    for (const auto& [pad_line, pad_slice] : {std::pair<int64_t, int64_t>{0, 0}, {3, 5}, {1, 0}}) {
      const int64_t line = n.nx + 2 * R + pad_line, slice = line * (n.ny + 2 * R) + pad_slice;
      const int64_t total = slice * (n.nz + 2 * R);
      const int64_t corner = R + R * line + R * slice;  // elements from (-R,-R,-R) to (0,0,0)
      std::vector<float> a(static_cast<size_t>(total));
      std::vector<float> b(static_cast<size_t>(total), -7.0f);  // a sentinel outside the interior
      // Random values: the tolerance assumes |result| of the order of sum |w u| (no cancellation).
      std::mt19937_64 gen(test::announce_seed(11 + R, "view"));
      std::uniform_real_distribution<double> dist(-1.0, 1.0);
      for (float& x : a) x = float(dist(gen));
      const auto vin = view_of<const float>(a.data() + corner, Memory::host, n, R, line, slice);
      const auto vout = view_of<float>(b.data() + corner, Memory::host, n, R, line, slice);
      EXPECT_EQ(vin.layout().line(), line);
      EXPECT_EQ(vin.layout().tail_bytes(), 0);
      const Stencil s{Op::d2xyz, R, {1.0, 0.5, 2.0}};
      PlanOptions o;
      o.backend = "cpu";
      const Plan plan(s, vin.layout(), o);
      plan.apply(vin, vout);
      // The same field on the library's own layout, through the reference.
      HostField<float> in(n, R), ref(n, R);
      for (int64_t k = -R; k < n.nz + R; ++k)
        for (int64_t j = -R; j < n.ny + R; ++j)
          for (int64_t i = -R; i < n.nx + R; ++i) in.at(i, j, k) = vin.at(i, j, k);
      reference_backend().apply(s, in, ref);
      double worst = 0, scale = 0;
      for (int64_t k = 0; k < n.nz; ++k)
        for (int64_t j = 0; j < n.ny; ++j)
          for (int64_t i = 0; i < n.nx; ++i) {
            worst = std::max(worst, std::abs(double(vout.at(i, j, k)) - double(ref.at(i, j, k))));
            scale = std::max(scale, std::abs(double(ref.at(i, j, k))));
          }
      EXPECT_GT(scale, 0.0);
      EXPECT_LE(worst, tolerance_for(DType::f32, s) * scale)
          << "R=" << R << " line " << line << " slice " << slice;
      // Nothing outside the interior was written.
      int64_t touched = 0;
      for (int64_t e = 0; e < total; ++e) {
        // Element 0 is halo point (-R, -R, -R).
        const int64_t k = e / slice - R, j = e % slice / line - R, i = e % slice % line - R;
        const bool inside = i >= 0 && i < n.nx && j >= 0 && j < n.ny && k >= 0 && k < n.nz;
        if (!inside && b[size_t(e)] != -7.0f) ++touched;
      }
      EXPECT_EQ(touched, 0);
    }
}

TEST(Plan, ViewsRefuseBadPointersAndStrides) {
  std::vector<float> a(4096, 1.0f);
  EXPECT_TRUE(throws_error(
      [] {
        view_of<float>(nullptr, Memory::host, {4, 4, 4}, 1, 6, 36);
      },
      ErrorKind::invalid_argument, {"null"}));
  float* odd = reinterpret_cast<float*>(reinterpret_cast<char*>(a.data() + 64) + 2);
  EXPECT_TRUE(throws_error(
      [&] {
        view_of<float>(odd, Memory::host, {4, 4, 4}, 1, 6, 36);
      },
      ErrorKind::invalid_argument, {"aligned"}));
  EXPECT_TRUE(throws_error(
      [&] {
        view_of<float>(a.data() + 64, Memory::host, {4, 4, 4}, 1, 5, 36);
      },
      ErrorKind::invalid_argument, {"line stride"}));
  EXPECT_TRUE(throws_error(
      [&] {
        view_of<float>(a.data() + 64, Memory::host, {4, 4, 4}, 1, 6, 35);
      },
      ErrorKind::invalid_argument, {"plane stride"}));
  // The alignment a view keeps is what its pointer and strides allow.
  const auto v = view_of<float>(a.data() + 64, Memory::host, {4, 4, 4}, 1, 7, 49);
  EXPECT_EQ(v.layout().align_bytes() % 4, 0);
  EXPECT_LT(v.layout().align_bytes(), 8);  // a line of 7 floats is 28 bytes
}

// Every backend addresses points from the origin: a plan built for the library's own layout
// serves views of a caller's arrays with the same strides, whatever lies before their halo
// corner, and the cpu backend takes fields whose element 0 differ.
TEST(Plan, ViewsWithTheSameStridesButAnotherOffset) {
  const Extents n{13, 9, 7};
  const int R = 2;
  const Stencil s{Op::d2xyz, R, {1.0, 0.5, 2.0}};
  HostField<float> in(n, R), ref(n, R), got(n, R);
  test::fill_random(in, test::announce_seed(21, "offsets"));
  reference_backend().apply(s, in, ref);
  const Layout& l = in.layout();
  ASSERT_GT(l.offset(), 0);  // the owned layout shifts its base; the views below do not
  std::vector<float> a(static_cast<size_t>(l.alloc_elems())), b(static_cast<size_t>(l.alloc_elems()), -3.0f);
  const int64_t corner = R + R * l.line() + R * l.slice();
  for (int64_t k = -R; k < n.nz + R; ++k)
    for (int64_t j = -R; j < n.ny + R; ++j)
      for (int64_t i = -R; i < n.nx + R; ++i)
        a[size_t(corner + i + j * l.line() + k * l.slice())] = in.at(i, j, k);
  const auto vin = view_of<const float>(a.data() + corner, Memory::host, n, R, l.line(), l.slice());
  const auto vout = view_of<float>(b.data() + corner, Memory::host, n, R, l.line(), l.slice());
  ASSERT_EQ(vin.layout().offset(), 0);
  PlanOptions o;
  o.backend = "cpu";
  const Plan plan(s, l, o);  // built for the owned layout
  plan.apply(vin, vout);
  cpu_backend().apply(s, vin, got.view());  // a view in, a field out: different element 0s
  const double tol = tolerance_for(DType::f32, s) * test::max_abs_read(ref);
  double worst = 0, worst_mixed = 0;
  for (int64_t k = 0; k < n.nz; ++k)
    for (int64_t j = 0; j < n.ny; ++j)
      for (int64_t i = 0; i < n.nx; ++i) {
        worst = std::max(worst, std::abs(double(vout.at(i, j, k)) - double(ref.at(i, j, k))));
        worst_mixed = std::max(worst_mixed, std::abs(double(got.at(i, j, k)) - double(ref.at(i, j, k))));
      }
  EXPECT_LE(worst, tol);
  EXPECT_LE(worst_mixed, tol);
  // Two views of one array, the output one plane on: they overlap, and that is refused.
  const auto shifted = view_of<float>(a.data() + corner + l.slice(), Memory::host, n, R, l.line(), l.slice());
  EXPECT_TRUE(throws_error([&] { plan.apply(vin, shifted); }, ErrorKind::invalid_argument, {"overlap"}));
}

TEST(Plan, ParametersWithoutAVariantAreRefused) {
  PlanOptions o;
  o.backend = "cpu";
  o.params = {{"nw", 8}};
  EXPECT_TRUE(throws_error(
      [&] {
        Plan({Op::d2z, 4, {}}, Layout::make({16, 16, 16}, 4, 4), o);
      },
      ErrorKind::invalid_argument, {"without a variant"}));
}

TEST(Plan, AViewThatClaimsMoreAlignmentThanItsStridesKeepIsRefused) {
  // A layout must not claim an alignment its strides cannot keep.
  EXPECT_TRUE(throws_error(
      [] {
        Layout::strided({8, 8, 8}, 1, 4, 11, 110, 16);
      },
      ErrorKind::invalid_argument, {"aligned"}));
  EXPECT_NO_THROW(Layout::strided({8, 8, 8}, 1, 4, 12, 120, 16));
}
