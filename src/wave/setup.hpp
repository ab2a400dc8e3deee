// The forward run's state as the cpu backend starts it, for the solvers built on the forward step
// (wave/imaging.cpp: Born modelling and the adjoint): the same checks, taps, medium and CPML as
// run() makes, so that they linearise the very operator run() applies.
#pragma once

#include "fdstencil/wave.hpp"
#include "physics/acoustic.hpp"

namespace fdstencil::wave::detail {

struct CpuSetupFrame {
  Domain d;        // the computational domain
  double dt = 0;   // the run's step
  float vmax = 0;  // the model's largest velocity (the CPML's profile is built from it)
};

// run()'s checks and setup for one rank on the cpu (a split run is refused): the state's
// geometry, m, CPML coefficients and taps, in float or double.
template <class T>
acoustic::Setup<T> cpu_setup(const Model& model, const Options& options, CpuSetupFrame& frame);

}  // namespace fdstencil::wave::detail
