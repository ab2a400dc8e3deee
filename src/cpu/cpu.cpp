// The cpu backend: OpenMP over (k, j) lines, an inner x loop the compiler vectorizes. Radius and
// the set of axes are template parameters so the tap loops unroll and the inner loop has no
// branches. Accumulates in T, like the GPU kernels it stands in for on a machine without a GPU.
#include <utility>

#include "fdstencil/backend.hpp"

namespace fdstencil {

namespace {

// `in` and `out` point at interior point (0, 0, 0); both fields have the strides of `l`.
template <class T, int R, bool X, bool Y, bool Z>
void apply_lines(const StencilWeights& sw, const T* __restrict__ in, T* __restrict__ out, const Layout& l) {
  T wx[2 * R + 1], wy[2 * R + 1], wz[2 * R + 1];
  for (int r = 0; r <= 2 * R; ++r) {
    wx[r] = static_cast<T>(sw.w[0][r]);
    wy[r] = static_cast<T>(sw.w[1][r]);
    wz[r] = static_cast<T>(sw.w[2][r]);
  }
  // The centre tap is shared by every differentiated axis.
  const T wc = (X ? wx[R] : T(0)) + (Y ? wy[R] : T(0)) + (Z ? wz[R] : T(0));
  const Extents n = l.interior();
  const int64_t line = l.line(), slice = l.slice();
#pragma omp parallel for collapse(2) schedule(static)
  for (int64_t k = 0; k < n.nz; ++k)
    for (int64_t j = 0; j < n.ny; ++j) {
      const T* p = in + j * line + k * slice;
      T* q = out + j * line + k * slice;
#pragma omp simd
      for (int64_t i = 0; i < n.nx; ++i) {
        T acc = wc * p[i];
        for (int r = 1; r <= R; ++r) {
          if constexpr (X) acc += wx[R - r] * p[i - r] + wx[R + r] * p[i + r];
          if constexpr (Y) acc += wy[R - r] * p[i - r * line] + wy[R + r] * p[i + r * line];
          if constexpr (Z) acc += wz[R - r] * p[i - r * slice] + wz[R + r] * p[i + r * slice];
        }
        q[i] = acc;
      }
    }
}

template <class T, int R>
void apply_radius(const Stencil& s, const StencilWeights& sw, const T* in, T* out, const Layout& l) {
  switch (s.op) {
    case Op::d2x: return apply_lines<T, R, true, false, false>(sw, in, out, l);
    case Op::d2y: return apply_lines<T, R, false, true, false>(sw, in, out, l);
    case Op::d2z: return apply_lines<T, R, false, false, true>(sw, in, out, l);
    case Op::d2xy: return apply_lines<T, R, true, true, false>(sw, in, out, l);
    case Op::laplacian7:
    case Op::d2xyz: return apply_lines<T, R, true, true, true>(sw, in, out, l);
  }
}

template <class T, int... Rs>
void dispatch(std::integer_sequence<int, Rs...>, const Stencil& s, const StencilWeights& sw, const T* in,
              T* out, const Layout& l) {
  ((s.radius == Rs + 1 ? apply_radius<T, Rs + 1>(s, sw, in, out, l) : void()), ...);
}

template <class T>
void cpu_apply(const Stencil& s, FieldView<const T> in, FieldView<T> out) {
  check_host_views(s, in, out);
  const StencilWeights sw = stencil_weights(s);
  dispatch(std::make_integer_sequence<int, kMaxRadius>{}, s, sw, in.origin(), out.origin(), in.layout());
}

class CpuBackend final : public Backend {
 public:
  std::string_view name() const override { return "cpu"; }
  std::string_view description() const override {
    return "OpenMP-parallel lines, vectorized x loop, radius as a template parameter";
  }
  void apply(const Stencil& s, FieldView<const float> in, FieldView<float> out) const override {
    cpu_apply(s, in, out);
  }
  void apply(const Stencil& s, FieldView<const double> in, FieldView<double> out) const override {
    cpu_apply(s, in, out);
  }
};

}  // namespace

const Backend& cpu_backend() {
  static const CpuBackend backend;
  return backend;
}

}  // namespace fdstencil
