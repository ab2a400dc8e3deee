// The autotuner (see include/fdstencil/tune.hpp): verify every candidate on the device against
// the reference output, time the ones that pass, refine the promising families by coordinate
// descent, re-time the finalists, store the winner.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <cmath>
#include <cstdio>
#include <limits>
#include <map>
#include <optional>
#include <set>

#include "core/summary.hpp"
#include "core/variant.hpp"
#include "fdstencil/backend.hpp"
#include "fdstencil/bytes_model.hpp"
#include "fdstencil/device_field.hpp"
#include "fdstencil/error.hpp"
#include "fdstencil/tune.hpp"
#include "plan/defaults.hpp"
#include "plan/device_identity.hpp"
#include "plan/registry.hpp"
#include "plan/verify.hpp"
#ifdef FDSTENCIL_HAVE_CUDA
#include "cuda/common/compare.hpp"
#include "cuda/common/timing.hpp"
#include "fdstencil/device.hpp"
#endif

namespace fdstencil {

namespace {

// Families whose first candidate is within this factor of the fastest first candidate are
// refined; the rest are dropped. Generous on purpose: at a size the registry defaults were not
// tuned for, one family's defaults can sit far from its best (d2z window_vec at 1024^3, R = 8,
// issue 10: docs/library.md), and the defaults table, which also seeds
// the first round, covers only the families it names.
constexpr double kPruneFactor = 1.5;
// Coordinate-descent sweeps over a family's parameters: the second catches a parameter whose
// best value moved once another changed (nw after order, in the seis-tune2 and seis-zorder runs).
constexpr int kMaxSweeps = 2;
// Candidates re-timed in the final round with TuneOptions::final_reps.
constexpr int kFinalists = 3;

void check_options(const TuneOptions& o) {
  if (!std::isfinite(o.budget_seconds) || o.budget_seconds <= 0) {
    char buf[128];
    std::snprintf(buf, sizeof buf, "the tuning budget must be a positive number of seconds, not %g",
                  o.budget_seconds);
    throw Error(ErrorKind::invalid_argument, buf);
  }
  if (o.reps < 1 || o.final_reps < 1)
    throw Error(ErrorKind::invalid_argument, "the tuner needs at least one timed application per candidate");
  if (o.warmup < 0) throw Error(ErrorKind::invalid_argument, "a negative number of warm-up applications");
}

}  // namespace

nlohmann::json to_json(const TuneResult& r) {
  nlohmann::json rec = to_json(r.best);
  rec["timed"] = r.timed;
  rec["failed"] = r.failed;
  rec["unsupported"] = r.unsupported;
  rec["budget_reached"] = r.budget_reached;
  rec["seconds"] = r.seconds;
  rec["cache_file"] = r.cache_file;
  rec["candidates"] = r.candidates;
  return rec;
}

#ifndef FDSTENCIL_HAVE_CUDA

TuneResult tune(Op op, int radius, DType dtype, Extents interior, const TuneOptions& opt) {
  check_options(opt);
  const Stencil s{op, radius, {}};
  validate(s);
  validate_extents(s, interior);
  make_problem(s, interior, dtype);
  throw Error(ErrorKind::unsupported, "tuning needs the CUDA backend, and this build has none");
}

#else

namespace {

using Clock = std::chrono::steady_clock;

// Throws Error(io) unless the cache's folder can be made and a file written in it.
void probe_writable(const std::filesystem::path& file) {
  std::error_code ec;
  const std::filesystem::path dir = file.has_parent_path() ? file.parent_path() : std::filesystem::path(".");
  std::filesystem::create_directories(dir, ec);
  const std::filesystem::path probe = dir / (".fdstencil-probe-" + std::to_string(::getpid()));
  std::ofstream f(probe);
  const bool ok = !ec && bool(f);
  f.close();
  std::filesystem::remove(probe, ec);
  if (!ok)
    throw Error(ErrorKind::io,
                "the tuning cache " + file.string() + " cannot be written (its folder is not writable)");
}

// The copy bandwidth of the current device, measured once per process, as bench does: a
// measurement taken after a previous case freed its 1024^3 fields read low on the H100 while the
// kernels' own times did not move (the first tune-1024 run, docs/library.md); the figure of the
// process's first measurement is the one beside the kernels.
double copy_bandwidth() {
  static std::map<int, double> measured;
  const int device = cuda::current_device();
  auto it = measured.find(device);
  if (it == measured.end()) it = measured.emplace(device, cuda::measure_copy_bandwidth().memcpy_gbps).first;
  return it->second;
}

template <class T>
class Tuner {
 public:
  Tuner(const Problem& p, const TuneOptions& opt, TuneResult& result)
      : p_(p),
        opt_(opt),
        result_(result),
        start_(Clock::now()),
        tolerance_(tolerance_for(p.dtype(), p.stencil)),
        bytes_(theoretical_bytes(p.stencil.op, p.interior(), p.stencil.radius, sizeof(T))) {}

