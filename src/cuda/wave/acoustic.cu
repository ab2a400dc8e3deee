// The GPU state of an acoustic run: the fields, the CPML memory, the taps sorted into the step
// kernel's blocks, and the launch of acoustic_step for each radius and vector width.
#include "cuda/wave/acoustic.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <string>

#include <nlohmann/json.hpp>

#include "cuda/common/check.hpp"
#include "cuda/common/resources.hpp"
#include "cuda/device.hpp"
#include "cuda/wave/acoustic_record.cuh"
#include "cuda/wave/acoustic_step.cuh"
#include "fdstencil/error.hpp"

namespace fdstencil::cuda::wave {

namespace {

// A device allocation of n elements, zeroed.
template <class T>
struct DeviceArray {
  T* p = nullptr;
  int64_t n = 0;
  DeviceArray() = default;
  explicit DeviceArray(int64_t count) : n(count) {
    if (n > 0) {
      FDS_CUDA_CHECK(cudaMalloc(&p, size_t(n) * sizeof(T)));
      FDS_CUDA_CHECK(cudaMemset(p, 0, size_t(n) * sizeof(T)));
    }
  }
  DeviceArray(const T* host, int64_t count) : DeviceArray(count) {
    if (n > 0) FDS_CUDA_CHECK(cudaMemcpy(p, host, size_t(n) * sizeof(T), cudaMemcpyHostToDevice));
  }
  // Whole-array copies on `stream`, waited for: a checkpoint's download and a resume's upload.
  void download(T* host, cudaStream_t stream) const {
    if (n == 0) return;
    FDS_CUDA_CHECK(cudaMemcpyAsync(host, p, size_t(n) * sizeof(T), cudaMemcpyDeviceToHost, stream));
    FDS_CUDA_CHECK(cudaStreamSynchronize(stream));
  }
  void upload(const T* host, cudaStream_t stream) {
    if (n == 0) return;
    FDS_CUDA_CHECK(cudaMemcpyAsync(p, host, size_t(n) * sizeof(T), cudaMemcpyHostToDevice, stream));
    FDS_CUDA_CHECK(cudaStreamSynchronize(stream));
  }
  DeviceArray(DeviceArray&& o) noexcept : p(o.p), n(o.n) { o.p = nullptr; }
  DeviceArray& operator=(DeviceArray&& o) noexcept {
    std::swap(p, o.p);
    std::swap(n, o.n);
    return *this;
  }
  ~DeviceArray() {
    if (p) cudaFree(p);
  }
  int64_t bytes() const { return n * int64_t(sizeof(T)); }
};

// The default launch shape per radius: the fastest of five shapes per radius at 512^3 without
// CPML, H100, float, same-run copy 2959-2997 GB/s (bench/results/nvidia-h100/wave-configs.json):
//   R = 1  32x8,  vec 2, nw 16: 173.8 GPts/s, 92.9 % of the bound (the others 170.7-172.8)
//   R = 2  16x16, vec 2, nw 32: 170.8 GPts/s, 91.9 % (the others 168.0-170.2)
//   R = 4  32x4,  vec 4, nw 32: 162.2 GPts/s, 86.8 % (vec 2 shapes: 140.2-140.8)
//   R = 8  32x4,  vec 2, nw 32: 106.1 GPts/s, 56.7 % (vec 4 needs 254 registers: 96.4-100.0)
// R = 3 takes R = 4's shape and R = 5..7 R = 8's, unmeasured. 2D: 128 threads along x, unmeasured.
KernelConfig default_for(int dim, int radius) {
  if (dim == 2) return {128, 1, 2, 32};
  if (radius == 1) return {32, 8, 2, 16};
  if (radius == 2) return {16, 16, 2, 32};
  if (radius <= 4) return {32, 4, 4, 32};
  return {32, 4, 2, 32};
}

int64_t tap_key_host(const acoustic::Tap& t, const acoustic::Setup<float>& s) {
  return (int64_t(t.k) * s.ny + t.j) * s.nx + t.i;
}

template <int R, int V>
const void* kernel_for(bool y) {
  return y ? reinterpret_cast<const void*>(acoustic_step<R, V, true>)
           : reinterpret_cast<const void*>(acoustic_step<R, V, false>);
}

template <int V>
const void* kernel_for_radius(int radius, bool y) {
  switch (radius) {
    case 1: return kernel_for<1, V>(y);
    case 2: return kernel_for<2, V>(y);
    case 3: return kernel_for<3, V>(y);
    case 4: return kernel_for<4, V>(y);
    case 5: return kernel_for<5, V>(y);
    case 6: return kernel_for<6, V>(y);
    case 7: return kernel_for<7, V>(y);
    case 8: return kernel_for<8, V>(y);
  }
  throw Error(ErrorKind::invalid_argument, "radius " + std::to_string(radius) + " is outside 1..8");
}

const void* step_kernel(int radius, int vec, bool y) {
  if (vec == 2) return kernel_for_radius<2>(radius, y);
  return kernel_for_radius<4>(radius, y);
}

}  // namespace

KernelConfig default_config(int dim, int radius) { return default_for(dim, radius); }

std::string describe(const KernelConfig& c) {
  return "acoustic_step block=" + std::to_string(c.bx) + "x" + std::to_string(c.by) + " vec=" +
         std::to_string(c.vec) + " nw=" + std::to_string(c.nw);
}

KernelConfig parse_config(const std::string& text, int dim, int radius) {
  KernelConfig c = default_for(dim, radius);
  if (text.empty()) return c;
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(text);
  } catch (const std::exception& e) {
    throw Error(ErrorKind::invalid_argument, "kernel parameters are not JSON: " + std::string(e.what()));
  }
  if (!j.is_object()) throw Error(ErrorKind::invalid_argument, "kernel parameters must be a JSON object");
  for (const auto& [key, value] : j.items()) {
    if (key == "block") {
      const std::string b = value.is_string() ? value.get<std::string>() : "";
      const auto x = b.find('x');
      try {
        if (x == std::string::npos) throw std::invalid_argument(b);
        c.bx = std::stoi(b.substr(0, x));
        c.by = std::stoi(b.substr(x + 1));
      } catch (const std::exception&) {
        throw Error(ErrorKind::invalid_argument, "kernel parameter block must be \"BXxBY\", got " + value.dump());
      }
    } else if (key == "vec" && value.is_number_integer()) {
      c.vec = value.get<int>();
    } else if (key == "nw" && value.is_number_integer()) {
      c.nw = value.get<int>();
    } else {
      throw Error(ErrorKind::invalid_argument, "unknown or mistyped kernel parameter '" + key + "': " +
                                                   value.dump() + " (valid: block \"BXxBY\", vec 2|4, nw N)");
    }
  }
  // Two widths only: each is 32 kernels (R x 2D/3D x interior/CPML) to compile.
  if (c.vec != 2 && c.vec != 4)
    throw Error(ErrorKind::invalid_argument, "kernel parameter vec must be 2 or 4, got " + std::to_string(c.vec));
  if (c.bx < 1 || c.by < 1 || c.bx > kStepThreads || c.by > kStepThreads || c.bx * c.by > kStepThreads || (c.bx * c.by) % 32 != 0)
    throw Error(ErrorKind::invalid_argument, "kernel parameter block " + std::to_string(c.bx) + "x" +
                                                 std::to_string(c.by) + " must be whole warps of at most " +
                                                 std::to_string(kStepThreads) + " threads");
  if (dim == 2 && c.by != 1)
    throw Error(ErrorKind::invalid_argument, "a 2D model has no y: kernel parameter block must be BXx1");
  if (c.nw < 1) throw Error(ErrorKind::invalid_argument, "kernel parameter nw must be at least 1");
  return c;
}

