#include "cpu/copy_bandwidth.hpp"

#include <algorithm>
#include <chrono>
#include <memory>
#include <new>
#include <vector>

namespace fdstencil::cpu {

double measure_copy_bandwidth(int64_t bytes, int reps) {
  const int64_t n = bytes / int64_t(sizeof(float));
  if (n <= 0 || reps <= 0) return 0;
  // Not value-initialized: the first writes below place the pages, thread by thread.
  std::unique_ptr<float[]> a(new (std::nothrow) float[size_t(n)]), b(new (std::nothrow) float[size_t(n)]);
  if (!a || !b) return 0;
  float* __restrict src = a.get();
  float* __restrict dst = b.get();
#pragma omp parallel for simd schedule(static)
  for (int64_t i = 0; i < n; ++i) {
    src[i] = float(i & 1023);
    dst[i] = 0.f;
  }
  std::vector<double> seconds;
  for (int r = 0; r <= reps; ++r) {
    const auto t0 = std::chrono::steady_clock::now();
#pragma omp parallel for simd schedule(static)
    for (int64_t i = 0; i < n; ++i) dst[i] = src[i];
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (r > 0) seconds.push_back(s);  // the first copy warms the threads and the pages' mappings
  }
  std::nth_element(seconds.begin(), seconds.begin() + std::ptrdiff_t(seconds.size() / 2), seconds.end());
  const double median = seconds[seconds.size() / 2];
  // The destination is read: a check that the copy was done, which the compiler cannot drop.
  if (dst[n - 1] != src[n - 1]) return 0;
  return 2.0 * double(n) * sizeof(float) / median / 1e9;
}

}  // namespace fdstencil::cpu
