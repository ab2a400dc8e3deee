// The single-axis families of seismic part 3 as registry entries: d2x vectorized (float2 and
// float4 register windows), d2y vectorized and vectorized with shared memory, d2z sliding window
// (scalar and vectorized).
#include "cuda/seismic/launch.hpp"
#include "cuda/seismic/variants.hpp"
#include "cuda/seismic/x_window.cuh"
#include "cuda/seismic/y_smem.cuh"
#include "cuda/seismic/y_vec.cuh"
#include "cuda/seismic/z_window.cuh"

namespace fdstencil::cuda::seismic {

namespace {

// ---- d2x: register window ----------------------------------------------------------------------

template <class T, int V>
std::vector<Launch> plan_x(const Problem& p, const Params& params) {
  Block b;
  parse_block(params, b);
  Launch l;
  l.kernel = pick_radius(p.stencil.radius, [](auto r) -> const void* {
    if constexpr (V * sizeof(T) <= 16)
      return reinterpret_cast<const void*>(x_window<T, decltype(r)::value, V>);
    return nullptr;
  });
  l.block = dim3(b.x, b.y, b.z);
  l.grid = pointwise_grid(p, b, V);
  return {l};
}

template <int V>
std::string x_cannot_run(const Problem& p, const Params& params) {
  Block b;
  std::string why = common_cannot_run(p, params, false, V, b);
  if (!why.empty()) return why;
  if (V * int64_t(dtype_bytes(p.dtype())) > 16)
    return "vec" + std::to_string(V) + " of " + std::string(dtype_name(p.dtype())) + " would be a " +
           std::to_string(V * dtype_bytes(p.dtype())) + "-byte access; the widest is 16 bytes (use vec2)";
  return grid_cannot_run(pointwise_grid(p, b, V));
}

// ---- d2y: straight from global memory, and through a shared-memory tile ------------------------

template <class T>
std::vector<Launch> plan_y_vec(const Problem& p, const Params& params) {
  constexpr int V = kVec16<T>;
  Block b;
  parse_block(params, b);
  Launch l;
  l.kernel = pick_radius(p.stencil.radius, [](auto r) {
    return reinterpret_cast<const void*>(y_vec<T, decltype(r)::value, V>);
  });
  l.block = dim3(b.x, b.y, b.z);
  l.grid = pointwise_grid(p, b, V);
  return {l};
}

std::string y_vec_cannot_run(const Problem& p, const Params& params) {
  Block b;
  std::string why = common_cannot_run(p, params, false, int(16 / dtype_bytes(p.dtype())), b);
  return why.empty() ? grid_cannot_run(pointwise_grid(p, b, int(16 / dtype_bytes(p.dtype())))) : why;
}

template <class T>
std::vector<Launch> plan_y_smem(const Problem& p, const Params& params) {
  constexpr int V = kVec16<T>;
  Block b;
  parse_block(params, b);
  Launch l;
  l.kernel = pick_radius(p.stencil.radius, [](auto r) {
    return reinterpret_cast<const void*>(y_smem<T, decltype(r)::value, V>);
  });
  l.block = dim3(b.x, b.y, 1);
  l.grid = plane_grid(p, b, V);
  l.smem = y_smem_bytes(b.x, b.y, p.stencil.radius);
  return {l};
}

std::string y_smem_cannot_run(const Problem& p, const Params& params) {
  Block b;
  std::string why = common_cannot_run(p, params, true, int(16 / dtype_bytes(p.dtype())), b);
  if (!why.empty()) return why;
  if (y_smem_bytes(b.x, b.y, p.stencil.radius) > kMaxSmemPerBlock)
    return "tile of " + std::to_string(y_smem_bytes(b.x, b.y, p.stencil.radius)) +
           " bytes exceeds 227 KB of shared memory";
  return grid_cannot_run(plane_grid(p, b, 1));
}

// ---- d2z: sliding window -------------------------------------------------------------------------
// The vectorized window takes `vec_bytes` (4, 8 or 16): narrower vectors halve the queue's
// registers, which is what limits the occupancy at large R.

std::string parse_vec_bytes(const Problem& p, const Params& params, int& vec) {
  const int bytes = params.value("vec_bytes", 16);
  const int64_t e = dtype_bytes(p.dtype());
  if (bytes != 4 && bytes != 8 && bytes != 16)
    return "vec_bytes " + std::to_string(bytes) + " must be 4, 8 or 16";
  if (bytes < e)
    return "vec_bytes " + std::to_string(bytes) + " is narrower than one " +
           std::string(dtype_name(p.dtype()));
  vec = int(bytes / e);
  return "";
}

template <class T, bool Vectorized>
std::vector<Launch> plan_z(const Problem& p, const Params& params) {
  int vec = 1;
  if (Vectorized) parse_vec_bytes(p, params, vec);
  Block b;
  parse_block(params, b);
  Launch l;
  parse_nw(params, l.nw);
  l.kernel = pick_radius(p.stencil.radius, [vec](auto r) -> const void* {
    constexpr int R = decltype(r)::value;
    if (vec == 1) return reinterpret_cast<const void*>(z_window<T, R, 1>);
    if (vec == 2) return reinterpret_cast<const void*>(z_window<T, R, 2>);
    if constexpr (sizeof(T) == 4) return reinterpret_cast<const void*>(z_window<T, R, 4>);
    return nullptr;
  });
  l.block = dim3(b.x, b.y, 1);
  l.grid = march_grid(p, b, vec, l.nw);
  if (Vectorized && params.value("order", std::string("xyz")) == "zxy") {
    l.z_first = true;
    l.grid = dim3(l.grid.z, l.grid.x, l.grid.y);
  }
  return {l};
}

template <bool Vectorized>
std::string z_cannot_run(const Problem& p, const Params& params) {
  int vec = 1;
  if (Vectorized) {
    const std::string why = parse_vec_bytes(p, params, vec);
    if (!why.empty()) return why;
  }
  Block b;
  std::string why = common_cannot_run(p, params, true, vec, b, kMarchThreads);
  if (!why.empty()) return why;
  int nw = 0;
  why = parse_nw(params, nw);
  if (!why.empty()) return why;
  const dim3 g = march_grid(p, b, vec, nw);
  if (!Vectorized) return grid_cannot_run(g);
  const std::string order = params.value("order", std::string("xyz"));
  if (order == "xyz") return grid_cannot_run(g);
  if (order != "zxy") return "order '" + order + "' must be xyz (z chunks last) or zxy (z chunks first)";
  return grid_cannot_run(dim3(g.z, g.x, g.y));
}

}  // namespace

std::vector<Variant> axis_variants() {
  // Defaults from the tuning sweeps on the H100 at 512^3 (bench/results/, docs/seismic.md).
  const Params pointwise = {{"block", "64x4x1"}};
  // The tuner's spaces hold every shape the seis-tune* sweeps measured within a few points of
  // the best at 512^3 or 1024^3, and the tuned values of seis-best1024 (docs/seismic.md).
  const Params x_space = {{"block", {"64x4x1", "128x2x1", "32x8x1", "256x1x1", "128x1x1"}}};
  const Params y_space = {{"block", {"32x8x1", "32x16x1", "16x16x1", "64x4x1", "32x4x1"}}};
  const Params z_space = {{"block", {"32x4x1", "64x2x1", "32x8x1", "64x4x1", "16x8x1"}},
                          {"nw", {4, 8, 16, 32, 64}},
                          {"vec_bytes", {16, 8}},
                          {"order", {"xyz", "zxy"}}};
  return {
      make_variant(Op::d2x, "vec2", "seismic part 3: float2 / double2 loads into an x register window",
                   pointwise, x_space, x_cannot_run<2>, plan_x<float, 2>, plan_x<double, 2>),
      make_variant(Op::d2x, "vec4", "seismic part 3: float4 loads into an x register window (float only)",
                   pointwise, x_space, x_cannot_run<4>, plan_x<float, 4>, plan_x<double, 4>),
      make_variant(Op::d2y, "vec", "seismic part 3: 16-byte vectors, the 2R+1 y taps straight from global",
                   {{"block", "32x8x1"}}, y_space, y_vec_cannot_run, plan_y_vec<float>, plan_y_vec<double>),
      make_variant(Op::d2y, "vec_smem",
                   "seismic part 3: 16-byte vectors, the y taps from a shared-memory tile",
                   {{"block", "16x16x1"}}, {{"block", {"16x16x1", "32x8x1", "32x16x1", "64x4x1"}}},
                   y_smem_cannot_run, plan_y_smem<float>, plan_y_smem<double>),
      make_variant(Op::d2z, "window", "seismic part 2: sliding window along z, a register queue of 2R+1",
                   {{"block", "32x4x1"}, {"nw", 16}},
                   {{"block", {"32x4x1", "64x2x1", "32x8x1", "64x4x1"}}, {"nw", {8, 16, 32, 64}}},
                   z_cannot_run<false>, plan_z<float, false>, plan_z<double, false>),
      make_variant(Op::d2z, "window_vec",
                   "seismic part 3: the z sliding window with vectors of vec_bytes (16: float4 / double2)",
                   {{"block", "32x4x1"}, {"nw", 8}, {"vec_bytes", 16}, {"order", "xyz"}}, z_space,
                   z_cannot_run<true>, plan_z<float, true>, plan_z<double, true>),
  };
}

}  // namespace fdstencil::cuda::seismic
