// The measurement harness (see harness.hpp).
#include "bench/harness.hpp"

#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <limits>
#include <sstream>
#include <optional>
#include <utility>
#include <vector>

#include "core/summary.hpp"
#include "fdstencil/backend.hpp"
#include "fdstencil/bytes_model.hpp"
#include "fdstencil/error.hpp"
#include "fdstencil/tuning_cache.hpp"
#include "plan/device_identity.hpp"
#include "plan/plan_internal.hpp"
#include "plan/registry.hpp"
#ifdef FDSTENCIL_HAVE_CUDA
#include "cuda/common/timing.hpp"
#include "fdstencil/device.hpp"
#endif

namespace fdstencil::bench {

namespace {

template <class T>
double eps() {
  return std::numeric_limits<T>::epsilon();
}

int axis_count(Op op) {
  const auto a = op_axes(op);
  return int(a[0]) + int(a[1]) + int(a[2]);
}

// One job's plan applied to fields the harness owns, in the plan's memory: the input set from
// the host, the output poisoned with NaN, read back, and timed.
template <class T>
class Subject {
 public:
  explicit Subject(const Plan& plan) : plan_(plan), device_(plan.backend() == "cuda") {
    const Layout& l = plan.layout();
    if (device_) {
      d_in_.emplace(l);
      d_out_.emplace(l);
    } else {
      h_in_.emplace(l);
      h_out_.emplace(l);
    }
  }

  void set_input(const HostField<T>& in) {
    if (device_)
      d_in_->upload(in);
    else
      std::copy_n(in.data(), in.layout().alloc_elems(), h_in_->data());
  }
  void poison_output() {
    if (device_)
      d_out_->poison();
    else
      h_out_->fill(std::numeric_limits<T>::quiet_NaN());
  }
  void run() {
    apply(nullptr);
    sync();
  }
  void get_output(HostField<T>& out) const {
    if (device_)
      d_out_->download(out);
    else
      std::copy_n(h_out_->data(), out.layout().alloc_elems(), out.data());
  }

  std::vector<double> time_ms(int warmup, int reps, const char* nvtx_range) {
#ifdef FDSTENCIL_HAVE_CUDA
    if (device_) return cuda::time_ms([this](Stream s) { apply(s); }, warmup, reps, nvtx_range);
#endif
    (void)nvtx_range;
    for (int r = 0; r < warmup; ++r) run();
    std::vector<double> ms;
    for (int r = 0; r < reps; ++r) {
      const auto t0 = std::chrono::steady_clock::now();
      run();
      const auto t1 = std::chrono::steady_clock::now();
      ms.push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());
    }
    return ms;
  }

  nlohmann::json resources() const { return plan_.impl().launcher->resources(); }

 private:
  void apply(Stream s) {
    if (device_)
      plan_.apply(std::as_const(*d_in_).view(), d_out_->view(), s);
    else
      plan_.apply(std::as_const(*h_in_).view(), h_out_->view());
  }
  void sync() const {
#ifdef FDSTENCIL_HAVE_CUDA
    if (device_) cuda::synchronize();
#endif
  }

