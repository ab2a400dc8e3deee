// One shot for the tests of the gradient's backward pass (tests/wave/test_imaging_storage.cpp,
// tests/cuda/test_imaging_gpu.cpp): a two-layer model, a CPML on three sides and a free surface
// (2D) or a CPML on every face (3D), one source and four receivers off the grid, and observed data
// from a model whose top layer is faster, so that the direct wave's residual is of the traces' own
// size (an interface's reflection would not reach the receivers in 90 steps, leaving a residual
// of round-off). The state carries every kind of memory variable a checkpoint must keep.
#pragma once

#include <vector>

#include "fdstencil/imaging.hpp"
#include "fdstencil/wave.hpp"

namespace fdstencil::test {

struct ImagingShot {
  static constexpr double kH = 10.0;  // m
  wave::Model model;
  wave::Options o;
  std::vector<double> observed;

  ImagingShot(int dim, bool double_precision, const char* backend) : model(layers(dim, 1900.f)) {
    o.radius = 4;
    o.double_precision = double_precision;
    o.backend = backend;
    o.nt = 90;
    o.dt = 0.5 * wave::max_stable_dt(dim, 4, kH, 2500.0);
    o.boundary.cpml_width = 6;
    o.boundary.free_surface = dim == 2;
    o.boundary.cpml_frequency = 15;
    const double y = dim == 3 ? 101.3 : 0.0;
    o.sources.push_back({{52.3, y, 141.7}, wave::ricker(25, 0.04, o.dt, o.nt)});
    for (double x : {33.1, 121.9, 207.4, 288.2}) o.receivers.push_back({31.7, y, x});
    wave::Options cpu = o;
    cpu.backend = "cpu";
    observed = wave::modelled(layers(dim, 2000.f), cpu);
  }
  static wave::Model layers(int dim, float top) {
    return wave::Model::layered(dim, 30, dim == 3 ? 22 : 1, 34, kH, {{0.0, top}, {160.0, 2500.f}});
  }
};

}  // namespace fdstencil::test
