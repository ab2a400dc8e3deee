// How a seismic variant becomes a launcher: a list of launches (kernel instance, grid, block,
// shared memory, planes per block) computed from the problem and the parameters, and one
// launcher that fills the argument block and enqueues any such list. The checks every family
// shares live here too, so each family's cannot_run names its own limits only.
#pragma once

#include <cuda_runtime.h>

#include <string>
#include <utility>
#include <vector>

#include "core/variant.hpp"
#include "cuda/common/block.hpp"
#include "cuda/common/check.hpp"
#include "cuda/common/resources.hpp"
#include "cuda/common/tensor_map.hpp"
#include "cuda/seismic/common.cuh"

namespace fdstencil::cuda::seismic {

struct Launch {
  const void* kernel = nullptr;
  dim3 grid, block;
  size_t smem = 0;
  int nw = 0;            // planes per block along z, 0 when the kernel does not march
  bool z_first = false;  // see Args::z_first
  int ahead = 0;         // see Args::ahead
  // A launch over interior rows y_begin .. y_begin + y_count - 1 only (0: every row): the
  // kernel sees a field of y_count lines starting there, whose y halo is its neighbours' rows.
  int y_begin = 0, y_count = 0;
  // Kernels whose tiles come by the tensor memory accelerator (xyz_tma.cuh) take a tensor map
  // after the argument block, encoded at each run for the launch's field: from point (-pad, -R,
  // -R), boxes of box_x by box_y by 1 elements. box_x 0: no map.
  struct TensorBox {
    int pad = 0;
    unsigned box_x = 0, box_y = 0;
  } tensor_box;
};

// One launch, or the passes of a multi-pass pipeline run in order on the same fields.
using Planner = std::vector<Launch> (*)(const Problem&, const Params&);

// The kernel instance for radius R: f(std::integral_constant<int, R>) for R = 1..kMaxRadius.
template <class F, int... Rs>
const void* pick_radius_impl(int radius, F&& f, std::integer_sequence<int, Rs...>) {
  const void* k = nullptr;
  ((radius == Rs + 1 ? (void)(k = f(std::integral_constant<int, Rs + 1>{})) : (void)0), ...);
  return k;
}
template <class F>
const void* pick_radius(int radius, F&& f) {
  return pick_radius_impl(radius, std::forward<F>(f), std::make_integer_sequence<int, kMaxRadius>{});
}

// The largest dynamic shared memory a block may opt into on sm_90 (227 KB).
inline constexpr size_t kMaxSmemPerBlock = 227 * 1024;

inline unsigned ceil_div(int64_t n, int64_t d) { return unsigned((n + d - 1) / d); }

// Grids of the three kinds of kernel, threads along x owning `vec` points each:
// pointwise (one point per thread in y and z), plane tiles (one plane per block in z), and z
// marches (nw planes per block).
inline dim3 pointwise_grid(const Problem& p, const Block& b, int vec) {
  const Extents n = p.interior();
  return dim3(ceil_div(n.nx, int64_t(b.x) * vec), ceil_div(n.ny, b.y), ceil_div(n.nz, b.z));
}
inline dim3 plane_grid(const Problem& p, const Block& b, int vec) {
  const Extents n = p.interior();
  return dim3(ceil_div(n.nx, int64_t(b.x) * vec), ceil_div(n.ny, b.y), unsigned(n.nz));
}
inline dim3 march_grid(const Problem& p, const Block& b, int vec, int nw) {
  const Extents n = p.interior();
  return dim3(ceil_div(n.nx, int64_t(b.x) * vec), ceil_div(n.ny, b.y), ceil_div(n.nz, nw));
}

// The checks of every seismic family: a valid block ("BXxBYx1" for the tiled kernels), vectors
// need x-lines aligned to their width, grid limits, and extents that fit the kernels' int indices.
inline std::string common_cannot_run(const Problem& p, const Params& params, bool tiled, int vec, Block& b,
                                     int max_threads = 1024) {
  std::string why = parse_block(params, b);
  if (!why.empty()) return why;
  if (b.threads() > max_threads)
    return "block " + params.value("block", std::string()) + " has " + std::to_string(b.threads()) +
           " threads; this kernel's z queue allows at most " + std::to_string(max_threads) + " (registers)";
  if (tiled && b.z != 1)
    return "block " + params.value("block", std::string()) +
           ": this kernel tiles the xy-plane, so BZ must be 1";
  const int64_t vec_bytes = vec * p.layout.elem_bytes();
  if (vec > 1 && p.layout.align_bytes() < vec_bytes)
    return "needs the aligned layout (--align 128, or a view whose pointer and strides are multiples of " +
           std::to_string(vec_bytes) + " bytes): its " + std::to_string(vec) +
           "-wide vector accesses need every x-line " + std::to_string(vec_bytes) +
           "-byte aligned, and this layout guarantees " + std::to_string(p.layout.align_bytes());
  const Extents n = p.interior();
  if (n.nx > (1 << 30) || n.ny > (1 << 30) || n.nz > (1 << 30)) return "extents above 2^30";
  return "";
}

inline std::string parse_nw(const Params& params, int& nw) {
  nw = params.value("nw", 0);
  if (nw < 1) return "nw " + std::to_string(nw) + " must be at least 1 (planes per block along z)";
  return "";
}

inline std::string grid_cannot_run(dim3 grid) {
  if (grid.y > 65535 || grid.z > 65535) return "grid dimension above 65535 (use a larger block or nw)";
  return "";
}

template <class T>
class SeismicLauncher final : public Launcher {
 public:
  SeismicLauncher(const Problem& p, const Params& params, Planner plan) {
    launches_ = plan(p, params);
    const StencilWeights sw = stencil_weights(p.stencil);
    const Extents n = p.interior();
    radius_ = p.stencil.radius;
    Args<T> a{};
    a.nx = int(n.nx);
    a.ny = int(n.ny);
    a.nz = int(n.nz);
    a.line = p.layout.line();
    a.slice = p.layout.slice();
    for (int r = 0; r < kMaxTaps; ++r) {
      a.wx[r] = T(sw.w[0][r]);
      a.wy[r] = T(sw.w[1][r]);
      a.wz[r] = T(sw.w[2][r]);
    }
    nlohmann::json grids = nlohmann::json::array();
    for (const Launch& l : launches_) {
      if (l.kernel == nullptr) throw Error(ErrorKind::invalid_argument, "seismic: no kernel instance");
      a.nw = l.nw;
      a.z_first = l.z_first;
      a.ahead = l.ahead;
      a.ny = l.y_count > 0 ? l.y_count : int(n.ny);
      args_.push_back(a);
      if (l.smem > 48 * 1024)  // above the default limit a kernel must opt in
        FDS_CUDA_CHECK(
            cudaFuncSetAttribute(l.kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(l.smem)));
      if (l.nw > 0) extra_["nw_used"] = l.nw;
      grids.push_back(std::to_string(l.grid.x) + "x" + std::to_string(l.grid.y) + "x" +
                      std::to_string(l.grid.z));
    }
    extra_["grid"] = launches_.size() == 1 ? grids[0] : grids;
  }