  const Plan& plan_;
  bool device_;
  std::optional<HostField<T>> h_in_, h_out_;
  std::optional<DeviceField<T>> d_in_, d_out_;
};

// The oracle of one problem: its random input, the reference output, and the analytic field.
// Every variant verified on the same problem shares it, so a sweep of many variants at 1024^3
// pays for the reference once.
template <class T>
struct Oracle {
  std::string key;
  HostField<T> in, ref, analytic;
  double expected = 0.0;
  explicit Oracle(const Layout& l) : in(l), ref(l), analytic(l) {}
};

template <class T>
std::unique_ptr<Oracle<T>>& oracle_slot() {
  static std::unique_ptr<Oracle<T>> slot;
  return slot;
}

template <class T>
const Oracle<T>& oracle_for(const Problem& p, uint64_t seed) {
  std::unique_ptr<Oracle<T>>& cached = oracle_slot<T>();
  // One oracle alive at a time: a 1024^3 double oracle alone is 26 GB of host memory.
  if constexpr (std::is_same_v<T, float>)
    oracle_slot<double>().reset();
  else
    oracle_slot<float>().reset();
  const Stencil& s = p.stencil;
  const Layout& l = p.layout;
  char key[320];
  std::snprintf(key, sizeof key, "%d %d %lld %lld %lld %lld %lld %lld %lld %.17g %.17g %.17g %llu", int(s.op),
                s.radius, (long long)l.interior().nx, (long long)l.interior().ny, (long long)l.interior().nz,
                (long long)l.align_bytes(), (long long)l.line(), (long long)l.slice(), (long long)l.offset(),
                s.h.hx, s.h.hy, s.h.hz, (unsigned long long)seed);
  if (cached && cached->key == key) return *cached;
  cached.reset();  // release the previous problem's fields before allocating the next
  auto o = std::make_unique<Oracle<T>>(l);
  o->key = key;
  fill_random(o->in, seed);
  o->ref.fill(std::numeric_limits<T>::quiet_NaN());
  reference_backend().apply(s, o->in, o->ref);
  o->expected = fill_analytic(o->analytic, s);
  cached = std::move(o);
  return *cached;
}

// The launch the plan made (registers, grid, the parameters it settled on, ...).
template <class T>
void add_resources(const Subject<T>& subject, nlohmann::json& rec) {
  // A named copy: iterating the temporary's items() would outlive it.
  const nlohmann::json resources = subject.resources();
  for (auto& [key, value] : resources.items()) rec[key] = value;
}

// Times a subject whose input is set; the figures go into the record.
template <class T>
nlohmann::json time_job(Subject<T>& subject, const Problem& p, const BenchOptions& opt, double copy_gbps,
                        nlohmann::json rec) {
  const Stencil& s = p.stencil;
  const std::vector<double> ms = subject.time_ms(opt.warmup, opt.reps, opt.nvtx_range);
  const double med = median_of(ms);
  const TheoreticalBytes b = theoretical_bytes(s.op, p.interior(), s.radius, sizeof(T));
  const double eff = double(b.total()) / (med * 1e-3) / 1e9;
  rec["status"] = "ok";
  rec["reps"] = opt.reps;
  rec["median_ms"] = med;
  rec["min_ms"] = *std::min_element(ms.begin(), ms.end());
  rec["max_ms"] = *std::max_element(ms.begin(), ms.end());
  rec["fetch_bytes"] = b.fetch;
  rec["write_bytes"] = b.write;
  rec["effective_gbps"] = eff;
  rec["pct_of_copy"] = copy_gbps > 0 ? 100.0 * eff / copy_gbps : 0.0;
  rec["gpts"] = double(p.interior().points()) / (med * 1e-3) / 1e9;
  add_resources(subject, rec);
  return rec;
}

template <class T>
nlohmann::json run_typed(const Plan& plan, const Problem& p, const BenchOptions& opt, double copy_gbps,
                         nlohmann::json rec) {
  const Stencil& s = p.stencil;
  if (!opt.verify) {  // the --profile child: the parent verified this job
    rec["verified"] = false;
    rec["verification"] = "skipped: the job --profile runs under ncu, verified by its parent";
    oracle_slot<float>().reset();
    oracle_slot<double>().reset();
    HostField<T> in(p.layout);
    fill_random(in, opt.seed);
    Subject<T> subject(plan);
    subject.set_input(in);
    return time_job(subject, p, opt, copy_gbps, std::move(rec));
  }
  // The oracle first: it releases the previous problem's fields before the subject allocates.
  const Oracle<T>& oracle = oracle_for<T>(p, opt.seed);
  Subject<T> subject(plan);
  const HostField<T>& ref = oracle.ref;
  HostField<T> out(oracle.in.layout());

  // 1. Random input against the reference.
  subject.set_input(oracle.in);
  subject.poison_output();
  subject.run();
  subject.get_output(out);
  const Check c = compare_to_reference(out, ref, p.dtype(), s);
  rec["max_rel_err"] = c.max_rel_err;
  rec["tolerance"] = c.tolerance;
  rec["seed"] = opt.seed;
  if (!c.ok) {
    rec["verified"] = false;
    rec["status"] = "FAILED";
    rec["reason"] = c.message;
    return rec;
  }

  // 2. The series' analytic field: the exact value at every interior point.
  const HostField<T>& in = oracle.analytic;
  const double expected = oracle.expected;
  subject.set_input(in);
  subject.poison_output();
  subject.run();
  subject.get_output(out);
  const StencilWeights sw = stencil_weights(s);
  double wsum = 0.0, umax = 0.0, err = 0.0;
  for (int a = 0; a < 3; ++a)
    for (int r = 0; r <= 2 * s.radius; ++r) wsum += std::fabs(sw.w[a][r]);
  const Extents n = p.interior();
  const int R = s.radius;
#pragma omp parallel for schedule(static) reduction(max : umax)
  for (int64_t k = -R; k < n.nz + R; ++k)
    for (int64_t j = -R; j < n.ny + R; ++j)
      for (int64_t i = -R; i < n.nx + R; ++i) umax = std::max(umax, std::fabs(double(in.at(i, j, k))));
  int64_t nonfinite = 0;
#pragma omp parallel for schedule(static) reduction(max : err) reduction(+ : nonfinite)
  for (int64_t k = 0; k < n.nz; ++k)
    for (int64_t j = 0; j < n.ny; ++j)
      for (int64_t i = 0; i < n.nx; ++i) {
        const double o = out.at(i, j, k);
        if (!std::isfinite(o)) ++nonfinite;
        err = std::max(err, std::fabs(o - expected));
      }
  // Each tap's product is rounded once and the sum cancels to `expected`: the error is bounded
  // by a few eps_T times sum |w| max |u| (8 covers input rounding plus accumulation). For the
  // Laplacian's quadratic on one power-of-two spacing h, every value is a multiple of h^2/8 and
  // every weight a power of two over h^2, so products and partial sums are multiples of 1/8 below
  // sum |w| max |u|; while that stays under 2^digits / 8, every operation is exact in any order
  // and the result must be exactly 3 (512^3 float with h = 1 qualifies; 1024^3 float does not).
  auto dyadic = [](double h) {
    int e = 0;
    return std::frexp(h, &e) == 0.5;
  };
  const bool exact = s.op == Op::laplacian7 && s.h.hx == s.h.hy && s.h.hy == s.h.hz && dyadic(s.h.hx) &&
                     8.0 * wsum * umax < std::ldexp(1.0, std::numeric_limits<T>::digits);
  const double bound = exact ? 0.0 : 8.0 * eps<T>() * wsum * umax + 8.0 * eps<T>() * std::fabs(expected);
  rec["analytic_exact"] = exact;
  rec["analytic_expected"] = expected;
  rec["analytic_err"] = err;
  rec["analytic_bound"] = bound;
  const bool finite = nonfinite == 0;
  if (!finite || !(err <= bound)) {
    rec["verified"] = false;
    rec["status"] = "FAILED";
    rec["reason"] = "analytic field: max |out - " + std::to_string(expected) + "| = " + std::to_string(err) +
                    " exceeds the round-off bound " + std::to_string(bound) +
                    (finite ? "" : " (non-finite output)");
    return rec;
  }
  rec["verified"] = true;

  if (opt.reps == 0) {  // verification only: the GPU tests and the sanitizer runs
    rec["status"] = "verified";
    add_resources(subject, rec);  // the tests check the launch the plan chose
    return rec;
  }

  // 3. Timing, on the random data again (never on zeros or on the smooth analytic field).
  subject.set_input(oracle.in);
  return time_job(subject, p, opt, copy_gbps, std::move(rec));
}

nlohmann::json base_record(const Problem& p, const std::string& variant, const std::string& backend,
                           const Params& params) {
  const Extents size = size_from_interior(p.stencil.op, p.interior());
  return {{"op", std::string(op_name(p.stencil.op))},
          {"variant", variant},
          {"backend", backend},
          {"dtype", std::string(dtype_name(p.dtype()))},
          {"radius", p.stencil.radius},
          {"nx", size.nx},
          {"ny", size.ny},
          {"nz", size.nz},
          {"params", params},
          {"verified", false},
          {"max_rel_err", nullptr},
          {"median_ms", nullptr},
          {"min_ms", nullptr},
          {"max_ms", nullptr},
          {"effective_gbps", nullptr},
          {"pct_of_copy", nullptr},
          {"gpts", nullptr}};
}

// Verifies and times `plan`; a device or verification failure is a FAILED record, bad
// arguments and memory exhaustion are thrown.
nlohmann::json run_plan_job(const Plan& plan, const Problem& p, const BenchOptions& opt, double copy_gbps,
                            nlohmann::json rec) {
  try {
    if (p.dtype() == DType::f32) return run_typed<float>(plan, p, opt, copy_gbps, rec);
    return run_typed<double>(plan, p, opt, copy_gbps, rec);
  } catch (const Error& e) {
    if (e.kind() == ErrorKind::invalid_argument || e.kind() == ErrorKind::out_of_memory) throw;
    rec["status"] = "FAILED";
    rec["reason"] = e.what();
    return rec;
  }
}

}  // namespace

