// fdstencil.tune's C++ half: the library's autotuner (fdstencil/tune.hpp) for one operator case on
// the current GPU, writing into the same tuning cache as `fdstencil tune` (or the file given); its
// result as the JSON text `fdstencil tune --json` gives each case.
#include <nanobind/stl/function.h>
#include <nanobind/stl/string.h>

#include <cstdio>
#include <string>

#include "bindings.hpp"
#include "fdstencil/tune.hpp"

namespace nb = nanobind;

namespace fdstencil::python {

namespace {

// Each line of the search comes here, the GIL taken for it: first Python's pending signals run
// (Ctrl-C's KeyboardInterrupt ends the search there, between two steps of it, and comes back to
// the caller), then `progress` is called with the line, or without one it goes to stderr as the
// tool's does. The tuner may copy its options while the GIL is released, so they hold a handle
// (no reference count to touch); the caller's argument keeps the callable alive until the search
// returns. An exception the callable raises ends the search the same way.
std::string run_tune(const std::string& op, int radius, const std::string& dtype, int64_t nz, int64_t ny,
                     int64_t nx, double budget_seconds, const std::string& cache_file, bool store,
                     nb::object progress) {
  TuneOptions o;
  o.budget_seconds = budget_seconds;
  o.cache_file = cache_file;
  o.store = store;
  o.progress = [fn = nb::handle(progress)](const std::string& line) {
    nb::gil_scoped_acquire gil;
    if (PyErr_CheckSignals() != 0) throw nb::python_error();
    if (fn.is_none())
      std::fprintf(stderr, "tune: %s\n", line.c_str());
    else
      fn(line);
  };
  const DType t = parse_dtype(dtype);
  TuneResult r;
  {
    nb::gil_scoped_release nogil;
    r = tune(parse_op(op), radius, t, Extents{nx, ny, nz}, o);
  }
  return to_json(r).dump();
}

}  // namespace

void bind_tune(nb::module_& m) {
  m.def("tune", &run_tune, nb::arg("op"), nb::arg("radius"), nb::arg("dtype"), nb::arg("nz"), nb::arg("ny"),
        nb::arg("nx"), nb::arg("budget_seconds"), nb::arg("cache_file"), nb::arg("store"),
        nb::arg("progress").none());
}

}  // namespace fdstencil::python
