// The acoustic step on the cpu: each point's derivatives from plain loops over the taps, then
// physics/acoustic.hpp's CPML and leapfrog, planes shared among OpenMP threads.
#include "cpu/acoustic.hpp"

#include <cstring>
#include <utility>
#if defined(__SSE2__)
#include <xmmintrin.h>
#endif

namespace fdstencil::cpu {

template <class T>
AcousticCpu<T>::AcousticCpu(acoustic::Setup<T> setup) : s_(std::move(setup)) {
  u_.assign(size_t(s_.alloc), T(0));
  u_prev_.assign(size_t(s_.alloc), T(0));
  for (int a = 0; a < 3; ++a)
    for (auto& v : pml_[a]) v.assign(size_t(s_.points_per_slot(a) * s_.axis[a].slots()), T(0));
  traces_.assign(size_t(s_.nrec) * size_t(s_.nt), T(0));
}

template <class T>
int64_t AcousticCpu<T>::bytes() const {
  int64_t b = int64_t(sizeof(T)) * (3 * s_.alloc + int64_t(traces_.size()));
  for (const auto& axis : pml_)
    for (const auto& v : axis) b += int64_t(sizeof(T) * v.size());
  return b;
}

template <class T>
void AcousticCpu<T>::copy_state_array(int i, void* host) const {
  const std::vector<T>& a = array(i);
  if (!a.empty()) std::memcpy(host, a.data(), a.size() * sizeof(T));
}

template <class T>
void AcousticCpu<T>::restore(const acoustic::State<T>& st) {
  u_ = st.u;
  u_prev_ = st.u_prev;
  for (int a = 0; a < 3; ++a)
    for (int v = 0; v < 3; ++v) pml_[a][v] = st.pml[a][v];
  traces_ = st.traces;
}

template <class T>
void AcousticCpu<T>::step(int64_t n) {
  const acoustic::Setup<T>& s = s_;
  const int R = s.radius;
  const T* u = u_.data();
  T* out = u_prev_.data();  // u^{n-1} in, u^{n+1} out: each point reads its own old value first
  for (const acoustic::Tap& t : s.receivers)
    traces_[size_t(t.id) * size_t(s.nt) + size_t(n)] +=
        T(t.w) * u[s.origin + t.i + t.j * s.line + t.k * s.slice];
  const int64_t stride[3] = {1, s.line, s.slice};
  const bool has_axis[3] = {true, s.dim == 3, true};
#pragma omp parallel
  {
#if defined(__SSE2__)
    // Flush denormals to zero in this thread: the wavefield ahead of the front and the CPML's
    // memory variables decay through the denormal range, where x86 arithmetic runs far slower.
    // The GPU computes them at full speed; the values lost are below 1e-38.
    const unsigned caller_csr = _mm_getcsr();
    _mm_setcsr(caller_csr | 0x8040);  // FTZ | DAZ
#endif
#pragma omp for schedule(static)
    for (int64_t k = 0; k < s.nz; ++k)
      for (int64_t j = 0; j < s.ny; ++j)
        for (int64_t i = 0; i < s.nx; ++i) {
          const int64_t p = s.origin + i + j * s.line + k * s.slice;
          const int64_t c[3] = {i, j, k};
          T lap = 0;
          for (int a = 0; a < 3; ++a) {
            if (!has_axis[a]) continue;
            T d2 = 0, d1 = 0;
            for (int r = 0; r <= 2 * R; ++r) {
              const int64_t off = r - R;
              T v;
              if (a == 2 && s.free_surface && k + off < 0)
                v = -u[p + (-2 * k - off) * s.slice];  // the odd mirror image about z = 0
              else
                v = u[p + off * stride[a]];
              d2 += s.w2[r] * v;
              d1 += s.w1[r] * v;
            }
            const int slot = s.axis[a].slot(c[a]);
            if (slot < 0) {
              lap += d2;
            } else {
              const int64_t q = acoustic::pml_index(a, slot, i, j, k, s.nx, s.ny, s.axis[a].slots());
              lap += acoustic::cpml_second_derivative(d2, d1, s.coef[a][size_t(slot)], pml_[a][0][q],
                                                      pml_[a][1][q], pml_[a][2][q]);
            }
          }
          T next = acoustic::leapfrog(u[p], out[p], s.m[p], lap);
          if (s.free_surface && k == 0) next = T(0);
          out[p] = next;
        }
#if defined(__SSE2__)
    _mm_setcsr(caller_csr);  // the library leaves the caller's floating-point mode as it found it
#endif
  }
  for (const acoustic::Tap& t : s.sources)
    out[s.origin + t.i + t.j * s.line + t.k * s.slice] +=
        T(t.w) * s.wavelets[size_t(t.id) * size_t(s.nt) + size_t(n)];
  std::swap(u_, u_prev_);
}

template class AcousticCpu<float>;
template class AcousticCpu<double>;

}  // namespace fdstencil::cpu
