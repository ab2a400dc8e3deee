// The seismic baselines as registry entries, and the list of every seismic variant.
#include "cuda/seismic/baseline.cuh"
#include "cuda/seismic/launch.hpp"
#include "cuda/seismic/variants.hpp"

namespace fdstencil::cuda {

namespace {

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

dim3 baseline_grid(const Problem& p, const Block& b) {
  return dim3(ceil_div(p.interior().nx, b.x), ceil_div(p.interior().ny, b.y), ceil_div(p.interior().nz, b.z));
}

template <class T>
std::vector<Launch> plan_baseline(const Problem& p, const Params& params) {
  Block b;
  parse_block(params, b);
  Launch l;
  l.kernel = pick_radius(p.stencil.radius,
                         [&](auto r) { return baseline_for<T, decltype(r)::value>(p.stencil.op); });
  l.block = dim3(b.x, b.y, b.z);
  l.grid = baseline_grid(p, b);
  return {l};
}

std::string baseline_cannot_run(const Problem& p, const Params& params) {
  Block b;
  const std::string why = common_cannot_run(p, params, false, 1, b);
  return why.empty() ? grid_cannot_run(baseline_grid(p, b)) : why;
}

}  // namespace

std::vector<Variant> seismic_variants() {
  std::vector<Variant> vs;
  for (Op op : {Op::d2x, Op::d2y, Op::d2z, Op::d2xy, Op::d2xyz})
    vs.push_back(make_variant(op, "baseline", "seismic part 1: a point per thread, every tap a global load",
                              {{"block", "256x1x1"}}, {{"block", {"256x1x1", "128x2x1", "64x4x1", "32x8x1"}}},
                              baseline_cannot_run, plan_baseline<float>, plan_baseline<double>));
  for (auto&& family : {seismic::axis_variants(), seismic::fused_variants(), seismic::ring_variants(),
                        seismic::tma_variants()})
    for (const Variant& v : family) vs.push_back(v);
  return vs;
}

}  // namespace fdstencil::cuda
