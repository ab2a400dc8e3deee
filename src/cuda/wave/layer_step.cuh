// A layer point's arithmetic under the CPML apart or beside the march (acoustic_layers.cuh): its
// axes' plain derivatives, what the stretching adds, and the whole step there. Shared by the
// layers' kernels (acoustic_layers.cu) and the 2D step that computes the layers' points in the
// march's own launch (acoustic_step_beside.cuh).
#pragma once

#include <cstdint>

#include "cuda/wave/acoustic_layers.cuh"
#include "cuda/wave/layer_point.cuh"

namespace fdstencil::cuda::wave {

// One axis's plain second and first derivatives of u^n at the point u points at, summed as
// update_points sums them; with Mirror, z above a free surface reads the odd mirror image
// (fill_queue's).
template <int R, bool Mirror>
__device__ __forceinline__ void axis_derivatives(const StepArgs& a, const float* u, int64_t stride, int k,
                                                 float& d2, float& d1) {
  d2 = d1 = 0.f;
#pragma unroll
  for (int r = 0; r <= 2 * R; ++r) {
    const float v = Mirror && k + r - R < 0 ? -u[(-2 * k - (r - R)) * a.slice] : u[(r - R) * stride];
    d2 += a.w2[r] * v;
    d1 += a.w1[r] * v;
  }
}

// Axis ax's at the point `at` (p its offset): z near a free surface through the mirror.
template <int R>
__device__ __forceinline__ void derivatives_at(const StepArgs& a, int64_t p, int ax, const int (&at)[3],
                                               float& d2, float& d1) {
  const int64_t stride = ax == 0 ? 1 : ax == 1 ? a.line : a.slice;
  if (ax == 2 && a.free_surface && at[2] < R)
    axis_derivatives<R, true>(a, a.u + p, stride, at[2], d2, d1);
  else
    axis_derivatives<R, false>(a, a.u + p, stride, at[2], d2, d1);
}

// What axis ax's stretching adds at the point `at` (its layer's slot), its memory variables advanced.
__device__ __forceinline__ float added_term_at(const StepArgs& a, int ax, int slot, const int (&at)[3],
                                               float d2, float d1) {
  const int64_t q = acoustic::pml_index(ax, slot, at[0], at[1], at[2], a.nx, a.ny, a.axis[ax].slots());
  float psi = a.psi[ax][q], chi = a.chi[ax][q], phi = a.phi[ax][q];
  const float added = acoustic::cpml_added_term(d2, d1, a.coef[ax][slot], psi, chi, phi);
  a.psi[ax][q] = psi;
  a.chi[ax][q] = chi;
  a.phi[ax][q] = phi;
  return added;
}

// The whole step at the layer point `at`, as update_points and then acoustic_layers compute it
// there: lap the plain sum of the axes' d2 (x, y, z), the leapfrog, the surface's zero, the
// sources' taps in the march's order, then m times the added terms of the axes whose layers hold
// the point.
template <int R, bool kY>
__device__ __forceinline__ void whole_step_at(const StepArgs& a, const LayerTaps& taps, int64_t n,
                                              const int (&at)[3]) {
  const int64_t p = at[0] + a.line * at[1] + a.slice * at[2];
  float lap = 0.f, added = 0.f;
#pragma unroll
  for (int ax = 0; ax < 3; ++ax) {
    if (ax == 1 && !kY) continue;
    float d2, d1;
    derivatives_at<R>(a, p, ax, at, d2, d1);
    lap += d2;
    const int slot = a.axis[ax].slot(at[ax]);
    if (slot >= 0) added += added_term_at(a, ax, slot, at, d2, d1);
  }
  float o = acoustic::leapfrog(a.u[p], a.out[p], a.m[p], lap);
  const bool surface = a.free_surface && at[2] == 0;
  if (surface) o = 0.f;
  if (taps.count > 0) {  // update_points' search, over the layers' own sorted list
    const int64_t key = tap_key(at[0], at[1], at[2], a.nx, a.ny);
    const int first = first_key_at_least(taps.key, 0, taps.count, key);
    const int64_t step = a.step_base ? n + *a.step_base : n;
    for (int t = first; t < taps.count && taps.key[t] == key; ++t)
      o += taps.taps[t].w * a.wavelets[taps.taps[t].id * a.nt + step];
  }
  if (!surface) o += a.m[p] * added;
  a.out[p] = o;
}

}  // namespace fdstencil::cuda::wave
