// The random verification input and the tolerance (see verify.hpp).
#include "plan/verify.hpp"

#include <limits>

namespace fdstencil {

namespace {

uint64_t splitmix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

}  // namespace

template <class T>
void fill_random(HostField<T>& f, uint64_t seed) {
  T* p = f.data();
  const int64_t n = f.layout().alloc_elems();
#pragma omp parallel for schedule(static)
  for (int64_t i = 0; i < n; ++i) {
    const uint64_t bits = splitmix64(seed ^ splitmix64(uint64_t(i)));
    // 53 random bits -> [0, 1) -> [-1, 1)
    p[i] = static_cast<T>(double(bits >> 11) * 0x1.0p-53 * 2.0 - 1.0);
  }
}

double tolerance_for(DType t, const Stencil& s) {
  const auto a = op_axes(s.op);
  const int taps = 1 + 2 * s.radius * (int(a[0]) + int(a[1]) + int(a[2]));
  return 4.0 * taps *
         (t == DType::f32 ? std::numeric_limits<float>::epsilon() : std::numeric_limits<double>::epsilon());
}

template void fill_random(HostField<float>&, uint64_t);
template void fill_random(HostField<double>&, uint64_t);

}  // namespace fdstencil
