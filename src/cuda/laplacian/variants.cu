// The Laplacian series as registry entries: parameters, the shapes each kernel cannot run (and
// why), the launch geometry of each kernel, and the runners that launch them.
#include <algorithm>
#include <string>

#include "cuda/common/block.hpp"
#include "cuda/common/check.hpp"
#include "cuda/common/resources.hpp"
#include "cuda/laplacian/k1_baseline.cuh"
#include "cuda/laplacian/k2_tiling.cuh"
#include "cuda/laplacian/k3_to_k7.cuh"
#include "cuda/laplacian/bulk_ring.cuh"
#include "cuda/laplacian/shfl_march.cuh"
#include "cuda/laplacian/variants.hpp"
#include "cuda/seismic/launch.hpp"
#include "cuda/seismic/strips.hpp"
#include "cuda/seismic/xyz_pipelined.cuh"
#include "cuda/seismic/xyz_pipelined_rows.cuh"
#include "fdstencil/error.hpp"

namespace fdstencil::cuda {

namespace {

using namespace laplacian;

Block block_of(const Params& p) {
  Block b;
  const std::string why = parse_block(p, b);
  if (!why.empty()) throw Error(ErrorKind::invalid_argument, why);
  return b;
}

int ceil_div(int64_t a, int64_t b) { return int((a + b - 1) / b); }

// ---- kernels 1-7: pick the template instance -------------------------------------------------

template <class T, int M, int LB>
const void* tiled_kernel(const std::string& name) {
  if (name == "k4") return reinterpret_cast<const void*>(k4_launch_bounds<T, M, LB>);
  if (name == "k5" || name == "k6_block") return reinterpret_cast<const void*>(k5_streaming<T, M, LB>);
  if (name == "k6") return reinterpret_cast<const void*>(k6_grid_order<T, M, LB>);
  if (name == "k7") return reinterpret_cast<const void*>(k7_subdomain<T, M, LB>);
  return nullptr;
}

template <class T, int M>
const void* kernel_for_m(const std::string& name, int lb) {
  if (name == "k2") return reinterpret_cast<const void*>(k2_tiling<T, M>);
  if (name == "k3") return reinterpret_cast<const void*>(k3_reordered<T, M>);
  switch (lb) {
    case 128: return tiled_kernel<T, M, 128>(name);
    case 256: return tiled_kernel<T, M, 256>(name);
    case 512: return tiled_kernel<T, M, 512>(name);
    case 1024: return tiled_kernel<T, M, 1024>(name);
  }
  return nullptr;
}

template <class T>
const void* seed_kernel(const std::string& name, int m, int lb) {
  if (name == "k1") return reinterpret_cast<const void*>(k1_baseline<T>);
  switch (m) {
    case 1: return kernel_for_m<T, 1>(name, lb);
    case 2: return kernel_for_m<T, 2>(name, lb);
    case 4: return kernel_for_m<T, 4>(name, lb);
    case 8: return kernel_for_m<T, 8>(name, lb);
    case 16: return kernel_for_m<T, 16>(name, lb);
  }
  return nullptr;
}

// Subdomains so that three sub-planes (z-1, z, z+1) fit in half the L2: the other half holds the
// lines in flight and the evict-first output. Read off the device, not the posts' constant 4.
int auto_subdomains(int64_t plane_bytes) {
  int device = 0, l2 = 0;
  FDS_CUDA_CHECK(cudaGetDevice(&device));
  FDS_CUDA_CHECK(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, device));
  return std::max<int64_t>(1, (3 * plane_bytes + l2 / 2 - 1) / (l2 / 2));
}

template <class T>
class SeedLauncher final : public Launcher {
 public:
  SeedLauncher(const Problem& p, const Params& params, std::string name)
      : name_(std::move(name)), block_(block_of(params)) {
    m_ = params.value("m", 1);
    lb_ = params.value("lb", 0);
    const StencilWeights sw = stencil_weights(p.stencil);
    const Layout& l = p.layout;
    // Interior (0,0,0) -> grid corner: the kernels take pointers at the corner.
    corner_ = -(1 + l.line() + l.slice());
    a_.nx = int(p.interior().nx + 2);
    a_.ny = int(p.interior().ny + 2);
    a_.nz = int(p.interior().nz + 2);
    a_.line = l.line();
    a_.slice = l.slice();
    a_.invhx2 = T(sw.w[0][0]);
    a_.invhy2 = T(sw.w[1][0]);
    a_.invhz2 = T(sw.w[2][0]);
    a_.invhxyz2 = T(sw.w[0][1] + sw.w[1][1] + sw.w[2][1]);
    kernel_ = seed_kernel<T>(name_, m_, lb_);
    if (kernel_ == nullptr) throw Error(ErrorKind::invalid_argument, name_ + ": no such instance");
    if (name_ == "k7") {
      const int requested = params.value("subdomains", 0);
      subdomains_ = requested > 0 ? requested : auto_subdomains(int64_t(l.line()) * a_.ny * sizeof(T));
      // Whole tiles per subdomain, so no tile straddles two launches.
      const int tile_rows = m_ * block_.y;
      rows_per_sub_ = ceil_div(ceil_div(a_.ny, subdomains_), tile_rows) * tile_rows;
      subdomains_ = ceil_div(a_.ny, rows_per_sub_);
      extra_["subdomains"] = subdomains_;
      extra_["rows_per_subdomain"] = rows_per_sub_;
    }
  }

