// The forward run and its adjoint on the GPU, for the gradient and RTM (issue 37; the wave layer's
// wave/imaging.cpp calls it): the forward field of every step kept in device memory where it fits
// the budget, else binomial checkpoints of the whole state (core/revolve.hpp) with the steps
// between them run again; or, asked for, the strips around the layers with the field stepped back
// (boundary saving, physics/reversal.hpp). Plain C++, no CUDA types.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "cuda/wave/acoustic.hpp"
#include "cuda/wave/acoustic_adjoint.hpp"
#include "physics/acoustic.hpp"

namespace fdstencil::cuda::wave {

struct BackwardResult {
  std::vector<float> traces;              // the forward run's (nrec, nt)
  HostSums adjoint, cross, illumination;  // sums over the computational points, compact
  int64_t stored_bytes = 0;               // the kept fields', checkpoints' or strips' device memory
  int64_t checkpoints = 0;                // 0: every step's field kept
  int64_t recomputed_steps = 0;           // forward steps run again beyond the first nt
  int64_t reversed_steps = 0;             // steps undone by boundary saving
  double forward_s = 0, backward_s = 0;   // the first sweep, and the rest
};

// The launch the linearised solvers step their forward states with: the default, one step a call
// (no graphs or temporal passes, whose steps a checkpoint or Born's source term cannot split).
KernelConfig linearised_launch(const acoustic::SetupFrame<float>& s);

// The forward run's traces (nrec, nt) at the launch backward() steps with: the operator its
// adjoint belongs to.
std::vector<float> modelled(const acoustic::Setup<float>& s);

// The wavelets' adjoint F^T residual (nsrc, nt) of the sources-to-traces map: the adjoint run alone
// (the forward field is not needed), on the legacy stream.
std::vector<float> source_adjoint(const acoustic::Setup<float>& s, const std::vector<float>& residual);

// A device buffer one backward pass leaves for the next on the same thread (a survey's next shot,
// through wave::Options::kept_state): its stored fields, checkpoint slots or strips take the last
// shot's allocation, where it is on the same GPU and of the same size, instead of allocating and
// freeing tens of GB a shot (a cudaMalloc and cudaFree that the GPUs of one process serialise).
// Freed when the last pointer goes.
struct KeptBuffer;
std::shared_ptr<KeptBuffer> make_kept_buffer();

// `residual_of(traces)` gives the adjoint's input (nrec, nt) once the forward traces are known.
// `correlate`: the cross-correlation and illumination sums too. budget_bytes: the kept fields' or
// checkpoints' device memory (0: what the device has free once the states are made, the kept
// buffer's memory counted as free). `boundary`: boundary saving (physics/reversal.hpp) instead of
// fields or checkpoints. `kept`: the buffer to take and leave (nullptr: one of its own, freed).
BackwardResult backward(const acoustic::Setup<float>& s,
                        const std::function<std::vector<float>(const std::vector<float>&)>& residual_of,
                        bool correlate, int64_t budget_bytes, bool boundary = false,
                        KeptBuffer* kept = nullptr);

}  // namespace fdstencil::cuda::wave