int64_t state_bytes(const acoustic::Setup<float>& s) {
  int64_t b = 3 * s.alloc * int64_t(sizeof(float));
  for (int a = 0; a < 3; ++a) b += 3 * s.points_per_slot(a) * s.axis[a].slots() * int64_t(sizeof(float));
  b += int64_t(s.sources.size()) * int64_t(sizeof(acoustic::Tap) + sizeof(int64_t));
  b += int64_t(s.receivers.size()) * int64_t(sizeof(int64_t) + sizeof(float)) + (s.nrec + 1) * int64_t(sizeof(int));
  b += (int64_t(s.nsrc) + s.nrec) * s.nt * int64_t(sizeof(float));
  return b;
}

struct AcousticGpu::Impl {
  acoustic::Setup<float> s;  // the host description, without its fields
  KernelConfig c;
  DeviceArray<float> u, prev, m;
  DeviceArray<acoustic::PmlCoef<float>> coef[3];
  DeviceArray<float> pml[3][3];
  DeviceArray<int> tap_start;
  DeviceArray<int64_t> tap_key;
  DeviceArray<acoustic::Tap> taps;  // the sources'
  DeviceArray<int> rec_start;       // the receivers' taps, by receiver: acoustic_record's
  DeviceArray<int64_t> rec_offset;
  DeviceArray<float> rec_weight;
  DeviceArray<float> wavelets, traces;
  dim3 grid, block;
  const void* kernel = nullptr;
  StepArgs args{};
  RecordArgs record{};
  // The run's own stream (non-blocking: it never waits for the legacy default stream), so that
  // runs in threads of one process, a survey's batched shots, overlap on the device.
  cudaStream_t stream = nullptr;
  ~Impl() {
    if (stream) cudaStreamDestroy(stream);
  }
  // The state's array i in core/acoustic.hpp's order: u, u_prev, each axis's psi, chi, phi, traces.
  const DeviceArray<float>& state_array(int i) const {
    return i == 0 ? u : i == 1 ? prev : i < acoustic::kStateArrays - 1 ? pml[(i - 2) / 3][(i - 2) % 3] : traces;
  }
};

