// The temporal-blocking launch of a 2D run: the checks, the taps sorted by strip and row, and the
// launch of acoustic_temporal for each radius and T.
#include "cuda/wave/acoustic_temporal.hpp"

#include <algorithm>
#include <array>
#include <functional>
#include <vector>

#include "cuda/common/check.hpp"
#include "cuda/common/resources.hpp"
#include "cuda/wave/acoustic_temporal.cuh"
#include "fdstencil/error.hpp"

namespace fdstencil::cuda::wave {

namespace {

int owned_columns(const acoustic::Setup<float>& s, const KernelConfig& c) {
  return c.temporal_block - 2 * c.temporal * s.radius;
}

// The rings of the x neighbours and the staged loads (every block), then the memory variables'
// (boundary blocks).
size_t rings_bytes(int T, int R, int threads) {
  return (size_t(T) * (R + 1) * (threads + 2 * R) + size_t(kTemporalStages) * 3 * threads) * sizeof(float);
}
size_t memory_bytes(int T, int R, int threads) {
  return size_t((T - 1) * R + 1) * 6 * threads * sizeof(float);
}

struct Kernels {
  const void* interior;
  const void* boundary;
};

template <int R>
Kernels kernels_at(int T) {
  if (T == 2)
    return {(const void*)acoustic_temporal<R, 2, true>, (const void*)acoustic_temporal<R, 2, false>};
  if (T == 3)
    return {(const void*)acoustic_temporal<R, 3, true>, (const void*)acoustic_temporal<R, 3, false>};
  return {(const void*)acoustic_temporal<R, 4, true>, (const void*)acoustic_temporal<R, 4, false>};
}

Kernels kernels_for(int R, int T) {
  switch (R) {
    case 1: return kernels_at<1>(T);
    case 2: return kernels_at<2>(T);
    case 3: return kernels_at<3>(T);
    case 4: return kernels_at<4>(T);
    case 5: return kernels_at<5>(T);
    case 6: return kernels_at<6>(T);
    case 7: return kernels_at<7>(T);
    case 8: return kernels_at<8>(T);
  }
  throw Error(ErrorKind::invalid_argument, "radius " + std::to_string(R) + " is outside 1..8");
}

// Per axis, the blocks whose points that matter (level 1's: T - 1 R past the owned ones, within
// the domain) lie clear of both layers: one run, found by a scan as acoustic.cu's interior_box.
std::array<int, 2> clear_run(int count, int64_t n, int lo, int hi, int64_t size, int64_t reach) {
  const auto clear = [&](int b) {
    const int64_t a = std::max<int64_t>(b * size - reach, 0),
                  e = std::min<int64_t>(b * size + size + reach, n);
    return a >= lo && e <= n - hi;
  };
  int first = 0;
  while (first < count && !clear(first)) ++first;
  int end = first;
  while (end < count && clear(end)) ++end;
  return {first, end};
}

// Taps into per-strip, per-row lists: for each strip, the taps `take` gives it (in the order
// given), by row; returns the rows' starts (strips x (nz + 1)) and fills `order` with the taps'
// indices in list order.
std::vector<int> by_strip_and_row(const std::vector<acoustic::Tap>& taps, int strips, int64_t nz,
                                  const std::function<bool(int, const acoustic::Tap&)>& take,
                                  std::vector<int>& order) {
  std::vector<int> start(size_t(strips) * size_t(nz + 1) + 1, 0);
  std::vector<std::vector<int>> lists(static_cast<size_t>(strips));
  for (int s = 0; s < strips; ++s)
    for (size_t t = 0; t < taps.size(); ++t)
      if (take(s, taps[t])) lists[size_t(s)].push_back(int(t));
  order.clear();
  for (int s = 0; s < strips; ++s) {
    auto& l = lists[size_t(s)];
    std::stable_sort(l.begin(), l.end(), [&](int a, int b) { return taps[size_t(a)].k < taps[size_t(b)].k; });
    size_t e = 0;
    for (int64_t k = 0; k <= nz; ++k) {
      start[size_t(s) * size_t(nz + 1) + size_t(k)] = int(order.size());
      while (k < nz && e < l.size() && taps[size_t(l[e])].k == k) order.push_back(l[e++]);
    }
  }
  return start;
}

}  // namespace

void check_temporal(const acoustic::Setup<float>& s, const KernelConfig& c) {
  if (c.temporal == 0) return;
  const auto bad = [](const std::string& why) { throw Error(ErrorKind::invalid_argument, why); };
  if (s.dim != 2) bad("kernel parameter temporal (temporal blocking) is 2D only");
  if (c.temporal < 2 || c.temporal > kMaxTemporalSteps)
    bad("kernel parameter temporal must be 0 or 2.." + std::to_string(kMaxTemporalSteps) + ", got " +
        std::to_string(c.temporal));
  if (s.axis[2].offset != 0 || s.axis[2].n != s.nz)
    bad("temporal blocking runs a whole model: a split run's slabs step one at a time");
  if (c.temporal_block % 32 != 0 || c.temporal_block < 32 || c.temporal_block > kTemporalThreads)
    bad("kernel parameter temporal_block must be whole warps of at most " + std::to_string(kTemporalThreads) +
        " threads, got " + std::to_string(c.temporal_block));
  if (owned_columns(s, c) < 32)
    bad("kernel parameter temporal_block " + std::to_string(c.temporal_block) + " leaves " +
        std::to_string(owned_columns(s, c)) +
        " columns beside the 2 T R = " + std::to_string(2 * c.temporal * s.radius) +
        " of halo: at least 32 (a larger block or a smaller temporal)");
  if (c.temporal_nw < 1) bad("kernel parameter temporal_nw must be at least 1");
  if ((s.nz + c.temporal_nw - 1) / c.temporal_nw > 65535)
    bad("temporal blocking needs more than 65535 chunks of temporal_nw rows: raise temporal_nw");
  int device = 0, optin = 0;
  FDS_CUDA_CHECK(cudaGetDevice(&device));
  FDS_CUDA_CHECK(cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, device));
  const size_t smem = rings_bytes(c.temporal, s.radius, c.temporal_block) +
                      memory_bytes(c.temporal, s.radius, c.temporal_block);
  if (smem > size_t(optin))
    bad("temporal blocking's rings for temporal " + std::to_string(c.temporal) + " and temporal_block " +
        std::to_string(c.temporal_block) + " take " + std::to_string(smem) +
        " bytes of shared memory, above the device's " + std::to_string(optin) +
        ": a smaller block or temporal");
}

