// The time step's stability limit and the spatial sampling an order needs, both from the
// second-derivative stencil's symbol.
#include <cmath>

#include "fdstencil/coefficients.hpp"
#include "fdstencil/error.hpp"
#include "fdstencil/wave.hpp"

namespace fdstencil::wave {

namespace {
// -symbol of the unit-spacing second derivative at wavenumber k h = theta: ~theta^2 when small.
double minus_symbol(const std::vector<double>& c, int R, double theta) {
  double s = c[size_t(R)];
  for (int r = 1; r <= R; ++r) s += 2 * c[size_t(R + r)] * std::cos(r * theta);
  return -s;
}
}  // namespace

double max_stable_dt(int dim, int radius, double h, double vmax) {
  if (dim != 2 && dim != 3) throw Error(ErrorKind::invalid_argument, "dim must be 2 or 3");
  if (!(vmax > 0) || !(h > 0))
    throw Error(ErrorKind::invalid_argument, "velocity and spacing must be positive");
  const auto c = central_weights(2, radius);
  // Von Neumann: the leapfrog is stable while (v dt / h)^2 times the largest eigenvalue of -lap
  // (dim times the 1D symbol's largest magnitude, at theta = pi) is at most 4.
  const double s = minus_symbol(c, radius, M_PI);
  return 2.0 * h / (vmax * std::sqrt(dim * s));
}

double points_per_wavelength_needed(int radius) {
  const auto c = central_weights(2, radius);
  // The coarsest sampling (largest theta = 2 pi / ppw) whose phase velocity, sqrt(-symbol) / theta,
  // is within 1 % of the true one: scanned from fine to coarse, in steps of 0.01 points.
  double ppw = 2.0;
  for (double p = 40.0; p >= 2.0; p -= 0.01) {
    const double theta = 2 * M_PI / p;
    if (std::abs(std::sqrt(minus_symbol(c, radius, theta)) / theta - 1.0) > 0.01) {
      ppw = p + 0.01;
      break;
    }
  }
  return ppw;
}

}  // namespace fdstencil::wave
