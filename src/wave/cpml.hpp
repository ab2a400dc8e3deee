// The CPML's damping profiles and the recursive-convolution coefficients the step uses
// (physics/acoustic.hpp has the update they feed).
#pragma once

#include <vector>

#include "physics/acoustic.hpp"

namespace fdstencil::wave::detail {

// The theoretical reflection a layer of `width` points is designed for: 1e-3 at 10 points, a
// decade less for each doubling (Collino and Tsogka's rule of thumb), so wider layers absorb more
// rather than only more gently.
double default_reflection(int width);

// Per slot of `axis`: d(x) = d0 (x/L)^2 with d0 = -3 vmax ln(reflection) / (2 L), x the depth into
// the layer and L its thickness; alpha = alpha0 (1 - 3x/(4L)) (cpml.cpp says why it stops at
// alpha0 / 4); b = exp(-(d + alpha) dt), a = d (b - 1) / (d + alpha), and their derivatives along the
// axis.
template <class T>
std::vector<acoustic::PmlCoef<T>> cpml_coefficients(const acoustic::PmlAxis& axis, double h, double dt,
                                                    double vmax, double reflection, double alpha0);

}  // namespace fdstencil::wave::detail
