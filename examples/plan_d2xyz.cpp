// The example of docs/library.md: the 8th-order Laplacian planned once for a caller's device
// arrays (its own strides), then applied on a stream. Built and run by the tests on a GPU.
#include <cuda_runtime.h>

#include <cmath>
#include <cstdio>

#include "fdstencil/plan.hpp"

int main() {
  using namespace fdstencil;
  if (gpu_count() == 0) return 77;  // no GPU (CTest: skipped)
  const Extents n{300, 200, 100};
  const int R = 4;
  const int64_t line = 320, slice = line * (n.ny + 2 * R);  // the caller's own strides, in floats
  const size_t bytes = sizeof(float) * size_t(slice * (n.nz + 2 * R));
  float *u = nullptr, *f = nullptr;
  if (cudaMalloc(&u, bytes) != cudaSuccess || cudaMalloc(&f, bytes) != cudaSuccess) return 1;
  cudaMemset(u, 0x3f, bytes);  // every float 0.747: a constant field, whose Laplacian is 0
  const int64_t origin = R + R * line + R * slice;  // interior point (0, 0, 0)
  const auto in = view_of<const float>(u + origin, Memory::device, n, R, line, slice);
  const auto out = view_of<float>(f + origin, Memory::device, n, R, line, slice);
  const Plan plan({Op::d2xyz, R, {10.0, 10.0, 10.0}}, in.layout());  // chosen once
  cudaStream_t stream;
  cudaStreamCreate(&stream);
  for (int step = 0; step < 100; ++step) plan.apply(in, out, stream);  // enqueued: no allocation, no sync
  float centre = 1;
  cudaMemcpyAsync(&centre, f + origin + 150 + 100 * line + 50 * slice, sizeof centre, cudaMemcpyDeviceToHost,
                  stream);
  cudaStreamSynchronize(stream);
  std::printf("%s %s (%s): centre %g\n", plan.variant().c_str(), plan.params().dump().c_str(),
              plan.source().c_str(), centre);
  return std::fabs(centre) < 1e-5f ? 0 : 1;  // 0 but for round-off
}
