// The acoustic wave solver: u_tt = v^2 (lap u) + s, constant density, leapfrog in time, order 2R
// in space, a CPML on every face (or a free surface on top), point sources and receivers at any
// position. 3D models are (nz, ny, nx), 2D models (nz, nx); x is fastest in memory.
//
// Source scaling: a source of wavelet f at x_s adds s = v(x)^2 f(t) delta(x - x_s), so that in a
// homogeneous medium u = f * G with G = delta(t - r/v) / (4 pi r) in 3D and
// H(t - r/v) / (2 pi sqrt(t^2 - r^2/v^2)) in 2D (docs/wave.md).
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

namespace fdstencil::wave {

class Comm;       // fdstencil/wave_comm.hpp
class KeptState;  // below, Options::kept_state

// --- the velocity model --------------------------------------------------------------------------
struct Model {
  int dim = 3;                     // 2 or 3
  int64_t nz = 0, ny = 1, nx = 0;  // ny is 1 in 2D
  double h = 0;                    // grid spacing in metres, the same on every axis
  std::vector<float> v;            // m/s, C order: planes z0 .. z0 + planes() - 1 of (nz, ny, nx)
  // The values when a caller holds them instead of v (the Python module: the caller's NumPy array,
  // not copied): they must outlive the model's runs and not change meanwhile. Empty: v holds them.
  std::span<const float> borrowed;
  // The values on a GPU instead, where a caller holds them (the Python module's CUDA arrays, not
  // copied), C order, all nz planes: summarise() takes their summary there, and a run on that GPU
  // builds m there; the host never reads them (plane() refuses), so such a model runs only on the
  // cuda backend, on that GPU, on one rank. They must outlive the model's runs and not change.
  struct OnGpu {
    const float* v = nullptr;
    int device = -1;
  };
  OnGpu gpu;
  bool on_gpu() const { return gpu.v != nullptr; }
  // The first plane v holds: 0 when it holds them all. A rank of a run split along z may hold only
  // the planes its slab needs (a Window), so that no rank holds the whole model; `whole` then
  // keeps what the run needs of the others: their extremes and checksum, taken as they were read.
  // A caller may fill it for a whole model too, to spare its runs their passes over it (v must
  // not change then).
  int64_t z0 = 0;
  struct Summary {
    float vmin = 0, vmax = 0;
    uint32_t crc = 0;  // CRC-32C of all nz x ny x nx values
  };
  std::optional<Summary> whole;
  struct Window {
    int64_t k0 = 0, k1 = 0;  // model planes [k0, k1)
  };

  int64_t points() const { return nz * ny * nx; }  // the whole model's
  std::span<const float> values() const { return borrowed.empty() ? std::span<const float>(v) : borrowed; }
  int64_t planes() const { return on_gpu() ? nz : ny * nx > 0 ? int64_t(values().size()) / (ny * nx) : 0; }
  const float* plane(int64_t k) const;  // model plane k; throws std::logic_error when v lacks it
  float vmin() const;
  float vmax() const;
  std::pair<float, float> extremes() const;  // {vmin, vmax} in one pass
  uint32_t checksum() const;                 // the whole model's CRC-32C
  // Throws Error(invalid_argument) naming the first bad value (non-finite, zero or negative, with
  // its index), a bad spacing or shape, or a size that does not match v.
  void validate() const;
  // validate() and `whole` filled (extremes and checksum) in one pass over the OpenMP threads: what
  // a caller does once before several runs of one model, which then skip their own passes.
  void summarise();

