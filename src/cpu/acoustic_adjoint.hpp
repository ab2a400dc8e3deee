// The adjoint of the acoustic step (issue 37): the transpose of cpu/acoustic.cpp's step, applied
// backwards in time, CPML memory variables and the free surface's mirror included, so that the
// linearised solvers (wave/imaging.cpp) are exact to round-off, not a discretised continuous
// adjoint. OpenMP over planes, each line gathered axis by axis (acoustic_adjoint.cpp).
//
// Forward step n, per point p (physics/acoustic.hpp):
//   d^n = sum w u^n (receivers), u^{n+1} = 2 u^n - u^{n-1} + m L(u^n, psi, chi, phi) (zero on a
//   free surface), then + sources' w f^n.
// Backward step n takes ubar^{n+1} (P) and the part of ubar^n that u^n's role as u^{n-1} of step
// n + 1 gave (Q) to ubar^n:
//   a = P (zero on a free surface), l = m a;
//   per axis in its layer, with phibar, chibar, psibar the memory variables' adjoints:
//     phi~ = l + phibar,  chi~ = l + chibar + a_c phi~,  psi~ = psibar,
//     g2 = l + a_c (chi~ + phi~),  g1 = da_c chi~ + a_c psi~,
//     psibar = db_c chi~ + b_c psi~,  chibar = b_c chi~,  phibar = b_c phi~  (for step n - 1);
//   outside it g2 = l, g1 = 0;
//   ubar^n = Q + 2 a + sum over axes (S2^T g2 + S1^T g1) + receivers' w dbar^n,  Q <- -a,
// where S2 and S1 are the second- and first-derivative stencils with the mirror, and c the
// point's CPML coefficients (a_c, b_c, da_c, db_c).
//
// Outside an axis's layer g2 = l and g1 = 0, so the step keeps l (every point) and, per axis,
// e2 = g2 - l and g1 (stored at that axis's layer points, zero elsewhere): a line whose stencils
// reach no layer point of an axis gathers that axis's taps from l alone.
#pragma once

#include <vector>

#include "physics/acoustic.hpp"

namespace fdstencil::cpu {

template <class T>
class AcousticAdjointCpu {
 public:
  // The setup is the forward run's (taps and m included) and must outlive this object.
  explicit AcousticAdjointCpu(const acoustic::Setup<T>& setup);

  // Backward over forward step n (n = nt - 1 down to 0). residual: (nrec, nt), the traces'
  // adjoint dbar. Optional outputs, accumulated: grad_m += P dudm over the computational points,
  // where dudm is du^{n+1}/dm (alloc elements, the forward's; wave/imaging.cpp); sources_bar
  // (nsrc, nt) += the sources' taps of P (the adjoint of the wavelets).
  void step(int64_t n, const T* residual, const T* dudm, double* grad_m, T* sources_bar);

  const T* current() const { return p_.data(); }  // ubar^n after step(n): ubar^{n+1} before it

 private:
  const acoustic::Setup<T>& s_;
  std::vector<T> p_, q_, next_;  // ubar^{n+1}, the u^{n-1} part of ubar^n, ubar^n being built
  std::vector<T> pml_[3][3];     // the memory variables' adjoints: axis x, y, z; psi, chi, phi
  std::vector<T> l_;             // m a at every computational point, zero in the halo
  // Per axis, its layer points' g2 - l and g1; zero at every other point, the halo included.
  std::vector<T> e2_[3], g1_[3];
  // Per axis and coordinate: whether the stencils centred there reach a point of the axis's layer.
  std::vector<char> near_[3];

  void derivative_adjoints(int64_t k, const T* a);
  void gather(int64_t k, const T* a, T* acc);
};

extern template class AcousticAdjointCpu<float>;
extern template class AcousticAdjointCpu<double>;

}  // namespace fdstencil::cpu
