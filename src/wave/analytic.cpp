// The homogeneous medium's analytic solution for the solver's source scaling: the verification's
// reference.
#include <cmath>
#include <string>

#include "fdstencil/error.hpp"
#include "fdstencil/wave.hpp"

namespace fdstencil::wave {

std::vector<double> analytic_trace(int dim, double r, double v, const std::function<double(double)>& f,
                                   double dt, int64_t nt) {
  if (dim != 2 && dim != 3) throw Error(ErrorKind::invalid_argument, "dim must be 2 or 3");
  if (!(r > 0))
    throw Error(ErrorKind::invalid_argument,
                "the analytic solution needs a distance r > 0, got " + std::to_string(r));
  if (!(v > 0) || !(dt > 0) || nt < 0)
    throw Error(ErrorKind::invalid_argument, "analytic_trace needs v > 0, dt > 0, nt >= 0");
  std::vector<double> u(size_t(nt), 0.0);
  const double t0 = r / v;
  for (int64_t n = 0; n < nt; ++n) {
    const double t = double(n) * dt;
    if (dim == 3) {
      u[size_t(n)] = f(t - t0) / (4 * M_PI * r);
      continue;
    }
    // 2D: u(t) = 1/(2 pi) int_{t0}^{t} f(t - tau) / sqrt(tau^2 - t0^2) dtau. Product integration:
    // f at the midpoint of each interval of tau, times the kernel integrated exactly over it,
    // (acosh(tau_b / t0) - acosh(tau_a / t0)) / (2 pi), so the singularity at tau = t0 costs
    // nothing; intervals of dt / 8 keep the midpoint rule's error far below the solver's.
    if (t <= t0) continue;
    const double delta = dt / 8;
    const int64_t steps = int64_t(std::ceil((t - t0) / delta));
    double s = 0, prev = 0;  // acosh(tau_a / t0), 0 at tau_a = t0
    for (int64_t q = 0; q < steps; ++q) {
      const double tb = std::min(t, t0 + double(q + 1) * delta);
      const double ta = t0 + double(q) * delta;
      const double next = std::acosh(tb / t0);
      s += f(t - 0.5 * (ta + tb)) * (next - prev);
      prev = next;
    }
    u[size_t(n)] = s / (2 * M_PI);
  }
  return u;
}

}  // namespace fdstencil::wave
