// A velocity model that stays on the GPU where its caller holds it (wave::Model::gpu: the Python
// module's CuPy arrays and PyTorch tensors): checked, summarised and turned into m = (v dt)^2 on
// that GPU, so that its values never cross to the host. The arithmetic is the host's, so a run
// gives the bits it gives from the same values on the host.
#pragma once

#include <cstdint>
#include <vector>

namespace fdstencil::cuda::wave {

// What Model::summarise takes of a model on the host, taken on its GPU: the extremes, the CRC-32C
// of the values' bytes in order, and the first value that is not finite and positive (-1: none).
struct ModelSummary {
  float vmin = 0, vmax = 0;
  uint32_t crc = 0;
  int64_t first_bad = -1;
  float bad_value = 0;
};
// `v`: n floats on GPU `device`, their producers done. The device current before is current after.
ModelSummary summarise_model(const float* v, int64_t n, int device);

// v[at[i]] for each i, read on GPU `device`: the model's values under the sources' taps.
std::vector<float> gather_model(const float* v, const std::vector<int64_t>& at, int device);

// Where m's points take their velocity: the model's (nz, ny, nx) on the current GPU, the
// absorbing points before it on each axis (x, y, z), and the first computational plane of the
// storage m fills (a slab's; 0 for a whole domain).
struct MediumOnGpu {
  const float* v = nullptr;
  int64_t nz = 0, ny = 1, nx = 0;
  int lo[3] = {0, 0, 0};
  int64_t k0 = 0;
  double dt = 0;
};
// m at the computational points (nx, ny, nz) of a storage of strides line and slice whose point
// (0, 0, 0) is m + origin: (v dt)^2 in double, rounded to float, each layer point taking its
// nearest model point's velocity (the host's fill_m). Enqueued on the legacy stream; the halo is
// left as it is.
void fill_m(float* m, int64_t origin, int64_t line, int64_t slice, int64_t nx, int64_t ny, int64_t nz,
            const MediumOnGpu& medium);

}  // namespace fdstencil::cuda::wave
