// The cpu backend: OpenMP over (k, j) lines, an inner x loop the compiler vectorizes. Radius and
// the set of axes are template parameters so the tap loops unroll and the inner loop has no
// branches. Accumulates in T, like the GPU kernels it stands in for on a machine without a GPU.
#include <omp.h>

#include <algorithm>
#include <utility>

#include "fdstencil/backend.hpp"

namespace fdstencil {

namespace {

// A z derivative reads 2R + 1 planes for each output plane. A thread marches a tile of y-lines
// through z, kChunkPlanes planes per work item (a thread's consecutive items continue its tile),
// the tile as wide as keeps its z window within kWindowBytes, half of a 1 MiB L2 (the other half
// for the output lines and the hardware's prefetches), so that each input line is read from
// memory once. Narrower than kMinTileLines lines, the x-lines' streams would break too often.
constexpr int64_t kWindowBytes = int64_t(512) << 10;
constexpr int64_t kMinTileLines = 8;
constexpr int64_t kChunkPlanes = 32;
// Work items a thread should have at least, so that a share of one item more or less is small.
constexpr int64_t kItemsPerThread = 4;

// The weights of one operator in T, and its line: out = op(in) along x-line (j, k).
template <class T, int R, bool X, bool Y, bool Z>
struct Lines {
  T wx[2 * R + 1], wy[2 * R + 1], wz[2 * R + 1], wc;
  const T* __restrict__ in;
  T* __restrict__ out;
  int64_t nx, line, slice;

  Lines(const StencilWeights& sw, const T* in_, T* out_, const Layout& l)
      : in(in_), out(out_), nx(l.interior().nx), line(l.line()), slice(l.slice()) {
    for (int r = 0; r <= 2 * R; ++r) {
      wx[r] = static_cast<T>(sw.w[0][r]);
      wy[r] = static_cast<T>(sw.w[1][r]);
      wz[r] = static_cast<T>(sw.w[2][r]);
    }
    // The centre tap is shared by every differentiated axis.
    wc = (X ? wx[R] : T(0)) + (Y ? wy[R] : T(0)) + (Z ? wz[R] : T(0));
  }

  void operator()(int64_t j, int64_t k) const {
    const T* p = in + j * line + k * slice;
    T* q = out + j * line + k * slice;
#pragma omp simd
    for (int64_t i = 0; i < nx; ++i) {
      T acc = wc * p[i];
      const auto add_taps = [&](int r) {  // at offset r, in the axes' order
        if constexpr (X) acc += wx[R - r] * p[i - r] + wx[R + r] * p[i + r];
        if constexpr (Y) acc += wy[R - r] * p[i - r * line] + wy[R + r] * p[i + r * line];
        if constexpr (Z) acc += wz[R - r] * p[i - r * slice] + wz[R + r] * p[i + r * slice];
      };
      // Sums across lines unrolled whole, so that every tap's load is contiguous in i: GCC's own
      // limit leaves the widest (d2xyz at large R) a loop over r, whose loads it cannot
      // vectorize. A sum along x alone is left to GCC, whose own choice runs faster there.
      if constexpr (Y || Z) {
#pragma GCC unroll 16
        for (int r = 1; r <= R; ++r) add_taps(r);
      } else {
        for (int r = 1; r <= R; ++r) add_taps(r);
      }
      q[i] = acc;
    }
  }
};

// `in` and `out` point at interior point (0, 0, 0); both fields have the strides of `l`.
template <class T, int R, bool X, bool Y, bool Z>
void apply_lines(const StencilWeights& sw, const T* in, T* out, const Layout& l) {
  const Lines<T, R, X, Y, Z> at(sw, in, out, l);
  const Extents n = l.interior();
  if constexpr (!Z) {  // each line reads its own plane only: whole planes, in order
#pragma omp parallel for collapse(2) schedule(static)
    for (int64_t k = 0; k < n.nz; ++k)
      for (int64_t j = 0; j < n.ny; ++j) at(j, k);
    return;
  }
  // Tiles of equal widths (the last may be shorter by less than a line per tile): the threads'
  // shares of the items stay equal.
  const int64_t ny = std::max<int64_t>(n.ny, 1);
  const int64_t window = int64_t(2 * R + 1) * l.line() * int64_t(sizeof(T));
  const int64_t widest = std::min(std::max(kWindowBytes / window, kMinTileLines), ny);
  const int64_t tiles = (ny + widest - 1) / widest;
  const int64_t tile = (ny + tiles - 1) / tiles;
  // Shorter chunks where the items would be too few for the threads (a small model, many cores).
  int64_t planes = kChunkPlanes;
  while (planes > 1 && tiles * ((n.nz + planes - 1) / planes) < kItemsPerThread * omp_get_max_threads())
    planes /= 2;
  const int64_t chunks = (n.nz + planes - 1) / planes;
#pragma omp parallel for collapse(2) schedule(static)
  for (int64_t t = 0; t < tiles; ++t)
    for (int64_t c = 0; c < chunks; ++c)
      for (int64_t k = c * planes; k < std::min(n.nz, (c + 1) * planes); ++k)
        for (int64_t j = t * tile; j < std::min(n.ny, (t + 1) * tile); ++j) at(j, k);
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
