// Born modelling, its adjoint and the FWI gradient, on wave::run's own discretisation (order 2R,
// leapfrog, CPML, free surface, the same source and receiver taps), issue 37. Each is exact to
// round-off: the adjoint is the transpose of every discrete step, the CPML's memory variables
// included (src/cpu/acoustic_adjoint.hpp derives it), and the dot-product tests check it; with
// Storage::boundary only to the extent that paragraph below says.
//
// Backends: every function here runs where run() would (options.backend: the GPU in float when
// present, else the cpu in the options' precision). One rank. The forward field of every step is kept for the
// backward pass (host memory on the cpu, device memory on the GPU) where it fits the Storage
// budget, else binomial checkpoints of the whole state (src/core/revolve.hpp) with the steps
// between them run again. The CPML's profile and dt are taken as fixed (built from the model's
// largest velocity, or given): a perturbation that moves the largest velocity changes them,
// which the linearisation ignores.
//
// Stopping: options.stop_requested, where set, is asked before every step of each sweep (the
// forward and the backward, and the steps checkpoints run again); when it returns true the call
// throws Error(ErrorKind::interrupted) and returns nothing. options.progress, where set, hears
// (done, total) over every step of the sweeps, the total counting the steps checkpoints run
// again, about 200 times a call and last with done == total. options.kept_state, where set, keeps
// the GPU's backward pass's stored fields (or slots, or strips) for the next call of the same
// sizes on the same GPU (a survey's next shot), and is freed by the GPU's modelling, Born and
// wavelet adjoint (which keep nothing there); the cpu keeps nothing. The other run() options these
// functions do not serve (resume, snapshots, checkpoints, kernel parameters, a split run and its
// files) are refused by name.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "fdstencil/wave.hpp"

namespace fdstencil::wave {

// How the backward pass keeps the forward run: the memory it may take (bytes; 0: what is free,
// host memory on the cpu, device memory on the GPU), and what it did.
//
// boundary: keep only the strips of R points around the points clear of every layer (and R
// points in from the grid's edges and a free surface), and rebuild the field there backwards in
// time from the last two fields (physics/reversal.hpp). The layers' points beyond the strips are
// not known: the sums leave them out, so the gradient (and born_adjoint, then not Born's exact
// transpose) differs from the exact one where a model point takes a share from them (the model's
// outer faces beside a layer wider than R, whose velocity the layers extend), and elsewhere, as
// rtm's images do, by the step back's round-off. A budget, if given, must hold the strips.
struct Storage {
  int64_t budget_bytes = 0;
  bool boundary = false;
};
struct StorageReport {
  std::string backend;           // "cuda" or "cpu"
  int64_t stored_bytes = 0;      // the kept fields or strips, or the checkpoints, and their working fields
  int64_t checkpoints = 0;       // 0: every step's field (or strip) kept; else the checkpoint slots
  int64_t recomputed_steps = 0;  // forward steps run again beyond the first sweep's nt
  bool boundary = false;         // the strips kept and the field stepped back (Storage::boundary)
  int64_t reversed_steps = 0;    // steps undone to rebuild the field (boundary saving)
  double forward_s = 0;          // the first sweep, to its traces
  double backward_s = 0;         // the rest: the adjoint steps and the steps run again
  double total_s = 0;            // the whole call: the setup and the results' conversion too
};

// The traces (nrec, nt) of the run, in the options' precision: the forward operator the
// linearised ones below belong to (run()'s traces, before their conversion to float).
std::vector<double> modelled(const Model& model, const Options& options);

// Where modelled, born, born_adjoint, rtm and gradient run for these options: "cuda" or "cpu";
// throws as run() does for a backend that cannot serve them.
std::string linearised_backend(const Options& options);

// Born modelling: the traces' first-order change (nrec, nt) for a change dv of the velocity (the
// model's points, C order, m/s). The scattered field is stepped beside the background one, with
// dv's source term dm du^{n+1}/dm at every point, so nothing is stored.
std::vector<double> born(const Model& model, const Options& options, std::span<const double> dv);

// The transpose of born: for traces dd (nrec, nt), the velocity-space result (the model's points)
// such that <born(dv), dd> = <dv, born_adjoint(dd)>.
std::vector<double> born_adjoint(const Model& model, const Options& options, std::span<const double> dd,
                                 const Storage& storage = {});

// The transpose of the linear map from the sources' wavelets to the traces: for traces dd
// (nrec, nt), the wavelets' adjoint (nsrc, nt) (the sources' positions from options). The
// wavelets set the CPML's alpha unless options.boundary.cpml_frequency does: give the run's own,
// or that frequency, or the transpose is of another run's boundary.
std::vector<double> source_adjoint(const Model& model, const Options& options, std::span<const double> dd);

struct Gradient {
  double misfit = 0;             // 1/2 sum over receivers and steps of (d - observed)^2
  std::vector<double> velocity;  // d misfit / d v over the model's points, C order
  std::vector<double> traces;    // d, the modelled traces (nrec, nt)
  StorageReport storage;         // how the forward run was kept for the backward pass
};

// The FWI gradient of misfit = 1/2 ||d(v) - observed||^2 with respect to the velocity:
// born_adjoint of the residual. observed: (nrec, nt).
Gradient gradient(const Model& model, const Options& options, std::span<const double> observed,
                  const Storage& storage = {});

// Reverse-time migration of one shot's recorded traces (nrec, nt), over the model's points (the
// layers left out). Images of several shots add: their sum is the stack.
enum class ImagingCondition {
  adjoint,           // J^T d over m: sum over steps of ubar^{n+1} du^{n+1}/dm (born_adjoint before dm/dv)
  crosscorrelation,  // the classic zero-lag sum over steps of u^n ubar^n
};

struct RtmOptions {
  ImagingCondition condition = ImagingCondition::adjoint;
  bool illumination = false;  // divided by the source's illumination sum (u^n)^2 (+ 1e-6 of its largest)
  bool laplacian = false;     // then -Laplacian (the 3-point second differences summed over the axes,
                              // zero outside the model) against the low wavenumbers backscattering
                              // leaves at sharp contrasts
  Storage storage;
  StorageReport* report = nullptr;  // filled in when given
};

std::vector<double> rtm(const Model& model, const Options& options, std::span<const double> recorded,
                        const RtmOptions& rtm = {});

}  // namespace fdstencil::wave
