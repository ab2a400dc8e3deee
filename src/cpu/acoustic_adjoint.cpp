// The adjoint step on the cpu: the derivation is in acoustic_adjoint.hpp. Each step is two sweeps
// over the planes: the derivatives' adjoints (pointwise, the memory variables' adjoints updated in
// place), then ubar^n gathered from them through the transposed stencils, so that no two threads
// write one point.
#include "cpu/acoustic_adjoint.hpp"

#include <utility>
#if defined(__SSE2__)
#include <xmmintrin.h>
#endif

namespace fdstencil::cpu {

template <class T>
AcousticAdjointCpu<T>::AcousticAdjointCpu(const acoustic::Setup<T>& setup) : s_(setup) {
  const size_t n = size_t(s_.alloc);
  p_.assign(n, T(0));
  q_.assign(n, T(0));
  next_.assign(n, T(0));
  for (int a = 0; a < 3; ++a) {
    for (auto& v : pml_[a]) v.assign(size_t(s_.points_per_slot(a) * s_.axis[a].slots()), T(0));
    if (a == 1 && s_.dim == 2) continue;  // no y axis: its arrays stay empty
    g2_[a].assign(n, T(0));               // zero outside the computational points: the halo the gather reads
    g1_[a].assign(n, T(0));
  }
}

// Plane k's g2 and g1 for each axis from a = P (masked) and the memory variables' adjoints.
template <class T>
void AcousticAdjointCpu<T>::derivative_adjoints(int64_t k, const T* a) {
  const acoustic::Setup<T>& s = s_;
  for (int64_t j = 0; j < s.ny; ++j)
    for (int64_t i = 0; i < s.nx; ++i) {
      const int64_t p = s.origin + i + j * s.line + k * s.slice;
      const int64_t c[3] = {i, j, k};
      const T l = s.m[p] * a[p];
      for (int ax = 0; ax < 3; ++ax) {
        if (ax == 1 && s.dim == 2) continue;
        const int slot = s.axis[ax].slot(c[ax]);
        if (slot < 0) {
          g2_[ax][p] = l;
          g1_[ax][p] = T(0);
          continue;
        }
        const acoustic::PmlCoef<T>& cf = s.coef[ax][size_t(slot)];
        const int64_t q = acoustic::pml_index(ax, slot, i, j, k, s.nx, s.ny, s.axis[ax].slots());
        T& psi = pml_[ax][0][q];
        T& chi = pml_[ax][1][q];
        T& phi = pml_[ax][2][q];
        const T phi_t = l + phi;
        const T chi_t = l + chi + cf.a * phi_t;
        const T psi_t = psi;
        g2_[ax][p] = l + cf.a * (chi_t + phi_t);
        g1_[ax][p] = cf.da * chi_t + cf.a * psi_t;
        psi = cf.db * chi_t + cf.b * psi_t;
        chi = cf.b * chi_t;
        phi = cf.b * phi_t;
      }
    }
}

// Plane k of ubar^n: Q + 2a + the transposed stencils of every axis's g2 and g1, and the free
// surface's mirror: a z tap of a point p above plane R read -u at the plane its offset mirrors.
template <class T>
void AcousticAdjointCpu<T>::gather(int64_t k, const T* a) {
  const acoustic::Setup<T>& s = s_;
  const int R = s.radius;
  const int64_t stride[3] = {1, s.line, s.slice};
  const bool mirrored = s.free_surface && k >= 1 && k <= R;
  for (int64_t j = 0; j < s.ny; ++j)
    for (int64_t i = 0; i < s.nx; ++i) {
      const int64_t q = s.origin + i + j * s.line + k * s.slice;
      T sum = q_[q] + T(2) * a[q];
      for (int ax = 0; ax < 3; ++ax) {
        if (ax == 1 && s.dim == 2) continue;
        const T* g2 = g2_[ax].data();
        const T* g1 = g1_[ax].data();
        for (int r = 0; r <= 2 * R; ++r) {
          const int64_t p = q - (r - R) * stride[ax];
          sum += s.w2[size_t(r)] * g2[p] + s.w1[size_t(r)] * g1[p];
        }
      }
      if (mirrored)
        for (int r = 0; r < R; ++r) {  // offsets -R..-1
          const int64_t kp = -k - (r - R);
          if (kp < 0 || kp >= R) continue;
          const int64_t p = q + (kp - k) * s.slice;
          sum -= s.w2[size_t(r)] * g2_[2][p] + s.w1[size_t(r)] * g1_[2][p];
        }
      next_[q] = sum;
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
#pragma omp for schedule(static)
    for (int64_t k = 0; k < s.nz; ++k) gather(k, P);
#if defined(__SSE2__)
    _mm_setcsr(caller_csr);
#endif
  }
  for (const acoustic::Tap& t : s.receivers)
    next_[s.origin + t.i + t.j * s.line + t.k * s.slice] += T(t.w) * residual[size_t(t.id) * nt + size_t(n)];
#pragma omp parallel for schedule(static)
  for (int64_t k = 0; k < s.nz; ++k)
    for (int64_t j = 0; j < s.ny; ++j) {
      const int64_t row = s.origin + j * s.line + k * s.slice;
      for (int64_t i = 0; i < s.nx; ++i) q_[row + i] = -P[row + i];
    }
  std::swap(p_, next_);
}

template class AcousticAdjointCpu<float>;
template class AcousticAdjointCpu<double>;

}  // namespace fdstencil::cpu
