// The seismic kernels as registry entries: parameters, the shapes each cannot run, and the runner.
#include <cstdio>
#include <string>
#include <utility>

#include "cuda/common/block.hpp"
#include "cuda/common/runner.hpp"
#include "cuda/seismic/baseline.cuh"
#include "cuda/seismic/variants.hpp"
#include "fdstencil/error.hpp"

namespace fdstencil::cuda {

namespace {

using bench::Params;
using bench::Problem;
using namespace seismic;

template <class T, int R>
const void* baseline_for(Op op) {
  switch (op) {
    case Op::d2x: return reinterpret_cast<const void*>(baseline<T, R, true, false, false>);
    case Op::d2y: return reinterpret_cast<const void*>(baseline<T, R, false, true, false>);
    case Op::d2z: return reinterpret_cast<const void*>(baseline<T, R, false, false, true>);
    case Op::d2xy: return reinterpret_cast<const void*>(baseline<T, R, true, true, false>);
    case Op::d2xyz: return reinterpret_cast<const void*>(baseline<T, R, true, true, true>);
    case Op::laplacian7: break;
  }
  return nullptr;
}

template <class T, int... Rs>
const void* baseline_kernel(std::integer_sequence<int, Rs...>, Op op, int radius) {
  const void* k = nullptr;
  ((radius == Rs + 1 ? (k = baseline_for<T, Rs + 1>(op)) : nullptr), ...);
  return k;
}

template <class T>
class BaselineRunner final : public CudaRunner<T> {
 public:
  BaselineRunner(const Problem& p, const Params& params) : CudaRunner<T>(p) {
    const std::string why = parse_block(params, block_);
    if (!why.empty()) throw Error(ErrorKind::invalid_argument, why);
    const StencilWeights sw = stencil_weights(p.stencil);
    a_.u = this->in_.origin();
    a_.f = this->out_.origin();
    a_.nx = int(p.interior.nx);
    a_.ny = int(p.interior.ny);
    a_.nz = int(p.interior.nz);
    a_.line = this->layout_.line();
    a_.slice = this->layout_.slice();
    for (int r = 0; r < kMaxTaps; ++r) {
      a_.wx[r] = T(sw.w[0][r]);
      a_.wy[r] = T(sw.w[1][r]);
      a_.wz[r] = T(sw.w[2][r]);
    }
    kernel_ = baseline_kernel<T>(std::make_integer_sequence<int, kMaxRadius>{}, p.stencil.op, p.stencil.radius);
    if (kernel_ == nullptr) throw Error(ErrorKind::invalid_argument, "seismic baseline: no instance");
    this->describe_kernel(kernel_, block_.threads(), 0);
  }

 protected:
  void launch() override {
    const dim3 grid(unsigned((a_.nx + block_.x - 1) / block_.x), unsigned((a_.ny + block_.y - 1) / block_.y),
                    unsigned((a_.nz + block_.z - 1) / block_.z));
    void* args[] = {&a_};
    FDS_CUDA_CHECK(cudaLaunchKernel(kernel_, grid, dim3(block_.x, block_.y, block_.z), args, 0, 0));
    FDS_CUDA_CHECK_LAUNCH();
  }

 private:
  Block block_;
  const void* kernel_ = nullptr;
  Args<T> a_{};
};

std::string baseline_cannot_run(const Problem& p, const Params& params) {
  Block b;
  const std::string why = parse_block(params, b);
  if (!why.empty()) return why;
  if ((p.interior.ny + b.y - 1) / b.y > 65535 || (p.interior.nz + b.z - 1) / b.z > 65535)
    return "grid dimension above 65535 (use a taller block)";
  if (p.interior.nx > (1 << 30) || p.interior.ny > (1 << 30) || p.interior.nz > (1 << 30))
    return "extents above 2^30";
  return "";
}

bench::Variant baseline_variant(Op op) {
  bench::Variant v;
  v.op = op;
  v.name = "baseline";
  v.backend = "cuda";
  v.summary = "seismic part 1: a point per thread, every tap a global load";
  v.defaults = {{"block", "256x1x1"}};
  v.cannot_run = baseline_cannot_run;
  v.make_float = [](const Problem& p, const Params& q) -> std::unique_ptr<bench::Runner<float>> {
    return std::make_unique<BaselineRunner<float>>(p, q);
  };
  v.make_double = [](const Problem& p, const Params& q) -> std::unique_ptr<bench::Runner<double>> {
    return std::make_unique<BaselineRunner<double>>(p, q);
  };
  return v;
}

}  // namespace

std::vector<bench::Variant> seismic_variants() {
  std::vector<bench::Variant> vs;
  for (Op op : {Op::d2x, Op::d2y, Op::d2z, Op::d2xy, Op::d2xyz}) vs.push_back(baseline_variant(op));
  return vs;
}

}  // namespace fdstencil::cuda
