// Born modelling on the GPU (issue 37): the data perturbation J dm of a perturbation dm of
// m = (v dt)^2, as wave/imaging.cpp's cpu Born computes it. Plain C++, no CUDA types.
#pragma once

#include <vector>

#include "physics/acoustic.hpp"

namespace fdstencil::cuda::wave {

// The background run (s, its sources) and the scattered field (s's medium and receivers, no
// sources) step side by side at linearised_launch. After step n the scattered field's u^{n+1}
// gains dm du^{n+1}/dm, the background's (u^{n+1} - 2 u^n + u^{n-1}) / m (u^{n+1} / m on a free
// surface): the term the adjoint's gradient correlates with, so that the pair is each other's
// transpose. dm: s.alloc values in the storage layout (zero off the computational points).
// Returns the scattered field's traces (nrec, nt).
std::vector<float> born(const acoustic::Setup<float>& s, const std::vector<float>& dm);

}  // namespace fdstencil::cuda::wave
