// The adjoint step on the cpu: the derivation is in acoustic_adjoint.hpp. Each step is two sweeps
// over the planes: l and the layers' derivative adjoints (pointwise, the memory variables' adjoints
// updated in place), then ubar^n gathered line by line through the transposed stencils, one axis
// at a time into a line buffer, so that no two threads write one point. Where a line's stencils
// reach none of an axis's layer points, that axis's taps read l alone: the plain loop, vectorized
// across the points with R a constant, as the forward step's interior.
#include "cpu/acoustic_adjoint.hpp"

#include <algorithm>
#include <utility>
#include <vector>
#if defined(__SSE2__)
#include <xmmintrin.h>
#endif

#include "fdstencil/stencil.hpp"

namespace fdstencil::cpu {

namespace {

// One axis's transposed taps added into acc over `count` points from q (stride: the axis's), in
// the order r = 0..2R: with Layer, g2 = l + e2 and g1 as stored; without, g2 = l and g1 = 0.
template <int R, bool Layer, class T>
void axis_taps(T* __restrict acc, const T* __restrict l, const T* __restrict e2, const T* __restrict g1,
               int64_t q, int64_t count, int64_t stride, const T* __restrict w2, const T* __restrict w1) {
#pragma omp simd
  for (int64_t i = 0; i < count; ++i) {
    T sum = acc[i];
#pragma GCC unroll 17
    for (int r = 0; r <= 2 * R; ++r) {
      const int64_t p = q + i - (r - R) * stride;
      if constexpr (Layer)
        sum += w2[r] * (l[p] + e2[p]) + w1[r] * g1[p];
      else
        sum += w2[r] * l[p];
    }
    acc[i] = sum;
  }
}

template <class T>
using AxisTaps = void (*)(T*, const T*, const T*, const T*, int64_t, int64_t, int64_t, const T*, const T*);

template <class T, bool Layer, int... Rs>
AxisTaps<T> axis_taps_for(int radius, std::integer_sequence<int, Rs...>) {
  AxisTaps<T> f = nullptr;
  ((radius == Rs + 1 ? (f = &axis_taps<Rs + 1, Layer, T>, 0) : 0), ...);
  return f;
}

// One layer point's e2 and g1 from l and its memory variables' adjoints, which it advances.
template <class T>
inline void layer_point(const acoustic::PmlCoef<T>& cf, T l, T& psi, T& chi, T& phi, T& e2, T& g1) {
  const T phi_t = l + phi;
  const T chi_t = l + chi + cf.a * phi_t;
  const T psi_t = psi;
  e2 = cf.a * (chi_t + phi_t);
  g1 = cf.da * chi_t + cf.a * psi_t;
  psi = cf.db * chi_t + cf.b * psi_t;
  chi = cf.b * chi_t;
  phi = cf.b * phi_t;
}

}  // namespace

template <class T>
AcousticAdjointCpu<T>::AcousticAdjointCpu(const acoustic::Setup<T>& setup) : s_(setup) {
  const size_t n = size_t(s_.alloc);
  p_.assign(n, T(0));
  q_.assign(n, T(0));
  next_.assign(n, T(0));
  l_.assign(n, T(0));
  const int64_t extent[3] = {s_.nx, s_.ny, s_.nz};
  for (int a = 0; a < 3; ++a) {
    for (auto& v : pml_[a]) v.assign(size_t(s_.points_per_slot(a) * s_.axis[a].slots()), T(0));
    if (a == 1 && s_.dim == 2) continue;  // no y axis: its arrays stay empty
    e2_[a].assign(n, T(0));               // zero outside the axis's layer points: the halo the gather reads
    g1_[a].assign(n, T(0));
    near_[a].assign(size_t(extent[a]), 0);
    for (int64_t c = 0; c < extent[a]; ++c)
      for (int64_t d = -s_.radius; d <= s_.radius; ++d)
        if (c + d >= 0 && c + d < extent[a] && s_.axis[a].slot(c + d) >= 0) near_[a][size_t(c)] = 1;
  }
}

// Plane k's l = m a, and for each axis at its layer points e2 and g1 from l and the memory
// variables' adjoints: a whole line in a y or z layer (one slot, one coefficient, the memory
// variables contiguous along x), the x layers' runs at the line's ends.
template <class T>
void AcousticAdjointCpu<T>::derivative_adjoints(int64_t k, const T* a) {
  const acoustic::Setup<T>& s = s_;
  const int64_t nx = s.nx;
  // The x layers: points [0, x_lo) and [x_hi, nx) (acoustic::PmlAxis::slot's two ends).
  const acoustic::PmlAxis& ax0 = s.axis[0];
  const int64_t x_lo = std::clamp<int64_t>(ax0.lo - ax0.offset, 0, nx);
  const int64_t x_hi = std::clamp<int64_t>(ax0.n - ax0.hi - ax0.offset, x_lo, nx);
  T* __restrict l = l_.data();
  const T* __restrict m = s.m.data();
  for (int64_t j = 0; j < s.ny; ++j) {
    const int64_t row = s.origin + j * s.line + k * s.slice;
#pragma omp simd
    for (int64_t i = 0; i < nx; ++i) l[row + i] = m[row + i] * a[row + i];
    for (int ax = 1; ax < 3; ++ax) {
      if (ax == 1 && s.dim == 2) continue;
      const int slot = s.axis[ax].slot(ax == 1 ? j : k);
      if (slot < 0) continue;  // the whole line outside the axis's layer
      const acoustic::PmlCoef<T> cf = s.coef[ax][size_t(slot)];
      const int64_t q = acoustic::pml_index(ax, slot, 0, j, k, nx, s.ny, s.axis[ax].slots());
      T *psi = pml_[ax][0].data() + q, *chi = pml_[ax][1].data() + q, *phi = pml_[ax][2].data() + q;
      T *e2 = e2_[ax].data() + row, *g1 = g1_[ax].data() + row;
#pragma omp simd
      for (int64_t i = 0; i < nx; ++i) layer_point(cf, l[row + i], psi[i], chi[i], phi[i], e2[i], g1[i]);
    }
    const int slots = ax0.slots();
    const auto x_run = [&](int64_t i0, int64_t i1) {
      for (int64_t i = i0; i < i1; ++i) {
        const int slot = ax0.slot(i);
        const int64_t q = acoustic::pml_index(0, slot, i, j, k, nx, s.ny, slots);
        layer_point(s.coef[0][size_t(slot)], l[row + i], pml_[0][0][size_t(q)], pml_[0][1][size_t(q)],
                    pml_[0][2][size_t(q)], e2_[0][size_t(row + i)], g1_[0][size_t(row + i)]);
      }
    };
    x_run(0, x_lo);
    x_run(x_hi, nx);
  }
}

// Plane k of ubar^n: Q + 2a + the transposed stencils of every axis's g2 and g1 (x in runs of
// points near its layers or not, y and z per line), and the free surface's mirror: a z tap of a
// point p above plane R read -u at the plane its offset mirrors. Then Q <- -a for the next step.
template <class T>
void AcousticAdjointCpu<T>::gather(int64_t k, const T* a, T* acc) {
  const acoustic::Setup<T>& s = s_;
  const int R = s.radius;
  const AxisTaps<T> plain = axis_taps_for<T, false>(R, std::make_integer_sequence<int, kMaxRadius>{});
  const AxisTaps<T> layer = axis_taps_for<T, true>(R, std::make_integer_sequence<int, kMaxRadius>{});
  const T *w2 = s.w2.data(), *w1 = s.w1.data(), *l = l_.data();
  const bool mirrored = s.free_surface && k >= 1 && k <= R;
  const int64_t nx = s.nx;
  for (int64_t j = 0; j < s.ny; ++j) {
    const int64_t q = s.origin + j * s.line + k * s.slice;
    for (int64_t i = 0; i < nx; ++i) acc[i] = q_[size_t(q + i)] + T(2) * a[q + i];
    for (int64_t i = 0; i < nx;) {
      const char near = near_[0][size_t(i)];
      int64_t e = i + 1;
      while (e < nx && near_[0][size_t(e)] == near) ++e;
      (near ? layer : plain)(acc + i, l, e2_[0].data(), g1_[0].data(), q + i, e - i, 1, w2, w1);
      i = e;
    }
    if (s.dim == 3)
      (near_[1][size_t(j)] ? layer : plain)(acc, l, e2_[1].data(), g1_[1].data(), q, nx, s.line, w2, w1);
    (near_[2][size_t(k)] ? layer : plain)(acc, l, e2_[2].data(), g1_[2].data(), q, nx, s.slice, w2, w1);
    if (mirrored)
      for (int r = 0; r < R; ++r) {  // offsets -R..-1
        const int64_t kp = -k - (r - R);
        if (kp < 0 || kp >= R) continue;
        const int64_t off = (kp - k) * s.slice;
        for (int64_t i = 0; i < nx; ++i) {
          const int64_t p = q + i + off;
          acc[i] -= w2[r] * (l[p] + e2_[2][size_t(p)]) + w1[r] * g1_[2][size_t(p)];
        }
      }
    for (int64_t i = 0; i < nx; ++i) {
      next_[size_t(q + i)] = acc[i];
      q_[size_t(q + i)] = -a[q + i];
    }
  }
}

template <class T>
void AcousticAdjointCpu<T>::step(int64_t n, const T* residual, const T* dudm, double* grad_m,
                                 T* sources_bar) {
  const acoustic::Setup<T>& s = s_;
  T* P = p_.data();
  const size_t nt = size_t(s.nt);
  // The sources are injected after the surface's zero: their adjoint and u^{n+1}'s dependence on m
  // through them read P unmasked.
  if (sources_bar)
    for (const acoustic::Tap& t : s.sources)
      sources_bar[size_t(t.id) * nt + size_t(n)] += T(t.w) * P[s.origin + t.i + t.j * s.line + t.k * s.slice];
  if (grad_m) {
#pragma omp parallel for schedule(static)
    for (int64_t k = 0; k < s.nz; ++k)
      for (int64_t j = 0; j < s.ny; ++j) {
        const int64_t row = s.origin + j * s.line + k * s.slice;
        for (int64_t i = 0; i < s.nx; ++i) grad_m[row + i] += double(P[row + i]) * double(dudm[row + i]);
      }
  }
  if (s.free_surface)  // u^{n+1} = 0 on the surface, whatever came before
    for (int64_t j = 0; j < s.ny; ++j)
      for (int64_t i = 0; i < s.nx; ++i) P[s.origin + i + j * s.line] = T(0);
#pragma omp parallel
  {
#if defined(__SSE2__)
    // Denormals flushed to zero in this thread, as the forward step does (cpu/acoustic.cpp): the
    // adjoint field decays through the denormal range ahead of its front and in the layers.
    const unsigned caller_csr = _mm_getcsr();
    _mm_setcsr(caller_csr | 0x8040);  // FTZ | DAZ
#endif
#pragma omp for schedule(static)
    for (int64_t k = 0; k < s.nz; ++k) derivative_adjoints(k, P);
    std::vector<T> acc(size_t(s.nx));  // this thread's line of ubar^n
#pragma omp for schedule(static)
    for (int64_t k = 0; k < s.nz; ++k) gather(k, P, acc.data());
#if defined(__SSE2__)
    _mm_setcsr(caller_csr);
#endif
  }
  for (const acoustic::Tap& t : s.receivers)
    next_[s.origin + t.i + t.j * s.line + t.k * s.slice] += T(t.w) * residual[size_t(t.id) * nt + size_t(n)];
  std::swap(p_, next_);
}

template class AcousticAdjointCpu<float>;
template class AcousticAdjointCpu<double>;

}  // namespace fdstencil::cpu
