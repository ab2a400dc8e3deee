// What every verification against the reference shares, the tuner's and the benchmark's: the
// random input and the tolerance.
#pragma once

#include <cstdint>

#include "fdstencil/dtype.hpp"
#include "fdstencil/field.hpp"
#include "fdstencil/stencil.hpp"
#include "fdstencil/tune.hpp"  // kDefaultSeed

namespace fdstencil {

// Random values in [-1, 1) at every element of the allocation, a pure function of (seed, index)
// so it is the same on any number of threads.
template <class T>
void fill_random(HostField<T>& f, uint64_t seed);

// Relative tolerance for comparing a T-precision result with the double reference: a sum of
// `taps` products each rounded once is within taps * eps_T of exact relative to sum |w u|, and
// for random data max |ref| is within a small factor of sum |w u|; a factor 4 covers that.
double tolerance_for(DType t, const Stencil& s);

}  // namespace fdstencil