template <class T>
double fill_analytic(HostField<T>& f, const Stencil& s) {
  const Extents n = f.interior();
  const int R = f.radius();
  f.fill(std::numeric_limits<T>::quiet_NaN());  // the padding is never a stencil tap
  if (s.op == Op::laplacian7) {
    // Centred coordinates keep |u| small so float round-off stays far below the result.
    const double cx = 0.5 * double(n.nx), cy = 0.5 * double(n.ny), cz = 0.5 * double(n.nz);
#pragma omp parallel for schedule(static)
    for (int64_t k = -R; k < n.nz + R; ++k)
      for (int64_t j = -R; j < n.ny + R; ++j)
        for (int64_t i = -R; i < n.nx + R; ++i) {
          const double x = (double(i) - cx) * s.h.hx, y = (double(j) - cy) * s.h.hy,
                       z = (double(k) - cz) * s.h.hz;
          f.at(i, j, k) = static_cast<T>(0.5 * (x * x + y * y + z * z));
        }
    return double(axis_count(s.op));
  }
#pragma omp parallel for schedule(static)
  for (int64_t k = -R; k < n.nz + R; ++k)
    for (int64_t j = -R; j < n.ny + R; ++j)
      for (int64_t i = -R; i < n.nx + R; ++i) f.at(i, j, k) = static_cast<T>(i + j + k);
  return 0.0;
}

