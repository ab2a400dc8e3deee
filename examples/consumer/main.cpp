// A consumer of an installed fdstencil, written against the public API alone: it plans the
// 8th-order Laplacian (d2xyz, radius 4) on an odd-sized float field, applies the plan on the cpu
// backend over a NaN-poisoned output, and checks every interior point against the reference
// backend; with a GPU present it checks the cuda backend the same way. Exit 0 when all match.
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <limits>
#include <string>

#include "fdstencil/backend.hpp"
#include "fdstencil/device_field.hpp"
#include "fdstencil/error.hpp"
#include "fdstencil/field.hpp"
#include "fdstencil/layout.hpp"
#include "fdstencil/plan.hpp"
#include "fdstencil/stencil.hpp"
#include "fdstencil/version.hpp"

namespace {

constexpr double kTolerance = 1e-4;  // max |out - ref| / max |ref|, in float

// Max |out - ref| over the interior relative to max |ref|; NaN when any interior point of
// either is NaN (a point the operator did not write).
double relative_error(const fdstencil::HostField<float>& out, const fdstencil::HostField<float>& ref) {
  const fdstencil::Extents n = ref.interior();
  double max_diff = 0.0, max_ref = 0.0;
  int64_t nan_points = 0;
  for (int64_t k = 0; k < n.nz; ++k)
    for (int64_t j = 0; j < n.ny; ++j)
      for (int64_t i = 0; i < n.nx; ++i) {
        const double o = out.at(i, j, k), r = ref.at(i, j, k);
        if (std::isnan(o) || std::isnan(r)) {
          ++nan_points;
          continue;
        }
        max_diff = std::fmax(max_diff, std::fabs(o - r));
        max_ref = std::fmax(max_ref, std::fabs(r));
      }
  if (nan_points > 0) {
    std::printf("  %lld interior points are NaN\n", static_cast<long long>(nan_points));
    return std::numeric_limits<double>::quiet_NaN();
  }
  return max_ref > 0.0 ? max_diff / max_ref : max_diff;
}

// Prints the plan's choice and its error against `ref`; true when within the tolerance.
bool report(const fdstencil::Plan& plan, const fdstencil::HostField<float>& out,
            const fdstencil::HostField<float>& ref) {
  std::printf("  backend %s, variant %s, source: %s\n", plan.backend().c_str(), plan.variant().c_str(),
              plan.source().c_str());
  const double err = relative_error(out, ref);
  const bool ok = err <= kTolerance;  // false for NaN too
  std::printf("  max relative error %.3e (tolerance %.0e): %s\n", err, kTolerance, ok ? "ok" : "MISMATCH");
  return ok;
}

}  // namespace

int main() {
  try {
    std::printf("fdstencil %s\n", fdstencil::kVersion);

    // Odd extents, so that no vector width or tile divides them.
    const fdstencil::Extents extents{37, 23, 19};
    const int radius = 4;
    const fdstencil::Stencil stencil{fdstencil::Op::d2xyz, radius, {0.5, 0.75, 1.25}};

    // Deterministic values in [1, 2), halo included, never zero.
    fdstencil::HostField<float> in(extents, radius);
    in.fill(1.0f);
    for (int64_t k = -radius; k < extents.nz + radius; ++k)
      for (int64_t j = -radius; j < extents.ny + radius; ++j)
        for (int64_t i = -radius; i < extents.nx + radius; ++i)
          in.at(i, j, k) =
              1.0f + float((7 * (i + radius) + 13 * (j + radius) + 31 * (k + radius)) % 17) / 17.0f;

    const float nan = std::numeric_limits<float>::quiet_NaN();
    fdstencil::HostField<float> ref(in.layout()), out(in.layout());
    ref.fill(nan);
    fdstencil::reference_backend().apply(stencil, in, ref);

    bool ok = true;

    // The cpu backend. use_cache = false: the built-in defaults, whatever a tuning cache holds.
    {
      fdstencil::PlanOptions options;
      options.backend = "cpu";
      options.use_cache = false;
      const fdstencil::Plan plan(stencil, in.layout(), options);
      out.fill(nan);
      plan.apply(in, out);
      std::printf("%s radius %d on %lldx%lldx%lld, float, on the host:\n",
                  std::string(fdstencil::op_name(stencil.op)).c_str(), radius,
                  static_cast<long long>(extents.nx), static_cast<long long>(extents.ny),
                  static_cast<long long>(extents.nz));
      ok = report(plan, out, ref) && ok;
    }

    // The cuda backend, when this build has it and a GPU is present.
    if (fdstencil::gpu_count() > 0) {
      fdstencil::PlanOptions options;
      options.backend = "cuda";
      options.use_cache = false;
      fdstencil::DeviceField<float> d_in(in.layout()), d_out(in.layout());
      const fdstencil::Plan plan(stencil, d_in.layout(), options);
      d_in.upload(in);
      d_out.poison();
      plan.apply(d_in, d_out);
      out.fill(0.0f);
      d_out.download(out);  // on the default stream, after the plan's work
      std::printf("on the GPU:\n");
      ok = report(plan, out, ref) && ok;
    } else {
      std::printf("no GPU (%s): cuda backend not run\n", fdstencil::gpu_unavailable_reason().c_str());
    }

    std::printf("%s\n", ok ? "consumer: PASS" : "consumer: FAIL");
    return ok ? 0 : 1;
  } catch (const fdstencil::Error& e) {
    std::fprintf(stderr, "consumer: fdstencil error: %s\n", e.what());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "consumer: error: %s\n", e.what());
  }
  return 1;
}
