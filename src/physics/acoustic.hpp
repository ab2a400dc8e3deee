// The acoustic step's per-point physics, one definition for the cpu and cuda backends (AMReX's
// habit: a __host__ __device__ inline function per point), and the plain description of a run's
// state that the wave layer hands to either backend.
//
// One step takes u^n and u^{n-1} to u^{n+1}:
//   u^{n+1} = 2 u^n - u^{n-1} + m L(u^n),   m = (v dt)^2,   L = sum over axes of L_a,
// where L_a is the order-2R second derivative along axis a, or inside that axis's CPML layer its
// stretched form  (1/s) d/da ((1/s) du/da)  with  1/s = 1 - d/(d + alpha + i omega)  (kappa = 1):
//   L_a = d2 + chi + phi,
//   psi^n = b psi^{n-1} + a d1                        (the memory of (1/s) du/da: du/da + psi)
//   chi^n = b chi^{n-1} + b' psi^{n-1} + a d2 + a' d1 (= d psi^n / da, differentiated exactly)
//   phi^n = b phi^{n-1} + a (d2 + chi^n)              (the memory of the outer 1/s)
// with b = exp(-(d + alpha) dt), a = d (b - 1) / (d + alpha) (Roden and Gedney's recursive
// convolution) and b', a' their derivatives along the axis. Carrying chi = d psi / da as its own
// variable keeps every memory variable pointwise: no backend reads a neighbour's psi, so each
// point updates its own memory in place and the step stays one sweep.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <vector>

#include "core/unwritten_allocator.hpp"
#include "fdstencil/stencil.hpp"

#if defined(__CUDACC__)
#define FDS_HOST_DEVICE __host__ __device__ __forceinline__
#else
#define FDS_HOST_DEVICE inline
#endif