  void say(const std::string& line) const {
    char head[32];
    std::snprintf(head, sizeof head, "[%6.1f s] ", seconds());
    if (opt_.progress)
      opt_.progress(head + line);
    else
      std::fprintf(stderr, "tune: %s%s\n", head, line.c_str());
  }

  double seconds() const { return std::chrono::duration<double>(Clock::now() - start_).count(); }

  void run() {
    const Layout& l = p_.layout;
    const Extents n = p_.interior();
    const std::string what = std::string(op_name(p_.stencil.op)) + " R=" + std::to_string(p_.stencil.radius) +
                             " " + std::string(dtype_name(p_.dtype())) + " " + extents_text(n);
    const TuningKey key = current_key(p_.stencil.op, p_.stencil.radius, p_.dtype(), n);
    say(what + " on " + key.device + ", budget " + std::to_string(int(opt_.budget_seconds)) + " s");

    // Memory up front, with the figure: the copy buffers first (freed before the fields), then
    // input, output and reference on the device, input and reference on the host.
    cuda::ensure_device_memory(3 * l.alloc_bytes(), "tuning this case (input, output and reference fields)");
    ensure_host_memory(2 * l.alloc_bytes(), "tuning this case (input and reference fields)");
    copy_gbps_ = copy_bandwidth();
    say("copy bandwidth " + std::to_string(int(copy_gbps_)) + " GB/s (cudaMemcpy, same run)");

    HostField<T> in(l), ref(l);
    fill_random(in, opt_.seed);
    ref.fill(std::numeric_limits<T>::quiet_NaN());
    reference_backend().apply(p_.stencil, in, ref);
    d_in_.emplace(l);
    d_out_.emplace(l);
    d_ref_.emplace(l);
    d_in_->upload(in);
    d_ref_->upload(ref);
    say("reference computed and uploaded (seed " + std::to_string(opt_.seed) + ")");

    // 1. Every family at its registry defaults, and every row of the defaults table for the
    // operator (each size class's and radius band's choice): a size between the classes starts
    // from the best of them. Without the other classes' rows, the descent at 1000 x 600 x 300
    // never reached the chunk-first order, and d2z R = 8 tuned to a slower choice than the large
    // class's row (tune-odd.json against plan-defaults-odd.json).
    std::vector<const Variant*> families = find_variants(p_.stencil.op, "cuda");
    for (const Variant* v : families) evaluate(v, Params::object(), /*first_round=*/true);
    for (const auto& [name, params] : all_default_choices(p_.stencil.op))
      if (const Variant* v = find_variant(p_.stencil.op, "cuda", name)) evaluate(v, params, true);
    if (best_.empty())
      throw Error(ErrorKind::verification, "no candidate for " + what + " verified: " + failures_);

    // 2. The families near the fastest, refined one parameter at a time.
    const double fastest = best_overall();
    for (const Variant* v : families) {
      auto it = best_.find(v->name);
      if (it == best_.end() || it->second.ms > kPruneFactor * fastest) continue;
      for (int sweep = 0; sweep < kMaxSweeps; ++sweep) {
        bool moved = false;
        for (const auto& [param, values] : v->space.items())
          for (const auto& value : values) {
            Params trial = best_[v->name].params;
            trial[param] = value;
            if (evaluate(v, trial, false) < best_[v->name].ms - 1e-12) moved = true;
          }
        if (!moved) break;
      }
    }

    // 3. The finalists again, with more repeats: a lucky median of few repeats cannot win.
    std::vector<Timed> all;
    for (const auto& t : timed_) all.push_back(t);
    std::sort(all.begin(), all.end(), [](const Timed& a, const Timed& b) { return a.ms < b.ms; });
    if (all.size() > size_t(kFinalists)) all.resize(kFinalists);
    Timed win{};
    win.ms = std::numeric_limits<double>::infinity();
    for (Timed& t : all) {
      const std::unique_ptr<Launcher> launcher = t.v->prepare(p_, t.params);
      t.ms = time_launcher(*launcher, opt_.final_reps);
      say("final: " + t.v->name + " " + t.params.dump() + ": " + figures(t.ms));
      if (t.ms < win.ms) win = t;
    }

    TuningEntry& e = result_.best;
    e.key = key;
    e.variant = win.v->name;
    e.params = win.params;
    e.median_ms = win.ms;
    e.effective_gbps = double(bytes_.total()) / (win.ms * 1e-3) / 1e9;
    e.copy_gbps = copy_gbps_;
    e.pct_of_copy = 100.0 * e.effective_gbps / copy_gbps_;
    e.candidates = result_.timed;
    result_.seconds = seconds();
    e.seconds = result_.seconds;
    say("best: " + e.variant + " " + e.params.dump() + ": " + figures(win.ms) + "; " +
        std::to_string(result_.timed) + " timed, " + std::to_string(result_.failed) + " failed, " +
        std::to_string(result_.unsupported) + " not runnable" +
        (result_.budget_reached ? "; budget reached" : ""));
  }

