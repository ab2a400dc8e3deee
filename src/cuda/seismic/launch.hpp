// How a seismic variant becomes a runner: a plan (kernel instance, grid, block, shared memory,
// planes per block) computed from the problem and the parameters, and one runner that fills the
// argument block and launches any plan. The checks every family shares live here too, so each
// family's cannot_run names its own limits only.
#pragma once

#include <cuda_runtime.h>

#include <string>
#include <utility>
#include <vector>

#include "bench/variant.hpp"
#include "cuda/common/block.hpp"
#include "cuda/common/runner.hpp"
#include "cuda/seismic/common.cuh"

namespace fdstencil::cuda::seismic {

struct Launch {
  const void* kernel = nullptr;
  dim3 grid, block;
  size_t smem = 0;
  int nw = 0;  // planes per block along z, 0 when the kernel does not march
  bool z_first = false;  // see Args::z_first
};

// One launch, or the passes of a multi-pass pipeline run in order on the same fields.
using Planner = std::vector<Launch> (*)(const bench::Problem&, const bench::Params&);

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
inline dim3 pointwise_grid(const bench::Problem& p, const Block& b, int vec) {
  return dim3(ceil_div(p.interior.nx, int64_t(b.x) * vec), ceil_div(p.interior.ny, b.y), ceil_div(p.interior.nz, b.z));
}
inline dim3 plane_grid(const bench::Problem& p, const Block& b, int vec) {
  return dim3(ceil_div(p.interior.nx, int64_t(b.x) * vec), ceil_div(p.interior.ny, b.y), unsigned(p.interior.nz));
}
inline dim3 march_grid(const bench::Problem& p, const Block& b, int vec, int nw) {
  return dim3(ceil_div(p.interior.nx, int64_t(b.x) * vec), ceil_div(p.interior.ny, b.y), ceil_div(p.interior.nz, nw));
}

// The checks of every seismic family: a valid block ("BXxBYx1" for the tiled kernels), 16-byte
// vectors need the aligned layout, grid limits, and extents that fit the kernels' int indices.
inline std::string common_cannot_run(const bench::Problem& p, const bench::Params& params, bool tiled, int vec,
                                     Block& b, int max_threads = 1024) {
  std::string why = parse_block(params, b);
  if (!why.empty()) return why;
  if (b.threads() > max_threads)
    return "block " + params.value("block", std::string()) + " has " + std::to_string(b.threads()) +
           " threads; this kernel's z queue allows at most " + std::to_string(max_threads) + " (registers)";
  if (tiled && b.z != 1) return "block " + params.value("block", std::string()) + ": this kernel tiles the xy-plane, so BZ must be 1";
  if (vec > 1 && p.align_bytes < 16)
    return "needs the aligned layout (--align 128): its " + std::to_string(vec) +
           "-wide vector accesses need every x-line 16-byte aligned";
  if (p.interior.nx > (1 << 30) || p.interior.ny > (1 << 30) || p.interior.nz > (1 << 30))
    return "extents above 2^30";
  return "";
}

inline std::string parse_nw(const bench::Params& params, int& nw) {
  nw = params.value("nw", 0);
  if (nw < 1) return "nw " + std::to_string(nw) + " must be at least 1 (planes per block along z)";
  return "";
}

inline std::string grid_cannot_run(dim3 grid) {
  if (grid.y > 65535 || grid.z > 65535) return "grid dimension above 65535 (use a larger block or nw)";
  return "";
}

template <class T>
class SeismicRunner final : public CudaRunner<T> {
 public:
  SeismicRunner(const bench::Problem& p, const bench::Params& params, Planner plan) : CudaRunner<T>(p) {
    launches_ = plan(p, params);
    const StencilWeights sw = stencil_weights(p.stencil);
    Args<T> a{};
    a.u = this->in_.origin();
    a.f = this->out_.origin();
    a.nx = int(p.interior.nx);
    a.ny = int(p.interior.ny);
    a.nz = int(p.interior.nz);
    a.line = this->layout_.line();
    a.slice = this->layout_.slice();
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
      args_.push_back(a);
      if (l.smem > 48 * 1024)  // above the default limit a kernel must opt in
        FDS_CUDA_CHECK(cudaFuncSetAttribute(l.kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(l.smem)));
      if (l.nw > 0) this->extra_["nw_used"] = l.nw;
      grids.push_back(std::to_string(l.grid.x) + "x" + std::to_string(l.grid.y) + "x" + std::to_string(l.grid.z));
    }
    this->extra_["grid"] = launches_.size() == 1 ? grids[0] : grids;
    // The resource report names one kernel: the only one, or the last pass of a pipeline.
    const Launch& l = launches_.back();
    this->describe_kernel(l.kernel, int(l.block.x * l.block.y * l.block.z), l.smem);
  }

 protected:
  void launch() override {
    for (size_t i = 0; i < launches_.size(); ++i) {
      const Launch& l = launches_[i];
      void* args[] = {&args_[i]};
      FDS_CUDA_CHECK(cudaLaunchKernel(l.kernel, l.grid, l.block, args, l.smem, 0));
      FDS_CUDA_CHECK_LAUNCH();
    }
  }

 private:
  std::vector<Launch> launches_;
  std::vector<Args<T>> args_;
};

// A registry entry whose runners launch the plans of `plan_f` (float) and `plan_d` (double).
inline bench::Variant make_variant(Op op, std::string name, std::string summary, bench::Params defaults,
                                   std::function<std::string(const bench::Problem&, const bench::Params&)> cannot_run,
                                   Planner plan_f, Planner plan_d) {
  bench::Variant v;
  v.op = op;
  v.name = std::move(name);
  v.backend = "cuda";
  v.summary = std::move(summary);
  v.defaults = std::move(defaults);
  v.cannot_run = std::move(cannot_run);
  v.make_float = [plan_f](const bench::Problem& p, const bench::Params& q) -> std::unique_ptr<bench::Runner<float>> {
    return std::make_unique<SeismicRunner<float>>(p, q, plan_f);
  };
  v.make_double = [plan_d](const bench::Problem& p, const bench::Params& q) -> std::unique_ptr<bench::Runner<double>> {
    return std::make_unique<SeismicRunner<double>>(p, q, plan_d);
  };
  return v;
}

}  // namespace fdstencil::cuda::seismic