  void run(const void* in, void* out, Stream stream) const override {
    Args<T> a = a_;
    a.u = static_cast<const T*>(in) + corner_;
    a.f = static_cast<T*>(out) + corner_;
    const dim3 block(block_.x, block_.y, block_.z);
    const int gx = ceil_div(a.nx, block_.x), gy = ceil_div(a.ny, int64_t(block_.y) * m_),
              gz = ceil_div(a.nz, block_.z);
    if (name_ == "k1") {
      void* args[] = {&a};
      FDS_CUDA_CHECK(
          cudaLaunchKernel(kernel_, dim3(gx, ceil_div(a.ny, block_.y), gz), block, args, 0, stream));
    } else if (name_ == "k6") {
      void* args[] = {&a};
      FDS_CUDA_CHECK(cudaLaunchKernel(kernel_, dim3(gy, gz, gx), block, args, 0, stream));
    } else if (name_ == "k7") {
      for (int s = 0; s < subdomains_; ++s) {
        int y_begin = s * rows_per_sub_, y_end = std::min(a.ny, y_begin + rows_per_sub_);
        void* args[] = {&a, &y_begin, &y_end};
        const int sub_gy = ceil_div(y_end - y_begin, int64_t(block_.y) * m_);
        FDS_CUDA_CHECK(cudaLaunchKernel(kernel_, dim3(gx, sub_gy, gz), block, args, 0, stream));
      }
    } else {
      void* args[] = {&a};
      FDS_CUDA_CHECK(cudaLaunchKernel(kernel_, dim3(gx, gy, gz), block, args, 0, stream));
    }
    FDS_CUDA_CHECK_LAUNCH();
  }

  nlohmann::json resources() const override {
    nlohmann::json j = kernel_resources(kernel_, block_.threads(), 0);
    for (auto& [k, v] : extra_.items()) j[k] = v;
    return j;
  }