AcousticGpu::AcousticGpu(const acoustic::Setup<float>& s, const KernelConfig& c) : impl_(std::make_unique<Impl>()) {
  Impl& d = *impl_;
  // acoustic_step decides per block whether it reaches the z CPML from the axis's lo and hi alone.
  if (s.axis[2].offset != 0)
    throw Error(ErrorKind::unsupported, "the GPU step does not run a slab of a split run yet (PmlAxis::offset)");
  // The launch's limits, before anything is allocated: 32-bit indices in the kernel, 65535 blocks
  // along grid y and z.
  const int64_t gy = s.dim == 3 ? (s.ny + c.by - 1) / c.by : 1, gz = (s.nz + c.nw - 1) / c.nw;
  const int64_t gx = (s.nx + int64_t(c.vec) * c.bx - 1) / (int64_t(c.vec) * c.bx);
  if (s.nx > (int64_t(1) << 30) || s.ny > (int64_t(1) << 30) || s.nz > (int64_t(1) << 30) ||
      gx * gy * gz >= (int64_t(1) << 31))
    throw Error(ErrorKind::invalid_argument, "the domain is too large for the step kernel's 32-bit indices");
  if (gy > 65535 || gz > 65535)
    throw Error(ErrorKind::invalid_argument, "the step kernel's grid needs " + std::to_string(gy) + " x " +
                                                 std::to_string(gz) + " blocks along y and z, above 65535: raise by or nw");
  ensure_device_memory(state_bytes(s), "the wave solver's state");
  d.c = c;
  const bool y = s.dim == 3;
  d.block = dim3(unsigned(c.bx), unsigned(y ? c.by : 1), 1);
  d.grid = dim3(unsigned((s.nx + int64_t(c.vec) * c.bx - 1) / (int64_t(c.vec) * c.bx)),
                unsigned(y ? (s.ny + c.by - 1) / c.by : 1), unsigned((s.nz + c.nw - 1) / c.nw));
  d.kernel = step_kernel(s.radius, c.vec, y);
  d.u = DeviceArray<float>(s.alloc);
  d.prev = DeviceArray<float>(s.alloc);
  d.m = DeviceArray<float>(s.m.data(), s.alloc);
  for (int a = 0; a < 3; ++a) {
    d.coef[a] = DeviceArray<acoustic::PmlCoef<float>>(s.coef[a].data(), int64_t(s.coef[a].size()));
    for (auto& v : d.pml[a]) v = DeviceArray<float>(s.points_per_slot(a) * s.axis[a].slots());
  }
  FDS_CUDA_CHECK(cudaStreamCreateWithFlags(&d.stream, cudaStreamNonBlocking));
  // The sources' taps, sorted by the block that owns their point, then by point.
  std::vector<acoustic::Tap> taps = s.sources;
  const int64_t xs = int64_t(c.vec) * c.bx;
  const auto block_of = [&](const acoustic::Tap& t) {
    return (int64_t(t.k / c.nw) * d.grid.y + (y ? t.j / c.by : 0)) * d.grid.x + t.i / xs;
  };
  std::stable_sort(taps.begin(), taps.end(), [&](const acoustic::Tap& p, const acoustic::Tap& q) {
    const int64_t bp = block_of(p), bq = block_of(q);
    return bp != bq ? bp < bq : tap_key_host(p, s) < tap_key_host(q, s);
  });
  const int64_t blocks = int64_t(d.grid.x) * d.grid.y * d.grid.z;
  std::vector<int> start(size_t(blocks + 1), 0);
  for (const auto& t : taps) ++start[size_t(block_of(t) + 1)];
  std::partial_sum(start.begin(), start.end(), start.begin());
  std::vector<int64_t> keys(taps.size());
  for (size_t t = 0; t < taps.size(); ++t) keys[t] = tap_key_host(taps[t], s);
  d.tap_start = DeviceArray<int>(start.data(), int64_t(start.size()));
  d.tap_key = DeviceArray<int64_t>(keys.data(), int64_t(keys.size()));
  d.taps = DeviceArray<acoustic::Tap>(taps.data(), int64_t(taps.size()));
  // The receivers' taps by receiver, in the Setup's order within each (the order of the sum).
  std::vector<acoustic::Tap> rec = s.receivers;
  std::stable_sort(rec.begin(), rec.end(), [](const acoustic::Tap& p, const acoustic::Tap& q) { return p.id < q.id; });
  std::vector<int> rec_start(size_t(s.nrec) + 1, 0);
  std::vector<int64_t> rec_offset(rec.size());
  std::vector<float> rec_weight(rec.size());
  for (size_t t = 0; t < rec.size(); ++t) {
    ++rec_start[size_t(rec[t].id) + 1];
    rec_offset[t] = rec[t].i + rec[t].j * s.line + rec[t].k * s.slice;
    rec_weight[t] = rec[t].w;
  }
  std::partial_sum(rec_start.begin(), rec_start.end(), rec_start.begin());
  d.rec_start = DeviceArray<int>(rec_start.data(), int64_t(rec_start.size()));
  d.rec_offset = DeviceArray<int64_t>(rec_offset.data(), int64_t(rec_offset.size()));
  d.rec_weight = DeviceArray<float>(rec_weight.data(), int64_t(rec_weight.size()));
  d.wavelets = DeviceArray<float>(s.wavelets.data(), int64_t(s.wavelets.size()));
  d.traces = DeviceArray<float>(int64_t(s.nrec) * s.nt);
  d.s = s;
  d.s.m.clear();
  d.s.m.shrink_to_fit();

  StepArgs& a = d.args;
  a.m = d.m.p + s.origin;
  a.nx = int(s.nx);
  a.ny = int(s.ny);
  a.nz = int(s.nz);
  a.nw = c.nw;
  a.line = s.line;
  a.slice = s.slice;
  for (int r = 0; r < kMaxTaps; ++r) {
    a.w2[r] = s.w2[size_t(r)];
    a.w1[r] = s.w1[size_t(r)];
  }
  for (int ax = 0; ax < 3; ++ax) {
    a.axis[ax] = s.axis[ax];
    a.coef[ax] = d.coef[ax].p;
    a.psi[ax] = d.pml[ax][0].p;
    a.chi[ax] = d.pml[ax][1].p;
    a.phi[ax] = d.pml[ax][2].p;
  }
  a.free_surface = s.free_surface;
  a.tap_start = d.tap_start.p;
  a.tap_key = d.tap_key.p;
  a.taps = d.taps.p;
  a.wavelets = d.wavelets.p;
  a.nt = s.nt;
  RecordArgs& r = d.record;
  r.start = d.rec_start.p;
  r.offset = d.rec_offset.p;
  r.weight = d.rec_weight.p;
  r.traces = d.traces.p;
  r.nrec = s.nrec;
  r.nt = s.nt;
  // The memsets and uploads above ran on the legacy stream, which the run's non-blocking stream
  // does not wait for (and a memset, or a pageable upload's last DMA, may still be in flight):
  // done before any step, receiver sample or resume's upload is enqueued on the run's stream.
  FDS_CUDA_CHECK(cudaStreamSynchronize(cudaStreamLegacy));
}

