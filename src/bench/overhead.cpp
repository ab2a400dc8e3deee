// Plan::apply against the bare launch (see overhead.hpp).
#include "bench/overhead.hpp"

#include <algorithm>
#include <chrono>
#include <vector>

#include "core/summary.hpp"
#include "fdstencil/device_field.hpp"
#include "fdstencil/error.hpp"
#include "plan/plan_internal.hpp"
#ifdef FDSTENCIL_HAVE_CUDA
#include "fdstencil/device.hpp"
#endif

namespace fdstencil::bench {

namespace {

template <class T>
nlohmann::json measure(const Plan& plan, int calls, int rounds) {
#ifndef FDSTENCIL_HAVE_CUDA
  (void)plan, (void)calls, (void)rounds;
  throw Error(ErrorKind::unsupported,
              "the apply overhead is measured on the GPU; this build has no CUDA backend");
#else
  using Clock = std::chrono::steady_clock;
  DeviceField<T> in(plan.layout()), out(plan.layout());
  HostField<T> h(plan.layout());
  for (int64_t i = 0; i < plan.layout().alloc_elems(); ++i) h.data()[i] = T(1 + i % 7);  // finite, non-zero
  in.upload(h);
  const Launcher& bare = *plan.impl().launcher;
  const T* in_data = in.origin();
  T* out_data = out.origin();
  const FieldView<const T> vin = std::as_const(in).view();
  const FieldView<T> vout = out.view();
  const auto run_bare = [&] { bare.run(in_data, out_data, nullptr); };
  const auto run_plan = [&] { plan.apply(vin, vout, nullptr); };
  std::vector<double> enq[2], total[2];
  const auto round = [&](int path, auto&& call) {
    cuda::synchronize();
    const auto t0 = Clock::now();
    for (int c = 0; c < calls; ++c) call();
    const auto t1 = Clock::now();
    cuda::synchronize();
    const auto t2 = Clock::now();
    enq[path].push_back(std::chrono::duration<double, std::micro>(t1 - t0).count() / calls);
    total[path].push_back(std::chrono::duration<double, std::micro>(t2 - t0).count() / calls);
  };
  for (int w = 0; w < 3; ++w) round(0, run_bare), round(1, run_plan);  // warm-up, discarded
  for (int p = 0; p < 2; ++p) enq[p].clear(), total[p].clear();
  for (int r = 0; r < rounds; ++r) {  // alternating, so drift in clocks or load hits both alike
    round(0, run_bare);
    round(1, run_plan);
  }
  const double be = median_of(enq[0]), pe = median_of(enq[1]);
  const double bt = median_of(total[0]), pt = median_of(total[1]);
  return {{"calls", calls},        {"rounds", rounds},         {"bare_enqueue_us", be},
          {"plan_enqueue_us", pe}, {"enqueue_ratio", pe / be}, {"bare_total_us", bt},
          {"plan_total_us", pt},   {"total_ratio", pt / bt}};
#endif
}

}  // namespace

nlohmann::json measure_apply_overhead(const Plan& plan, int calls, int rounds) {
  if (plan.backend() != "cuda")
    throw Error(ErrorKind::unsupported, "the apply overhead is measured for plans on the cuda backend");
  return plan.dtype() == DType::f32 ? measure<float>(plan, calls, rounds)
                                    : measure<double>(plan, calls, rounds);
}

}  // namespace fdstencil::bench
