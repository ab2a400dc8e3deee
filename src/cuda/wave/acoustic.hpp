// The acoustic step on the GPU, as the wave layer sees it: plain C++, no CUDA types. One kernel
// per time step (acoustic_step.cuh) does the stencil, the leapfrog update, the CPML and the source
// injection, or (KernelConfig::cpml_apart) all of that but the CPML, whose terms a kernel over the
// layers' points adds after it, or (cpml_beside, one GPU) computes those points whole beside it
// (acoustic_layers.cuh); a small one (acoustic_record.cuh) samples the receivers: before the step,
// or beside it with the layers' kernel where that runs beside.
// Nothing else sweeps the volume.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "cuda/wave/gpu_model.hpp"
#include "physics/acoustic.hpp"

namespace fdstencil::cuda::wave {

// The step kernel's design (acoustic_step.cuh): x and y neighbours read through L1, from a
// shared-memory tile of the plane (3D, vec 4), or from a ring of plane tiles brought by the
// tensor memory accelerator (tma: 3D, vec 4, the interior box; its boundary blocks take l1 or
// the tile).
enum class StepDesign { l1, tile, tma };

// The step kernel's launch shape: a block of bx x by threads, each owning `vec` consecutive x
// points of one line and marching `nw` planes along z, in one design.
struct KernelConfig {
  int bx = 32, by = 4, vec = 4, nw = 16;
  StepDesign design = StepDesign::l1;
  int zq = 0;  // tile design: 1 keeps the z queue's R planes below the centre in shared memory
  // 1: the interior box (the blocks clear of every CPML layer) by its own kernel, compiled without
  // the CPML; 0: one kernel for every block (acoustic_step.cuh).
  int split = 0;
  // tma design: tiles in flight beyond the R + 1 a step reads (seismic/tma_ring.cuh), 0..8.
  int ahead = 2;
  // tma design: the march of the blocks outside the interior box, those that touch a CPML layer
  // (tile, which takes its two tiles of shared memory, or l1; the tile's measured faster).
  StepDesign boundary = StepDesign::tile;
  // Where the CPML's terms are computed: in the march, by the blocks that touch a layer (false), or
  // apart (true): every block marches as an interior one and a kernel over the layers' points
  // alone adds the terms after it (acoustic_layers.cuh; a slab's face planes before the exchange,
  // its inner planes after the inner chunks). Not with temporal blocking.
  bool cpml_apart = false;
  // With cpml_apart, where the layers' points are computed (acoustic_layers.cuh): false, the march
  // writes every point and the layers' kernel adds the terms after it; true ("cpml": "beside"),
  // the march writes the points clear of the layers alone (StepArgs::keep) and the layers' kernel
  // computes their whole step, the same arithmetic in the same order, on a stream of its own beside
  // the march. The same bits either way. One GPU only: a slab of a split run adds them after.
  bool cpml_beside = false;
  // With cpml_beside in 2D, where the layers' points are computed: 0, by their own kernel on a
  // second stream; N = 1..kMaxSidePoints, in the march's own launch, its first blocks taking N
  // layer points a thread (acoustic_step_beside.cuh). The same bits either way.
  int side = 0;
  // 1: a step's kernels that run on one stream, one after another, launch as programmatic
  // dependents of the kernel before (cuda/common/dependent_launch.cuh); 0: plain launches. A step
  // with a second stream (the layers' kernel or the receivers' beside the march) launches plainly.
  int pdl = 0;
  // A slab of a split run: 1 runs its face chunks on the exchange's stream beside the inner
  // chunks, 0 before them on the run's stream (AcousticGpu::step_faces). Other runs ignore it.
  int faces = 1;
  // Steps a CUDA graph holds (AcousticGpu::steps): 0 launches each step's kernels one by one; an
  // even count (the graph ends on the time level it starts from) of 2..kMaxGraphSteps replays them
  // as one graph. A split run's slabs ignore it.
  int graph = 0;
  // Temporal blocking (2D, acoustic_temporal.cuh): 0 steps one at a time; T = 2..kMaxTemporalSteps
  // takes T steps a pass over memory, in blocks of temporal_block threads (each block computing
  // 2 T R columns beside those it owns) marching temporal_nw rows. A graph then holds a multiple
  // of 2 T steps (an even count of passes, which ends on the arrays it starts from).
  int temporal = 0;
  int temporal_block = 256;
  int temporal_nw = 64;
  // A 2D run's blocks of steps in one cooperative kernel each, the fields held in shared memory
  // between steps (acoustic_resident.cuh): 0 off, 1 on, where one band of rows a multiprocessor
  // fits. The CPML apart's arithmetic, its bits; single steps (the linearised solvers') take the
  // one-step kernels.
  int resident = 0;
};
inline constexpr int kMaxGraphSteps = 1024;
// The default rule's cap (a 160-point layer at R <= 2): a side thread's points run one after
// another, and 4 a thread already trailed the march on small models (docs/wave.md).
inline constexpr int kMaxSidePoints = 16;
inline constexpr int64_t kMaxGridRows = 65535;  // a launch's blocks along grid y and z
inline constexpr int kMaxTemporalSteps = 4;
inline constexpr int kTemporalMaxThreads =
    256;  // acoustic_temporal.cuh's kTemporalThreads  // T queues of 2R + 1 registers a thread: 4 x 17 at R = 8
// The defaults for a radius, a computational plane of nx x ny points and the share of the
// computational points in CPML layers (0: none; acoustic::layer_share; the table in acoustic.cu
// cites the runs that chose them). `slabs`: the state is one slab of a split run (its faces are
// whole chunks, so the chunks stay short).
KernelConfig default_config(int dim, int radius, int64_t plane_points, double layer_share,
                            bool slabs = false);
// {"block": "BXxBY", "vec": 2|4, "nw": N, "design": "l1"|"tile"|"tma", "zq": 0|1 (tile only),
// "split": 0|1 (1 under tma), "ahead": 0..8, "boundary": "l1"|"tile" (tma only), "faces": 0|1
// (a split run's slabs), "graph": 0 or an even 2..1024, "cpml": "march"|"apart"|"beside", "side":
// 0..16 (2D, beside), "pdl": 0|1, and "temporal": 0|2..4, "temporal_block":
// threads, "temporal_nw": rows (2D)}, missing keys from the defaults, or where
// a "design" is named from that design's own (acoustic.cu's design_default; vec 4 under "tile"
// and "tma", their only width); throws Error(invalid_argument) naming a bad key or value.
KernelConfig parse_config(const std::string& json, int dim, int radius, int64_t plane_points,
                          double layer_share, bool slabs = false);
// The share was once a bool ("any layer"); a bool would now convert silently to 0 or 1 (every
// point in a layer), so passing one does not compile.
KernelConfig default_config(int dim, int radius, int64_t plane_points, bool layer_share,
                            bool slabs = false) = delete;
KernelConfig parse_config(const std::string& json, int dim, int radius, int64_t plane_points,
                          bool layer_share, bool slabs = false) = delete;
std::string describe(const KernelConfig& c);
// What a run at the default launch says on a card the table was not measured on ("" on the H100
// and the H200, whose campaigns chose and checked it; `device` as cudaDeviceProp::name gives it).
std::string untuned_card_notice(std::string_view device);

// KernelConfig::cpml_apart's layers kernel (acoustic_layers.cuh) runs over these.
inline constexpr int kLayerBoxes = 6;  // the z layers, then the y and x layers between them

// The layers' points as disjoint boxes (layer_boxes, below): box b starts at lo[b] (x, y, z)
// and spans extent[b] points; thread t of the launch takes point t - first[b] of the box b with
// first[b] <= t < first[b + 1], x fastest, so a warp reads along lines.
struct LayerBoxes {
  int count = 0;
  int lo[kLayerBoxes][3] = {};
  int extent[kLayerBoxes][3] = {};
  int64_t first[kLayerBoxes + 1] = {};
};

// The boxes of a domain's layers on its planes [k0, k1): the z layers, then the y layers between
// them, then the x layers between those; empty boxes left out. A slab of a split run asks with its
// own planes (its z axis's offset places them in the whole domain's layers).
LayerBoxes layer_boxes(const acoustic::SetupFrame<float>& s, int64_t k0, int64_t k1);

// The device bytes a run's state takes: three fields, the CPML memory, the taps, the traces.
int64_t state_bytes(const acoustic::Setup<float>& s);

class AcousticGpu {
 public:
  // Allocates and uploads on the current device; throws Error(out_of_memory) first when the state
  // does not fit. With `medium` (a model on this GPU, gpu_model.hpp), m is built from it here and
  // s.m is left empty; without, s.m holds it.
  AcousticGpu(const acoustic::Setup<float>& s, const KernelConfig& c, const MediumOnGpu* medium = nullptr);
  ~AcousticGpu();
  AcousticGpu(const AcousticGpu&) = delete;
  AcousticGpu& operator=(const AcousticGpu&) = delete;
  // Records the receivers' u^n and enqueues step n, on the run's own stream (and, with the layers
  // beside the march, its side stream, joined back before the step ends).
  void step(int64_t n);
  // Steps [first, first + count), as step() would: in CUDA graphs of KernelConfig::graph steps
  // where the count allows, then (KernelConfig::temporal) in passes of T steps, the rest one by
  // one. The graphs replay the same kernels, and a pass does each point's arithmetic in the same
  // order: the same bits.
  void steps(int64_t first, int64_t count);
  // Progress without draining the stream: mark(slot) records an event after the steps enqueued so
  // far, wait_mark(slot) waits for that event (slot 0 or 1).
  void mark(int slot);
  void wait_mark(int slot);
  int graph_steps() const;  // KernelConfig::graph

