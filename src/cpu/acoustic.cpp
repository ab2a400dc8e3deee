// The acoustic step on the cpu: planes shared among OpenMP threads. On each x-line the run of
// points clear of every CPML layer (and of the free surface's mirror) takes interior_run, the
// plain sum of second derivatives with R a constant, which the compiler unrolls and vectorizes;
// every other point a loop with physics/acoustic.hpp's CPML and the mirror, vectorized across a
// run's points (layer_line) or over the taps point by point (general_points). All add the same
// products in the same order, so a point's value does not depend on its path, but for one case
// measured: 3D float in a free surface's mirrored planes, where the compiler contracts the two
// loops' products into fused multiply-adds differently and they part at float's round-off (built
// with -ffp-contract=off they agree to the bit; docs/cpu.md, "Three paths").
#include "cpu/acoustic.hpp"

#include <algorithm>
#include <cstring>
#include <utility>
#if defined(__SSE2__)
#include <xmmintrin.h>
#endif

#include "cpu/interior_line.hpp"

namespace fdstencil::cpu {

template <class T>
AcousticCpu<T>::AcousticCpu(acoustic::Setup<T> setup) : s_(std::move(setup)) {
  u_.resize(size_t(s_.alloc));
  u_prev_.resize(size_t(s_.alloc));
  // First touch: each computational plane's storage plane zeroed by the thread that steps it
  // (the same loop and schedule as step()'s), then the halo's planes before and after.
  T* u = u_.data();
  T* prev = u_prev_.data();
  const int64_t alloc = s_.alloc, slice = s_.slice, nz = s_.nz, plane0 = s_.origin / s_.slice;
  const auto zero_plane = [&](int64_t p) {
    const int64_t first = p * slice, count = std::min(slice, alloc - first);
    std::fill_n(u + first, count, T(0));
    std::fill_n(prev + first, count, T(0));
  };
#pragma omp parallel for schedule(static)
  for (int64_t k = 0; k < nz; ++k) zero_plane(plane0 + k);
  const int64_t planes = (alloc + slice - 1) / slice;
  for (int64_t p = 0; p < planes; ++p)
    if (p < plane0 || p >= plane0 + nz) zero_plane(p);
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
  const auto [a, n] = array(i);
  if (n > 0) std::memcpy(host, a, n * sizeof(T));
}

template <class T>
void AcousticCpu<T>::restore(const acoustic::State<T>& st) {
  u_.assign(st.u.begin(), st.u.end());
  u_prev_.assign(st.u_prev.begin(), st.u_prev.end());
  for (int a = 0; a < 3; ++a)
    for (int v = 0; v < 3; ++v) pml_[a][v] = st.pml[a][v];
  traces_ = st.traces;
}

template <class T>
void AcousticCpu<T>::snapshot(acoustic::State<T>& st) const {
  st.u.assign(u_.begin(), u_.end());
  st.u_prev.assign(u_prev_.begin(), u_prev_.end());
  for (int a = 0; a < 3; ++a)
    for (int v = 0; v < 3; ++v) st.pml[a][v] = pml_[a][v];
}

template <class T>
void AcousticCpu<T>::resume(const acoustic::State<T>& st) {
  std::copy(st.u.begin(), st.u.end(), u_.begin());
  std::copy(st.u_prev.begin(), st.u_prev.end(), u_prev_.begin());
  for (int a = 0; a < 3; ++a)
    for (int v = 0; v < 3; ++v) pml_[a][v] = st.pml[a][v];
}

namespace {

// u^{n+1} at points [i0, i1) of x-line (j, k), any of them in a layer: each axis's second
// derivative (and, in that axis's layer, its first and the CPML), the odd mirror above a free
// surface, the leapfrog. `pml`: the memory variables, per axis psi, chi, phi.
template <int R, class T>
void general_points(const acoustic::Setup<T>& s, std::vector<T> (&pml)[3][3], const T* u, T* out, int64_t j,
                    int64_t k, int64_t i0, int64_t i1) {
  const int64_t stride[3] = {1, s.line, s.slice};
  const bool has_axis[3] = {true, s.dim == 3, true};
  const bool mirror = s.free_surface && k < R;  // z taps above the surface read its mirror image
  for (int64_t i = i0; i < i1; ++i) {
    const int64_t p = s.origin + i + j * s.line + k * s.slice;
    const int64_t c[3] = {i, j, k};
    T lap = 0;
    for (int a = 0; a < 3; ++a) {
      if (!has_axis[a]) continue;
      const int slot = s.axis[a].slot(c[a]);
      T d2 = 0, d1 = 0;
#pragma GCC unroll 17
      for (int r = 0; r <= 2 * R; ++r) {
        const int64_t off = r - R;
        const T v = a == 2 && mirror && k + off < 0
                        ? -u[p + (-2 * k - off) * s.slice]  // odd mirror about z = 0
                        : u[p + off * stride[a]];
        d2 += s.w2[r] * v;
        if (slot >= 0) d1 += s.w1[r] * v;
      }
      if (slot < 0) {
        lap += d2;
      } else {
        const int64_t q = acoustic::pml_index(a, slot, i, j, k, s.nx, s.ny, s.axis[a].slots());
        lap += acoustic::cpml_second_derivative(d2, d1, s.coef[a][size_t(slot)], pml[a][0][q], pml[a][1][q],
                                                pml[a][2][q]);
      }
    }
    T next = acoustic::leapfrog(u[p], out[p], s.m[p], lap);
    if (s.free_surface && k == 0) next = T(0);
    out[p] = next;
  }
}

// u^{n+1} at points [i0, i1) of x-line (j, k), where the line lies in a y layer (PY: slot sy) or a
// z layer (PZ: slot sz), or the points in an x layer (PX: slots sx, sx + 1, ... from i0), or, with
// MZ, among the planes a free surface mirrors (any of them, or none): general_points' arithmetic
// in its order, vectorized across the points. The line's y and z slots and coefficients, and its
// z taps' planes and signs, are the same at each point, and its memory variables' rows run along
// x (pml_index: x fastest for y and z, the slot for x, which rises with x inside a layer).
template <int R, bool Y, bool PX, bool PY, bool PZ, class T, bool MZ = false>
void layer_line(const acoustic::Setup<T>& s, std::vector<T> (&pml)[3][3], const T* __restrict u,
                T* __restrict out, int64_t j, int64_t k, int64_t i0, int64_t i1, int sx, int sy, int sz) {
  const int64_t base = s.origin + j * s.line + k * s.slice, line = s.line, slice = s.slice;
  const T* __restrict w2 = s.w2.data();
  const T* __restrict w1 = s.w1.data();
  const T* __restrict m = s.m.data();
  T *px[3] = {}, *py[3] = {}, *pz[3] = {};
  const acoustic::PmlCoef<T>* __restrict cx = nullptr;
  acoustic::PmlCoef<T> cy{}, cz{};
  if constexpr (PX) {  // indexed by i - i0 from here
    const int64_t q = acoustic::pml_index(0, sx, 0, j, k, s.nx, s.ny, s.axis[0].slots());
    for (int v = 0; v < 3; ++v) px[v] = pml[0][v].data() + q - i0;
    cx = s.coef[0].data() + sx - i0;
  }
  if constexpr (PY) {
    const int64_t q = acoustic::pml_index(1, sy, 0, j, k, s.nx, s.ny, s.axis[1].slots());
    for (int v = 0; v < 3; ++v) py[v] = pml[1][v].data() + q;
    cy = s.coef[1][size_t(sy)];
  }
  if constexpr (PZ) {
    const int64_t q = acoustic::pml_index(2, sz, 0, j, k, s.nx, s.ny, s.axis[2].slots());
    for (int v = 0; v < 3; ++v) pz[v] = pml[2][v].data() + q;
    cz = s.coef[2][size_t(sz)];
  }
  // The z taps: above a free surface the odd mirror image about z = 0 (general_points' -u, here
  // a factor of -1, as exact).
  int64_t zoff[2 * R + 1];
  T zsign[2 * R + 1];
  for (int r = 0; r <= 2 * R; ++r) {
    const int64_t off = r - R;
    const bool above = MZ && k + off < 0;
    zoff[r] = (above ? -2 * k - off : off) * slice;
    zsign[r] = above ? T(-1) : T(1);
  }
#pragma omp simd
  for (int64_t i = i0; i < i1; ++i) {
    const int64_t p = base + i;
    T lap = 0;
    {
      T d2 = 0, d1 = 0;
#pragma GCC unroll 17
      for (int r = 0; r <= 2 * R; ++r) {
        const T v = u[p + r - R];
        d2 += w2[r] * v;
        if constexpr (PX) d1 += w1[r] * v;
      }
      if constexpr (PX)
        lap += acoustic::cpml_second_derivative(d2, d1, cx[i], px[0][i], px[1][i], px[2][i]);
      else
        lap += d2;
    }
    if constexpr (Y) {
      T d2 = 0, d1 = 0;
#pragma GCC unroll 17
      for (int r = 0; r <= 2 * R; ++r) {
        const T v = u[p + (r - R) * line];
        d2 += w2[r] * v;
        if constexpr (PY) d1 += w1[r] * v;
      }
      if constexpr (PY)
        lap += acoustic::cpml_second_derivative(d2, d1, cy, py[0][i], py[1][i], py[2][i]);
      else
        lap += d2;
    }
    T d2 = 0, d1 = 0;
#pragma GCC unroll 17
    for (int r = 0; r <= 2 * R; ++r) {
      const T v = MZ ? zsign[r] * u[p + zoff[r]] : u[p + (r - R) * slice];
      d2 += w2[r] * v;
      if constexpr (PZ) d1 += w1[r] * v;
    }
    if constexpr (PZ)
      lap += acoustic::cpml_second_derivative(d2, d1, cz, pz[0][i], pz[1][i], pz[2][i]);
    else
      lap += d2;
    const T next = acoustic::leapfrog(u[p], out[p], m[p], lap);
    out[p] = MZ && k == 0 ? T(0) : next;  // the surface itself
  }
}

// layer_line for a radius, chosen per run of points by which layers it lies in (at least one:
// sx, sy or sz is a slot; sx the first point's).
template <int R, class T>
void layer_run(const acoustic::Setup<T>& s, std::vector<T> (&pml)[3][3], const T* u, T* out, int64_t j,
               int64_t k, int64_t i0, int64_t i1, int sx, int sy, int sz) {
  const auto go = [&]<bool Y, bool PX, bool PY, bool PZ>() {
    layer_line<R, Y, PX, PY, PZ>(s, pml, u, out, j, k, i0, i1, sx, sy, sz);
  };
  const int layers = int(sx >= 0) | int(sy >= 0) << 1 | int(sz >= 0) << 2;
  if (s.dim == 2) {
    if (layers == 1) return go.template operator()<false, true, false, false>();
    if (layers == 4) return go.template operator()<false, false, false, true>();
    return go.template operator()<false, true, false, true>();
  }
  switch (layers) {
    case 1: return go.template operator()<true, true, false, false>();
    case 2: return go.template operator()<true, false, true, false>();
    case 3: return go.template operator()<true, true, true, false>();
    case 4: return go.template operator()<true, false, false, true>();
    case 5: return go.template operator()<true, true, false, true>();
    case 6: return go.template operator()<true, false, true, true>();
    default: return go.template operator()<true, true, true, true>();
  }
}

// layer_line among the planes a free surface mirrors, clear of the z layers (a grid whose z
// layer reaches them takes general_points), chosen by the x and y layers the run lies in.
template <int R, class T>
void mirror_run(const acoustic::Setup<T>& s, std::vector<T> (&pml)[3][3], const T* u, T* out, int64_t j,
                int64_t k, int64_t i0, int64_t i1, int sx, int sy, int /*sz*/) {
  const auto go = [&]<bool Y, bool PX, bool PY>() {
    layer_line<R, Y, PX, PY, false, T, true>(s, pml, u, out, j, k, i0, i1, sx, sy, -1);
  };
  if (s.dim == 2)
    return sx >= 0 ? go.template operator()<false, true, false>()
                   : go.template operator()<false, false, false>();
  switch (int(sx >= 0) | int(sy >= 0) << 1) {
    case 0: return go.template operator()<true, false, false>();
    case 1: return go.template operator()<true, true, false>();
    case 2: return go.template operator()<true, false, true>();
    default: return go.template operator()<true, true, true>();
  }
}

template <class T>
using LayerRun = void (*)(const acoustic::Setup<T>&, std::vector<T> (&)[3][3], const T*, T*, int64_t, int64_t,
                          int64_t, int64_t, int, int, int);

template <class T, int... Rs>
LayerRun<T> layer_run_for(int radius, std::integer_sequence<int, Rs...>) {
  LayerRun<T> f = nullptr;
  ((radius == Rs + 1 ? (f = &layer_run<Rs + 1, T>, 0) : 0), ...);
  return f;
}

template <class T, int... Rs>
LayerRun<T> mirror_run_for(int radius, std::integer_sequence<int, Rs...>) {
  LayerRun<T> f = nullptr;
  ((radius == Rs + 1 ? (f = &mirror_run<Rs + 1, T>, 0) : 0), ...);
  return f;
}

template <class T>
using GeneralPoints = void (*)(const acoustic::Setup<T>&, std::vector<T> (&)[3][3], const T*, T*, int64_t,
                               int64_t, int64_t, int64_t);

template <class T, int... Rs>
GeneralPoints<T> general_points_for(int radius, std::integer_sequence<int, Rs...>) {
  GeneralPoints<T> f = nullptr;
  ((radius == Rs + 1 ? (f = &general_points<Rs + 1, T>, 0) : 0), ...);
  return f;
}

}  // namespace

template <class T>
void AcousticCpu<T>::step(int64_t n) {
  const acoustic::Setup<T>& s = s_;
  const int R = s.radius;
  const T* u = u_.data();
  T* out = u_prev_.data();  // u^{n-1} in, u^{n+1} out: each point reads its own old value first
  for (const acoustic::Tap& t : s.receivers)
    traces_[size_t(t.id) * size_t(s.nt) + size_t(n)] +=
        T(t.w) * u[s.origin + t.i + t.j * s.line + t.k * s.slice];
#pragma omp parallel
  {
#if defined(__SSE2__)
    // Flush denormals to zero in this thread: the wavefield ahead of the front and the CPML's
    // memory variables decay through the denormal range, where x86 arithmetic runs far slower.
    // The GPU computes them at full speed; the values lost are below 1e-38.
    const unsigned caller_csr = _mm_getcsr();
    _mm_setcsr(caller_csr | 0x8040);  // FTZ | DAZ
#endif
    const InteriorRun<T> run = interior_run_for<T>(R, std::make_integer_sequence<int, kMaxRadius>{});
    const GeneralPoints<T> general = general_points_for<T>(R, std::make_integer_sequence<int, kMaxRadius>{});
    const LayerRun<T> layer = layer_run_for<T>(R, std::make_integer_sequence<int, kMaxRadius>{});
    const LayerRun<T> mirror = mirror_run_for<T>(R, std::make_integer_sequence<int, kMaxRadius>{});
    // Each x-line in three runs, the x layers' and the points between: the interior's loop where
    // a run lies in no layer, the layers' vectorized loop where it does, and among the planes a
    // free surface mirrors (its z taps above the surface read the mirror image). The general loop
    // takes the lines a layer covers whole, and mirrored planes inside a z layer (a grid of few
    // planes).
    const int64_t x0 = s.axis[0].lo, x1 = s.nx - s.axis[0].hi;
#pragma omp for schedule(static)
    for (int64_t k = 0; k < s.nz; ++k)
      for (int64_t j = 0; j < s.ny; ++j) {
        const int sz = s.axis[2].slot(k), sy = s.dim == 3 ? s.axis[1].slot(j) : -1;
        const bool mirrored = s.free_surface && k < R;
        if (x0 >= x1 || (mirrored && sz >= 0)) {
          general(s, pml_, u, out, j, k, 0, s.nx);
          continue;
        }
        if (mirrored) {
          if (x0 > 0) mirror(s, pml_, u, out, j, k, 0, x0, s.axis[0].slot(0), sy, -1);
          mirror(s, pml_, u, out, j, k, x0, x1, -1, sy, -1);
          if (x1 < s.nx) mirror(s, pml_, u, out, j, k, x1, s.nx, s.axis[0].slot(x1), sy, -1);
          continue;
        }
        if (x0 > 0) layer(s, pml_, u, out, j, k, 0, x0, s.axis[0].slot(0), sy, sz);
        if (sy < 0 && sz < 0)
          run(u, out, s.m.data(), s.origin + x0 + j * s.line + k * s.slice, x1 - x0, s.line, s.slice,
              s.dim == 3, s.w2.data());
        else
          layer(s, pml_, u, out, j, k, x0, x1, -1, sy, sz);
        if (x1 < s.nx) layer(s, pml_, u, out, j, k, x1, s.nx, s.axis[0].slot(x1), sy, sz);
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
