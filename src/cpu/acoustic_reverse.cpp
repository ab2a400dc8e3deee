// cpu/acoustic_reverse.hpp: the forward step's plain path (cpu/interior_line.hpp) over the box's
// x-lines. Its expression, 2 u - out + m lap with out = u^{n+1}, is the step's own with the two
// outer time levels swapped, so the same code undoes it.
#include "cpu/acoustic_reverse.hpp"

#include <algorithm>
#include <utility>
#if defined(__SSE2__)
#include <xmmintrin.h>
#endif

#include "cpu/interior_line.hpp"

namespace fdstencil::cpu {

template <class T>
void step_back(const acoustic::Setup<T>& s, const acoustic::ReversalBox& box, const T* u, const T* next,
               T* out, int64_t n) {
  const int64_t count = box.hi[0] - box.lo[0];
#pragma omp parallel
  {
#if defined(__SSE2__)
    // Denormals flushed as the forward step flushes them (cpu/acoustic.cpp: the field ahead of the
    // front decays through the range where x86 arithmetic runs far slower).
    const unsigned caller_csr = _mm_getcsr();
    _mm_setcsr(caller_csr | 0x8040);  // FTZ | DAZ
#endif
    const InteriorRun<T> run = interior_run_for<T>(s.radius, std::make_integer_sequence<int, kMaxRadius>{});
#pragma omp for schedule(static)
    for (int64_t k = box.lo[2]; k < box.hi[2]; ++k)
      for (int64_t j = box.lo[1]; j < box.hi[1]; ++j) {
        const int64_t first = s.origin + box.lo[0] + j * s.line + k * s.slice;
        if (next != out) std::copy_n(next + first, count, out + first);
        run(u, out, s.m.data(), first, count, s.line, s.slice, s.dim == 3, s.w2.data());
      }
#if defined(__SSE2__)
    _mm_setcsr(caller_csr);
#endif
  }
  // The sources' taps after the leapfrog, in the forward step's order; those outside the box fall
  // on the ring, taken from what the forward run kept, or beyond it.
  for (const acoustic::Tap& t : s.sources)
    if (box.inside(t.i, t.j, t.k))
      out[s.origin + t.i + t.j * s.line + t.k * s.slice] +=
          T(t.w) * s.wavelets[size_t(t.id) * size_t(s.nt) + size_t(n)];
}

template void step_back(const acoustic::Setup<float>&, const acoustic::ReversalBox&, const float*,
                        const float*, float*, int64_t);
template void step_back(const acoustic::Setup<double>&, const acoustic::ReversalBox&, const double*,
                        const double*, double*, int64_t);

}  // namespace fdstencil::cpu
