// Finite-difference weights by Fornberg's algorithm ("Generation of finite difference formulas
// on arbitrarily spaced grids", Math. Comp. 51, 1988), computed in long double and rounded once.
#pragma once

#include <vector>

namespace fdstencil {

// Weights c[m][i] of the m-th derivative at z from the values at nodes x[i], m = 0..max_order.
std::vector<std::vector<double>> fornberg_weights(double z, const std::vector<double>& x, int max_order);

// Central weights of radius R (2R+1 of them, offsets -R..R) for the first or second derivative
// on a unit grid, scaled by 1/h or 1/h^2. Throws Error(invalid_argument) for R outside 1..8,
// a derivative other than 1 or 2, or a spacing that is not finite and positive.
std::vector<double> central_weights(int derivative, int radius, double h = 1.0);

}  // namespace fdstencil