  // Each builder reads or makes every plane; with `keep`, v holds only the planes [k0, k1) of
  // them, and the whole model's extremes, first bad value and checksum are found on the way.
  static Model constant(int dim, int64_t nz, int64_t ny, int64_t nx, double h, float velocity,
                        const Window* keep = nullptr);
  // Layers from the top: (top depth in metres, velocity), the first at depth 0, depths rising.
  static Model layered(int dim, int64_t nz, int64_t ny, int64_t nx, double h,
                       const std::vector<std::pair<double, float>>& layers, const Window* keep = nullptr);
  // A float32 .npy of shape (nz, ny, nx) or (nz, nx); validated. Throws Error(io) for the file.
  static Model from_npy(const std::filesystem::path& path, double h, const Window* keep = nullptr);
};

// --- geometry ------------------------------------------------------------------------------------
// A position in metres from the model's first grid point (index 0 on every axis); y is ignored
// in 2D.
struct Point {
  double z = 0, y = 0, x = 0;
};

// How a point source or receiver off the grid is spread over grid points.
enum class Interpolation {
  hicks,      // Kaiser-windowed sinc, 8 points per axis (Hicks 2002): exact for band-limited fields
  trilinear,  // 2 points per axis
};
Interpolation parse_interpolation(const std::string& name);  // "hicks" or "trilinear"

struct Boundary {
  // Points of CPML outside the model on every face (0: none, a rigid box). 10: the narrowest layer
  // whose measured reflection stays below -40 dB across the source's band, in 2D and 3D at R = 2, 4
  // and 8 (8 points reflected -39.0 to -39.8 dB in 2D; wider ones gain at most 1 dB there; docs/wave.md).
  int cpml_width = 10;
  bool free_surface = false;  // the top face z = 0 is a pressure-free surface instead of a CPML
  double reflection = 0;      // the CPML's theoretical reflection; 0 picks it from the width
  double cpml_frequency = 0;  // Hz: the CPML's alpha is pi times this; 0 takes the sources'
};

// The computational domain: the model with its absorbing layers, the halo of the stencil, and the
// split along z into slabs (the unit a multi-GPU run gives each device).
struct Domain {
  int dim = 3, radius = 1;
  int64_t model_nz = 0, model_ny = 1, model_nx = 0;
  int lo[3] = {0, 0, 0}, hi[3] = {0, 0, 0};  // absorbing points before and after the model, axes x, y, z
  int64_t nx = 0, ny = 1, nz = 0;            // computational extents: model + absorbing layers
  int64_t line = 0, slice = 0;               // storage strides in elements (x-lines, planes)
  int64_t origin = 0;                        // element index of computational point (0, 0, 0)
  int64_t alloc = 0;                         // elements per field, halo and tail included

