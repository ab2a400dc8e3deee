// Born modelling, its adjoint and the FWI gradient, on wave::run's own discretisation (order 2R,
// leapfrog, CPML, free surface, the same source and receiver taps), issue 37. Each is exact to
// round-off: the adjoint is the transpose of every discrete step, the CPML's memory variables
// included (src/cpu/acoustic_adjoint.hpp derives it), and the dot-product tests check it.
//
// Scope so far: the cpu backend on one rank, in the options' precision (double_precision), the
// forward wavefield's time derivative kept whole in host memory for the backward pass. The CPML's
// profile and dt are taken as fixed (built from the model's largest velocity, or given): a
// perturbation that moves the largest velocity changes them, which the linearisation ignores.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "fdstencil/wave.hpp"

namespace fdstencil::wave {

// The traces (nrec, nt) of the run, in the options' precision: the forward operator the
// linearised ones below belong to (run()'s cpu traces, before their conversion to float).
std::vector<double> modelled(const Model& model, const Options& options);

// Born modelling: the traces' first-order change (nrec, nt) for a change dv of the velocity (the
// model's points, C order, m/s). The scattered field is stepped beside the background one, with
// dv's source term dm du^{n+1}/dm at every point, so nothing is stored.
std::vector<double> born(const Model& model, const Options& options, std::span<const double> dv);

// The transpose of born: for traces dd (nrec, nt), the velocity-space result (the model's points)
// such that <born(dv), dd> = <dv, born_adjoint(dd)>.
std::vector<double> born_adjoint(const Model& model, const Options& options, std::span<const double> dd);

// The transpose of the linear map from the sources' wavelets to the traces: for traces dd
// (nrec, nt), the wavelets' adjoint (nsrc, nt) (the sources' positions from options; their
// wavelets are not read).
std::vector<double> source_adjoint(const Model& model, const Options& options, std::span<const double> dd);

struct Gradient {
  double misfit = 0;             // 1/2 sum over receivers and steps of (d - observed)^2
  std::vector<double> velocity;  // d misfit / d v over the model's points, C order
  std::vector<double> traces;    // d, the modelled traces (nrec, nt)
  int64_t stored_bytes = 0;      // the forward field's time derivatives kept for the backward pass
};

// The FWI gradient of misfit = 1/2 ||d(v) - observed||^2 with respect to the velocity:
// born_adjoint of the residual. observed: (nrec, nt).
Gradient gradient(const Model& model, const Options& options, std::span<const double> observed);

}  // namespace fdstencil::wave