 private:
  struct Timed {
    const Variant* v = nullptr;
    Params params;
    double ms = 0;
  };

  std::string figures(double ms) const {
    char buf[96];
    const double gbps = double(bytes_.total()) / (ms * 1e-3) / 1e9;
    std::snprintf(buf, sizeof buf, "%.4f ms, %.0f GB/s, %.1f %% of copy", ms, gbps,
                  100.0 * gbps / copy_gbps_);
    return buf;
  }

  double best_overall() const {
    double b = std::numeric_limits<double>::infinity();
    for (const auto& [name, t] : best_) b = std::min(b, t.ms);
    return b;
  }

  double time_launcher(const Launcher& launcher, int reps) {
    const T* in = d_in_->origin();
    T* out = d_out_->origin();
    return median_of(cuda::time_ms([&](Stream s) { launcher.run(in, out, s); }, opt_.warmup, reps));
  }

  void record(const Variant* v, const Params& params, const std::string& status, const std::string& reason,
              double ms) {
    nlohmann::json c = {{"variant", v->name}, {"params", params}, {"status", status}};
    if (!reason.empty()) c["reason"] = reason;
    if (std::isfinite(ms)) {
      const double gbps = double(bytes_.total()) / (ms * 1e-3) / 1e9;
      c["median_ms"] = ms;
      c["effective_gbps"] = gbps;
      c["pct_of_copy"] = 100.0 * gbps / copy_gbps_;
    }
    result_.candidates.push_back(c);
  }