template <class T>
Check compare_to_reference(const HostField<T>& out, const HostField<T>& ref, DType t, const Stencil& s) {
  Check c;
  c.tolerance = tolerance_for(t, s);
  const Layout& l = out.layout();
  const Extents n = l.interior();
  double max_ref = 0.0, max_diff = 0.0;
  int64_t nonfinite = 0, zeros = 0;
#pragma omp parallel for schedule(static) reduction(max : max_ref, max_diff) reduction(+ : nonfinite, zeros)
  for (int64_t k = 0; k < n.nz; ++k)
    for (int64_t j = 0; j < n.ny; ++j)
      for (int64_t i = 0; i < n.nx; ++i) {
        const double r = ref.at(i, j, k), o = out.at(i, j, k);
        max_ref = std::max(max_ref, std::fabs(r));
        if (!std::isfinite(o))
          ++nonfinite;
        else
          max_diff = std::max(max_diff, std::fabs(o - r));
        if (o == 0.0) ++zeros;
      }
  c.max_rel_err = max_ref > 0 ? max_diff / max_ref : max_diff;
  std::ostringstream msg;
  if (nonfinite > 0) msg << nonfinite << " interior points were not written (NaN or inf); ";
  if (zeros == n.points()) msg << "the output is all zero; ";
  if (!(c.max_rel_err <= c.tolerance))
    msg << "max relative error " << c.max_rel_err << " exceeds the tolerance " << c.tolerance << "; ";
  // The halo was poisoned with NaN and must stay untouched.
  const int R = l.radius();
  int64_t halo_written = 0;
#pragma omp parallel for schedule(static) reduction(+ : halo_written)
  for (int64_t k = -R; k < n.nz + R; ++k)
    for (int64_t j = -R; j < n.ny + R; ++j)
      for (int64_t i = -R; i < n.nx + R; ++i) {
        const bool inside = i >= 0 && i < n.nx && j >= 0 && j < n.ny && k >= 0 && k < n.nz;
        if (!inside && !std::isnan(double(out.at(i, j, k)))) ++halo_written;
      }
  if (halo_written > 0) msg << halo_written << " halo points were overwritten; ";
  c.ok = msg.str().empty();
  if (!c.ok) {
    int shown = 0;
    msg << "first mismatches (i, j, k: out vs ref):";
    for (int64_t k = 0; k < n.nz && shown < 5; ++k)
      for (int64_t j = 0; j < n.ny && shown < 5; ++j)
        for (int64_t i = 0; i < n.nx && shown < 5; ++i) {
          const double r = ref.at(i, j, k), o = out.at(i, j, k);
          if (!std::isfinite(o) || std::fabs(o - r) > c.tolerance * max_ref) {
            msg << " (" << i << ", " << j << ", " << k << ": " << o << " vs " << r << ")";
            ++shown;
          }
        }
    c.message = msg.str();
  }
  return c;
}

