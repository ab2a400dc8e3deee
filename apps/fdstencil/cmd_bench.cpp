// fdstencil bench: verify, then time, every selected variant on every selected problem, beside
// the copy bandwidth measured in the same process. Lists (comma-separated) turn one command into
// a sweep: --op d2x,d2z --radius 1,4,8 --size 256,256,256 --size 512,512,512 --param m=1,2,4.
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <map>
#include <set>

#include "bench/counters.hpp"
#include "bench/harness.hpp"
#include "bench/overhead.hpp"
#include "commands.hpp"
#include "fdstencil/error.hpp"
#include "plan/registry.hpp"
#ifdef FDSTENCIL_HAVE_CUDA
#include "fdstencil/device.hpp"
#endif

namespace fdstencil::cli {

namespace {

struct BenchOpts {
  std::string ops, variants, radii, dtypes, backend, json_path, cache;
  std::vector<std::string> sizes, params;
  int reps = 20, warmup = 3;
  uint64_t seed = bench::BenchOptions{}.seed;
  // The plan's own choice per case: from the tuning cache or the defaults (the default), from
  // the cache alone (--tuned: only those rows), or from the defaults alone (--no-cache).
  bool tuned = false, no_cache = false;
  bool overhead = false;  // plan.apply against the bare launch, on small fields
  int64_t align = kAlignBytes;
  bool profile = false;  // each timed record again under ncu, counters merged into it
  std::string ncu;       // the ncu executable (default: $NCU, PATH, /usr/local/cuda/bin)
  // The job --profile runs under ncu: its timed launch marked with NVTX, no copy-bandwidth run,
  // and no verification, because the parent verified this very job (variant, parameters,
  // problem, seed) with this binary a moment before.
  bool profile_child = false;
  // Each record's own copy too: cudaMemcpy of its output's bytes (a small field's launch has a
  // ramp and a tail that the 2 GiB reference copy hides), beside the reference, never instead.
  bool same_size_copy = false;
};

// The command that repeats one job alone, one timed application marked for ncu.
std::vector<std::string> child_command(const BenchOpts& o, const nlohmann::json& rec) {
  // A plan row repeats the variant and parameters the plan chose.
  const std::string variant = rec.contains("plan_variant") ? rec["plan_variant"].get<std::string>()
                                                           : rec["variant"].get<std::string>();
  std::vector<std::string> a = {std::filesystem::read_symlink("/proc/self/exe").string(),
                                "bench",
                                "--backend",
                                "cuda",
                                "--op",
                                rec["op"].get<std::string>(),
                                "--variant",
                                variant,
                                "--radius",
                                std::to_string(rec["radius"].get<int>()),
                                "--size",
                                std::to_string(rec["nx"].get<int64_t>()) + "," +
                                    std::to_string(rec["ny"].get<int64_t>()) + "," +
                                    std::to_string(rec["nz"].get<int64_t>()),
                                "--dtype",
                                rec["dtype"].get<std::string>(),
                                "--align",
                                std::to_string(o.align),
                                "--seed",
                                std::to_string(o.seed),
                                "--reps",
                                "1",
                                "--warmup",
                                "0",
                                "--profile-child"};
  for (const auto& [k, v] : rec["params"].items()) {
    a.push_back("--param");
    a.push_back(k + "=" + (v.is_string() ? v.get<std::string>() : v.dump()));
  }
  return a;
}

// An efficiency is null where the kernel moved no bytes that way (e.g. all writes still in L2).
std::string percent_or_na(const nlohmann::json& v) {
  if (!v.is_number()) return "n/a";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f %%", 100 * v.get<double>());
  return buf;
}

std::string counters_line(const nlohmann::json& c) {
  if (c.value("status", std::string()) != "ok") return "  counters: " + c.value("reason", std::string("?"));
  char buf[320];
  std::snprintf(buf, sizeof buf,
                "  counters: DRAM read %.3f x cube (fetch eff %s), write %.3f x cube (write eff %s), "
                "achieved %.0f GB/s; L2 read %.2f, L1 read %.2f x cube; L2 hit %.1f %%",
                c["dram_read_per_cube"].get<double>(), percent_or_na(c["fetch_efficiency"]).c_str(),
                c["dram_write_per_cube"].get<double>(), percent_or_na(c["write_efficiency"]).c_str(),
                c["achieved_gbps"].get<double>(), c["l2_read_per_cube"].get<double>(),
                c["l1_read_per_cube"].get<double>(), c["l2_hit_rate_pct"].get<double>());
  return buf;
}

struct Case {
  Op op;
  int radius;
  Extents size;
  DType dtype;
};

// The main job when bench runs with no selection: one case per operator family, at a size that
// fills the device (GPU) or finishes in seconds (CPU).
std::vector<Case> default_suite(bool gpu) {
  const Extents n = gpu ? Extents{512, 512, 512} : Extents{192, 192, 192};
  std::vector<Case> cases = {{Op::laplacian7, 1, n, DType::f64}};
  for (Op op : {Op::d2x, Op::d2y, Op::d2z, Op::d2xy, Op::d2xyz}) cases.push_back({op, 4, n, DType::f32});
  return cases;
}

nlohmann::json parse_value(const std::string& v) {
  try {
    size_t used = 0;
    const long long i = std::stoll(v, &used);
    if (used == v.size()) return i;
  } catch (const std::exception&) {
  }
  return v;
}

// --param k=v1,v2 --param q=w -> every combination, as JSON objects.
std::vector<Params> param_grid(const std::vector<std::string>& specs) {
  std::vector<Params> grid = {Params::object()};
  for (const std::string& spec : specs) {
    const size_t eq = spec.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == spec.size())
      throw Error(ErrorKind::invalid_argument, "--param: '" + spec + "' must be KEY=VALUE[,VALUE...]");
    const std::string key = spec.substr(0, eq);
    std::vector<Params> next;
    for (const Params& g : grid)
      for (const std::string& v : split(spec.substr(eq + 1), ',')) {
        Params p = g;
        p[key] = parse_value(v);
        next.push_back(p);
      }
    grid = next;
  }
  return grid;
}

struct Job {
  const Variant* v;  // nullptr: the plan's own choice
  Problem p;
  Params params;
};

// bench --overhead: for each case, the plan's apply against the bare launch of its kernel.
int run_overhead(const BenchOpts& o, const std::vector<Job>& jobs, const PlanOptions& po) {
  nlohmann::json doc = {{"records", nlohmann::json::array()}};
#ifdef FDSTENCIL_HAVE_CUDA
  doc["device"] = cuda::device_info(cuda::current_device());
#endif
  std::printf("# device: %s\n# per call, medians of alternating rounds of back-to-back calls\n",
              doc.value("device", nlohmann::json::object()).value("name", std::string("?")).c_str());
  std::printf("%-8s %2s %-6s %-14s %-12s %10s %10s %7s %10s %10s %7s\n", "op", "R", "type", "size", "variant",
              "bare enq", "plan enq", "ratio", "bare total", "plan total", "ratio");
  for (const Job& job : jobs) {
    const Plan plan(job.p.stencil, job.p.layout, po);
    nlohmann::json r = bench::measure_apply_overhead(plan);
    const Extents n = job.p.interior();
    r["op"] = std::string(op_name(job.p.stencil.op));
    r["radius"] = job.p.stencil.radius;
    r["dtype"] = std::string(dtype_name(job.p.dtype()));
    r["nx"] = n.nx, r["ny"] = n.ny, r["nz"] = n.nz;
    r["plan_variant"] = plan.variant();
    r["params"] = plan.params();
    std::printf(
        "%-8s %2d %-6s %-14s %-12s %8.2f us %8.2f us %7.3f %8.2f us %8.2f us %7.3f\n",
        r["op"].get<std::string>().c_str(), job.p.stencil.radius, r["dtype"].get<std::string>().c_str(),
        (std::to_string(n.nx) + "x" + std::to_string(n.ny) + "x" + std::to_string(n.nz)).c_str(),
        plan.variant().c_str(), r["bare_enqueue_us"].get<double>(), r["plan_enqueue_us"].get<double>(),
        r["enqueue_ratio"].get<double>(), r["bare_total_us"].get<double>(), r["plan_total_us"].get<double>(),
        r["total_ratio"].get<double>());
    std::fflush(stdout);
    doc["records"].push_back(r);
    if (!o.json_path.empty()) write_json_file(o.json_path, doc);
  }
  return 0;
}

// The backend (the GPU's where there is one) and the options that exclude each other or it.
void check_bench_options(BenchOpts& o) {
  const bool gpu = gpu_available();
  if (o.backend.empty()) o.backend = gpu ? "cuda" : "cpu";
  if (o.profile && o.profile_child)
    throw Error(ErrorKind::invalid_argument, "--profile-child is what --profile runs under ncu: not both");
  if ((o.profile || o.profile_child) && o.backend != "cuda")
    throw Error(ErrorKind::invalid_argument, std::string(o.profile ? "--profile" : "--profile-child") +
                                                 " reads GPU counters: it needs --backend cuda, not " +
                                                 o.backend);
  if (o.backend == "cuda" && !gpu) {
#ifdef FDSTENCIL_HAVE_CUDA
    throw Error(ErrorKind::unsupported, "--backend cuda: " + cuda::no_device_reason());
#else
    throw Error(ErrorKind::unsupported, "--backend cuda: this build has no CUDA backend");
#endif
  }
  if (o.tuned && o.no_cache)
    throw Error(ErrorKind::invalid_argument,
                "--tuned reads the tuning cache and --no-cache ignores it: not both");
  if ((o.tuned || o.no_cache || o.overhead) && o.backend != "cuda")
    throw Error(ErrorKind::invalid_argument, std::string(o.tuned      ? "--tuned"
                                                         : o.no_cache ? "--no-cache"
                                                                      : "--overhead") +
                                                 " concerns the plans of the cuda backend, not " + o.backend);
  std::set<std::string> backends;
  for (const auto& v : all_variants()) backends.insert(v.backend);
  if (!backends.count(o.backend)) {
    std::string names;
    for (const auto& b : backends) names += (names.empty() ? "" : ", ") + b;
    throw Error(ErrorKind::invalid_argument, "unknown backend '" + o.backend + "' (valid: " + names + ")");
  }
}

// The cases: the default suite, or the product of the --op, --radius, --size and --dtype lists.
std::vector<Case> select_cases(const BenchOpts& o) {
  const bool selected = !o.ops.empty() || !o.radii.empty() || !o.sizes.empty() || !o.dtypes.empty();
  std::vector<Case> cases;
  if (!selected) {
    cases = default_suite(o.backend == "cuda");
  } else {
    std::vector<Op> ops;
    for (const auto& s : split(o.ops.empty() ? "d2xyz" : o.ops, ',')) ops.push_back(parse_op(s));
    std::vector<int> radii;
    if (!o.radii.empty())
      for (const auto& s : split(o.radii, ',')) radii.push_back(parse_int(s, "--radius"));
    std::vector<Extents> sizes;
    for (const auto& s : o.sizes) sizes.push_back(parse_extents(s, "--size"));
    if (sizes.empty())
      sizes.push_back(o.overhead            ? Extents{64, 64, 64}
                      : o.backend == "cuda" ? Extents{512, 512, 512}
                                            : Extents{128, 128, 128});
    std::vector<DType> dtypes;
    for (const auto& s : split(o.dtypes.empty() ? "float" : o.dtypes, ',')) dtypes.push_back(parse_dtype(s));
    for (const Extents& n : sizes)
      for (Op op : ops)
        for (int r : (op == Op::laplacian7 && radii.empty() ? std::vector<int>{1}
                      : radii.empty()                       ? std::vector<int>{4}
                                                            : radii))
          for (DType t : dtypes) cases.push_back({op, r, n, t});
  }
  return cases;
}

// A case's problem, validated, and its host memory checked up front: the oracle's input,
// reference and analytic field, the output read back, and for host backends the plan's own input
// and output (the --profile child holds only the random input: it computes no reference).
Problem case_problem(const BenchOpts& o, const Case& c) {
  const Stencil stencil{c.op, c.radius, {1.0, 1.0, 1.0}};
  validate(stencil);
  const Extents interior = interior_from_size(c.op, c.size);
  validate_extents(stencil, interior);
  const Problem p = make_problem(stencil, interior, c.dtype, o.align);
  ensure_host_memory(p.layout.alloc_bytes() * (o.profile_child       ? 1
                                               : o.backend == "cuda" ? 4
                                                                     : 6),
                     "this benchmark case");
  return p;
}

// Variant v's jobs on problem p: one per distinct set of the grid's keys that v takes (the keys
// used are added to `used`).
void add_variant_jobs(const Variant& v, const Problem& p, const std::vector<Params>& grid,
                      std::vector<Job>& jobs, std::set<std::string>& used) {
  std::set<std::string> seen;
  for (const Params& g : grid) {
    Params mine = Params::object();
    for (auto it = g.begin(); it != g.end(); ++it)
      if (v.defaults.contains(it.key())) mine[it.key()] = it.value(), used.insert(it.key());
    if (!seen.insert(mine.dump()).second) continue;  // the grid varies a key it does not take
    merge_params(v, mine);                           // a value of the wrong type fails here
    jobs.push_back({&v, p, mine});
  }
}

// Every (case, variant, parameter set) to run, and the plan's rows, each validated before the first
// measurement: a typo fails in a second, not an hour.
std::vector<Job> make_jobs(const BenchOpts& o, const std::vector<Case>& cases) {
  std::set<std::string> wanted;
  if (!o.variants.empty())
    for (const auto& s : split(o.variants, ',')) wanted.insert(s);
  const std::vector<Params> grid = param_grid(o.params);
  // The plan's own choice is a row of its own ("plan") on the cuda backend: with --tuned or
  // --overhead the only rows, with --variant only when "plan" is named.
  const bool plan_rows = o.backend == "cuda" && !o.profile_child && (wanted.empty() || wanted.count("plan"));
  const bool variant_rows = !o.tuned && !o.overhead;
  if (o.tuned && !wanted.empty() && !(wanted.size() == 1 && wanted.count("plan")))
    throw Error(ErrorKind::invalid_argument,
                "--tuned measures the plan's choice alone: no --variant besides plan");

  std::vector<Job> jobs;
  std::set<std::string> matched_variants, used_keys;
  for (const Case& c : cases) {
    const Problem p = case_problem(o, c);
    if (plan_rows) {
      jobs.push_back({nullptr, p, Params::object()});
      matched_variants.insert("plan");
    }
    if (!variant_rows) continue;
    const auto candidates = find_variants(c.op, o.backend);
    if (candidates.empty())
      std::fprintf(stderr, "note: backend %s has no variant of %s yet; skipped\n", o.backend.c_str(),
                   std::string(op_name(c.op)).c_str());
    for (const Variant* v : candidates) {
      // The names asked for that mean it: its own, or its former (current_variant_name), or both.
      bool asked = wanted.empty();
      for (const std::string& w : wanted)
        if (current_variant_name(c.op, w) == v->name) {
          matched_variants.insert(w);
          asked = true;
        }
      if (!asked) continue;
      matched_variants.insert(v->name);
      add_variant_jobs(*v, p, grid, jobs, used_keys);
    }
  }
  for (const auto& w : wanted)
    if (!matched_variants.count(w))
      throw Error(ErrorKind::invalid_argument,
                  "--variant: no variant '" + w + "' of backend " + o.backend +
                      " for the selected operators" +
                      (w == "plan" ? " (plan rows are the cuda backend's)" : ""));
  if (o.same_size_copy && o.overhead)
    throw Error(ErrorKind::invalid_argument,
                "--same-size-copy belongs to the timed records, not to --overhead");
  if (o.same_size_copy && o.backend != "cuda")
    throw Error(ErrorKind::invalid_argument,
                "--same-size-copy times cudaMemcpy: it needs --backend cuda, not " + o.backend);
  if (!o.params.empty() && !variant_rows)
    throw Error(ErrorKind::invalid_argument, "--param sets a variant's parameters; the plan chooses its own");
  for (const Params& g : grid)
    for (auto it = g.begin(); it != g.end(); ++it)
      if (!used_keys.count(it.key()))
        throw Error(ErrorKind::invalid_argument,
                    "--param: no selected variant takes the parameter '" + it.key() + "'");
  if (jobs.empty())
    throw Error(ErrorKind::invalid_argument,
                "nothing to run: no variant of backend " + o.backend + " matches the selection");
  return jobs;
}

// At least one job can run, the largest fits the device, and the JSON file can be written.
void check_runnable(const BenchOpts& o, const std::vector<Job>& jobs) {
  std::string first_reason;
  int64_t runnable = 0, largest = 0;
  for (const Job& job : jobs) {
    std::string why;
    if (job.v != nullptr) try {
        why = job.v->cannot_run(job.p, merge_params(*job.v, job.params));
      } catch (const nlohmann::json::exception& e) {
        throw Error(ErrorKind::invalid_argument, "variant " + job.v->name + ": bad parameter: " + e.what());
      }
    if (why.empty()) {
      ++runnable;
      largest = std::max(largest, job.p.layout.alloc_bytes());
    } else if (first_reason.empty()) {
      first_reason = job.v->name + ": " + why;
    }
  }
  if (runnable == 0)
    throw Error(ErrorKind::unsupported,
                "nothing to run: every selected variant is unsupported here (" + first_reason + ")");
#ifdef FDSTENCIL_HAVE_CUDA
  if (o.backend == "cuda" && 2 * largest > cuda::device_free_bytes())
    throw Error(ErrorKind::out_of_memory,
                "the largest case needs " + std::to_string(2 * largest / (1 << 20)) +
                    " MiB on the GPU for its input and output, but only " +
                    std::to_string(cuda::device_free_bytes() / (1 << 20)) + " MiB are free");
#endif
  if (!o.json_path.empty()) {  // fail now, not after an hour of measurements
    check_writable(o.json_path);
  }
}

// The device and its copy bandwidth, measured in this run, printed as the table's head.
nlohmann::json measure_device(const BenchOpts& o) {
  nlohmann::json doc;
#ifdef FDSTENCIL_HAVE_CUDA
  if (o.backend == "cuda") {
    doc["device"] = cuda::device_info(cuda::current_device());
    if (!o.profile_child)
      std::fprintf(stderr, "measuring the copy bandwidth of %s ...\n",
                   doc["device"]["name"].get<std::string>().c_str());
    // The --profile child's figures are thrown away: it skips the copy run (zeros mean "none").
    const cuda::CopyBandwidth cb = o.profile_child ? cuda::CopyBandwidth{} : cuda::measure_copy_bandwidth();
    doc["copy_gbps"] = cb.memcpy_gbps;
    doc["copy_kernel_gbps"] = cb.kernel_gbps;
    doc["copy_bytes"] = cb.bytes;
  }
#endif
  if (o.backend != "cuda") {
    doc["device"] = bench::host_device_info();
    std::fprintf(stderr, "measuring the host copy bandwidth ...\n");
    doc["copy_gbps"] = bench::host_copy_gbps();
  }
  const double copy = doc["copy_gbps"].get<double>();
  std::printf(
      "# device: %s\n# copy bandwidth (same run): %.1f GB/s%s\n",
      doc["device"]["name"].get<std::string>().c_str(), copy,
      doc.contains("copy_kernel_gbps")
          ? (", 16-byte copy kernel " + std::to_string(int(doc["copy_kernel_gbps"].get<double>())) + " GB/s")
                .c_str()
          : "");
  std::printf("# seed %llu, %d warm-up + %d timed runs, median reported\n", (unsigned long long)o.seed,
              o.warmup, o.reps);
  std::printf("%s\n", bench::table_header().c_str());
  std::fflush(stdout);

  return doc;
}

// Nsight Compute for --profile, or "" with a note that the timings go without counters.
std::string ncu_for(const BenchOpts& o) {
  const std::string ncu = bench::find_ncu(o.ncu);
  if (ncu.empty())
    std::fprintf(
        stderr,
        "note: --profile: Nsight Compute (ncu) not found%s; the timings are reported without counters\n",
        o.ncu.empty() ? " ($NCU, PATH, /usr/local/cuda/bin)" : (" at " + o.ncu).c_str());
  return ncu;
}

bench::BenchOptions timing_options(const BenchOpts& o) {
  bench::BenchOptions bo;
  bo.reps = o.reps;
  bo.warmup = o.warmup;
  bo.seed = o.seed;
  bo.verify = !o.profile_child;
  bo.nvtx_range = o.profile_child ? bench::kTimedRange : nullptr;
  return bo;
}

// --same-size-copy: the record beside a cudaMemcpy of its own output's bytes (one per size, kept in
// `copies`). The job's arrays are freed by now: the copy's two buffers are the only ones on the
// device.
void add_same_size_copy(nlohmann::json& rec, std::map<int64_t, double>& copies) {
#ifdef FDSTENCIL_HAVE_CUDA
  const int64_t bytes = rec["write_bytes"].get<int64_t>();
  auto it = copies.find(bytes);
  if (it == copies.end()) it = copies.emplace(bytes, cuda::measure_copy_bandwidth(bytes).memcpy_gbps).first;
  rec["copy_same_size_bytes"] = bytes;
  rec["copy_same_size_gbps"] = it->second;
  rec["pct_of_same_size_copy"] = 100.0 * rec["effective_gbps"].get<double>() / it->second;
#else
  (void)rec, (void)copies;  // check_bench_options refused --backend cuda in this build
#endif
}

int run_bench(BenchOpts& o) {
  check_bench_options(o);
  const std::vector<Job> jobs = make_jobs(o, select_cases(o));
  check_runnable(o, jobs);
  PlanOptions po;
  po.backend = o.backend;
  po.use_cache = !o.no_cache;
  po.cache_file = o.cache;
  if (o.overhead) return run_overhead(o, jobs, po);

  nlohmann::json doc = measure_device(o);
  const double copy = doc["copy_gbps"].get<double>();
  const std::string ncu = o.profile ? ncu_for(o) : "";
  const bench::BenchOptions bo = timing_options(o);
  doc["records"] = nlohmann::json::array();
  std::map<int64_t, double> same_size_copies;  // output bytes -> cudaMemcpy GB/s (--same-size-copy)
  int failed = 0;
  for (size_t n = 0; n < jobs.size(); ++n) {
    const Job& job = jobs[n];
    const Extents size = size_from_interior(job.p.stencil.op, job.p.interior());
    std::fprintf(stderr, "[%zu/%zu] %s %s %s R=%d %lldx%lldx%lld %s\n", n + 1, jobs.size(),
                 std::string(op_name(job.p.stencil.op)).c_str(), job.v ? job.v->name.c_str() : "plan",
                 std::string(dtype_name(job.p.dtype())).c_str(), job.p.stencil.radius, (long long)size.nx,
                 (long long)size.ny, (long long)size.nz, job.params.empty() ? "" : job.params.dump().c_str());
    nlohmann::json rec = job.v ? bench::run_variant(*job.v, job.p, job.params, bo, copy)
                               : bench::run_plan(job.p, po, o.tuned, bo, copy);
    rec["device"] = doc["device"]["name"];
    if (rec["status"] == "FAILED") ++failed;
    if (o.same_size_copy && o.backend == "cuda" && rec["status"] == "ok")
      add_same_size_copy(rec, same_size_copies);
    std::printf("%s\n", bench::table_row(rec).c_str());
    if (rec.contains("copy_same_size_gbps"))
      std::printf("#   same-size copy (%.1f MB): %.1f GB/s; this record %.1f %% of it\n",
                  double(rec["copy_same_size_bytes"].get<int64_t>()) / 1e6,
                  rec["copy_same_size_gbps"].get<double>(), rec["pct_of_same_size_copy"].get<double>());
    if (o.profile && rec["status"] == "ok") {
      rec["counters"] = ncu.empty() ? nlohmann::json{{"status", "unavailable"},
                                                     {"reason", "Nsight Compute (ncu) not found"}}
                                    : bench::profile_job(ncu, child_command(o, rec), rec);
      std::printf("%s\n", counters_line(rec["counters"]).c_str());
    }
    std::fflush(stdout);
    doc["records"].push_back(rec);
    if (!o.json_path.empty()) write_json_file(o.json_path, doc);  // a cut-off sweep keeps its rows
  }
  if (failed > 0) {
    std::fprintf(stderr, "fdstencil: %d variant(s) FAILED verification and were not timed\n", failed);
    return 1;
  }
  return 0;
}

}  // namespace

