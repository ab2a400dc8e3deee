// The GPU's backward pass: acoustic_backward.hpp. The forward state is AcousticGpu's at
// linearised_launch, the adjoint AcousticAdjointGpu's, both on the forward state's stream.
#include "cuda/wave/acoustic_backward.hpp"

#include <chrono>
#include <memory>
#include <string>
#include <utility>

#include "core/revolve.hpp"
#include "core/stop.hpp"
#include "cuda/wave/drain.hpp"
#include "cuda/common/check.hpp"
#include "cuda/wave/acoustic.hpp"
#include "cuda/wave/acoustic_adjoint.hpp"
#include "cuda/wave/acoustic_reverse.hpp"
#include "cuda/wave/device_array.hpp"
#include "fdstencil/device.hpp"
#include "fdstencil/error.hpp"

namespace fdstencil::cuda::wave {

struct KeptBuffer {
  DeviceArray<float> buf;
  int device = -1;
};

std::shared_ptr<KeptBuffer> make_kept_buffer() { return std::make_shared<KeptBuffer>(); }

namespace {

// The kept buffer's bytes on the current GPU: memory the pass may count as free.
int64_t kept_here(const KeptBuffer* kept) {
  return kept && kept->device == current_device() ? kept->buf.bytes() : 0;
}

// Frees the kept buffer on its own GPU, the current one restored after.
void release(KeptBuffer* kept) {
  if (!kept || kept->buf.n == 0) return;
  const int here = current_device();
  if (kept->device != here) FDS_CUDA_CHECK(cudaSetDevice(kept->device));
  kept->buf = DeviceArray<float>();
  if (kept->device != here) FDS_CUDA_CHECK(cudaSetDevice(here));
  kept->device = -1;
}

// Gives the kept buffer back unless it is on this GPU and of exactly `n` floats: a pass takes it
// only whole, so that none of its memory is held beyond what the pass counted as its own (the
// adjoint's state and the working fields are allocated beside it). Called once the pass knows its
// storage, before anything else is allocated.
void fit_kept(KeptBuffer* kept, int64_t n) {
  if (kept && kept_here(kept) != n * int64_t(sizeof(float))) release(kept);
}

// n floats, uninitialised, for a sweep's stored fields, slots or strips: the kept buffer where the
// caller keeps one of that size on this GPU (fit_kept), else a new allocation, left in the kept
// buffer for the next pass or, without one, owned by `own`.
float* stored_buffer(KeptBuffer* kept, int64_t n, DeviceArray<float>& own) {
  if (!kept) {
    own = DeviceArray<float>::uninitialised(n);
    return own.p;
  }
  fit_kept(kept, n);
  if (kept->buf.n == 0) {
    kept->buf = DeviceArray<float>::uninitialised(n);
    kept->device = current_device();
  }
  return kept->buf.p;
}

double seconds_since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

// What both ways of keeping the forward run share: the states, the three compact fields of
// revolve's backend (u^{n+1}, u^n, u^{n-1}, rotated after each adjoint step, which reads u^n) and
// the adjoint made once the traces are in.
struct Pass {
  const acoustic::Setup<float>& s;
  const std::function<std::vector<float>(const std::vector<float>&)>& residual_of;
  bool correlate;
  AcousticGpu fwd;
  std::unique_ptr<AcousticAdjointGpu> adj;
  std::vector<float> traces;
  std::chrono::steady_clock::time_point start = std::chrono::steady_clock::now();
  double forward_s = 0;  // the first sweep, its traces downloaded

  Pass(const acoustic::Setup<float>& setup, const KernelConfig& c,
       const std::function<std::vector<float>(const std::vector<float>&)>& r, bool cor)
      : s(setup), residual_of(r), correlate(cor), fwd(setup, c) {}
  int64_t points() const { return s.nx * s.ny * s.nz; }
  void start_adjoint() {
    traces = fwd.traces();  // waits for the sweep
    forward_s = seconds_since(start);
    adj = std::make_unique<AcousticAdjointGpu>(s, fwd.stream(), residual_of(traces), true, correlate);
  }
};

// revolve::Schedule's backend: checkpoint slots in one device allocation.
struct Checkpointed {
  Pass& p;
  DeviceArray<float> own;  // the slots, where no kept buffer holds them
  float* slots;
  int64_t slot_elements;
  DeviceArray<float> field[3];
  float *next, *cur, *prev;