  void run(const void* in, void* out, Stream stream) const override {
    for (size_t i = 0; i < launches_.size(); ++i) {
      const Launch& l = launches_[i];
      Args<T> a = args_[i];
      a.u = static_cast<const T*>(in) + int64_t(l.y_begin) * a.line;
      a.f = static_cast<T*>(out) + int64_t(l.y_begin) * a.line;
      if (l.tensor_box.box_x > 0) {
        const CUtensorMap map = tensor_map(a, l.tensor_box);
        void* args[] = {&a, const_cast<CUtensorMap*>(&map)};
        FDS_CUDA_CHECK(cudaLaunchKernel(l.kernel, l.grid, l.block, args, l.smem, stream));
      } else {
        void* args[] = {&a};
        FDS_CUDA_CHECK(cudaLaunchKernel(l.kernel, l.grid, l.block, args, l.smem, stream));
      }
      FDS_CUDA_CHECK_LAUNCH();
    }
  }

  // The resource report names one kernel: the only one, or the last pass of a pipeline.
  nlohmann::json resources() const override {
    const Launch& l = launches_.back();
    nlohmann::json j = kernel_resources(l.kernel, int(l.block.x * l.block.y * l.block.z), l.smem);
    for (auto& [k, v] : extra_.items()) j[k] = v;
    return j;
  }

 private:
  // The map of the field `a` addresses (a launch's strip: a.ny rows, its neighbours' rows as the y
  // halo): x from -pad to nx + R - 1, y and z over the interior and its halo of R. The encoder is
  // host arithmetic, no device call, so encoding at every run costs microseconds.
  CUtensorMap tensor_map(const Args<T>& a, const Launch::TensorBox& tb) const {
    const int64_t R = radius_;
    TiledMap3d m;
    m.origin = a.u - tb.pad - R * a.line - R * a.slice;
    m.elem_bytes = int(sizeof(T));
    m.extent = {uint64_t(tb.pad + a.nx + R), uint64_t(a.ny + 2 * R), uint64_t(a.nz + 2 * R)};
    m.stride = {uint64_t(a.line) * sizeof(T), uint64_t(a.slice) * sizeof(T)};
    m.box = {tb.box_x, tb.box_y, 1};
    return encode_tiled_map(m);
  }

  int radius_ = 0;
  std::vector<Launch> launches_;
  std::vector<Args<T>> args_;  // per launch, with the field pointers left for run()
  nlohmann::json extra_ = nlohmann::json::object();
};

// A registry entry whose launchers enqueue the launches of `plan_f` (float) and `plan_d` (double).
inline Variant make_variant(Op op, std::string name, std::string summary, Params defaults, Params space,
                            std::function<std::string(const Problem&, const Params&)> cannot_run,
                            Planner plan_f, Planner plan_d) {
  Variant v;
  v.op = op;
  v.name = std::move(name);
  v.backend = "cuda";
  v.summary = std::move(summary);
  v.defaults = std::move(defaults);
  v.space = std::move(space);
  v.cannot_run = std::move(cannot_run);
  v.prepare = [plan_f, plan_d](const Problem& p, const Params& q) -> std::unique_ptr<Launcher> {
    if (p.dtype() == DType::f32) return std::make_unique<SeismicLauncher<float>>(p, q, plan_f);
    return std::make_unique<SeismicLauncher<double>>(p, q, plan_d);
  };
  return v;
}

}  // namespace fdstencil::cuda::seismic
