// The layers' kernel of a step whose CPML is added apart (acoustic_layers.cuh): its boxes and launch.
#include "cuda/wave/acoustic_layers.cuh"

#include <algorithm>
#include <array>
#include <cstdint>
#include <limits>
#include <string>

#include "cuda/common/check.hpp"
#include "cuda/common/dependent_launch.cuh"
#include "cuda/wave/for_radius.hpp"
#include "cuda/wave/layer_step.cuh"
#include "fdstencil/error.hpp"

namespace fdstencil::cuda::wave {

namespace {

template <int R, bool kY>
__global__ void __launch_bounds__(kLayerThreads) acoustic_layers(StepArgs a, LayerBoxes b) {
  join_dependent_chain();
  int at[3];
  if (!layer_point(b, int64_t(blockIdx.x) * kLayerThreads + threadIdx.x, at)) return;
  const int64_t p = at[0] + a.line * at[1] + a.slice * at[2];
  float added = 0.f;
#pragma unroll
  for (int ax = 0; ax < 3; ++ax) {
    if (ax == 1 && !kY) continue;
    const int slot = a.axis[ax].slot(at[ax]);
    if (slot < 0) continue;
    float d2, d1;
    derivatives_at<R>(a, p, ax, at, d2, d1);
    added += added_term_at(a, ax, slot, at, d2, d1);
  }
  // The surface's plane stays zero, as the march left it; its memory variables still advance, as
  // the march's do.
  if (a.free_surface && at[2] == 0) return;
  a.out[p] += a.m[p] * added;
}

// The whole step at each layer point (layer_step.cuh).
template <int R, bool kY>
__global__ void __launch_bounds__(kLayerThreads)
    acoustic_layers_whole(StepArgs a, LayerBoxes b, LayerTaps taps, int64_t n) {
  join_dependent_chain();
  int at[3];
  if (layer_point(b, int64_t(blockIdx.x) * kLayerThreads + threadIdx.x, at))
    whole_step_at<R, kY>(a, taps, n, at);
}

template <int R>
const void* whole_kernel(bool y) {
  return y ? reinterpret_cast<const void*>(acoustic_layers_whole<R, true>)
           : reinterpret_cast<const void*>(acoustic_layers_whole<R, false>);
}

template <int R>
const void* layers_kernel(bool y) {
  return y ? reinterpret_cast<const void*>(acoustic_layers<R, true>)
           : reinterpret_cast<const void*>(acoustic_layers<R, false>);
}

}  // namespace

LayerBoxes layer_boxes(const acoustic::SetupFrame<float>& s, int64_t k0, int64_t k1) {
  LayerBoxes b;
  const auto add = [&](int64_t x0, int64_t x1, int64_t y0, int64_t y1, int64_t z0, int64_t z1) {
    z0 = std::max(z0, k0);
    z1 = std::min(z1, k1);
    if (x1 <= x0 || y1 <= y0 || z1 <= z0) return;
    const int64_t points = (x1 - x0) * (y1 - y0) * (z1 - z0);
    if (points > std::numeric_limits<int32_t>::max())
      throw Error(ErrorKind::invalid_argument,
                  "a CPML layer of " + std::to_string(points) +
                      " points is past the layers' kernel's 32-bit indices: kernel parameter cpml \"march\"");
    const int64_t lo[3] = {x0, y0, z0}, hi[3] = {x1, y1, z1};
    for (int ax = 0; ax < 3; ++ax) {
      b.lo[b.count][ax] = int(lo[ax]);
      b.extent[b.count][ax] = int(hi[ax] - lo[ax]);
    }
    b.first[b.count + 1] = b.first[b.count] + points;
    ++b.count;
  };
  // Each axis's local points [0, n) split where its lower layer ends and its upper one begins (the
  // axis's offset places a slab's planes in the whole domain), the upper clipped to what the lower
  // leaves: the boxes stay disjoint however wide the layers.
  const auto span = [](const acoustic::PmlAxis& a, int64_t n) {
    const int64_t lo_end = std::clamp<int64_t>(a.lo - a.offset, 0, n);
    return std::array<int64_t, 2>{lo_end, std::clamp<int64_t>(a.n - a.hi - a.offset, lo_end, n)};
  };
  const auto z = span(s.axis[2], s.nz), y = span(s.axis[1], s.ny), x = span(s.axis[0], s.nx);
  add(0, s.nx, 0, s.ny, 0, z[0]);
  add(0, s.nx, 0, s.ny, z[1], s.nz);
  add(0, s.nx, 0, y[0], z[0], z[1]);
  add(0, s.nx, y[1], s.ny, z[0], z[1]);
  add(0, x[0], y[0], y[1], z[0], z[1]);
  add(x[1], s.nx, y[0], y[1], z[0], z[1]);
  return b;
}

namespace {

dim3 layers_grid(const LayerBoxes& b) {
  return dim3(unsigned((b.first[b.count] + kLayerThreads - 1) / kLayerThreads));
}

}  // namespace

void launch_layers(const StepArgs& a, const LayerBoxes& b, int radius, bool y, cudaStream_t on,
                   bool dependent) {
  if (b.first[b.count] == 0) return;
  const void* kernel = for_radius(radius, [y]<int R>() { return layers_kernel<R>(y); });
  StepArgs args = a;
  LayerBoxes boxes = b;
  void* params[] = {&args, &boxes};
  FDS_CUDA_CHECK(launch_kernel(kernel, layers_grid(b), dim3(kLayerThreads), params, 0, on, dependent));
  FDS_CUDA_CHECK_LAUNCH();
}

void launch_layers_whole(const StepArgs& a, const LayerBoxes& b, const LayerTaps& t, int radius, bool y,
                         int64_t n, cudaStream_t on) {
  if (b.first[b.count] == 0) return;
  const void* kernel = for_radius(radius, [y]<int R>() { return whole_kernel<R>(y); });
  StepArgs args = a;
  LayerBoxes boxes = b;
  LayerTaps taps = t;
  void* params[] = {&args, &boxes, &taps, &n};
  FDS_CUDA_CHECK(cudaLaunchKernel(kernel, layers_grid(b), dim3(kLayerThreads), params, 0, on));
  FDS_CUDA_CHECK_LAUNCH();
}

}  // namespace fdstencil::cuda::wave