int64_t temporal_bytes(const acoustic::Setup<float>& s, const KernelConfig& c) {
  if (c.temporal == 0) return 0;
  int64_t b = 2 * s.alloc * int64_t(sizeof(float));
  for (int a = 0; a < 3; ++a) b += 3 * s.points_per_slot(a) * s.axis[a].slots() * int64_t(sizeof(float));
  const int64_t strips = (s.nx + owned_columns(s, c) - 1) / owned_columns(s, c);
  b += 2 * strips * (s.nz + 1) * int64_t(sizeof(int));
  b += int64_t(s.sources.size()) * strips * int64_t(sizeof(acoustic::Tap));
  b += int64_t(s.receivers.size()) * (2 * int64_t(sizeof(int)) + c.temporal * int64_t(sizeof(float)));
  return b;
}

TemporalLaunch::TemporalLaunch(const acoustic::Setup<float>& s, const KernelConfig& c, const float* m,
                               const acoustic::PmlCoef<float>* const (&coef)[3], const float* wavelets,
                               TemporalReceivers rec)
    : T_(c.temporal),
      R_(s.radius),
      nrec_(s.nrec),
      nt_(s.nt),
      args_(std::make_unique<TemporalArgs>()),
      rec_(rec) {
  check_temporal(s, c);
  TemporalArgs& a = *args_;
  const int owned = owned_columns(s, c), halo = T_ * R_;
  const int strips = int((s.nx + owned - 1) / owned),
            chunks = int((s.nz + c.temporal_nw - 1) / c.temporal_nw);
  grid_ = dim3(unsigned(strips), unsigned(chunks));
  block_ = dim3(unsigned(c.temporal_block));
  const Kernels k = kernels_for(R_, T_);
  interior_ = k.interior;
  boundary_ = k.boundary;
  smem_ = rings_bytes(T_, R_, c.temporal_block);
  boundary_smem_ = smem_ + memory_bytes(T_, R_, c.temporal_block);
  if (smem_ > 48 * 1024)
    FDS_CUDA_CHECK(cudaFuncSetAttribute(interior_, cudaFuncAttributeMaxDynamicSharedMemorySize, int(smem_)));
  if (boundary_smem_ > 48 * 1024)
    FDS_CUDA_CHECK(
        cudaFuncSetAttribute(boundary_, cudaFuncAttributeMaxDynamicSharedMemorySize, int(boundary_smem_)));
  a.m = m + s.origin;
  a.nx = int(s.nx);
  a.nz = int(s.nz);
  a.row = s.slice;
  a.owned = owned;
  a.nw = c.temporal_nw;
  a.strips = strips;
  const int64_t reach = int64_t(T_ - 1) * R_;
  const auto x = clear_run(strips, s.nx, s.axis[0].lo, s.axis[0].hi, owned, reach);
  const auto z = clear_run(chunks, s.nz, s.axis[2].lo, s.axis[2].hi, c.temporal_nw, reach);
  for (int i = 0; i < 2; ++i) {
    a.interior[0][i] = x[size_t(i)];
    a.interior[1][i] = z[size_t(i)];
  }
  for (int r = 0; r < kMaxTaps; ++r) {
    a.w2[r] = s.w2[size_t(r)];
    a.w1[r] = s.w1[size_t(r)];
  }
  for (int ax = 0; ax < 3; ++ax) {
    a.axis[ax] = s.axis[ax];
    a.coef[ax] = coef[ax];
  }
  a.free_surface = s.free_surface;
  a.wavelets = wavelets;
  a.nt = s.nt;
  // Sources: every tap in a strip's columns or its halo's, sorted by row, and within a row (and
  // a point) in the Setup's order, acoustic_step's order at one point.
  std::vector<int> order;
  const std::vector<int> src_start = by_strip_and_row(
      s.sources, strips, s.nz,
      [&](int st, const acoustic::Tap& t) {
        return t.i >= st * owned - halo && t.i < st * owned + owned + halo;
      },
      order);
  std::vector<acoustic::Tap> src(order.size());
  for (size_t e = 0; e < order.size(); ++e) src[e] = s.sources[size_t(order[e])];
  src_row_ = DeviceArray<int>(src_start.data(), int64_t(src_start.size()));
  src_taps_ = DeviceArray<acoustic::Tap>(src.data(), int64_t(src.size()));
  // Receivers: in acoustic_record's order (by receiver, the Setup's order within each), each tap in
  // the strip that owns its column.
  std::vector<acoustic::Tap> taps = s.receivers;
  std::stable_sort(taps.begin(), taps.end(),
                   [](const acoustic::Tap& p, const acoustic::Tap& q) { return p.id < q.id; });
  const std::vector<int> rec_start = by_strip_and_row(
      taps, strips, s.nz, [&](int st, const acoustic::Tap& t) { return t.i / owned == st; }, order);
  std::vector<int> cols(order.size());
  for (size_t e = 0; e < order.size(); ++e) cols[e] = taps[size_t(order[e])].i;
  rec_row_ = DeviceArray<int>(rec_start.data(), int64_t(rec_start.size()));
  rec_col_ = DeviceArray<int>(cols.data(), int64_t(cols.size()));
  rec_tap_ = DeviceArray<int>(order.data(), int64_t(order.size()));
  samples_ = DeviceArray<float>(int64_t(T_) * int64_t(taps.size()));
  a.src_row = src_row_.p;
  a.src_taps = src_taps_.p;
  a.rec_row = rec_row_.p;
  a.rec_col = rec_col_.p;
  a.rec_tap = rec_tap_.p;
  a.samples = samples_.p;
  a.rec_taps = int64_t(taps.size());
  // At the device's highest priority: the boundary blocks, the slower ones, start first and the
  // interior's fill the SMs around them.
  int least = 0, greatest = 0;
  try {
    FDS_CUDA_CHECK(cudaDeviceGetStreamPriorityRange(&least, &greatest));
    FDS_CUDA_CHECK(cudaStreamCreateWithPriority(&side_, cudaStreamNonBlocking, greatest));
    FDS_CUDA_CHECK(cudaEventCreateWithFlags(&fork_, cudaEventDisableTiming));
    FDS_CUDA_CHECK(cudaEventCreateWithFlags(&join_, cudaEventDisableTiming));
  } catch (...) {  // a constructor that throws runs no destructor: what was made is freed here
    if (fork_) cudaEventDestroy(fork_);
    if (side_) cudaStreamDestroy(side_);
    throw;
  }
}