double host_copy_gbps() {
  // 512 MiB each way: far beyond any CPU cache.
  const int64_t n = int64_t(512) << 20 >> 3;
  ensure_host_memory(2 * n * 8, "the host copy-bandwidth buffers");
  std::vector<double> a(n), b(n);
#pragma omp parallel for schedule(static)
  for (int64_t i = 0; i < n; ++i) a[i] = double(i), b[i] = 0.0;
  std::vector<double> gbps;
  for (int rep = 0; rep < 5; ++rep) {
    const auto t0 = std::chrono::steady_clock::now();
#pragma omp parallel for schedule(static)
    for (int64_t i = 0; i < n; ++i) b[i] = a[i];
    const auto t1 = std::chrono::steady_clock::now();
    gbps.push_back(2.0 * n * 8 / std::chrono::duration<double>(t1 - t0).count() / 1e9);
  }
  return median_of(gbps);
}

nlohmann::json host_device_info() {
  std::string model = "unknown CPU";
  std::ifstream cpuinfo("/proc/cpuinfo");
  for (std::string line; std::getline(cpuinfo, line);)
    if (line.rfind("model name", 0) == 0) {
      model = line.substr(line.find(':') + 2);
      break;
    }
  return {{"kind", "cpu"},
          {"name", model},
          {"threads", omp_get_max_threads()},
          {"memory_bytes", host_memory_available()}};
}

nlohmann::json run_variant(const Variant& v, const Problem& p, const Params& overrides,
                           const BenchOptions& opt, double copy_gbps) {
  const Params params = merge_params(v, overrides);
  nlohmann::json rec = base_record(p, v.name, v.backend, params);
  std::string why;
  try {
    why = v.cannot_run(p, params);
  } catch (const nlohmann::json::exception& e) {
    throw Error(ErrorKind::invalid_argument, "variant " + v.name + ": bad parameter: " + e.what());
  }
  if (!why.empty()) {
    rec["status"] = "unsupported";
    rec["reason"] = why;
    return rec;
  }
  std::optional<Plan> plan;
  try {
    plan.emplace(plan_of_variant(v, p, params, "bench: --variant " + v.name));
  } catch (const Error& e) {
    if (e.kind() == ErrorKind::invalid_argument || e.kind() == ErrorKind::out_of_memory) throw;
    rec["status"] = "FAILED";
    rec["reason"] = e.what();
    return rec;
  }
  return run_plan_job(*plan, p, opt, copy_gbps, std::move(rec));
}