AcousticGpu::~AcousticGpu() = default;

std::string AcousticGpu::describe() const {
  const Impl& d = *impl_;
  const nlohmann::json r = kernel_resources(d.kernel, int(d.block.x * d.block.y), 0);
  return wave::describe(d.c) + " R=" + std::to_string(d.s.radius) + (d.s.dim == 3 ? " 3D" : " 2D") + " regs=" +
         r.value("regs", nlohmann::json()).dump() + " spill_bytes=" + r.value("spill_bytes", nlohmann::json()).dump() +
         " occupancy=" + r.value("occupancy", nlohmann::json()).dump();
}

void AcousticGpu::step(int64_t n) {
  Impl& d = *impl_;
  if (d.record.nrec > 0) {  // u^n before the step overwrites nothing of it, but reads it first
    d.record.u = d.u.p + d.s.origin;
    const unsigned blocks = unsigned((int64_t(d.record.nrec) * 32 + kRecordThreads - 1) / kRecordThreads);
    acoustic_record<<<blocks, kRecordThreads, 0, d.stream>>>(d.record, n);
    FDS_CUDA_CHECK_LAUNCH();
  }
  d.args.u = d.u.p + d.s.origin;
  d.args.out = d.prev.p + d.s.origin;
  void* params[] = {&d.args, &n};
  FDS_CUDA_CHECK(cudaLaunchKernel(d.kernel, d.grid, d.block, params, 0, d.stream));
  FDS_CUDA_CHECK_LAUNCH();
  std::swap(d.u, d.prev);
}