TemporalLaunch::~TemporalLaunch() {
  if (fork_) cudaEventDestroy(fork_);
  if (join_) cudaEventDestroy(join_);
  if (side_) cudaStreamDestroy(side_);
}

void TemporalLaunch::launch(const TemporalLevels& l, int64_t n, const int64_t* step_base,
                            cudaStream_t stream) {
  TemporalArgs a = *args_;
  a.u = l.u;
  a.prev = l.prev;
  a.u_out = l.u_out;
  a.prev_out = l.prev_out;
  for (int ax = 0; ax < 3; ++ax)
    for (int v = 0; v < 3; ++v) {
      a.pml_in[ax][v] = l.pml_in[ax][v];
      a.pml_out[ax][v] = l.pml_out[ax][v];
    }
  a.step_base = step_base;
  const auto& box = a.interior;
  const bool inner = box[0][0] < box[0][1] && box[1][0] < box[1][1];
  const bool all_inner =
      inner && box[0][0] == 0 && box[0][1] == int(grid_.x) && box[1][0] == 0 && box[1][1] == int(grid_.y);
  int first[2] = {0, 0};
  void* params[] = {&a, &n, &first[0], &first[1]};
  const bool beside = inner && !all_inner;
  if (beside) {
    FDS_CUDA_CHECK(cudaEventRecord(fork_, stream));
    FDS_CUDA_CHECK(cudaStreamWaitEvent(side_, fork_, 0));
  }
  if (!all_inner) {
    FDS_CUDA_CHECK(
        cudaLaunchKernel(boundary_, grid_, block_, params, boundary_smem_, beside ? side_ : stream));
    FDS_CUDA_CHECK_LAUNCH();
  }
  if (inner) {
    int at[2] = {box[0][0], box[1][0]};
    void* inner_params[] = {&a, &n, &at[0], &at[1]};
    const dim3 g(unsigned(box[0][1] - box[0][0]), unsigned(box[1][1] - box[1][0]));
    FDS_CUDA_CHECK(cudaLaunchKernel(interior_, g, block_, inner_params, smem_, stream));
    FDS_CUDA_CHECK_LAUNCH();
  }
  if (beside) {
    FDS_CUDA_CHECK(cudaEventRecord(join_, side_));
    FDS_CUDA_CHECK(cudaStreamWaitEvent(stream, join_, 0));
  }
  if (nrec_ > 0) {
    const unsigned blocks = unsigned((int64_t(nrec_) * 32 + 127) / 128);
    temporal_record<<<blocks, 128, 0, stream>>>(rec_.start, rec_.weight, samples_.p, a.rec_taps, rec_.traces,
                                                nrec_, nt_, T_, step_base, n);
    FDS_CUDA_CHECK_LAUNCH();
  }
}

