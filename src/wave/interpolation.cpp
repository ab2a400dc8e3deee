#include "wave/interpolation.hpp"

#include <cmath>
#include <cstdio>

#include "fdstencil/error.hpp"

namespace fdstencil::wave::detail {

namespace {
// A position within a millionth of a point of a grid point is on it (coordinates typed in metres
// rarely divide exactly).
constexpr double kOnGrid = 1e-6;

std::string where(const Point& p, int dim) {
  char buf[128];
  if (dim == 3)
    std::snprintf(buf, sizeof buf, "(z, y, x) = (%g, %g, %g) m", p.z, p.y, p.x);
  else
    std::snprintf(buf, sizeof buf, "(z, x) = (%g, %g) m", p.z, p.x);
  return buf;
}
}  // namespace

std::vector<Weight1> weights_1d(double pos, Interpolation kind) {
  const double nearest = std::round(pos);
  if (std::abs(pos - nearest) < kOnGrid) return {{int64_t(nearest), 1.0}};
  const int64_t base = int64_t(std::floor(pos));
  if (kind == Interpolation::trilinear) {
    const double f = pos - double(base);
    return {{base, 1 - f}, {base + 1, f}};
  }
  std::vector<Weight1> w;
  const double i0b = std::cyl_bessel_i(0.0, kHicksKaiserB);
  for (int64_t i = base - kHicksHalfWidth + 1; i <= base + kHicksHalfWidth; ++i) {
    const double x = double(i) - pos;
    const double r = x / kHicksHalfWidth;
    const double window = std::cyl_bessel_i(0.0, kHicksKaiserB * std::sqrt(std::max(0.0, 1 - r * r))) / i0b;
    w.push_back({i, std::sin(M_PI * x) / (M_PI * x) * window});
  }
  return w;
}

std::vector<acoustic::Tap> taps_of(const Point& p, int id, const std::string& name, const Domain& d, double h,
                                   Interpolation kind, bool free_surface) {
  const double pz = p.z / h, py = d.dim == 3 ? p.y / h : 0.0, px = p.x / h;
  const auto inside = [](double v, int64_t n) {
    return std::isfinite(v) && v >= -kOnGrid && v <= double(n - 1) + kOnGrid;
  };
  if (!inside(pz, d.model_nz) || !inside(py, d.model_ny) || !inside(px, d.model_nx))
    throw Error(
        ErrorKind::invalid_argument,
        name + " at " + where(p, d.dim) + " lies outside the model, which spans 0.." +
            std::to_string(double(d.model_nz - 1) * h) + " m in z" +
            (d.dim == 3 ? ", 0.." + std::to_string(double(d.model_ny - 1) * h) + " m in y" : std::string()) +
            " and 0.." + std::to_string(double(d.model_nx - 1) * h) + " m in x");
  const auto wz = weights_1d(pz + d.lo[2], kind);
  const auto wy = d.dim == 3 ? weights_1d(py + d.lo[1], kind) : std::vector<Weight1>{{0, 1.0}};
  const auto wx = weights_1d(px + d.lo[0], kind);
  std::vector<acoustic::Tap> taps;
  for (const auto& z : wz)
    for (const auto& y : wy)
      for (const auto& x : wx) {
        int64_t k = z.index;
        double w = z.w * y.w * x.w;
        if (free_surface && k <= 0) {
          if (k == 0) continue;  // u = 0 on the surface
          k = -k;                // the odd image
          w = -w;
        }
        if (k < 0 || k >= d.nz || y.index < 0 || y.index >= d.ny || x.index < 0 || x.index >= d.nx)
          throw Error(
              ErrorKind::invalid_argument,
              name + " at " + where(p, d.dim) + " is too close to the grid's edge: " +
                  (kind == Interpolation::hicks ? "Hicks interpolation spreads it over 4 points on each side"
                                                : "its interpolation") +
                  " (widen the CPML, move it inwards, or use trilinear interpolation)");
        taps.push_back({int32_t(x.index), int32_t(y.index), int32_t(k), int32_t(id), float(w)});
      }
  return taps;
}

}  // namespace fdstencil::wave::detail