 private:
  std::string name_;
  Block block_;
  int m_ = 1, lb_ = 0, subdomains_ = 1, rows_per_sub_ = 0;
  int64_t corner_ = 0;  // elements from interior point (0, 0, 0) to the grid corner
  const void* kernel_ = nullptr;
  Args<T> a_{};
  nlohmann::json extra_ = nlohmann::json::object();
};

std::string seed_cannot_run(const std::string& name, const Problem& p, const Params& params) {
  Block b;
  if (const std::string why = parse_block(params, b); !why.empty()) return why;
  const int64_t ny = p.interior().ny + 2, nx = p.interior().nx + 2, nz = p.interior().nz + 2;
  if (name != "k1") {
    const int m = params.value("m", 1);
    if (m != 1 && m != 2 && m != 4 && m != 8 && m != 16)
      return "m = " + std::to_string(m) + " is not one of 1, 2, 4, 8, 16";
    if (ny % m != 0)
      return "the grid's ny = " + std::to_string(ny) + " is not a multiple of m = " + std::to_string(m) +
             " (the tiled kernels load whole tiles, as in the posts)";
    if (params.contains("lb")) {
      const int lb = params["lb"].get<int>();
      if (lb != 128 && lb != 256 && lb != 512 && lb != 1024)
        return "lb = " + std::to_string(lb) + " is not one of 128, 256, 512, 1024";
      if (b.threads() > lb)
        return "block of " + std::to_string(b.threads()) + " threads exceeds the launch bound " +
               std::to_string(lb);
    }
    const int64_t gy = (ny + int64_t(b.y) * m - 1) / (int64_t(b.y) * m), gz = (nz + b.z - 1) / b.z;
    if (name == "k6" ? (gz > 65535 || (nx + b.x - 1) / b.x > 65535) : (gy > 65535 || gz > 65535))
      return "grid dimension above 65535";
  } else if ((ny + b.y - 1) / b.y > 65535 || (nz + b.z - 1) / b.z > 65535) {
    return "grid dimension above 65535";
  }
  return "";
}

// ---- kernel 8: the bulk-copy z-march, and its first version with shuffles ---------------------

template <class T, int TY>
const void* bulk_kernel(int stages) {
  switch (stages) {
    case 4: return reinterpret_cast<const void*>(bulk_ring<T, TY, 4>);
    case 6: return reinterpret_cast<const void*>(bulk_ring<T, TY, 6>);
    case 8: return reinterpret_cast<const void*>(bulk_ring<T, TY, 8>);
  }
  return nullptr;
}

template <class T>
const void* zmarch_kernel(bool bulk, int ty, int stages) {
  if (!bulk)
    return ty == 4   ? reinterpret_cast<const void*>(shfl_march<T, 4>)
           : ty == 8 ? reinterpret_cast<const void*>(shfl_march<T, 8>)
                     : reinterpret_cast<const void*>(shfl_march<T, 16>);
  return ty == 4   ? bulk_kernel<T, 4>(stages)
         : ty == 8 ? bulk_kernel<T, 8>(stages)
                   : bulk_kernel<T, 16>(stages);
}

template <class T>
size_t zmarch_smem(bool bulk, int ty, int stages) {
  if (!bulk) return 0;
  return ty == 4   ? BulkTile<T, 4>::smem_bytes(stages)
         : ty == 8 ? BulkTile<T, 8>::smem_bytes(stages)
                   : BulkTile<T, 16>::smem_bytes(stages);
}

template <class T>
class ZmarchLauncher final : public Launcher {
 public:
  ZmarchLauncher(const Problem& p, const Params& params, bool bulk) {
    ty_ = params.value("ty", 8);
    const int stages = params.value("stages", 6);
    const StencilWeights sw = stencil_weights(p.stencil);
    a_.nx = int(p.interior().nx);
    a_.ny = int(p.interior().ny);
    a_.nz = int(p.interior().nz);
    a_.line = p.layout.line();
    a_.slice = p.layout.slice();
    a_.cx = T(sw.w[0][0]);
    a_.cy = T(sw.w[1][0]);
    a_.cz = T(sw.w[2][0]);
    a_.cc = T(sw.w[0][1] + sw.w[1][1] + sw.w[2][1]);
    constexpr int W = 16 / sizeof(T);
    a_.tiles_x = ceil_div(a_.nx, 32 * W);
    a_.tiles_y = ceil_div(a_.ny, ty_);
    const int64_t tiles = int64_t(a_.tiles_x) * a_.tiles_y;
    kernel_ = zmarch_kernel<T>(bulk, ty_, stages);
    smem_ = zmarch_smem<T>(bulk, ty_, stages);
    if (smem_ > 48 * 1024)  // above the default limit a kernel must opt in
      FDS_CUDA_CHECK(cudaFuncSetAttribute(kernel_, cudaFuncAttributeMaxDynamicSharedMemorySize, int(smem_)));
    int nzc = params.value("nzc", 0);
    if (nzc <= 0) {
      // About eight waves of blocks, capped at 128 planes: a longer march amortizes the two seam
      // planes a chunk reads beyond its own, but long marches ran slower at 512^3 (the H200's
      // lap-nzc sweep, docs/laplacian.md), presumably as neighbouring blocks drift apart in z. At
      // 1024^3 nzc mattered little.
      int device = 0, sms = 0, per_sm = 0;
      FDS_CUDA_CHECK(cudaGetDevice(&device));
      FDS_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
      FDS_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel_, 32 * ty_, smem_));
      const int64_t want_blocks = 8 * int64_t(sms) * std::max(per_sm, 1);
      nzc = int(std::clamp<int64_t>(a_.nz * tiles / want_blocks, 8, 128));
    }
    a_.nzc = std::min(nzc, a_.nz);
    a_.chunks = ceil_div(a_.nz, a_.nzc);
    blocks_ = tiles * a_.chunks;
  }

  void run(const void* in, void* out, Stream stream) const override {
    ZmarchArgs<T> a = a_;
    a.u = static_cast<const T*>(in);
    a.f = static_cast<T*>(out);
    void* args[] = {&a};
    FDS_CUDA_CHECK(cudaLaunchKernel(kernel_, dim3(unsigned(blocks_)), dim3(32, ty_), args, smem_, stream));
    FDS_CUDA_CHECK_LAUNCH();
  }

  nlohmann::json resources() const override {
    nlohmann::json j = kernel_resources(kernel_, 32 * ty_, smem_);
    j["nzc_used"] = a_.nzc;
    return j;
  }

 private:
  int ty_ = 8;
  int64_t blocks_ = 0;
  size_t smem_ = 0;
  const void* kernel_ = nullptr;
  ZmarchArgs<T> a_{};
};

