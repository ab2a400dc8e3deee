// The velocity model: built from a constant, layers or a .npy file, and checked before anything
// is allocated for it.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "fdstencil/checksum.hpp"
#include "fdstencil/error.hpp"
#include "fdstencil/field.hpp"
#include "fdstencil/npy.hpp"
#include "fdstencil/wave.hpp"
#if FDSTENCIL_HAVE_CUDA
#include "cuda/wave/gpu_model.hpp"
#endif

namespace fdstencil::wave {

namespace {

[[noreturn]] void bad(const std::string& what) { throw Error(ErrorKind::invalid_argument, what); }

void check_shape(int dim, int64_t nz, int64_t ny, int64_t nx) {
  if (dim != 2 && dim != 3) bad("a model is 2D or 3D, not " + std::to_string(dim) + "D");
  if (nz < 1 || nx < 1 || ny < 1)
    bad("model extents must be at least 1, got (nz, ny, nx) = (" + std::to_string(nz) + ", " +
        std::to_string(ny) + ", " + std::to_string(nx) + ")");
  if (dim == 2 && ny != 1) bad("a 2D model has ny = 1, got " + std::to_string(ny));
  // 2^31 points per axis: the step kernels index one axis in 32 bits.
  if (nz >= (int64_t(1) << 31) || ny >= (int64_t(1) << 31) || nx >= (int64_t(1) << 31))
    bad("a model extent of 2^31 points or more");
  const double points = double(nz) * double(ny) * double(nx);
  if (points * sizeof(float) > 9e18)
    throw Error(ErrorKind::out_of_memory, "the model's size overflows 64 bits");
}

// `planes`: how many planes of v to allocate (all of them by default).
Model blank(int dim, int64_t nz, int64_t ny, int64_t nx, double h, float fill = 0.f, int64_t planes = -1) {
  check_shape(dim, nz, ny, nx);
  if (!(std::isfinite(h) && h > 0))
    bad("the grid spacing must be finite and positive, got " + std::to_string(h));
  Model m;
  m.dim = dim;
  m.nz = nz;
  m.ny = ny;
  m.nx = nx;
  m.h = h;
  if (planes < 0) planes = nz;
  ensure_host_memory(planes * ny * nx * int64_t(sizeof(float)), "the velocity model");
  m.v.assign(size_t(planes * ny * nx), fill);
  return m;
}

}  // namespace

// The smallest and largest velocity in one pass over the OpenMP threads: a model of 10^10 points
// is 40 GB, and a run asks for its extremes several times before it starts.
namespace {

std::pair<float, float> extremes(const float* v, int64_t n) {
  float lo = n == 0 ? 0.f : v[0], hi = lo;
#pragma omp parallel for simd reduction(min : lo) reduction(max : hi)
  for (int64_t p = 0; p < n; ++p) {
    lo = std::min(lo, v[p]);
    hi = std::max(hi, v[p]);
  }
  return {lo, hi};
}

// Refuses the model for its value `value` at p (C order over the whole model), named by (z, y, x).
[[noreturn]] void bad_value(const Model& m, int64_t p, float value) {
  const int64_t i = p % m.nx, j = p / m.nx % m.ny, k = p / m.nx / m.ny;
  const std::string at = m.dim == 3 ? "(z, y, x) = (" + std::to_string(k) + ", " + std::to_string(j) + ", " +
                                          std::to_string(i) + ")"
                                    : "(z, x) = (" + std::to_string(k) + ", " + std::to_string(i) + ")";
  bad("velocity " + std::to_string(value) + " at index " + at +
      ": velocities must be finite and positive (m/s)");
}

// Whether v[0, n) holds only finite, positive values: two comparisons a value and no branch, so
// that the pass vectorizes (a NaN fails v > 0, an infinity v <= the largest float).
bool all_finite_positive(const float* v, int64_t n) {
  constexpr float top = std::numeric_limits<float>::max();
  int bad = 0;
#pragma omp parallel for simd reduction(| : bad)
  for (int64_t q = 0; q < n; ++q) bad |= int(!(v[q] > 0.f)) | int(!(v[q] <= top));
  return bad == 0;
}

// The first bad value of v[0, n), whose first is the model's value p0 (C order over the whole):
// found over the threads (the lowest index any of them saw), named with its (z, y, x). A model
// without one costs only the vectorized pass.
void check_values(const Model& m, const float* v, int64_t n, int64_t p0) {
  if (all_finite_positive(v, n)) return;
  int64_t first = n;
#pragma omp parallel for reduction(min : first)
  for (int64_t q = 0; q < n; ++q)
    if (!std::isfinite(v[q]) || v[q] <= 0.f) first = std::min(first, q);
  if (first == n) return;
  bad_value(m, p0 + first, v[first]);
}

// A model made plane by plane, `make(k, out)` writing plane k, keeping the planes of `keep`: every
// plane passes through one plane's buffer or its place in v, in order, so the whole's extremes,
// first bad value and checksum are those of the whole model.
template <class Make>
Model by_planes(int dim, int64_t nz, int64_t ny, int64_t nx, double h, const Model::Window& keep, Make make) {
  Model m = blank(dim, nz, ny, nx, h, 0.f, 0);
  if (keep.k0 < 0 || keep.k1 > nz || keep.k0 >= keep.k1)
    bad("model planes [" + std::to_string(keep.k0) + ", " + std::to_string(keep.k1) +
        ") are not inside the model's " + std::to_string(nz));
  const int64_t plane = ny * nx;
  ensure_host_memory((keep.k1 - keep.k0) * plane * int64_t(sizeof(float)), "the velocity model's planes");
  m.z0 = keep.k0;
  m.v.resize(size_t((keep.k1 - keep.k0) * plane));
  std::vector<float> spare(static_cast<size_t>(plane));
  Model::Summary w{std::numeric_limits<float>::max(), std::numeric_limits<float>::lowest(), 0};
  for (int64_t k = 0; k < nz; ++k) {
    float* out = k >= keep.k0 && k < keep.k1 ? m.v.data() + (k - keep.k0) * plane : spare.data();
    make(k, out);
    check_values(m, out, plane, k * plane);
    const auto [lo, hi] = extremes(out, plane);
    w.vmin = std::min(w.vmin, lo);
    w.vmax = std::max(w.vmax, hi);
    w.crc = crc32c(out, size_t(plane) * sizeof(float), w.crc);
  }
  m.whole = w;
  return m;
}

}  // namespace

const float* Model::plane(int64_t k) const {
  if (on_gpu())
    throw std::logic_error("the model's values are on GPU " + std::to_string(gpu.device) +
                           ": the host does not read them");
  if (k < z0 || k >= z0 + planes())
    throw std::logic_error("model plane " + std::to_string(k) + " is not among the planes this rank holds, " +
                           std::to_string(z0) + ".." + std::to_string(z0 + planes() - 1));
  return values().data() + (k - z0) * ny * nx;
}

namespace {

// A model on a GPU summarised there, or refused for its first bad value.
Model::Summary summary_on_gpu(const Model& m) {
#if FDSTENCIL_HAVE_CUDA
  const cuda::wave::ModelSummary s = cuda::wave::summarise_model(m.gpu.v, m.points(), m.gpu.device);
  if (s.first_bad >= 0) bad_value(m, s.first_bad, s.bad_value);
  return {s.vmin, s.vmax, s.crc};
#else
  (void)m;
  throw Error(ErrorKind::unsupported, "a model on a GPU needs the CUDA backend, which this build lacks");
#endif
}

}  // namespace

std::pair<float, float> Model::extremes() const {
  if (whole) return {whole->vmin, whole->vmax};
  if (on_gpu()) {
    const Summary s = summary_on_gpu(*this);
    return {s.vmin, s.vmax};
  }
  return wave::extremes(values().data(), int64_t(values().size()));
}
float Model::vmin() const { return extremes().first; }
float Model::vmax() const { return extremes().second; }
uint32_t Model::checksum() const {
  if (whole) return whole->crc;
  if (on_gpu()) return summary_on_gpu(*this).crc;
  return crc32c(values().data(), values().size() * sizeof(float));
}

namespace {

// The shape, the spacing, and the values' count against them.
void check_layout(const Model& m) {
  check_shape(m.dim, m.nz, m.ny, m.nx);
  if (!(std::isfinite(m.h) && m.h > 0))
    bad("the grid spacing must be finite and positive, got " + std::to_string(m.h));
  if (m.on_gpu() && (!m.v.empty() || !m.borrowed.empty() || m.z0 != 0 || m.gpu.device < 0))
    bad("a model on a GPU holds all its planes there, on a GPU it names, and no values on the host");
  const int64_t n = m.on_gpu() ? m.points() : int64_t(m.values().size());
  if (!m.whole && n != m.points())
    bad("the model has " + std::to_string(n) + " velocities for " + std::to_string(m.points()) + " points");
  if (m.whole && !m.on_gpu() &&
      (n % (m.ny * m.nx) != 0 || m.planes() < 1 || m.z0 < 0 || m.z0 + m.planes() > m.nz))
    bad("the model holds " + std::to_string(n) + " velocities from plane " + std::to_string(m.z0) +
        ", not whole planes inside its " + std::to_string(m.nz));
}

// Values a thread summarises at a time in Model::summarise: 4 MiB of float, many runs per thread
// for balance, each run's checksum one combine.
constexpr int64_t kSummaryRun = int64_t(1) << 20;

}  // namespace

void Model::validate() const {
  check_layout(*this);
  // A model on a GPU with its summary was checked when summarised (its values must not change).
  if (on_gpu()) {
    if (!whole) summary_on_gpu(*this);
    return;
  }
  check_values(*this, values().data(), int64_t(values().size()), z0 * ny * nx);
}

void Model::summarise() {
  whole.reset();  // the layout of a whole model, which the summary is of
  check_layout(*this);
  if (on_gpu()) {
    whole = summary_on_gpu(*this);
    return;
  }
  const float* p = values().data();
  const int64_t n = int64_t(values().size()), runs = (n + kSummaryRun - 1) / kSummaryRun;
  std::vector<uint32_t> crc(size_t(runs), 0);
  constexpr float top = std::numeric_limits<float>::max();
  float lo = n == 0 ? 0.f : p[0], hi = lo;
  int any_bad = 0;
#pragma omp parallel for schedule(static) reduction(min : lo) reduction(max : hi) reduction(| : any_bad)
  for (int64_t r = 0; r < runs; ++r) {
    const int64_t first = r * kSummaryRun, count = std::min(kSummaryRun, n - first);
    const float* q = p + first;
#pragma omp simd reduction(min : lo) reduction(max : hi) reduction(| : any_bad)
    for (int64_t i = 0; i < count; ++i) {
      lo = std::min(lo, q[i]);
      hi = std::max(hi, q[i]);
      any_bad |= int(!(q[i] > 0.f)) | int(!(q[i] <= top));
    }
    crc[size_t(r)] = crc32c(q, size_t(count) * sizeof(float));
  }
  if (any_bad) check_values(*this, p, n, 0);  // names the first bad value
  uint32_t all = 0;
  for (int64_t r = 0; r < runs; ++r)
    all = r == 0 ? crc[0]
                 : crc32c_combine(all, crc[size_t(r)],
                                  uint64_t(std::min(kSummaryRun, n - r * kSummaryRun)) * sizeof(float));
  whole = Summary{lo, hi, all};
}

Model Model::constant(int dim, int64_t nz, int64_t ny, int64_t nx, double h, float velocity,
                      const Window* keep) {
  if (!std::isfinite(velocity) || velocity <= 0.f)
    bad("the constant velocity must be finite and positive, got " + std::to_string(velocity));
  if (keep)
    return by_planes(dim, nz, ny, nx, h, *keep,
                     [&](int64_t, float* out) { std::fill(out, out + ny * nx, velocity); });
  return blank(dim, nz, ny, nx, h, velocity);
}

Model Model::layered(int dim, int64_t nz, int64_t ny, int64_t nx, double h,
                     const std::vector<std::pair<double, float>>& layers, const Window* keep) {
  if (layers.empty()) bad("a layered model needs at least one layer");
  if (layers.front().first != 0.0)
    bad("the first layer must start at depth 0, got " + std::to_string(layers.front().first));
  for (size_t l = 0; l < layers.size(); ++l) {
    if (!std::isfinite(layers[l].second) || layers[l].second <= 0.f)
      bad("layer " + std::to_string(l) + " has velocity " + std::to_string(layers[l].second) +
          ": velocities must be finite and positive");
    if (l > 0 && !(layers[l].first > layers[l - 1].first))
      bad("layer depths must increase: layer " + std::to_string(l) + " starts at " +
          std::to_string(layers[l].first) + " m, not below " + std::to_string(layers[l - 1].first) + " m");
  }
  const auto velocity_at = [&](int64_t k) {
    const double z = double(k) * h;
    float vk = layers.front().second;
    for (const auto& [top, vel] : layers)
      if (z >= top) vk = vel;
    return vk;
  };
  if (keep)
    return by_planes(dim, nz, ny, nx, h, *keep,
                     [&](int64_t k, float* out) { std::fill(out, out + ny * nx, velocity_at(k)); });
  Model m = blank(dim, nz, ny, nx, h);
  for (int64_t k = 0; k < nz; ++k)
    std::fill(m.v.begin() + k * ny * nx, m.v.begin() + (k + 1) * ny * nx, velocity_at(k));
  return m;
}

namespace {

// A model file as NumPy may write it but not as it is streamed by planes (float64, big-endian or
// Fortran order): read whole, converted to little-endian float32 in C order. A run split across
// ranks then holds the whole model on each rank while it reads.
std::vector<float> converted_model(const std::filesystem::path& path, const NpyHeader& a) {
  // The file's bytes, their converted copy (a transposed one for Fortran order), and the floats.
  ensure_host_memory(2 * a.data_bytes + a.data_bytes / (a.dtype == DType::f32 ? 1 : 2),
                     "the velocity model's conversion");
  const NpyArray whole = read_npy(path);
  std::vector<float> v(whole.bytes.size() / (whole.dtype == DType::f32 ? 4 : 8));
  if (whole.dtype == DType::f32) {
    std::memcpy(v.data(), whole.bytes.data(), whole.bytes.size());
  } else {
    for (size_t i = 0; i < v.size(); ++i) {
      double x;
      std::memcpy(&x, whole.bytes.data() + 8 * i, 8);
      v[i] = float(x);
    }
  }
  return v;
}

}  // namespace

Model Model::from_npy(const std::filesystem::path& path, double h, const Window* keep) {
  const NpyHeader a = read_npy_header(path);
  if (a.shape.size() != 2 && a.shape.size() != 3)
    throw Error(ErrorKind::io, path.string() + ": a velocity model has shape (nz, ny, nx) or (nz, nx), got " +
                                   std::to_string(a.shape.size()) + " dimensions");
  const int dim = int(a.shape.size());
  const int64_t nz = a.shape[0], ny = dim == 3 ? a.shape[1] : 1, nx = a.shape.back();
  const bool streamed = a.dtype == DType::f32 && !a.big_endian && !a.fortran_order;
  std::vector<float> whole = streamed ? std::vector<float>() : converted_model(path, a);
  const NpyFile f = streamed ? open_npy_data(path, a) : NpyFile(nullptr, &std::fclose);
  int64_t taken = 0;  // of `whole`
  const auto read = [&](float* out, int64_t n) {
    if (!streamed) {
      std::copy_n(whole.begin() + taken, n, out);
      taken += n;
    } else if (std::fread(out, sizeof(float), size_t(n), f.get()) != size_t(n)) {
      throw Error(ErrorKind::io, path.string() + ": truncated, or a read error, in its data");
    }
  };
  try {
    if (keep) return by_planes(dim, nz, ny, nx, h, *keep, [&](int64_t, float* out) { read(out, ny * nx); });
    Model m = blank(dim, nz, ny, nx, h);
    read(m.v.data(), int64_t(m.v.size()));
    m.validate();
    return m;
  } catch (const Error& e) {
    // The model's own refusals name the file; memory and the file's errors pass as they are.
    if (e.kind() != ErrorKind::invalid_argument) throw;
    throw Error(ErrorKind::invalid_argument, path.string() + ": " + e.what());
  }
}

}  // namespace fdstencil::wave