namespace fdstencil::acoustic {

// The CPML coefficients of one axis at one coordinate inside its layer.
template <class T>
struct PmlCoef {
  T a, b, da, db;
};

// One axis's CPML memory variables at one point advanced by a step, from the plain second (d2) and
// first (d1) derivatives; returns the new chi.
template <class T>
FDS_HOST_DEVICE T cpml_advance(T d2, T d1, const PmlCoef<T>& c, T& psi, T& chi, T& phi) {
  const T chi_n = c.b * chi + c.db * psi + c.a * d2 + c.da * d1;
  psi = c.b * psi + c.a * d1;
  phi = c.b * phi + c.a * (d2 + chi_n);
  chi = chi_n;
  return chi_n;
}

// The stretched second derivative of one axis at one point; updates the point's memory variables.
template <class T>
FDS_HOST_DEVICE T cpml_second_derivative(T d2, T d1, const PmlCoef<T>& c, T& psi, T& chi, T& phi) {
  const T chi_n = cpml_advance(d2, d1, c, psi, chi, phi);
  return d2 + chi_n + phi;
}

// What the stretching adds to the plain second derivative (cpml_second_derivative less d2, summed
// apart from it): for a kernel that adds the layers' terms after a plain step (acoustic_layers.cuh).
template <class T>
FDS_HOST_DEVICE T cpml_added_term(T d2, T d1, const PmlCoef<T>& c, T& psi, T& chi, T& phi) {
  const T chi_n = cpml_advance(d2, d1, c, psi, chi, phi);
  return chi_n + phi;
}

// The leapfrog update of one point.
template <class T>
FDS_HOST_DEVICE T leapfrog(T u, T u_prev, T m, T lap) {
  return T(2) * u - u_prev + m * lap;
}

// Where an axis's CPML lies: `lo` points at the start, `hi` at the end of its `n` points. Memory
// variables are stored per layer point only: slot c for c < lo, lo + (c - (n - hi)) for the end.
// `offset` is the global coordinate of local point 0: a slab of a run split along z keeps the
// whole axis's layers and slots, and asks with its own plane numbers.
struct PmlAxis {
  int lo = 0, hi = 0;
  int64_t n = 0;
  int64_t offset = 0;
  FDS_HOST_DEVICE int slot(int64_t local) const {
    const int64_t c = local + offset;
    return c < lo ? int(c) : (c >= n - hi ? int(lo + (c - (n - hi))) : -1);
  }
  FDS_HOST_DEVICE int slots() const { return lo + hi; }
};

// The element index of axis a's memory variable at (i, j, k), slot s: each axis's storage has its
// own axis as the slot and keeps x fastest where x is not the slot axis, so a warp's accesses stay
// contiguous in every layer.
FDS_HOST_DEVICE int64_t pml_index(int axis, int slot, int64_t i, int64_t j, int64_t k, int64_t nx, int64_t ny,
                                  int slots) {
  if (axis == 0) return (k * ny + j) * slots + slot;
  if (axis == 1) return (k * slots + slot) * nx + i;
  return (int64_t(slot) * ny + j) * nx + i;
}

// The share of a grid's points that lie in some axis's layer (the axes' n points each, lo + hi
// of them in layers): what the GPU step's defaults weigh the CPML by.
inline double layer_share(const PmlAxis (&axis)[3]) {
  double clear = 1;
  for (const PmlAxis& a : axis)
    if (a.n > 0) clear *= double(a.n - std::min<int64_t>(a.n, int64_t(a.lo) + a.hi)) / double(a.n);
  return 1 - clear;
}

// A point source's or receiver's share of one grid point (the interpolation's weight).
struct Tap {
  int32_t i, j, k;  // computational coordinates
  int32_t id;       // the source or receiver
  float w;          // receivers: the weight; sources: weight x m(p) / h^dim (the source scaling)
};

// Everything a backend needs for a run, in host memory. Fields live on the domain's storage:
// element (i, j, k) at origin + i + j line + k slice, a zero halo of `radius` around the
// computational points (slice == line in 2D, where j is always 0 and there is no y halo).
// SetupFrame is all of it but m: what a backend keeps once m is in its own memory, without a
// second copy of the model's size.
template <class T>
struct SetupFrame {
  int dim = 3, radius = 1;
  int64_t nx = 0, ny = 1, nz = 0, line = 0, slice = 0, origin = 0, alloc = 0;
  std::array<T, kMaxTaps> w2{}, w1{};  // second and first derivative weights, scaled by 1/h^2, 1/h
  PmlAxis axis[3];                     // x, y, z
  std::vector<PmlCoef<T>> coef[3];     // per axis, axis[a].slots() entries
  bool free_surface = false;           // z = 0 is u = 0, mirrored oddly into the halo above
  std::vector<Tap> sources, receivers;
  int nsrc = 0, nrec = 0;
  int64_t nt = 0;
  std::vector<T> wavelets;  // nsrc x nt

  // The points sharing one memory-variable slot of axis a: the other axes' extents.
  int64_t points_per_slot(int a) const { return a == 0 ? nz * ny : a == 1 ? nz * nx : ny * nx; }
};

template <class T>
struct Setup : SetupFrame<T> {
  // (v dt)^2, alloc elements, zero in the halo; written whole by its builder's threads
  std::vector<T, UnwrittenAllocator<T>> m;
};

// What changes from step to step: a backend copies each of these arrays out for a checkpoint
// (state_array_bytes, copy_state_array: u, u_prev, each axis's psi, chi and phi, the traces, in
// this order) and takes them back as a State to resume (restore()). Everything else is the Setup's.
inline constexpr int kStateArrays = 12;

template <class T>
struct State {
  int64_t step = 0;          // steps done
  std::vector<T> u, u_prev;  // u^step and u^{step-1}, alloc elements each
  std::vector<T> pml[3][3];  // axis x, y, z; psi, chi, phi
  std::vector<T> traces;     // nrec x nt, steps before `step` recorded
};

}  // namespace fdstencil::acoustic