std::string zmarch_cannot_run(const Problem& p, const Params& params, bool bulk) {
  const int ty = params.value("ty", 8);
  if (ty != 4 && ty != 8 && ty != 16) return "ty = " + std::to_string(ty) + " is not one of 4, 8, 16";
  const int stages = params.value("stages", 6);
  if (stages != 4 && stages != 6 && stages != 8)
    return "stages = " + std::to_string(stages) + " is not one of 4, 6, 8";
  if (p.interior().nx > (1 << 30) || p.interior().ny > (1 << 30) || p.interior().nz > (1 << 30))
    return "extents above 2^30";
  // 16-byte vector loads and stores, and cp.async.bulk rows, need every x-line 16-byte aligned.
  if (p.layout.align_bytes() < 16)
    return "needs the aligned layout (16-byte vectors and bulk copies); run with --align 128, or give a view "
           "whose pointer and strides are multiples of 16 bytes";
  // The last staged row of the last line runs up to a whole tile row (34 vectors) past it.
  if (p.layout.tail_bytes() < kTailSlackBytes)
    return "reads up to " + std::to_string(kTailSlackBytes) +
           " bytes past the field's last point, and this layout has " +
           std::to_string(p.layout.tail_bytes()) + " readable there";
  // bulk_ring's staged rows start one vector left of the tile: the first reaches 16 - sizeof(T) bytes
  // before the halo corner.
  const int64_t head = 16 - p.layout.elem_bytes();
  if (bulk && p.layout.head_bytes() < head)
    return "reads " + std::to_string(head) + " bytes before the field's halo corner, and this layout has " +
           std::to_string(p.layout.head_bytes()) + " readable there";
  return "";
}

