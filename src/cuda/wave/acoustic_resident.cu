// The resident launch of a 2D run: its bands, the taps and receivers sorted by band, the checks,
// and the cooperative launch of acoustic_resident for each radius and width.
#include "cuda/wave/acoustic_resident.hpp"

#include <algorithm>
#include <climits>
#include <cstdint>
#include <numeric>
#include <vector>

#include "cuda/common/check.hpp"
#include "cuda/common/resources.hpp"
#include "cuda/wave/acoustic_resident.cuh"
#include "cuda/wave/for_radius.hpp"
#include "fdstencil/error.hpp"

namespace fdstencil::cuda::wave {

namespace {

// The bands (band_first: band b's rows [first[b], first[b + 1])), the most rows one holds, the
// halo rows above and below, the shared rows' layout, and the shared memory of a band's two
// buffers and (ms) its m.
struct Shape {
  std::vector<int> first;
  int rows = 0, halo = 0, pad = 0, pitch = 0;
  bool ms = false;
  size_t smem = 0;
  int bands() const { return int(first.size()) - 1; }
  int band_of(int row) const {
    return int(std::upper_bound(first.begin(), first.end(), row) - first.begin()) - 1;
  }
};

int device_attribute(cudaDeviceAttr what) {
  int device = 0, v = 0;
  FDS_CUDA_CHECK(cudaGetDevice(&device));
  FDS_CUDA_CHECK(cudaDeviceGetAttribute(&v, what, device));
  return v;
}

// The rows a receiver's taps span, [lo, hi].
std::vector<std::pair<int, int>> receiver_rows(const acoustic::Setup<float>& s) {
  std::vector<std::pair<int, int>> r(size_t(s.nrec), {INT32_MAX, INT32_MIN});
  for (const acoustic::Tap& t : s.receivers) {
    auto& [lo, hi] = r[size_t(t.id)];
    lo = std::min(lo, int(t.k));
    hi = std::max(hi, int(t.k));
  }
  return r;
}

// The band that samples a receiver: the one holding its middle row, so that its taps reach at
// most half their span past the band.
int receiver_band(const Shape& sh, const std::pair<int, int>& rows) {
  return sh.band_of((rows.first + rows.second) / 2);
}

// A row of the edges: nx rounded up to 16-byte vectors.
int64_t edge_pitch(const acoustic::Setup<float>& s) { return (s.nx + 3) / 4 * 4; }

// A row in a z layer is taken to cost its band this many rows clear of the layers: the layers'
// pass computes each of its points' d2 and d1 again and waits on their memory variables in L2. An
// estimate, not tuned: on the models measured the z layers' bands were held at their least rows
// (`least`) anyway. The bands advance in step, so they are cut to equal cost, not equal rows.
constexpr int kLayerRowCost = 3;

// Bands of equal cost, at most one an SM, each at least `least` rows (band 0 mirrors rows
// 1..halo under a free surface; a band's edges are its first and last halo rows); the last may
// hold fewer.
std::vector<int> cut_bands(const acoustic::Setup<float>& s, int sms, int least) {
  const int nz = int(s.nz);
  std::vector<int64_t> cost(size_t(nz) + 1, 0);
  for (int k = 0; k < nz; ++k)
    cost[size_t(k) + 1] = cost[size_t(k)] + (s.axis[2].slot(k) >= 0 ? kLayerRowCost : 1);
  const int bands = std::max(1, std::min(sms, nz / least));
  std::vector<int> first{0};
  for (int b = 1; b < bands; ++b) {
    const int64_t target = cost[size_t(nz)] * b / bands;
    int k = int(std::lower_bound(cost.begin(), cost.end(), target) - cost.begin());
    k = std::max(k, first.back() + least);
    if (k >= nz) break;
    first.push_back(k);
  }
  first.push_back(nz);
  return first;
}

// One band an SM, the halo R or a receiver's reach past its band, whichever is more.
Shape shape_of(const acoustic::Setup<float>& s, int sms, int optin) {
  Shape sh;
  const int R = s.radius, V = kResidentVec;
  const auto rec = receiver_rows(s);
  sh.halo = R;
  // The receivers' reach depends on the bands, which depend on the halo: cut again until the halo
  // covers every receiver of the bands it was cut for.
  for (bool covered = false; !covered;) {
    sh.first = cut_bands(s, sms, sh.halo + 1);
    covered = true;
    for (const auto& r : rec) {
      if (r.first > r.second) continue;  // a receiver without taps
      const int b = receiver_band(sh, r);
      const int reach = std::max(sh.first[size_t(b)] - r.first, r.second - (sh.first[size_t(b) + 1] - 1));
      if (reach > sh.halo) {
        sh.halo = reach;
        covered = false;
      }
    }
  }
  for (int b = 0; b < sh.bands(); ++b)
    sh.rows = std::max(sh.rows, sh.first[size_t(b) + 1] - sh.first[size_t(b)]);
  // Rows and their first point on 16-byte boundaries (the edges move as 16-byte vectors), the
  // x neighbours' zeros beyond: C V columns, C = ceil(R / V), rounded up to 4.
  sh.pad = ((R + V - 1) / V * V + 3) / 4 * 4;
  sh.pitch = sh.pad + int(edge_pitch(s)) + sh.pad;
  const size_t fields = size_t(2) * size_t(sh.rows + 2 * sh.halo) * size_t(sh.pitch) * sizeof(float);
  const size_t m = size_t(sh.rows) * size_t(sh.pitch) * sizeof(float);
  sh.ms = fields + m <= size_t(optin);
  sh.smem = fields + (sh.ms ? m : 0);
  return sh;
}

template <int R>
const void* kernel_for(bool ms) {
  return ms ? reinterpret_cast<const void*>(acoustic_resident<R, true>)
            : reinterpret_cast<const void*>(acoustic_resident<R, false>);
}

// The kernel for the shape, its shared memory opted in to the device's most: the attribute is the
// process's, so one value serves every state (a smaller one set by a later state would stop the
// launches of a state that needs more).
const void* ready_kernel(const acoustic::Setup<float>& s, const Shape& sh, int optin) {
  const void* kernel = for_radius(s.radius, [&sh]<int R>() { return kernel_for<R>(sh.ms); });
  FDS_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, optin));
  return kernel;
}

}  // namespace