  // A slab of a run split along z (issue 14) steps in two parts around the halo exchange of
  // u^{n+1}. step_faces(n) records the receivers and enqueues the chunks of planes that write
  // u^{n+1}'s first and last R planes: on the exchange stream, once it has waited for the run's
  // (KernelConfig::faces 1), or on the run's stream with the exchange stream waiting for them
  // (faces 0). It returns those planes, the halo planes they go to, and the exchange stream (a
  // cudaStream_t), on which the caller enqueues the exchange after them. step_inside(n) enqueues the other chunks (after the exchange
  // when `overlap` is false, beside it when true), makes the run's stream wait for the exchange
  // (step n + 1 reads the halo) and swaps the time levels. Halo planes are whole planes, x and y
  // halos included: one contiguous block per side.
  struct Halo {
    const float* to_lower;
    float* from_lower;
    const float* to_upper;
    float* from_upper;
    int64_t bytes;
    void* stream;
  };
  Halo step_faces(int64_t n);
  // The current time level's faces and halo, after the steps enqueued so far: one exchange of
  // them before the time loop changes nothing (the halo already holds the neighbours' faces) and
  // makes NCCL connect its peers, which it does at the first send, outside the timed loop.
  Halo current_halo();
  void step_inside(int64_t n, bool overlap);
  // Medians over the sampled steps of a split run, milliseconds (GPU events): the exchange on its
  // stream, from the face chunks' end to the transfer's end, and the inner chunks.
  struct SplitTiming {
    double exchange_ms = 0, inside_ms = 0;
    int64_t samples = 0;
  };
  SplitTiming split_timing();
  // Samples steps again from the next one on (after a warm-up): the overlap probe's steps ran both
  // paths, and the figures are to be the kept path's.
  void restart_split_timing();
  void synchronize();  // the run's stream, and a split run's exchange stream
  // u^n after n steps, the whole storage (s.alloc elements) into `host`.
  void download_current(float* host);
  std::vector<float> traces();  // (nrec, nt)
  // The state's arrays (physics/acoustic.hpp kStateArrays) one by one, copied out synchronously, and
  // back: restore() takes arrays of those sizes and throws Error(invalid_argument) for another.
  int64_t state_array_bytes(int i) const;
  void copy_state_array(int i, void* host);
  void restore(const acoustic::State<float>& st);
  // A new run on the same medium and grid (wave::Options::kept_state): u, u_prev, the CPML memory
  // and the traces zeroed, and the absorbing profiles, sources, receivers and wavelets taken from
  // `s` in place of the last run's; m, the launch and the stream stay (s.m is not read). Throws
  // Error(invalid_argument) where s's storage or layers differ from the state's.
  void renew(const acoustic::Setup<float>& s);
  int64_t bytes() const;
  // For the solvers built on the step (wave/imaging.cpp through cuda/wave/acoustic_backward and
  // acoustic_born), which call step() alone: u^n and u^{n-1} on the device after the steps enqueued
  // so far (the storage layout), and the run's stream (a cudaStream_t). Born's scattered field
  // adds its source term into u^n between steps, on that stream.
  const float* current_device() const;
  float* current_device();
  const float* previous_device() const;
  const float* medium_device() const;  // m, the storage layout: boundary saving's step back reads it
  void* stream() const;
  // The state without its traces (u, u_prev, the CPML memory: snapshot_elements() floats) to and
  // from device memory, enqueued on the run's stream: a checkpoint of the backward pass.
  int64_t snapshot_elements() const;
  void snapshot(float* device) const;
  void resume(const float* device);
  // The kernel, its launch shape and its resources (registers, spills, occupancy).
  std::string describe() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace fdstencil::cuda::wave