// ---- kernel 9: the seismic pipelined one-pass tile at R = 1 ------------------------------------
// The 7-point Laplacian is d2xyz at radius 1 with the weights 1/h^2, -2/h^2, 1/h^2 on each axis,
// so the seismic series' fastest R = 1 kernel serves it unchanged (src/cuda/seismic/
// xyz_pipelined.cuh): an xy tile double-buffered in shared memory, the halo of plane k + 1 in
// flight by cp.async while plane k computes, z from a three-plane register queue, `nw` planes a
// block; `order` and `strips` as seismic/strips.hpp says. The seismic launcher fills its weights
// from the problem's stencil (laplacian7's spacings). It needs the aligned layout (16-byte vectors
// and copies). `my` 2 runs xyz_pipelined_rows, each thread two adjacent rows: twice the bytes in
// flight a thread, which double needs to come near the copy bandwidth (d2xyz R = 1, 512^3:
// two-rows-a-thread/seis-my1.json).
template <class T>
std::vector<seismic::Launch> plan_pipelined_laplacian(const Problem& p, const Params& params) {
  constexpr int V = kVec16<T>;
  Block b;
  parse_block(params, b);
  const int my = params.value("my", 1);
  seismic::Launch l;
  l.kernel = my == 2   ? reinterpret_cast<const void*>(seismic::xyz_pipelined_rows<T, 1, V, 0, 0, 2>)
             : my == 1 ? reinterpret_cast<const void*>(seismic::xyz_pipelined<T, 1, V>)
                       : nullptr;  // refused by pipelined_laplacian_cannot_run
  l.block = dim3(b.x, b.y, 1);
  seismic::parse_nw(params, l.nw);
  l.smem = 2 * seismic::tile_bytes(b.x, my * b.y, 1, int(sizeof(T)));  // double-buffered
  return seismic::strip_launches(p, params, l, V, seismic::kLaplacianL2Share, my);
}

std::string pipelined_laplacian_cannot_run(const Problem& p, const Params& params) {
  Block b;
  std::string why = seismic::common_cannot_run(p, params, true, int(16 / dtype_bytes(p.dtype())), b,
                                               seismic::kMarchThreads);
  if (!why.empty()) return why;
  int nw = 0;
  why = seismic::parse_nw(params, nw);
  if (!why.empty()) return why;
  const int my = params.value("my", 1);
  if (my != 1 && my != 2) return "my " + std::to_string(my) + " must be 1 or 2 (rows a thread marches)";
  return seismic::strips_cannot_run(params, seismic::march_grid(p, b, 1, nw));
}

Variant make(const std::string& name, const std::string& summary, Params defaults, Params space) {
  Variant v;
  v.op = Op::laplacian7;
  v.name = name;
  v.backend = "cuda";
  v.summary = summary;
  v.defaults = std::move(defaults);
  v.space = std::move(space);
  if (name == "bulk_ring" || name == "shfl_march") {
    const bool bulk = name == "bulk_ring";
    v.cannot_run = [bulk](const Problem& p, const Params& q) { return zmarch_cannot_run(p, q, bulk); };
    v.prepare = [bulk](const Problem& p, const Params& q) -> std::unique_ptr<Launcher> {
      if (p.dtype() == DType::f32) return std::make_unique<ZmarchLauncher<float>>(p, q, bulk);
      return std::make_unique<ZmarchLauncher<double>>(p, q, bulk);
    };
    return v;
  }
  if (name == "pipelined") {
    v.cannot_run = pipelined_laplacian_cannot_run;
    v.prepare = [](const Problem& p, const Params& q) -> std::unique_ptr<Launcher> {
      if (p.dtype() == DType::f32)
        return std::make_unique<seismic::SeismicLauncher<float>>(p, q, plan_pipelined_laplacian<float>);
      return std::make_unique<seismic::SeismicLauncher<double>>(p, q, plan_pipelined_laplacian<double>);
    };
    return v;
  }
  v.cannot_run = [name](const Problem& p, const Params& q) { return seed_cannot_run(name, p, q); };
  v.prepare = [name](const Problem& p, const Params& q) -> std::unique_ptr<Launcher> {
    if (p.dtype() == DType::f32) return std::make_unique<SeedLauncher<float>>(p, q, name);
    return std::make_unique<SeedLauncher<double>>(p, q, name);
  };
  return v;
}

}  // namespace

