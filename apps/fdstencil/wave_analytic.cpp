// fdstencil wave --compare-analytic: the homogeneous model's exact shot record beside the
// computed one, compared only over the window in which the computation can be exact, i.e. before
// anything reflected from the edge of the computational box could reach a receiver. The CPML
// makes that reflection small, not zero, so after the window the misfit measures the absorber,
// not the solver.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <limits>

#include "fdstencil/error.hpp"
#include "wave_cli.hpp"

namespace fdstencil::cli::wave_cli {

namespace {

// A receiver whose window holds less than this fraction of the strongest receiver's analytic norm
// sees no direct wave in it: only the Ricker's Gaussian tail, which never underflows to an exact
// zero in 3D, and whose relative misfit would be noise over noise.
constexpr double kSilentFraction = 1e-6;
// A sample time that is t_end up to rounding belongs to the window.
constexpr double kTimeTolerance = 1e-9;

double distance(const wave::Point& a, const wave::Point& b) {
  return std::sqrt((a.z - b.z) * (a.z - b.z) + (a.y - b.y) * (a.y - b.y) + (a.x - b.x) * (a.x - b.x));
}

double& coordinate(wave::Point& p, int axis) { return axis == 0 ? p.x : axis == 1 ? p.y : p.z; }

}  // namespace

std::vector<float> analytic_record(const Setup& s) {
  const auto& receivers = s.options.receivers;
  const double v = s.model().vmax();  // the model is constant
  const std::function<double(double)> f = [&w = s.wavelet](double t) { return w(t); };
  std::vector<float> out(receivers.size() * size_t(s.n_out));
  for (size_t r = 0; r < receivers.size(); ++r) {
    std::vector<double> sum(size_t(s.n_out), 0.0);
    for (const wave::Point& src : s.sources) {  // superposition: the equation is linear
      const auto a =
          wave::analytic_trace(s.model().dim, distance(src, receivers[r]), v, f, s.record_dt, s.n_out);
      for (size_t n = 0; n < sum.size() && n < a.size(); ++n) sum[n] += a[n];
    }
    std::copy(sum.begin(), sum.end(), out.begin() + std::ptrdiff_t(r * size_t(s.n_out)));
  }
  return out;
}

double window_end(const Setup& s, const wave::Domain& d) {
  const double h = s.model().h, v = s.model().vmax();
  const int64_t n[3] = {d.model_nx, d.model_ny, d.model_nz};  // axes x, y, z as in lo and hi
  double shortest = std::numeric_limits<double>::infinity();
  for (int axis = 0; axis < 3; ++axis) {
    if (axis == 1 && s.model().dim == 2) continue;
    // The outermost computed points, model index -lo and n - 1 + hi. The field is held at zero one
    // point further out, so the true mirror lies h beyond: taking these planes errs early, safely.
    const double planes[2] = {-double(d.lo[axis]) * h, double(n[axis] - 1 + d.hi[axis]) * h};
    for (const double plane : planes)
      for (wave::Point src : s.sources) {
        coordinate(src, axis) = 2 * plane - coordinate(src, axis);
        for (const wave::Point& rec : s.options.receivers) shortest = std::min(shortest, distance(src, rec));
      }
  }
  return shortest / v;
}

nlohmann::json compare(const Setup& s, const std::vector<float>& record, const std::vector<float>& analytic,
                       double t_end) {
  const size_t nrec = s.options.receivers.size(), n_out = size_t(s.n_out);
  const size_t window = std::min(n_out, size_t(std::floor(t_end / s.record_dt * (1 + kTimeTolerance))) + 1);
  std::vector<double> err(nrec, 0.0), norm(nrec, 0.0);
  double strongest = 0;
  for (size_t r = 0; r < nrec; ++r) {
    for (size_t n = 0; n < window; ++n) {
      const double a = analytic[r * n_out + n], u = record[r * n_out + n];
      err[r] += (u - a) * (u - a);
      norm[r] += a * a;
    }
    strongest = std::max(strongest, norm[r]);
  }
  if (!(strongest > 0)) {
    char buf[256];
    std::snprintf(buf, sizeof buf,
                  "--compare-analytic: no receiver sees the direct wave before t = %.6g s, when a reflection "
                  "from the edge of the computational box could first arrive; move the receivers closer to "
                  "the sources or widen the model",
                  t_end);
    throw Error(ErrorKind::invalid_argument, buf);
  }
  nlohmann::json per = nlohmann::json::array(), skipped = nlohmann::json::array();
  double err_sum = 0, norm_sum = 0;
  for (size_t r = 0; r < nrec; ++r) {
    if (norm[r] <= kSilentFraction * kSilentFraction * strongest) {  // norms compared, squares held
      skipped.push_back(r);
      continue;
    }
    err_sum += err[r];
    norm_sum += norm[r];
    double nearest = std::numeric_limits<double>::infinity();
    for (const wave::Point& src : s.sources)
      nearest = std::min(nearest, distance(src, s.options.receivers[r]));
    per.push_back({{"receiver", r},
                   {"distance_m", nearest},
                   {"misfit", std::sqrt(err[r] / norm[r])},
                   {"analytic_norm", std::sqrt(norm[r])}});
  }
  return {{"misfit", std::sqrt(err_sum / norm_sum)},
          // the window's last sample (issue 33: the reflection's arrival was quoted, past the run's end
          // where the run stops first), and when a reflection could first arrive
          {"window_end_s", double(window - 1) * s.record_dt},
          {"first_reflection_s", t_end},
          {"window_samples", window},
          {"per_receiver", per},
          {"skipped", skipped}};
}

}  // namespace fdstencil::cli::wave_cli