  Checkpointed(Pass& pass, int64_t count, KeptBuffer* kept)
      : p(pass),
        slots(stored_buffer(kept, count * pass.fwd.snapshot_elements(), own)),
        slot_elements(pass.fwd.snapshot_elements()) {
    for (auto& f : field) f = DeviceArray<float>(p.points());
    FDS_CUDA_CHECK(cudaStreamSynchronize(cudaStreamLegacy));  // zeroed before the run's stream writes them
    next = field[0].p;
    cur = field[1].p;
    prev = field[2].p;
  }
  float* slot(int i) { return slots + int64_t(i) * slot_elements; }
  void save(int i) { p.fwd.snapshot(slot(i)); }
  void load(int i) { p.fwd.resume(slot(i)); }
  void advance(int64_t n) {
    core::poll_stop();
    p.fwd.step(n);
  }
  void end_sweep() {
    compact(p.s, p.fwd.current_device(), next, p.fwd.stream());
    compact(p.s, p.fwd.previous_device(), cur, p.fwd.stream());
    p.start_adjoint();
  }
  // The snapshot's second array is u_prev (AcousticGpu::snapshot's order, u first).
  void prev_from_slot(int i) { compact(p.s, slot(i) + p.s.alloc, prev, p.fwd.stream()); }
  void prev_from_state() { compact(p.s, p.fwd.previous_device(), prev, p.fwd.stream()); }
  void adjoint(int64_t n) {
    core::poll_stop();
    p.adj->step(n, cur);
    float* done = next;
    next = cur;
    cur = prev;
    prev = done;
  }
};

// Every step's field: u^0 (zero) .. u^nt, compact, as revolve::checkpoint_slots counts them (the
// adjoint's sum by parts reads u^0 .. u^{nt-1}).
void every_field(Pass& p, BackwardResult& r, KeptBuffer* kept) {
  const int64_t P = p.points(), nt = p.s.nt;
  // u^1 .. u^nt are written before they are read: only u^0 is zeroed, on the run's stream.
  DeviceArray<float> own;
  float* const store = stored_buffer(kept, (nt + 1) * P, own);
  FDS_CUDA_CHECK(
      cudaMemsetAsync(store, 0, size_t(P) * sizeof(float), static_cast<cudaStream_t>(p.fwd.stream())));
  r.stored_bytes = (nt + 1) * P * int64_t(sizeof(float));
  const Drain drain{static_cast<cudaStream_t>(p.fwd.stream())};  // the steps read the store
  for (int64_t n = 0; n < nt; ++n) {
    core::poll_stop();
    p.fwd.step(n);
    compact(p.s, p.fwd.current_device(), store + (n + 1) * P, p.fwd.stream());
  }
  p.start_adjoint();
  for (int64_t n = nt - 1; n >= 0; --n) {
    core::poll_stop();
    p.adj->step(n, store + n * P);
  }
  p.fwd.synchronize();  // the adjoint's steps read the store, freed on return
}

// A second stream forked from and joined to the run's: the step back runs on it beside the adjoint.
struct SideStream {
  cudaStream_t main, side = nullptr;
  cudaEvent_t fork = nullptr, join = nullptr;
  explicit SideStream(void* stream) : main(static_cast<cudaStream_t>(stream)) {
    FDS_CUDA_CHECK(cudaStreamCreateWithFlags(&side, cudaStreamNonBlocking));
    FDS_CUDA_CHECK(cudaEventCreateWithFlags(&fork, cudaEventDisableTiming));
    FDS_CUDA_CHECK(cudaEventCreateWithFlags(&join, cudaEventDisableTiming));
  }
  ~SideStream() {
    cudaEventDestroy(join);
    cudaEventDestroy(fork);
    cudaStreamDestroy(side);
  }
  SideStream(const SideStream&) = delete;
  SideStream& operator=(const SideStream&) = delete;
  void branch() {  // the side stream waits for what the run's stream has enqueued so far
    FDS_CUDA_CHECK(cudaEventRecord(fork, main));
    FDS_CUDA_CHECK(cudaStreamWaitEvent(side, fork));
  }
  void merge() {  // the run's stream waits for what the side stream has enqueued so far
    FDS_CUDA_CHECK(cudaEventRecord(join, side));
    FDS_CUDA_CHECK(cudaStreamWaitEvent(main, join));
  }
};

// Boundary saving (physics/reversal.hpp): the ring of u^0 .. u^nt kept, then the box's field
// stepped back on two compact fields, u^{n+1} and u^n; the step back writes u^{n-1} over u^{n+1}.
// Nothing beyond the ring is known: zero there. Adjoint step n reads u^n alone, and step back n
// reads u^n and writes where adjoint step n + 1 read u^{n+1}, so the two run at once on two
// streams, step back n after adjoint step n + 1 and before adjoint step n - 1.
void boundary_saved(Pass& p, const acoustic::ReversalBox& box, BackwardResult& r, KeptBuffer* kept) {
  const ReversalGpu rev(p.s, box, p.fwd.medium_device());
  const int64_t P = p.points(), nt = p.s.nt, width = rev.ring();
  void* stream = p.fwd.stream();
  DeviceArray<float> own;
  float* const strips = stored_buffer(kept, (nt + 1) * width, own);
  FDS_CUDA_CHECK(
      cudaMemsetAsync(strips, 0, size_t(width) * sizeof(float), static_cast<cudaStream_t>(stream)));  // u^0
  DeviceArray<float> a = DeviceArray<float>::uninitialised(P), b = DeviceArray<float>::uninitialised(P);
  r.stored_bytes = (nt + 1) * width * int64_t(sizeof(float)) + a.bytes() + b.bytes() +
                   ReversalGpu::bytes(p.s, box);  // as checked
  SideStream two(stream);
  const Drain drain{two.main, two.side};  // both sweeps' steps read the strips and fields
  for (int64_t n = 0; n < nt; ++n) {
    core::poll_stop();
    p.fwd.step(n);
    rev.keep(p.fwd.current_device(), strips + (n + 1) * width, stream);
  }
  float *next = a.p, *cur = b.p;
  compact(p.s, p.fwd.current_device(), next, stream);
  compact(p.s, p.fwd.previous_device(), cur, stream);
  rev.forget_beyond_ring(next, stream);
  rev.forget_beyond_ring(cur, stream);
  p.start_adjoint();
  for (int64_t n = nt - 1; n >= 0; --n) {
    core::poll_stop();
    two.branch();
    p.adj->step(n, cur);
    if (n == 0) break;  // u^{-1} is not read: the sum by parts ends at u^0
    rev.step_back(cur, next, strips + (n - 1) * width, n, two.side);
    two.merge();
    std::swap(next, cur);
    ++r.reversed_steps;
  }
  p.fwd.synchronize();  // the steps read the strips and fields, freed on return
}

}  // namespace

KernelConfig linearised_launch(const acoustic::SetupFrame<float>& s) {
  KernelConfig c = default_config(s.dim, s.radius, s.nx * s.ny, acoustic::layer_share(s.axis));
  c.graph = 0;
  c.temporal = 0;
  return c;
}

std::vector<float> modelled(const acoustic::Setup<float>& s) {
  AcousticGpu fwd(s, linearised_launch(s));
  for (int64_t n = 0; n < s.nt; ++n) {
    core::poll_stop();
    fwd.step(n);
  }
  return fwd.traces();
}

std::vector<float> source_adjoint(const acoustic::Setup<float>& s, const std::vector<float>& residual) {
  AcousticAdjointGpu adj(s, cudaStreamLegacy, residual, false, false, true);
  for (int64_t n = s.nt - 1; n >= 0; --n) {
    core::poll_stop();
    adj.step(n, nullptr);
  }
  return adj.wavelets();  // waits for the steps
}

namespace {

// The pass's states, made beside the kept buffer where they fit, else once it is given back: a shot
// that fits the GPU alone never fails for the memory the last shot's buffer holds.
std::unique_ptr<Pass> make_pass(
    const acoustic::Setup<float>& s,
    const std::function<std::vector<float>(const std::vector<float>&)>& residual_of, bool correlate,
    KeptBuffer* kept) {
  if (kept && kept->device != current_device()) release(kept);  // another GPU's: of no use here
  try {
    return std::make_unique<Pass>(s, linearised_launch(s), residual_of, correlate);
  } catch (const Error& e) {
    if (e.kind() != ErrorKind::out_of_memory || kept_here(kept) == 0) throw;
  }
  release(kept);
  return std::make_unique<Pass>(s, linearised_launch(s), residual_of, correlate);
}

}  // namespace

BackwardResult backward(const acoustic::Setup<float>& s,
                        const std::function<std::vector<float>(const std::vector<float>&)>& residual_of,
                        bool correlate, int64_t budget_bytes, bool boundary, KeptBuffer* kept) {
  const std::unique_ptr<Pass> pass = make_pass(s, residual_of, correlate, kept);
  Pass& p = *pass;
  BackwardResult r;
  const int64_t field = p.points() * int64_t(sizeof(float));
  const int64_t state = p.fwd.snapshot_elements() * int64_t(sizeof(float));
  // What stays free for the kept fields once the adjoint's state is made (the kept buffer counted
  // as free: the fields go into it), less a margin for what AcousticAdjointGpu::bytes leaves out
  // (its coefficients and receivers' lists, the allocator's rounding): 1 % of the free memory and
  // 64 MiB.
  const int64_t free_bytes = device_free_bytes() + kept_here(kept),
                adjoint = AcousticAdjointGpu::bytes(s, true, correlate);
  const int64_t available = free_bytes - adjoint - free_bytes / 100 - (int64_t(64) << 20);
  if (available <= 0) {
    std::string what = "the adjoint's state (";
    what += std::to_string(adjoint >> 20);
    what += " MiB) does not fit in the ";
    what += std::to_string(free_bytes >> 20);
    what += " MiB the device has free beside the forward run's state";
    throw Error(ErrorKind::out_of_memory, what);
  }
  if (!boundary) r.checkpoints = revolve::checkpoint_slots(s.nt, field, state, budget_bytes, available);
  const acoustic::ReversalBox box = boundary ? acoustic::checked_reversal_box(s) : acoustic::ReversalBox{};
  fit_kept(kept, boundary             ? (s.nt + 1) * acoustic::ring_points(box)
                 : r.checkpoints == 0 ? (s.nt + 1) * p.points()
                                      : r.checkpoints * p.fwd.snapshot_elements());
  core::set_progress_total(revolve::sweeps_steps(s.nt, r.checkpoints));
  if (boundary) {
    revolve::check_strips((s.nt + 1) * acoustic::ring_points(box) * int64_t(sizeof(float)) + 2 * field +
                              ReversalGpu::bytes(s, box),
                          budget_bytes, available);
    boundary_saved(p, box, r, kept);
  } else if (r.checkpoints == 0) {
    every_field(p, r, kept);
  } else {
    Checkpointed b(p, r.checkpoints, kept);
    const Drain drain{static_cast<cudaStream_t>(p.fwd.stream())};  // the steps read the slots
    r.stored_bytes = r.checkpoints * state + 3 * field;
    revolve::Schedule<Checkpointed> schedule(b, s.nt, int(r.checkpoints));
    r.recomputed_steps = schedule.run();
    p.fwd.synchronize();  // the adjoint's steps read the checkpoints' fields, freed on leaving
  }
  r.traces = std::move(p.traces);
  r.adjoint = p.adj->gradient();  // waits for the backward steps
  if (correlate) {
    r.cross = p.adj->cross();
    r.illumination = p.adj->illumination();
  }
  r.forward_s = p.forward_s;
  r.backward_s = seconds_since(p.start) - p.forward_s;
  return r;
}

}  // namespace fdstencil::cuda::wave