nlohmann::json run_plan(const Problem& p, const PlanOptions& plan_options, bool tuned_only,
                        const BenchOptions& opt, double copy_gbps) {
  const std::string backend = plan_options.backend;
  nlohmann::json rec = base_record(p, "plan", backend, Params::object());
  if (tuned_only) {
    const TuningCache cache =
        TuningCache::load(plan_options.cache_file.empty() ? default_cache_file()
                                                          : std::filesystem::path(plan_options.cache_file),
                          plan_options.warn);
    if (cache.find(current_key(p.stencil.op, p.stencil.radius, p.dtype(), p.interior())) == nullptr) {
      rec["status"] = "untuned";
      rec["reason"] = "the tuning cache " + cache.file().string() +
                      " has no entry for this case on this device (run fdstencil tune)";
      return rec;
    }
  }
  std::optional<Plan> plan;
  try {
    plan.emplace(p.stencil, p.layout, plan_options);
  } catch (const Error& e) {
    if (e.kind() == ErrorKind::invalid_argument || e.kind() == ErrorKind::out_of_memory) throw;
    rec["status"] = e.kind() == ErrorKind::unsupported ? "unsupported" : "FAILED";
    rec["reason"] = e.what();
    return rec;
  }
  rec["backend"] = plan->backend();
  rec["plan_variant"] = plan->variant();
  rec["params"] = plan->params();
  rec["plan_source"] = plan->source();
  return run_plan_job(*plan, p, opt, copy_gbps, std::move(rec));
}

std::string table_header() {
  char buf[256];
  std::snprintf(buf, sizeof buf, "%-10s %-16s %-6s %2s %-16s %-8s %10s %10s %8s %8s %9s", "op", "variant",
                "type", "R", "size", "status", "median ms", "GB/s", "% copy", "Gpts/s", "rel err");
  return buf;
}

std::string table_row(const nlohmann::json& r) {
  char size[64], buf[512];
  std::snprintf(size, sizeof size, "%lldx%lldx%lld", (long long)r["nx"].get<int64_t>(),
                (long long)r["ny"].get<int64_t>(), (long long)r["nz"].get<int64_t>());
  const std::string status = r.value("status", std::string("?"));
  // The plan's own choice shows which variant it took.
  const std::string name = r.contains("plan_variant") ? "plan:" + r["plan_variant"].get<std::string>()
                                                      : r["variant"].get<std::string>();
  if (status != "ok") {
    std::snprintf(buf, sizeof buf, "%-10s %-16s %-6s %2d %-16s %-8s %s", r["op"].get<std::string>().c_str(),
                  name.c_str(), r["dtype"].get<std::string>().c_str(), r["radius"].get<int>(), size,
                  status.c_str(), r.value("reason", std::string()).c_str());
    return buf;
  }
  // The --profile child times without verifying (its parent did): no error to show.
  char err[32] = "unchecked";
  if (r.value("max_rel_err", nlohmann::json()).is_number())
    std::snprintf(err, sizeof err, "%9.2e", r["max_rel_err"].get<double>());
  std::snprintf(buf, sizeof buf, "%-10s %-16s %-6s %2d %-16s %-8s %10.4f %10.1f %8.1f %8.2f %9s",
                r["op"].get<std::string>().c_str(), name.c_str(), r["dtype"].get<std::string>().c_str(),
                r["radius"].get<int>(), size, status.c_str(), r["median_ms"].get<double>(),
                r["effective_gbps"].get<double>(), r["pct_of_copy"].get<double>(), r["gpts"].get<double>(),
                err);
  return buf;
}

template double fill_analytic(HostField<float>&, const Stencil&);
template double fill_analytic(HostField<double>&, const Stencil&);
template Check compare_to_reference(const HostField<float>&, const HostField<float>&, DType, const Stencil&);
template Check compare_to_reference(const HostField<double>&, const HostField<double>&, DType,
                                    const Stencil&);

}  // namespace fdstencil::bench