int64_t TemporalLaunch::bytes() const {
  return src_row_.bytes() + src_taps_.bytes() + rec_row_.bytes() + rec_col_.bytes() + rec_tap_.bytes() +
         samples_.bytes();
}

std::string TemporalLaunch::describe() const {
  const int threads = int(block_.x);
  const nlohmann::json i = kernel_resources(interior_, threads, smem_);
  const nlohmann::json b = kernel_resources(boundary_, threads, boundary_smem_);
  const auto& box = args_->interior;
  const int64_t inner = int64_t(std::max(0, box[0][1] - box[0][0])) * std::max(0, box[1][1] - box[1][0]);
  return " temporal_regs=" + i.value("regs", nlohmann::json()).dump() +
         " temporal_spill_bytes=" + i.value("spill_bytes", nlohmann::json()).dump() +
         " temporal_occupancy=" + i.value("occupancy", nlohmann::json()).dump() +
         " temporal_boundary_regs=" + b.value("regs", nlohmann::json()).dump() +
         " temporal_boundary_occupancy=" + b.value("occupancy", nlohmann::json()).dump() +
         " temporal_blocks=" + std::to_string(int64_t(grid_.x) * grid_.y) +
         " temporal_interior_blocks=" + std::to_string(inner);
}

}  // namespace fdstencil::cuda::wave
