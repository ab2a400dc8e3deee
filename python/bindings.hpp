// The parts of fdstencil._core (module.cpp), each binding one piece of the library.
#pragma once

#include <nanobind/nanobind.h>

namespace fdstencil::python {

// fdstencil.Plan's C++ half: a plan of an operator over a caller's NumPy arrays, taken in place.
void bind_plan(nanobind::module_& m);
// fdstencil.tune's C++ half: the operators' autotuner, into the CLI's tuning cache.
void bind_tune(nanobind::module_& m);

}  // namespace fdstencil::python
