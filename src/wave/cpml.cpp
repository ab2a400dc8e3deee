#include "wave/cpml.hpp"

#include <algorithm>
#include <cmath>

namespace fdstencil::wave::detail {

double default_reflection(int width) {
  if (width <= 0) return 1.0;
  // At most 1 %: the rule would give more than 1 (an amplifying layer) below 3 points.
  return std::min(1e-2, 1e-3 * std::pow(10.0, -std::log2(double(width) / 10.0)));
}

namespace {
struct AB {
  double a, b;
};
// a and b at depth x (metres) into a layer of thickness L.
AB coef_at(double x, double L, double d0, double alpha0, double dt) {
  if (x <= 0) return {0.0, 1.0 * std::exp(-alpha0 * dt)};
  const double r = x / L;  // unclamped: the slope at x = L is a centred difference too
  // alpha falls from alpha0 at the inner edge to alpha0 / 4 at the outer one. Falling to 0 (the
  // usual profile) absorbed best (-66 dB at 20 points, 2D, bench/wave_cpml.py) but grew a uniform
  // late-time mode, x16 per 5000 steps in a 2D box at R = 4, through chi's b' psi term; constant
  // alpha was stable but reflected -39 dB (-13 dB at the band's low edge). This profile is stable
  // (the box decays by 4 decades over 20000 steps) and reflects -64 dB (-41 dB in the band).
  const double d = d0 * r * r, alpha = alpha0 * (1 - 0.75 * r);
  const double b = std::exp(-(d + alpha) * dt);
  return {d + alpha > 0 ? d * (b - 1) / (d + alpha) : 0.0, b};
}
}  // namespace

template <class T>
std::vector<acoustic::PmlCoef<T>> cpml_coefficients(const acoustic::PmlAxis& axis, double h, double dt,
                                                    double vmax, double reflection, double alpha0) {
  std::vector<acoustic::PmlCoef<T>> c;
  for (int side = 0; side < 2; ++side) {
    const int w = side == 0 ? axis.lo : axis.hi;
    if (w == 0) continue;
    const double L = w * h;
    const double d0 = -3.0 * vmax * std::log(reflection) / (2.0 * L);
    // Depth into the layer grows outwards: against the axis at the start, along it at the end.
    const double sign = side == 0 ? -1.0 : 1.0;
    for (int p = 0; p < w; ++p) {
      const double x = side == 0 ? double(w - p) * h : double(p + 1) * h;
      const AB v = coef_at(x, L, d0, alpha0, dt);
      // Central differences over +-h/1000 of the profiles' formulas (smooth across the layer,
      // continued past its outer edge for the outermost point).
      const double eps = 1e-3 * h;
      const AB p1 = coef_at(x + eps, L, d0, alpha0, dt), m1 = coef_at(x - eps, L, d0, alpha0, dt);
      c.push_back({T(v.a), T(v.b), T(sign * (p1.a - m1.a) / (2 * eps)), T(sign * (p1.b - m1.b) / (2 * eps))});
    }
  }
  return c;
}

template std::vector<acoustic::PmlCoef<float>> cpml_coefficients<float>(const acoustic::PmlAxis&, double,
                                                                        double, double, double, double);
template std::vector<acoustic::PmlCoef<double>> cpml_coefficients<double>(const acoustic::PmlAxis&, double,
                                                                          double, double, double, double);

}  // namespace fdstencil::wave::detail
