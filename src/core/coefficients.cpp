// Fornberg's recursion for finite-difference weights on arbitrary nodes. Long double keeps the
// R = 8 weights correct to the last bit of a double after one rounding.
#include "fdstencil/coefficients.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>

#include "fdstencil/error.hpp"
#include "fdstencil/stencil.hpp"

namespace fdstencil {

namespace {

std::vector<std::vector<long double>> fornberg(long double z, const std::vector<long double>& x, int m) {
  const int n = static_cast<int>(x.size()) - 1;
  // c[k][i]: weight of node i for the k-th derivative.
  std::vector<std::vector<long double>> c(m + 1, std::vector<long double>(n + 1, 0.0L));
  long double c1 = 1.0L, c4 = x[0] - z;
  c[0][0] = 1.0L;
  for (int i = 1; i <= n; ++i) {
    const int mn = std::min(i, m);
    long double c2 = 1.0L;
    const long double c5 = c4;
    c4 = x[i] - z;
    for (int j = 0; j < i; ++j) {
      const long double c3 = x[i] - x[j];
      c2 *= c3;
      if (j == i - 1) {
        for (int k = mn; k >= 1; --k) c[k][i] = c1 * (k * c[k - 1][i - 1] - c5 * c[k][i - 1]) / c2;
        c[0][i] = -c1 * c5 * c[0][i - 1] / c2;
      }
      for (int k = mn; k >= 1; --k) c[k][j] = (c4 * c[k][j] - k * c[k - 1][j]) / c3;
      c[0][j] = c4 * c[0][j] / c3;
    }
    c1 = c2;
  }
  return c;
}

}  // namespace

std::vector<std::vector<double>> fornberg_weights(double z, const std::vector<double>& x, int max_order) {
  if (x.empty() || max_order < 0)
    throw Error(ErrorKind::invalid_argument, "fornberg_weights needs nodes and a derivative order >= 0");
  std::vector<long double> xl(x.begin(), x.end());
  const auto cl = fornberg(z, xl, max_order);
  std::vector<std::vector<double>> c(cl.size());
  for (size_t k = 0; k < cl.size(); ++k) c[k].assign(cl[k].begin(), cl[k].end());
  return c;
}

std::vector<double> central_weights(int derivative, int radius, double h) {
  if (derivative != 1 && derivative != 2)
    throw Error(ErrorKind::invalid_argument,
                "derivative " + std::to_string(derivative) + " is not supported (1 or 2)");
  if (radius < 1 || radius > kMaxRadius)
    throw Error(ErrorKind::invalid_argument,
                "radius " + std::to_string(radius) + " is outside 1.." + std::to_string(kMaxRadius));
  if (!std::isfinite(h) || h <= 0.0) {
    char buf[96];
    std::snprintf(buf, sizeof buf, "spacing %g must be finite and positive", h);
    throw Error(ErrorKind::invalid_argument, buf);
  }
  std::vector<long double> x;
  for (int r = -radius; r <= radius; ++r) x.push_back(r);
  const auto c = fornberg(0.0L, x, derivative);
  const long double scale = derivative == 1 ? 1.0L / h : 1.0L / (static_cast<long double>(h) * h);
  std::vector<double> w(c[derivative].size());
  for (size_t i = 0; i < w.size(); ++i) w[i] = static_cast<double>(c[derivative][i] * scale);
  // The central weights are exactly (anti)symmetric; the recursion leaves a last-bit asymmetry
  // that would make odd polynomials differentiate inexactly. Mirror the left half.
  for (int r = 1; r <= radius; ++r) w[radius + r] = derivative == 1 ? -w[radius - r] : w[radius - r];
  if (derivative == 1) w[radius] = 0.0;
  // A spacing so small or large that 1/h^d leaves the double range would give inf or 0 weights.
  // (The first derivative's centre weight is exactly 0; every other weight must stay normal.)
  for (int r = -radius; r <= radius; ++r) {
    const double v = w[size_t(r + radius)];
    const bool zero_by_symmetry = derivative == 1 && r == 0;
    if (!std::isfinite(v) || (!zero_by_symmetry && !std::isnormal(v))) {
      char buf[128];
      std::snprintf(buf, sizeof buf, "spacing %g puts the weights outside the range of double", h);
      throw Error(ErrorKind::invalid_argument, buf);
    }
  }
  return w;
}

}  // namespace fdstencil
