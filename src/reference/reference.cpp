// The reference backend: the oracle every other backend is tested against. Deliberately plain:
// one loop nest, every tap read through Layout::index, every sum accumulated in double.
#include "fdstencil/backend.hpp"

namespace fdstencil {

namespace {

template <class T>
void reference_apply(const Stencil& s, FieldView<const T> in, FieldView<T> out) {
  check_host_views(s, in, out);
  const StencilWeights sw = stencil_weights(s);
  const Extents n = in.layout().interior();
  const int R = s.radius;
  // Planes are independent; threads only make 1024^3 verification take seconds, not minutes.
#pragma omp parallel for schedule(static)
  for (int64_t k = 0; k < n.nz; ++k)
    for (int64_t j = 0; j < n.ny; ++j)
      for (int64_t i = 0; i < n.nx; ++i) {
        double acc = 0.0;
        for (int r = -R; r <= R; ++r) {
          if (sw.axis[0]) acc += sw.w[0][r + R] * static_cast<double>(in.at(i + r, j, k));
          if (sw.axis[1]) acc += sw.w[1][r + R] * static_cast<double>(in.at(i, j + r, k));
          if (sw.axis[2]) acc += sw.w[2][r + R] * static_cast<double>(in.at(i, j, k + r));
        }
        out.at(i, j, k) = static_cast<T>(acc);
      }
}

class ReferenceBackend final : public Backend {
 public:
  std::string_view name() const override { return "reference"; }
  std::string_view description() const override { return "plain loops accumulating in double: the oracle"; }
  void apply(const Stencil& s, FieldView<const float> in, FieldView<float> out) const override {
    reference_apply(s, in, out);
  }
  void apply(const Stencil& s, FieldView<const double> in, FieldView<double> out) const override {
    reference_apply(s, in, out);
  }
};

}  // namespace

const Backend& reference_backend() {
  static const ReferenceBackend backend;
  return backend;
}

}  // namespace fdstencil