void check_resident(const acoustic::Setup<float>& s, const KernelConfig& c) {
  if (c.resident == 0) return;
  const auto bad = [](const std::string& why) { throw Error(ErrorKind::invalid_argument, why); };
  if (s.dim != 2) bad("kernel parameter resident (a block of steps in one kernel) is 2D only");
  if (s.axis[2].offset != 0 || s.axis[2].n != s.nz)
    bad("the resident launch runs a whole model: a split run's slabs step one at a time");
  if (c.temporal != 0) bad("kernel parameters resident and temporal exclude each other");
  if (!c.cpml_apart)
    bad("the resident launch computes the CPML apart: kernel parameter cpml \"march\" is not its");
  if (s.axis[0].lo + s.axis[0].hi > s.nx)  // the layers' pass would visit a column twice
    bad("the resident launch needs x layers that do not overlap: kernel parameter resident 0");
  if (!device_attribute(cudaDevAttrCooperativeLaunch))
    bad("the device takes no cooperative launch, which the resident launch is: kernel parameter resident 0");
  const int optin = device_attribute(cudaDevAttrMaxSharedMemoryPerBlockOptin);
  const int sms = device_attribute(cudaDevAttrMultiProcessorCount);
  const Shape sh = shape_of(s, sms, optin);
  if (sh.smem > size_t(optin))
    bad("the resident launch holds bands of up to " + std::to_string(sh.rows) + " rows and " +
        std::to_string(sh.halo) + " halo rows of " + std::to_string(s.nx) +
        " points twice: " + std::to_string(sh.smem) + " bytes of shared memory a block, above the device's " +
        std::to_string(optin) + " (a smaller model, or kernel parameter resident 0)");
  int per_sm = 0;
  FDS_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, ready_kernel(s, sh, optin),
                                                               kResidentThreads, sh.smem));
  if (int64_t(per_sm) * sms < sh.bands())
    bad("the resident launch's " + std::to_string(sh.bands()) + " bands cannot all be resident (" +
        std::to_string(per_sm) + " a multiprocessor): kernel parameter resident 0");
}

int64_t resident_bytes(const acoustic::Setup<float>& s, const KernelConfig& c) {
  if (c.resident == 0) return 0;
  const Shape sh = shape_of(s, device_attribute(cudaDevAttrMultiProcessorCount),
                            device_attribute(cudaDevAttrMaxSharedMemoryPerBlockOptin));
  const int64_t bands = sh.bands(), taps = int64_t(s.receivers.size());
  int64_t b = 4 * (bands + 1) * int64_t(sizeof(int)) + bands * int64_t(sizeof(unsigned));
  b += int64_t(s.sources.size()) * int64_t(sizeof(int64_t) + sizeof(acoustic::Tap));
  b += taps * int64_t(2 * sizeof(int) + sizeof(float)) + (s.nrec + 1) * int64_t(sizeof(int));
  b += (s.nrec > 0 ? int64_t(kSampleSteps) * taps : 0) * int64_t(sizeof(float));
  b += 2 * bands * 2 * sh.halo * edge_pitch(s) * int64_t(sizeof(float));
  return b;
}

