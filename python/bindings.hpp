// The parts of fdstencil._core (module.cpp), each binding one piece of the library.
#pragma once

#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "fdstencil/wave.hpp"

namespace fdstencil::python {

// How often a run asks Python whether Ctrl-C was pressed: often enough to stop it within a second.
inline constexpr auto kSignalPoll = std::chrono::milliseconds(100);
// Whether Ctrl-C was pressed: Python's signal handlers run, the GIL taken; their
// KeyboardInterrupt is left pending for the call to raise (nb::python_error).
bool python_interrupted();

// C-ordered arrays on the host (NumPy): the velocity model, positions, wavelets, traces.
using HostFloats = nanobind::ndarray<const float, nanobind::numpy, nanobind::c_contig, nanobind::device::cpu>;
using HostDoubles =
    nanobind::ndarray<const double, nanobind::numpy, nanobind::c_contig, nanobind::device::cpu>;

// What every shot of a call shares: the step, the order, the boundaries, the backend.
struct RunSettings {
  double dt = 0;
  int64_t nt = 0;
  int radius = 4, cpml = 10;
  bool free_surface = false, final_field = false, measure_bandwidth = false;
  std::string backend;
  std::string kernel_params;  // the GPU launch by hand; "": the tuned launch where stored, else the defaults
  std::vector<int64_t> snapshot_steps;  // the wavefield after each of these many steps (0..nt)
};

// The caller's float32 array as the solver's model, read in place (it must outlive the model),
// checked and summarised once (module.cpp).
wave::Model model_of(const HostFloats& v, double spacing);
// A C-ordered float32 model of `shape` ((nz, nx) or (nz, ny, nx)) on GPU `device` at `ptr`, left
// there (wave::Model::gpu): checked and summarised on that GPU (module.cpp).
wave::Model model_on_gpu(uintptr_t ptr, const std::vector<int64_t>& shape, int device, double spacing);
// One shot's options: its sources (n, dim) with their wavelets (n, samples) and its receivers.
wave::Options shot_options(const wave::Model& model, const RunSettings& s, const HostDoubles& sources,
                           const HostDoubles& wavelets, const HostDoubles& receivers);

// fdstencil.Plan's C++ half: a plan of an operator over a caller's NumPy arrays, taken in place.
void bind_plan(nanobind::module_& m);
// fdstencil.tune's C++ half: the operators' autotuner, into the CLI's tuning cache.
void bind_tune(nanobind::module_& m);
// fdstencil.wave's linearised solvers (born, born_adjoint, gradient): fdstencil/imaging.hpp.
void bind_imaging(nanobind::module_& m);

}  // namespace fdstencil::python
