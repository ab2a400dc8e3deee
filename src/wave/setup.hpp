// The forward run's state as run() starts it, for the solvers built on the forward step
// (wave/imaging.cpp: Born modelling and the adjoint): the same checks, taps, medium and CPML as
// run() makes, so that they linearise the very operator run() applies.
#pragma once

#include "fdstencil/wave.hpp"
#include "physics/acoustic.hpp"

#if FDSTENCIL_HAVE_CUDA
namespace fdstencil::cuda::wave {
struct KeptBuffer;  // cuda/wave/acoustic_backward.hpp
}
#endif

namespace fdstencil::wave::detail {

struct SetupFrame {
  Domain d;        // the computational domain
  double dt = 0;   // the run's step
  float vmax = 0;  // the model's largest velocity (the CPML's profile is built from it)
};

// run()'s checks and setup for one rank (a split run is refused): the state's geometry, m, CPML
// coefficients and taps, in float or double, on the host.
template <class T>
acoustic::Setup<T> setup(const Model& model, const Options& options, SetupFrame& frame);

// run()'s choice of backend: the GPU (in a build with CUDA, in float) or the cpu; throws as run()
// does for a backend that cannot serve the options.
bool on_gpu(const Options& options);

#if FDSTENCIL_HAVE_CUDA
// The buffer Options::kept_state keeps for the GPU's backward passes on its thread (a survey's next
// shot takes the last one's stored fields' allocation; the forward state the kept state held, if
// any, is freed first); nullptr without a kept state.
cuda::wave::KeptBuffer* kept_buffer(const Options& options);
// Frees what Options::kept_state holds, for a GPU solver that keeps nothing there (modelling, Born,
// the wavelets' adjoint), so that its memory is this run's.
void free_kept(const Options& options);
#endif

}  // namespace fdstencil::wave::detail
