// The cpu step undone inside the reversal box (physics/reversal.hpp): the backward pass's boundary
// saving rebuilds the forward field with it, one step back at a time.
#pragma once

#include <cstdint>

#include "physics/acoustic.hpp"
#include "physics/reversal.hpp"

namespace fdstencil::cpu {

// Step n undone at the box's points: `out` gets u^{n-1} = 2 u^n - u^{n+1} + m L(u^n) + the sources'
// taps of f^n there, from u^n in `u` and u^{n+1} in `next` (the setup's storage layout; `next` may
// be `out`); its other points are left as they are. Each of the box's x-lines is copied from `next`
// just before the step reads it back, so a caller that keeps u^{n+1} copies no more than the box.
template <class T>
void step_back(const acoustic::Setup<T>& s, const acoustic::ReversalBox& box, const T* u, const T* next,
               T* out, int64_t n);

extern template void step_back(const acoustic::Setup<float>&, const acoustic::ReversalBox&, const float*,
                               const float*, float*, int64_t);
extern template void step_back(const acoustic::Setup<double>&, const acoustic::ReversalBox&, const double*,
                               const double*, double*, int64_t);

}  // namespace fdstencil::cpu