  static Domain make(int dim, int radius, int64_t nz, int64_t ny, int64_t nx, const Boundary& b);
  int64_t points() const { return nx * ny * nz; }
  int64_t index(int64_t i, int64_t j, int64_t k) const { return origin + i + j * line + k * slice; }
  struct Slab {
    int64_t k0, k1;  // computational planes [k0, k1); each needs R planes of halo from its neighbours
  };
  // `parts` slabs of near-equal cost, a plane of the z absorbing layers costing `layer_cost`
  // inner planes (1: near-equal planes; near-equal planes also where the balance would leave a
  // slab thinner than the radius); throws Error(invalid_argument) when near-equal slabs would be
  // thinner than the radius (a halo reaching past its neighbour) or layer_cost is below 1.
  std::vector<Slab> split_z(int parts, double layer_cost) const;
  // The model planes a slab reads: its own, or the model's edge plane for its planes in the z
  // absorbing layers. What a split run's rank must hold of the model (Model::z0).
  Model::Window model_planes(const Slab& s) const;
};

// --- time ----------------------------------------------------------------------------------------
// The largest stable leapfrog step for order 2R in `dim` dimensions: 2 h / (vmax sqrt(dim * s)),
// s the largest magnitude of the second-derivative stencil's symbol (at the Nyquist wavenumber).
double max_stable_dt(int dim, int radius, double h, double vmax);
// The points per wavelength order 2R needs for a phase-velocity error of at most 1 %.
double points_per_wavelength_needed(int radius);

// --- wavelets ------------------------------------------------------------------------------------
// The Ricker wavelet (1 - 2 a) exp(-a), a = (pi f0 (t - delay))^2, at t = n dt, n = 0..nt-1.
std::vector<double> ricker(double f0, double delay, double dt, int64_t nt);
// The highest frequency at which the amplitude spectrum of `w` (sampled at dt) is still 1 % of its
// peak: the "highest significant frequency" of the under-sampling warning. ~2.76 f0 for a Ricker.
double highest_significant_frequency(const std::vector<double>& w, double dt);
// Band-limited resampling: windowed-sinc interpolation of x (sampled at dt_in, starting at t = 0)
// at t = n dt_out, n = 0..n_out-1, low-passed at the lower of the two Nyquist frequencies so a
// coarser output does not alias. Samples beyond x's end count as zero.
std::vector<double> resample(const std::vector<double>& x, double dt_in, double dt_out, int64_t n_out);

// --- the analytic solution -----------------------------------------------------------------------
// u(r, t) in a homogeneous medium of velocity v for the source scaling above: f(t - r/v) / (4 pi r)
// in 3D; in 2D the convolution with H(t - r/v) / (2 pi sqrt(t^2 - r^2/v^2)) by product integration
// (the kernel integrated exactly over each interval, acosh of its ends), which removes the
// singularity. `wavelet` is a function of time.
std::vector<double> analytic_trace(int dim, double r, double v, const std::function<double(double)>& wavelet,
                                   double dt, int64_t nt);

// --- a run ---------------------------------------------------------------------------------------
struct Source {
  Point at;
  std::vector<double> wavelet;  // f at t = n dt for the run's dt; zero after its end
};

// A run's whole state between two steps, what a resumed run needs to continue bit for bit: both
// time levels, the CPML's memory variables and the traces recorded so far, each as the backend
// stores it. save_checkpoint and load_checkpoint move it through a file.
struct Checkpoint {
  int64_t step = 0;          // steps done: the state holds u^step and u^{step-1}
  int64_t nt = 0;            // the run's steps
  uint64_t fingerprint = 0;  // run_fingerprint() of the run it belongs to
  std::string backend;       // "cuda" or "cpu": a run resumes on the backend that wrote it
  int element_bytes = 4;     // 4: float; 8: the cpu's double precision
  // The arrays by name ("u", "u_prev", "pml_<axis>_<psi|chi|phi>", "traces"), raw bytes.
  std::vector<std::pair<std::string, std::vector<char>>> arrays;
  int64_t bytes() const;
};

struct Snapshot {
  int64_t step = 0;          // the wavefield u at t = step * dt
  std::vector<float> field;  // the model's points (no absorbing layers), C order (nz, ny, nx)
};

// Options::layer_plane_cost's default for radius R: what a plane of the z absorbing layers costs
// against an inner plane in a split run on the GPUs. The fastest of 1-6 on four H100s at 1024^3
// was 3 at R = 4 and 2 at R = 8 (a wider stencil costs the interior more, the layer relatively
// less; docs/multigpu.md, "Balanced slabs"); between them a straight line, outside them its ends.
double default_layer_plane_cost(int radius);

struct Options {
  int radius = 4;
  double dt = 0;            // 0: cfl_safety x max_stable_dt
  double cfl_safety = 0.8;  // the default step's fraction of the stability limit
  int64_t nt = 0;           // time steps
  Boundary boundary;
  Interpolation interpolation = Interpolation::hicks;
  std::vector<Source> sources;
  std::vector<Point> receivers;
  std::vector<int64_t> snapshot_steps;  // 0..nt: the wavefield after that many steps
  std::string backend = "auto";         // auto (the GPU when present), cuda or cpu
  bool double_precision = false;        // cpu only: the whole solver in double, for verification
  // Kernel parameters of the GPU step (empty: the defaults for R): {"block": "32x4", "vec": 4, "nw": 16}
  std::string kernel_params;
  // Called from the time loop with the steps done so far (at most ~200 times per run); on the GPU
  // a report may lag the steps queued by a block, so that the device's queue never runs dry.
  std::function<void(int64_t done, int64_t total)> progress;
  // Whether Result::final_field is filled: a split run gathers it whole on rank 0, which a run
  // too large for one rank's memory must not.
  bool final_field = true;
  // Called with each requested snapshot as it is taken (the solver keeps none).
  std::function<void(const Snapshot&)> on_snapshot;
  // Every `checkpoint_every` steps (0: never) the run hands on_checkpoint its state; never after
  // the last step, whose results the run returns instead. The checkpoint is the callee's to keep
  // (a writer thread may take it over while the run goes on).
  int64_t checkpoint_every = 0;
  std::function<void(Checkpoint)> on_checkpoint;
  // Optional: a checkpoint the caller is done with (this run's, written already), whose arrays the
  // next one is copied into instead of fresh memory; an empty Checkpoint when it has none.
  std::function<Checkpoint()> checkpoint_buffer;
  // Polled at each step boundary: when it returns true the run stops there, hands on_checkpoint
  // (when set) the state of that boundary and returns with Result::interrupted set. The GPU's time
  // loop enqueues steps in blocks (CUDA graphs) and asks for each boundary of a block before
  // enqueuing it. The linearised solvers (imaging.hpp) ask it before every step of each sweep and
  // throw Error(ErrorKind::interrupted) when it returns true.
  std::function<bool()> stop_requested;
  // Continue from this state instead of rest (nullptr: start at step 0). It must belong to this
  // run (the same fingerprint) and backend; run() refuses it otherwise, naming the difference.
  const Checkpoint* resume = nullptr;
  // A split run (comm, below) only: its checkpoints written by every rank into this one file, each
  // rank its own slab's bytes (in save_checkpoint's format, the arrays a single rank writes and a
  // header padded with spaces; it resumes on any number of ranks), instead of gathered on rank 0
  // and handed to on_checkpoint. Empty: gathered.
  std::filesystem::path split_checkpoint_file;
  // A split run only: resume from this checkpoint file, each rank reading its own slab's part of it,
  // instead of rank 0's Options::resume. Checked as resume is.
  std::filesystem::path split_resume_file;
  // A split run only: each snapshot written by every rank, its own model planes, into the .npy of
  // the model's points (nz, [ny,] nx) this names for the step, instead of gathered on rank 0 and
  // handed to on_snapshot; and the final field into split_final_file instead of
  // Result::final_field (when final_field is set). Empty: gathered.
  std::function<std::filesystem::path(int64_t step)> split_snapshot_file;
  // A split run only, without split_snapshot_file: each rank cuts its snapshot before the gather
  // (given its model points, from model plane first_plane, it returns the cut's values in them, in
  // C order), and rank 0 hands on_snapshot the ranks' cuts concatenated in rank order: a slice of
  // the field, without any rank holding the whole. Empty: the whole field is gathered.
  std::function<std::vector<float>(const std::vector<float>& planes, int64_t first_plane)> split_snapshot_cut;
  std::filesystem::path split_final_file;
  // GPU: measure the copy bandwidth before the run (1 GiB buffers, ~10 ms) for Timing's bound. A
  // survey's later shots skip it: one figure serves the whole survey, and shots running side by
  // side would disturb each other's measurement.
  bool measure_bandwidth = true;
  // Several ranks (issue 14): when set with more than one rank, this process runs one slab of the
  // domain split along z (Domain::split_z), exchanging halo planes with its neighbours every step;
  // rank 0's Result holds every receiver's trace and the whole final field, the other ranks' hold
  // neither. Every rank must pass the same model and options (checked: the ranks compare a
  // fingerprint of their runs). A failure on one rank before the first exchange stops every rank
  // with an error, one after it ends every rank's process (Comm::abort). On the GPUs when the
  // transport carries device memory (NCCL; "auto" takes them as a one-rank run does), else on the
  // cpu. Its checkpoints, snapshots and final field are gathered on rank 0, unless the split_*
  // options below name the files every rank writes its own part of.
  Comm* comm = nullptr;
  // A split run on the GPUs: the halo exchange beside the inner planes' update (on), before it
  // (off), or whichever of the two the run's own first steps measure faster (automatic: the
  // overlap can cost more than it hides where the exchange is short).
  // Both paths compute the same field to the bit.
  enum class Overlap { automatic, on, off };
  Overlap overlap = Overlap::automatic;
  // A split run's balance: a plane of the z absorbing layers counts this many inner planes when
  // the slabs are cut (Domain::split_z), since the layers' update costs more than the interior's
  // and the ranks step in lockstep with the slowest. 0 takes default_layer_plane_cost(radius); 1
  // cuts near-equal slabs.
  double layer_plane_cost = 0;
  // A GPU state one run leaves for the next (make_kept_state): a run of the same medium on the
  // same grid and GPU as the last one that held it (a survey's next shot) zeroes that state's
  // wavefield and absorbing memory and takes its own sources, receivers, wavelets and absorbing
  // profiles, instead of building m and allocating and uploading the whole state again. Any other
  // run frees the kept state first and leaves its own in it. A run on one rank on the GPU only
  // (the cpu and a split run keep nothing); one run at a time per KeptState (one per thread). The
  // medium is recognised by its values (Model::checksum), not by its address. The linearised
  // solvers' backward pass (imaging.hpp) on the GPU keeps only its stored fields' (or checkpoints'
  // or strips') allocation there for the next shot of the same sizes, freeing a forward run's
  // state the KeptState held; a forward run frees that allocation.
  std::shared_ptr<KeptState> kept_state;
};

// An empty KeptState, for Options::kept_state; it frees its GPU memory when the last pointer goes.
std::shared_ptr<KeptState> make_kept_state();

// The cost of a z-layer plane a split run's slabs are cut with: Options::layer_plane_cost, or the
// radius's default where it is 0. A caller that cuts the slabs itself (a rank reading only its
// model planes: Domain::model_planes) passes this to Domain::split_z.
double slab_layer_cost(const Options& o);

struct Timing {
  double loop_s = 0;   // the time loop alone
  double total_s = 0;  // setup, loop, downloads
  double setup_s = 0;  // before the loop: checks, the model's pass, the state's setup and upload
  // Where setup_s went, in the order the phases ran (name, seconds): "checks" (the options, the
  // model's extremes, the domain), "memory" (the host and device memory checked), "taps", "identity"
  // (the run's fingerprint), "copy_probe" (a GPU run that measures its bandwidth), "medium" (m and
  // the CPML's coefficients), "state" (the backend's arrays allocated, zeroed and uploaded),
  // "resume". A phase a run skips is absent; a split run's end at "medium" (its slab's state
  // counts in setup_s alone). The
  // summary's JSON object lists them by name; Python's dict keeps this order.
  std::vector<std::pair<std::string, double>> setup_phases;
  double gpts = 0;  // computational points x steps / loop_s / 1e9
  // the interior step's DRAM bytes per point: u, u_prev and m read, u written (16 in float, 32 in
  // a cpu run in double)
  double bytes_per_point = 0;
  // GPU: the device-to-device copy bandwidth measured in this run; cpu: the host's (STREAM's copy
  // by the run's threads), in runs of 10^9 point-steps or more, else 0 (no bound reported)
  double copy_gbps = 0;
  double bound_gpts = 0;  // copy_gbps / bytes_per_point
  double percent_of_bound = 0;
  int64_t device_bytes = 0;       // memory the state took on the device (or host for cpu)
  int64_t checkpoints = 0;        // states handed to on_checkpoint
  double checkpoint_s = 0;        // the loop's time on them: download, on_checkpoint (not in loop_s)
  double checkpoint_write_s = 0;  // a caller's writes beside the run (the CLI fills it in)
  int64_t checkpoint_bytes = 0;   // the arrays of one checkpoint
  // A run split across GPUs (issue 14), this rank's medians over sampled steps (GPU events), ms:
  // the halo exchange on its stream, from the face planes' chunks done to the transfer done, and
  // the inner chunks it runs beside. Zero elsewhere.
  double exchange_ms = 0, inside_ms = 0;
  // The path the split GPU run took ("on": beside the inner planes, "off": before them; "" on the
  // cpu, whose exchange is always before) and, where Overlap::automatic measured both, each path's
  // fastest per-step time over its timed blocks, ms (overlap_probe.hpp).
  std::string overlap;
  double probe_on_ms = 0, probe_off_ms = 0;
  // The run took the GPU state an earlier run left in Options::kept_state (its m and allocation).
  bool state_kept = false;
  int threads = 0;  // cpu: the OpenMP threads that stepped the run (0 on the GPU)
};

struct Result {
  Domain domain;
  double dt = 0, dt_limit = 0;
  int64_t nt = 0;
  std::string backend;             // "cuda" or "cpu"
  std::string kernel;              // the step kernel and its parameters
  std::vector<float> traces;       // (nrec, nt): receiver r at t = n dt is traces[r * nt + n]
  std::vector<float> final_field;  // u after nt steps, model points only, (nz, ny, nx)
  Timing timing;
  double reflection = 0;              // the CPML's theoretical reflection used
  std::vector<std::string> warnings;  // e.g. the under-sampling warning
  int64_t first_step = 0;             // 0, or the checkpoint's step this run resumed from
  int64_t steps_done = 0;             // nt, or fewer when interrupted
  bool interrupted = false;           // stop_requested stopped it: traces and final_field are empty
  int ranks = 1;                      // the ranks a split run ran on (Options::comm)
  // A split run, on rank 0: each rank's state on the device (or the host, on the cpu) and its
  // process's peak resident host memory, bytes, in rank order. Empty elsewhere.
  std::vector<int64_t> rank_device_bytes, rank_host_peak_bytes;
};

// Checks everything before allocating: the model, positions inside the model, dt against the
// limit, memory against what the device (or host) has. Throws Error(invalid_argument) or
// Error(out_of_memory) with the figures.
Result run(const Model& model, const Options& options);

// run()'s checks of the request alone (the model, the options, dt, every position inside the model,
// the backend, the host memory, the GPU launch parameters), without allocating or running and
// without touching a GPU (its memory is run()'s to check): a survey checks all its shots before the
// first runs.
void check(const Model& model, const Options& options);

// The run's time step: options.dt when given, else options.cfl_safety x max_stable_dt for the model
// (what run() takes; a caller sampling a wavelet before the run asks here).
double run_dt(const Model& model, const Options& options);

// The state's bytes on the chosen backend, for the memory check and the summary.
int64_t state_bytes(const Domain& d, const Options& options, bool on_device);
// The arrays of one checkpoint of that state (make_checkpoint's): u, u_prev, the absorbing layers'
// memory and the traces; not the velocity, wavelets or taps, which the inputs rebuild.
int64_t checkpoint_bytes(const Domain& d, const Options& options, bool on_device);

// What identifies a run's arithmetic: the model's values (a CRC-32C), its shape and spacing, the
// radius, dt, nt, the boundary, the interpolation, the sources with their wavelets, the receivers
// and the precision. Not the backend, the launch shape, snapshots or callbacks.
uint64_t run_fingerprint(const Model& model, const Options& options);

// A checkpoint file: written to a temporary beside `path`, flushed to the disk, then renamed over
// it, so that `path` always holds the last complete checkpoint and never half of one. Each array
// carries its CRC-32C; load_checkpoint verifies them and throws Error(io) naming the file and
// what is wrong (missing, not a checkpoint, truncated, a checksum that does not match).
void save_checkpoint(const std::filesystem::path& path, const Checkpoint& c);
Checkpoint load_checkpoint(const std::filesystem::path& path);

// The under-sampling check: points per shortest wavelength at the sources' highest significant
// frequency, beside what order 2R needs; "" when sampled well enough.
std::string sampling_warning(const Model& model, const Options& options, double dt);

}  // namespace fdstencil::wave