void AcousticGpu::synchronize() { FDS_CUDA_CHECK(cudaStreamSynchronize(impl_->stream)); }

void AcousticGpu::download_current(float* host) { impl_->u.download(host, impl_->stream); }

std::vector<float> AcousticGpu::traces() {
  std::vector<float> t(size_t(impl_->traces.n));
  impl_->traces.download(t.data(), impl_->stream);
  return t;
}

int64_t AcousticGpu::state_array_bytes(int i) const { return impl_->state_array(i).bytes(); }

void AcousticGpu::copy_state_array(int i, void* host) {
  impl_->state_array(i).download(static_cast<float*>(host), impl_->stream);
}

void AcousticGpu::restore(const acoustic::State<float>& st) {
  Impl& d = *impl_;
  const auto put = [&](DeviceArray<float>& a, const std::vector<float>& v, const char* what) {
    if (int64_t(v.size()) != a.n)
      throw Error(ErrorKind::invalid_argument, std::string("restore: ") + what + " has " + std::to_string(v.size()) +
                                                   " elements, the run's " + std::to_string(a.n));
    a.upload(v.data(), d.stream);
  };
  put(d.u, st.u, "u");
  put(d.prev, st.u_prev, "u_prev");
  for (int a = 0; a < 3; ++a)
    for (int v = 0; v < 3; ++v) put(d.pml[a][v], st.pml[a][v], "a CPML memory variable");
  put(d.traces, st.traces, "traces");
}

int64_t AcousticGpu::bytes() const {
  const Impl& d = *impl_;
  int64_t b = d.u.bytes() + d.prev.bytes() + d.m.bytes() + d.tap_start.bytes() + d.tap_key.bytes() +
              d.taps.bytes() + d.rec_start.bytes() + d.rec_offset.bytes() + d.rec_weight.bytes() +
              d.wavelets.bytes() + d.traces.bytes();
  for (int a = 0; a < 3; ++a) {
    b += d.coef[a].bytes();
    for (const auto& v : d.pml[a]) b += v.bytes();
  }
  return b;
}

}  // namespace fdstencil::cuda::wave