std::vector<Variant> laplacian_variants() {
  // The tuner's spaces: the posts' block shapes and tiling factors (part 2-4 tables), the launch
  // bounds a 256- to 1024-thread block admits, and ours over the ranges the lap-k8 and lap-nzc
  // sweeps measured (docs/laplacian.md).
  const Params blocks = {"256x1x1", "128x1x1", "512x1x1", "128x2x1"};
  const Params ms = {1, 2, 4, 8, 16};
  const Params tiled = {{"block", blocks}, {"m", ms}, {"lb", {256, 512, 1024}}};
  // The posts' best MI250X configuration (part 4 table): 256 x 1 x 1, launch bound 256, m = 8.
  return {
      make("k1", "part 1 baseline: a point per thread, early exit on the boundary", {{"block", "256x1x1"}},
           {{"block", blocks}}),
      make("k2", "part 2 loop tiling: m outputs along y per thread, centre reused for y+-1",
           {{"block", "256x1x1"}, {"m", 8}}, {{"block", blocks}, {"m", ms}}),
      make("k3", "part 2 k2 with the loads reordered to ascending addresses",
           {{"block", "256x1x1"}, {"m", 8}}, {{"block", blocks}, {"m", ms}}),
      make("k4", "part 3 k3 with __launch_bounds__ matching the block",
           {{"block", "256x1x1"}, {"m", 8}, {"lb", 256}}, tiled),
      make("k5", "part 3 k4 with streaming (evict-first, st.global.cs) output stores",
           {{"block", "256x1x1"}, {"m", 8}, {"lb", 256}}, tiled),
      make("k6_block", "part 4 option 1a: k5 with the 128 x 1 x 8 block (launch bound 1024)",
           {{"block", "128x1x8"}, {"m", 8}, {"lb", 1024}},
           {{"block", {"128x1x8", "64x1x8", "128x1x4", "256x1x4"}}, {"m", ms}}),
      make("k6", "part 4 option 1b: k5 with the grid index permuted (y, z, x)",
           {{"block", "256x1x1"}, {"m", 8}, {"lb", 256}}, tiled),
      make("k7", "part 4 option 2: k5 over y-subdomains launched in turn, count from the L2 size",
           {{"block", "256x1x1"}, {"m", 8}, {"lb", 256}, {"subdomains", 0}},
           {{"block", blocks}, {"m", ms}, {"subdomains", {0, 2, 4, 8}}}),
      make("shfl_march",
           "ours, first (was k8_shfl): z-march, register queue, 16-byte vectors, x shuffles, y smem",
           {{"ty", 4}, {"nzc", 0}}, {{"ty", {4, 8, 16}}, {"nzc", {0, 16, 32, 64}}}),
      // ty 16 / stages 4: taller tiles read fewer halo rows, and more stages did not help (the
      // H200's lap-k8 sweep); nzc 16 was the best or near it in every case of the lap-nzc sweep,
      // where long marches fell behind (docs/laplacian.md).
      make("bulk_ring",
           "ours (was k8): z-march fed by bulk async copies (cp.async.bulk) into an S-plane smem ring",
           {{"ty", 16}, {"stages", 4}, {"nzc", 16}},
           {{"ty", {4, 8, 16}}, {"stages", {4, 6, 8}}, {"nzc", {0, 8, 16, 32, 64}}}),
      // 32 x 4, nw 4: the best or near it in float at 512^3 and 1024^3 and in double at 512^3
      // (H100, lap-k9/lap-k9-tune.json); double at 1024^3 needs the strips of strips 0, whose
      // layers stay in L2 (lap-k9-strips-cube.json).
      make("pipelined",
           "ours (was k9): the seismic pipelined one-pass tile at R = 1 (xy tile by cp.async, z register "
           "queue)",
           {{"block", "32x4x1"}, {"nw", 4}, {"order", "xyz"}, {"strips", 0}, {"my", 1}},
           // The tuner's space: the two shapes and four lengths that came within a few points of the
           // best in lap-k9-tune and -tune2, both orders (zxy lost 9-22 points at 1024^3 but won on
           // 32-64 MB planes at nw 4, lap-k9-order.json), strips whole or auto, and one row a
           // thread or two: 64 candidates.
           {{"block", {"32x4x1", "32x8x1"}},
            {"nw", {2, 4, 8, 16}},
            {"order", {"xyz", "zxy"}},
            {"strips", {0, 1}},
            {"my", {1, 2}}}),
  };
}

}  // namespace fdstencil::cuda
