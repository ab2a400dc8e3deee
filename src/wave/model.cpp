// The velocity model: built from a constant, layers or a .npy file, and checked before anything
// is allocated for it.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "fdstencil/error.hpp"
#include "fdstencil/field.hpp"
#include "fdstencil/npy.hpp"
#include "fdstencil/wave.hpp"

namespace fdstencil::wave {

namespace {

[[noreturn]] void bad(const std::string& what) { throw Error(ErrorKind::invalid_argument, what); }

void check_shape(int dim, int64_t nz, int64_t ny, int64_t nx) {
  if (dim != 2 && dim != 3) bad("a model is 2D or 3D, not " + std::to_string(dim) + "D");
  if (nz < 1 || nx < 1 || ny < 1) bad("model extents must be at least 1, got (nz, ny, nx) = (" + std::to_string(nz) +
                                      ", " + std::to_string(ny) + ", " + std::to_string(nx) + ")");
  if (dim == 2 && ny != 1) bad("a 2D model has ny = 1, got " + std::to_string(ny));
  // 2^31 points per axis: the step kernels index one axis in 32 bits.
  if (nz >= (int64_t(1) << 31) || ny >= (int64_t(1) << 31) || nx >= (int64_t(1) << 31))
    bad("a model extent of 2^31 points or more");
  const double points = double(nz) * double(ny) * double(nx);
  if (points * sizeof(float) > 9e18) throw Error(ErrorKind::out_of_memory, "the model's size overflows 64 bits");
}

Model blank(int dim, int64_t nz, int64_t ny, int64_t nx, double h, float fill = 0.f) {
  check_shape(dim, nz, ny, nx);
  if (!(std::isfinite(h) && h > 0)) bad("the grid spacing must be finite and positive, got " + std::to_string(h));
  Model m;
  m.dim = dim;
  m.nz = nz;
  m.ny = ny;
  m.nx = nx;
  m.h = h;
  ensure_host_memory(m.points() * int64_t(sizeof(float)), "the velocity model");
  m.v.assign(size_t(m.points()), fill);
  return m;
}

}  // namespace

// The smallest and largest velocity in one pass over the OpenMP threads: a model of 10^10 points
// is 40 GB, and a run asks for its extremes several times before it starts.
namespace {

std::pair<float, float> extremes(const std::vector<float>& v) {
  float lo = v.empty() ? 0.f : v[0], hi = lo;
  const int64_t n = int64_t(v.size());
#pragma omp parallel for reduction(min : lo) reduction(max : hi)
  for (int64_t p = 0; p < n; ++p) {
    lo = std::min(lo, v[size_t(p)]);
    hi = std::max(hi, v[size_t(p)]);
  }
  return {lo, hi};
}

}  // namespace

float Model::vmin() const { return extremes(v).first; }
float Model::vmax() const { return extremes(v).second; }

void Model::validate() const {
  check_shape(dim, nz, ny, nx);
  if (!(std::isfinite(h) && h > 0)) bad("the grid spacing must be finite and positive, got " + std::to_string(h));
  if (int64_t(v.size()) != points())
    bad("the model has " + std::to_string(v.size()) + " velocities for " + std::to_string(points()) + " points");
  // The first bad value, found over the threads (the lowest index any of them saw).
  const int64_t n = int64_t(v.size());
  int64_t first = n;
#pragma omp parallel for reduction(min : first)
  for (int64_t q = 0; q < n; ++q)
    if (!std::isfinite(v[size_t(q)]) || v[size_t(q)] <= 0.f) first = std::min(first, q);
  for (size_t p = size_t(first); p < v.size(); ++p)
    if (!std::isfinite(v[p]) || v[p] <= 0.f) {
      const int64_t i = int64_t(p) % nx, j = int64_t(p) / nx % ny, k = int64_t(p) / nx / ny;
      const std::string at = dim == 3 ? "(z, y, x) = (" + std::to_string(k) + ", " + std::to_string(j) + ", " +
                                            std::to_string(i) + ")"
                                      : "(z, x) = (" + std::to_string(k) + ", " + std::to_string(i) + ")";
      bad("velocity " + std::to_string(v[p]) + " at index " + at +
          ": velocities must be finite and positive (m/s)");
    }
}

Model Model::constant(int dim, int64_t nz, int64_t ny, int64_t nx, double h, float velocity) {
  if (!std::isfinite(velocity) || velocity <= 0.f)
    bad("the constant velocity must be finite and positive, got " + std::to_string(velocity));
  return blank(dim, nz, ny, nx, h, velocity);
}

Model Model::layered(int dim, int64_t nz, int64_t ny, int64_t nx, double h,
                     const std::vector<std::pair<double, float>>& layers) {
  if (layers.empty()) bad("a layered model needs at least one layer");
  if (layers.front().first != 0.0) bad("the first layer must start at depth 0, got " + std::to_string(layers.front().first));
  for (size_t l = 0; l < layers.size(); ++l) {
    if (!std::isfinite(layers[l].second) || layers[l].second <= 0.f)
      bad("layer " + std::to_string(l) + " has velocity " + std::to_string(layers[l].second) +
          ": velocities must be finite and positive");
    if (l > 0 && !(layers[l].first > layers[l - 1].first))
      bad("layer depths must increase: layer " + std::to_string(l) + " starts at " + std::to_string(layers[l].first) +
          " m, not below " + std::to_string(layers[l - 1].first) + " m");
  }
  Model m = blank(dim, nz, ny, nx, h);
  for (int64_t k = 0; k < nz; ++k) {
    const double z = double(k) * h;
    float vk = layers.front().second;
    for (const auto& [top, vel] : layers)
      if (z >= top) vk = vel;
    std::fill(m.v.begin() + k * ny * nx, m.v.begin() + (k + 1) * ny * nx, vk);
  }
  return m;
}

Model Model::from_npy(const std::filesystem::path& path, double h) {
  const NpyArray a = read_npy(path);
  if (a.dtype != DType::f32)
    throw Error(ErrorKind::io, path.string() + ": a velocity model must be float32 (m/s)");
  if (a.shape.size() != 2 && a.shape.size() != 3)
    throw Error(ErrorKind::io, path.string() + ": a velocity model has shape (nz, ny, nx) or (nz, nx), got " +
                                   std::to_string(a.shape.size()) + " dimensions");
  const int dim = int(a.shape.size());
  const int64_t nz = a.shape[0], ny = dim == 3 ? a.shape[1] : 1, nx = a.shape.back();
  Model m = blank(dim, nz, ny, nx, h);
  std::memcpy(m.v.data(), a.bytes.data(), m.v.size() * sizeof(float));
  try {
    m.validate();
  } catch (const Error& e) {
    throw Error(ErrorKind::invalid_argument, path.string() + ": " + e.what());
  }
  return m;
}

}  // namespace fdstencil::wave