ResidentLaunch::ResidentLaunch(const acoustic::Setup<float>& s, const KernelConfig& c, float* traces)
    : args_(std::make_unique<ResidentArgs>()) {
  check_resident(s, c);
  const int sms = device_attribute(cudaDevAttrMultiProcessorCount);
  const Shape sh = shape_of(s, sms, device_attribute(cudaDevAttrMaxSharedMemoryPerBlockOptin));
  ResidentArgs& a = *args_;
  origin_ = s.origin;
  bands_ = sh.bands();
  smem_ = sh.smem;
  m_shared_ = sh.ms;
  band_first_ = DeviceArray<int>(sh.first.data(), int64_t(sh.first.size()));
  a.band_first = band_first_.p;
  a.rows = sh.rows;
  a.halo = sh.halo;
  a.pitch = sh.pitch;
  a.pad = sh.pad;
  kernel_ = ready_kernel(s, sh, device_attribute(cudaDevAttrMaxSharedMemoryPerBlockOptin));
  // The sources' taps by key (k, i), stable: a point's taps in the Setup's order, as the march's.
  std::vector<acoustic::Tap> taps = s.sources;
  const auto key = [&s](const acoustic::Tap& t) { return (int64_t(t.k) * s.ny + t.j) * s.nx + t.i; };
  std::stable_sort(taps.begin(), taps.end(),
                   [&](const acoustic::Tap& p, const acoustic::Tap& q) { return key(p) < key(q); });
  std::vector<int> tap_start(size_t(bands_) + 1, 0);
  for (const auto& t : taps) ++tap_start[size_t(sh.band_of(t.k)) + 1];
  std::partial_sum(tap_start.begin(), tap_start.end(), tap_start.begin());
  std::vector<int64_t> keys(taps.size());
  for (size_t t = 0; t < taps.size(); ++t) keys[t] = key(taps[t]);
  tap_start_ = DeviceArray<int>(tap_start.data(), int64_t(tap_start.size()));
  tap_key_ = DeviceArray<int64_t>(keys.data(), int64_t(keys.size()));
  taps_ = DeviceArray<acoustic::Tap>(taps.data(), int64_t(taps.size()));
  // The receivers' taps by receiver, in the Setup's order within each (acoustic_record's sum), and
  // each band's share of them: the taps of the receivers it samples.
  std::vector<acoustic::Tap> rec = s.receivers;
  std::stable_sort(rec.begin(), rec.end(),
                   [](const acoustic::Tap& p, const acoustic::Tap& q) { return p.id < q.id; });
  std::vector<int> rec_start(size_t(s.nrec) + 1, 0);
  std::vector<float> weight(rec.size());
  for (size_t t = 0; t < rec.size(); ++t) {
    ++rec_start[size_t(rec[t].id) + 1];
    weight[t] = rec[t].w;
  }
  std::partial_sum(rec_start.begin(), rec_start.end(), rec_start.begin());
  const auto spans = receiver_rows(s);
  std::vector<int> band(size_t(s.nrec), -1);
  for (int r = 0; r < s.nrec; ++r)
    if (spans[size_t(r)].first <= spans[size_t(r)].second)
      band[size_t(r)] = receiver_band(sh, spans[size_t(r)]);
  std::vector<std::vector<int>> by_band(static_cast<size_t>(bands_));  // each band's taps, in tap order
  for (size_t t = 0; t < rec.size(); ++t) by_band[size_t(band[size_t(rec[t].id)])].push_back(int(t));
  std::vector<int> first(size_t(bands_) + 1, 0), off, tap;
  for (int b = 0; b < bands_; ++b) {
    first[size_t(b)] = int(off.size());
    for (const int t : by_band[size_t(b)]) {
      off.push_back((rec[size_t(t)].k - sh.first[size_t(b)]) * sh.pitch + rec[size_t(t)].i);
      tap.push_back(t);
    }
  }
  first[size_t(bands_)] = int(off.size());
  nrec_ = s.nrec;
  nt_ = s.nt;
  traces_ = traces;
  sample_first_ = DeviceArray<int>(first.data(), int64_t(first.size()));
  sample_off_ = DeviceArray<int>(off.data(), int64_t(off.size()));
  sample_tap_ = DeviceArray<int>(tap.data(), int64_t(tap.size()));
  rec_start_ = DeviceArray<int>(rec_start.data(), int64_t(rec_start.size()));
  rec_weight_ = DeviceArray<float>(weight.data(), int64_t(weight.size()));
  a.taps_total = int(rec.size());
  if (nrec_ > 0) samples_ = DeviceArray<float>::uninitialised(int64_t(kSampleSteps) * a.taps_total);
  a.edge_pitch = int(edge_pitch(s));
  edges_ = DeviceArray<float>(int64_t(2) * bands_ * 2 * sh.halo * a.edge_pitch);
  flags_ = DeviceArray<unsigned>(bands_);
  a.tap_start = tap_start_.p;
  a.tap_key = tap_key_.p;
  a.taps = taps_.p;
  a.sample_first = sample_first_.p;
  a.sample_off = sample_off_.p;
  a.sample_tap = sample_tap_.p;
  a.samples = samples_.p;
  a.edges = edges_.p;
  a.flags = flags_.p;
}