  // The candidate's median time, or infinity when it cannot run, fails or the budget is spent
  // (outside the first round). Each distinct candidate is measured once.
  double evaluate(const Variant* v, const Params& given, bool first_round) {
    constexpr double kNever = std::numeric_limits<double>::infinity();
    Params params;
    try {
      params = merge_params(*v, given);
    } catch (const Error&) {
      return kNever;  // a defaults-table row for parameters this variant does not take
    }
    const std::string id = v->name + " " + params.dump();
    if (const auto it = seen_.find(id); it != seen_.end()) return it->second;
    if (!first_round && seconds() > opt_.budget_seconds) {
      result_.budget_reached = true;
      return kNever;
    }
    std::string why;
    try {
      why = v->cannot_run(p_, params);
    } catch (const nlohmann::json::exception& e) {
      why = e.what();
    }
    if (!why.empty()) {
      ++result_.unsupported;
      record(v, params, "unsupported", why, kNever);
      return seen_[id] = kNever;
    }
    double ms = kNever;
    try {
      const std::unique_ptr<Launcher> launcher = v->prepare(p_, params);
      // Verify first: NaN over the output, one application, the device-side comparison.
      d_out_->poison();
      launcher->run(d_in_->origin(), d_out_->origin(), nullptr);
      const cuda::FieldDiff d = cuda::compare_on_device(d_out_->data(), d_ref_->data(), p_.layout);
      const double rel = d.max_abs_ref > 0 ? d.max_abs_diff / d.max_abs_ref : d.max_abs_diff;
      std::string bad;
      if (d.nonfinite > 0) bad += std::to_string(d.nonfinite) + " interior points not written; ";
      if (d.halo_written > 0) bad += std::to_string(d.halo_written) + " halo points overwritten; ";
      if (d.zeros == p_.interior().points()) bad += "the output is all zero; ";
      if (!(rel <= tolerance_))
        bad += "max relative error " + std::to_string(rel) + " above " + std::to_string(tolerance_) + "; ";
      if (!bad.empty()) {
        ++result_.failed;
        failures_ += v->name + " " + params.dump() + ": " + bad;
        record(v, params, "FAILED", bad, kNever);
        say("FAILED " + v->name + " " + params.dump() + ": " + bad);
        return seen_[id] = kNever;
      }
      ms = time_launcher(*launcher, opt_.reps);
    } catch (const Error& e) {
      ++result_.failed;
      failures_ += v->name + " " + params.dump() + ": " + e.what() + "; ";
      record(v, params, "FAILED", e.what(), kNever);
      say("FAILED " + v->name + " " + params.dump() + ": " + e.what());
      return seen_[id] = kNever;
    }
    ++result_.timed;
    record(v, params, "ok", "", ms);
    timed_.push_back({v, params, ms});
    auto it = best_.find(v->name);
    const bool family_best = it == best_.end() || ms < it->second.ms;
    if (family_best) best_[v->name] = {v, params, ms};
    say(v->name + " " + params.dump() + ": " + figures(ms) + (ms <= best_overall() ? "  (best so far)" : ""));
    return seen_[id] = ms;
  }

  const Problem& p_;
  const TuneOptions& opt_;
  TuneResult& result_;
  Clock::time_point start_;
  double tolerance_;
  TheoreticalBytes bytes_;
  double copy_gbps_ = 0;
  std::optional<DeviceField<T> > d_in_, d_out_, d_ref_;
  std::map<std::string, double> seen_;
  std::map<std::string, Timed> best_;  // per family
  std::vector<Timed> timed_;
  std::string failures_;
};

}  // namespace

TuneResult tune(Op op, int radius, DType dtype, Extents interior, const TuneOptions& opt) {
  check_options(opt);
  const Stencil s{op, radius, {}};
  validate(s);
  validate_extents(s, interior);
  const Problem p = make_problem(s, interior, dtype);
  if (gpu_count() == 0)
    throw Error(ErrorKind::unsupported, "tuning needs a GPU: " + gpu_unavailable_reason());
  const std::filesystem::path file =
      opt.cache_file.empty() ? default_cache_file() : std::filesystem::path(opt.cache_file);
  if (opt.store) probe_writable(file);  // before the search, not after it
  TuneResult result;
  if (dtype == DType::f32)
    Tuner<float>(p, opt, result).run();
  else
    Tuner<double>(p, opt, result).run();
  if (opt.store) {
    TuningCache::store(file, result.best, [&](const std::string& w) {
      if (opt.progress)
        opt.progress("warning: " + w);
      else
        std::fprintf(stderr, "fdstencil: warning: %s\n", w.c_str());
    });
    result.cache_file = file.string();
  }
  return result;
}

#endif

}  // namespace fdstencil