Action add_bench(CLI::App& app) {
  auto* cmd = app.add_subcommand("bench",
                                 "Verify against the reference, then time variants; with no selection, run "
                                 "the default suite (on the GPU when one is present, else on the CPU)");
  auto o = std::make_shared<BenchOpts>();
  cmd->add_option("--op", o->ops, "Operators, comma-separated (laplacian7,d2x,d2y,d2z,d2xy,d2xyz)");
  cmd->add_option("--variant", o->variants,
                  "Variants, comma-separated (default: all of the backend, and on cuda the plan's own "
                  "choice, named 'plan')");
  cmd->add_option("--radius,-r", o->radii, "Radii, comma-separated (default 4; laplacian7: 1)");
  cmd->add_option("--size", o->sizes,
                  "NX,NY,NZ; repeat for several. laplacian7 counts the boundary (the Laplacian posts' "
                  "convention), the seismic operators only the interior");
  cmd->add_option("--dtype", o->dtypes, "float, double, or float,double");
  cmd->add_option("--backend,-b", o->backend, "cuda, cpu or reference (default: cuda if a GPU is present)");
  cmd->add_option("--param", o->params, "KEY=V1[,V2...] for the variants that take KEY; repeatable");
  cmd->add_option("--reps", o->reps, "Timed runs per variant (median reported)")
      ->check(CLI::Range(1, 100000))
      ->capture_default_str();
  cmd->add_option("--warmup", o->warmup, "Untimed runs before timing")
      ->check(CLI::Range(0, 1000))
      ->capture_default_str();
  cmd->add_option("--seed", o->seed, "Seed of the random verification input")->capture_default_str();
  cmd->add_option("--align", o->align, "Alignment of x-lines in bytes: 128 (aligned) or 1 (unaligned)")
      ->check(CLI::IsMember({1, 128}))
      ->capture_default_str();
  cmd->add_option("--json", o->json_path, "Write the results file (JSON) here");
  cmd->add_flag("--tuned", o->tuned,
                "Measure only the plan's choice, from the tuning cache (a case the cache lacks is reported "
                "'untuned'; see fdstencil tune)");
  cmd->add_flag("--no-cache", o->no_cache,
                "The plan's choice from the built-in defaults, ignoring the tuning cache");
  cmd->add_option("--cache", o->cache,
                  "The tuning cache file the plan rows read (default: see fdstencil tune --help)");
  cmd->add_flag(
      "--overhead", o->overhead,
      "Time the plan's apply against the bare launch of its kernel, back to back (default size 64^3)");
  cmd->add_flag("--same-size-copy", o->same_size_copy,
                "Also time cudaMemcpy of each record's output bytes and report the record against it "
                "(copy_same_size_gbps, pct_of_same_size_copy), beside the 2 GiB reference copy (cuda)");
  cmd->add_flag("--profile", o->profile,
                "Also run each timed job under Nsight Compute (ncu --clock-control none) and add its DRAM, "
                "L2 and L1 traffic, L2 hit rate and the derived efficiencies to the record");
  cmd->add_option("--ncu", o->ncu,
                  "The ncu executable for --profile (default: $NCU, PATH, /usr/local/cuda/bin/ncu)");
  cmd->add_flag("--profile-child", o->profile_child,
                "Internal to --profile: the timed launch marked with the NVTX range fdstencil-timed, no "
                "verification (the parent verified the job)")
      ->group("");
  return [o] { return run_bench(*o); };
}

}  // namespace fdstencil::cli