ResidentLaunch::~ResidentLaunch() = default;

void ResidentLaunch::launch(const StepArgs& s, float* u, float* prev, int64_t n0, int64_t count,
                            cudaStream_t stream) {
  ResidentArgs& a = *args_;
  a.m = s.m;
  a.nx = s.nx;
  a.ny = s.ny;
  a.nz = s.nz;
  a.slice = s.slice;
  std::copy(std::begin(s.w2), std::end(s.w2), std::begin(a.w2));
  std::copy(std::begin(s.w1), std::end(s.w1), std::begin(a.w1));
  for (int ax = 0; ax < 3; ++ax) {
    a.axis[ax] = s.axis[ax];
    a.coef[ax] = s.coef[ax];
    a.psi[ax] = s.psi[ax];
    a.chi[ax] = s.chi[ax];
    a.phi[ax] = s.phi[ax];
  }
  a.free_surface = s.free_surface;
  a.wavelets = s.wavelets;
  a.nt = s.nt;
  // The flags count steps from zero in each launch; with receivers, a launch holds at most
  // kSampleSteps steps, whose samples the record kernel then sums.
  const int64_t most = nrec_ > 0 ? kSampleSteps : INT32_MAX;
  for (int64_t done = 0; done < count;) {
    const int steps = int(std::min<int64_t>(count - done, most));
    const bool odd = steps % 2 == 1;
    ResidentLevels l{u + origin_, prev + origin_, (odd ? prev : u) + origin_, (odd ? u : prev) + origin_};
    int64_t n = n0 + done;
    int k = steps;
    void* params[] = {&a, &l, &n, &k};
    FDS_CUDA_CHECK(cudaMemsetAsync(flags_.p, 0, size_t(bands_) * sizeof(unsigned), stream));
    FDS_CUDA_CHECK(cudaLaunchCooperativeKernel(kernel_, dim3(unsigned(bands_)), dim3(kResidentThreads),
                                               params, smem_, stream));
    FDS_CUDA_CHECK_LAUNCH();
    if (nrec_ > 0) {
      const int64_t warps = int64_t(nrec_) * steps;
      resident_record<<<unsigned((warps * 32 + 127) / 128), 128, 0, stream>>>(
          rec_start_.p, rec_weight_.p, samples_.p, a.taps_total, traces_, nrec_, nt_, n, steps);
      FDS_CUDA_CHECK_LAUNCH();
    }
    if (odd) std::swap(u, prev);
    done += steps;
  }
}

int64_t ResidentLaunch::bytes() const {
  return band_first_.bytes() + tap_start_.bytes() + tap_key_.bytes() + taps_.bytes() + sample_first_.bytes() +
         sample_off_.bytes() + sample_tap_.bytes() + samples_.bytes() + rec_start_.bytes() +
         rec_weight_.bytes() + edges_.bytes() + flags_.bytes();
}

std::string ResidentLaunch::describe() const {
  const nlohmann::json r = kernel_resources(kernel_, kResidentThreads, smem_);
  return " resident bands=" + std::to_string(bands_) + " rows=" + std::to_string(args_->rows) +
         " halo=" + std::to_string(args_->halo) + " m_shared=" + std::to_string(int(m_shared_)) +
         " smem=" + std::to_string(smem_) + " resident_regs=" + r.value("regs", nlohmann::json()).dump() +
         " resident_spill_bytes=" + r.value("spill_bytes", nlohmann::json()).dump();
}

}  // namespace fdstencil::cuda::wave
