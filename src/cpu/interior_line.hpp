// The cpu step's plain path: u^{n+1} over a run of points of one x-line that lie in no layer,
// shared by the step (cpu/acoustic.cpp) and the backward pass's step back (cpu/acoustic_reverse.cpp),
// which undoes it with the same expression.
#pragma once

#include <cstdint>
#include <utility>

#include "physics/acoustic.hpp"

namespace fdstencil::cpu {

// u^{n+1} over `count` points of one x-line from point p, none in a layer: d2x + d2y + d2z, each
// summed over the taps r = 0..2R, then the leapfrog, as the general loop does for such a point.
template <int R, bool Y, class T>
void interior_line(const T* __restrict u, T* __restrict out, const T* __restrict m, int64_t p, int64_t count,
                   int64_t line, int64_t slice, const T* __restrict w2) {
  // Vectorized across the points (each lane sums its own taps in order), the taps unrolled.
#pragma omp simd
  for (int64_t q = p; q < p + count; ++q) {
    T lap = 0, d2 = 0;
#pragma GCC unroll 17
    for (int r = 0; r <= 2 * R; ++r) d2 += w2[r] * u[q + r - R];
    lap += d2;
    if constexpr (Y) {
      d2 = 0;
#pragma GCC unroll 17
      for (int r = 0; r <= 2 * R; ++r) d2 += w2[r] * u[q + (r - R) * line];
      lap += d2;
    }
    d2 = 0;
#pragma GCC unroll 17
    for (int r = 0; r <= 2 * R; ++r) d2 += w2[r] * u[q + (r - R) * slice];
    lap += d2;
    out[q] = acoustic::leapfrog(u[q], out[q], m[q], lap);
  }
}

template <int R, class T>
void interior_run(const T* u, T* out, const T* m, int64_t p, int64_t count, int64_t line, int64_t slice,
                  bool y, const T* w2) {
  if (y)
    interior_line<R, true>(u, out, m, p, count, line, slice, w2);
  else
    interior_line<R, false>(u, out, m, p, count, line, slice, w2);
}

template <class T>
using InteriorRun = void (*)(const T*, T*, const T*, int64_t, int64_t, int64_t, int64_t, bool, const T*);

template <class T, int... Rs>
InteriorRun<T> interior_run_for(int radius, std::integer_sequence<int, Rs...>) {
  InteriorRun<T> f = nullptr;
  ((radius == Rs + 1 ? (f = &interior_run<Rs + 1, T>, 0) : 0), ...);
  return f;
}

}  // namespace fdstencil::cpu
