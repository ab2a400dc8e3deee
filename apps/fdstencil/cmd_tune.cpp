// fdstencil tune: fill the tuning cache for the cases given (every combination of --op, --radius,
// --size and --dtype), or show it (--show). Every case is checked before the first is tuned, so
// a typo fails at once rather than after an hour of tuning.
#include <cmath>
#include <cstdio>
#include <filesystem>

#include "commands.hpp"
#include "core/summary.hpp"
#include "fdstencil/device_field.hpp"
#include "fdstencil/error.hpp"
#include "fdstencil/tune.hpp"
#include "fdstencil/tuning_cache.hpp"
#include "tune_wave.hpp"
#ifdef FDSTENCIL_HAVE_CUDA
#include "fdstencil/device.hpp"
#endif

namespace fdstencil::cli {

namespace {

struct TuneOpts {
  std::string ops, radii, dtypes = "float", cache, json_path;
  std::vector<std::string> sizes;
  double budget = 60;
  int reps = 10;
  bool show = false, no_store = false, quiet = false;
  // --wave: the wave step's launch on models of these shapes (NZ,NY,NX or NZ,NX).
  bool wave = false, free_surface = false;
  std::vector<std::string> shapes;
  int cpml = 10;
  int64_t steps = 500;
};

// A wave case's model shape: NZ,NY,NX (3D) or NZ,NX (2D), as `fdstencil wave --shape`.
WaveCase wave_shape(const std::string& text) {
  const auto parts = split(text, ',');
  if (parts.size() != 2 && parts.size() != 3)
    throw Error(ErrorKind::invalid_argument, "--shape '" + text + "': expected NZ,NY,NX (3D) or NZ,NX (2D)");
  std::vector<int64_t> n;
  for (const auto& p : parts) {
    const int v = parse_int(p, "--shape");
    if (v < 1)
      throw Error(ErrorKind::invalid_argument, "--shape '" + text + "': every extent must be at least 1");
    n.push_back(v);
  }
  WaveCase c;
  c.dim = int(n.size());
  c.nz = n.front();
  c.nx = n.back();
  c.ny = c.dim == 3 ? n[1] : 1;
  return c;
}

// Every wave case checked before the first is timed.
std::vector<WaveCase> wave_cases(const TuneOpts& o) {
  if (o.shapes.empty()) throw Error(ErrorKind::invalid_argument, "--wave needs --shape: the model to time");
  if (o.radii.empty()) throw Error(ErrorKind::invalid_argument, "--wave needs --radius");
  if (!o.ops.empty() || !o.sizes.empty())
    throw Error(ErrorKind::invalid_argument,
                "--wave times the wave step: --op and --size are the operators'");
  if (o.cpml < 0)
    throw Error(ErrorKind::invalid_argument, "--cpml " + std::to_string(o.cpml) + ": at least 0");
  if (o.steps < 1)
    throw Error(ErrorKind::invalid_argument, "--steps " + std::to_string(o.steps) + ": at least 1");
  std::vector<WaveCase> cases;
  for (const auto& shape : o.shapes)
    for (const auto& r : split(o.radii, ',')) {
      WaveCase c = wave_shape(shape);
      c.radius = parse_int(r, "--radius");
      if (c.radius < 1 || c.radius > kMaxRadius)
        throw Error(ErrorKind::invalid_argument,
                    "--radius " + r + ": the wave step runs R = 1.." + std::to_string(kMaxRadius));
      c.cpml = o.cpml;
      c.free_surface = o.free_surface;
      cases.push_back(c);
    }
  return cases;
}

// tune --wave: each case's candidates timed, the fastest stored in the wave tuning cache.
int run_tune_wave(const TuneOpts& o) {
  const std::vector<WaveCase> cases = wave_cases(o);
  const std::filesystem::path file = wave_cache_file(o.cache);
  if (!o.json_path.empty()) check_writable(o.json_path);
  if (!o.no_store) {
    std::filesystem::create_directories(file.parent_path());
    check_writable(file.string());
    check_wave_cache(file);  // a damaged file fails now, not after the first case is timed
  }
  if (gpu_count() == 0)
    throw Error(ErrorKind::unsupported, "fdstencil tune --wave needs a GPU: " + gpu_unavailable_reason());
  std::string device;
#ifdef FDSTENCIL_HAVE_CUDA
  device = cuda::device_info(cuda::current_device())["name"].get<std::string>();
#endif
  WaveTuneOptions to;
  to.steps = o.steps;
  if (!o.quiet) to.progress = [](const std::string& line) { std::fprintf(stderr, "  %s\n", line.c_str()); };
  nlohmann::json doc = {{"device", device}, {"cases", nlohmann::json::array()}};
  std::printf("%-16s %2s %4s %10s %10s %6s  %s\n", "shape", "R", "cpml", "default", "tuned", "gain",
              "kernel parameters");
  for (const WaveCase& c : cases) {
    const std::string shape =
        std::to_string(c.nz) + (c.dim == 3 ? "," + std::to_string(c.ny) : "") + "," + std::to_string(c.nx);
    if (!o.quiet)
      std::fprintf(stderr, "tuning the wave step on %s at R=%d, cpml %d\n", shape.c_str(), c.radius, c.cpml);
    const nlohmann::json r = tune_wave(device, c, to);
    const double base = r["default_gpts"].get<double>(), best = r["gpts"].get<double>();
    std::printf("%-16s %2d %4d %10.1f %10.1f %5.2fx  %s\n", shape.c_str(), c.radius, c.cpml, base, best,
                best / base, r["kernel_params"].dump().c_str());
    std::fflush(stdout);
    if (!o.no_store) store_wave_entry(file, r);
    doc["cases"].push_back(r);
    if (!o.json_path.empty()) write_json_file(o.json_path, doc);
  }
  if (!o.no_store) std::fprintf(stderr, "fdstencil: stored in %s\n", file.string().c_str());
  return 0;
}

struct Case {
  Op op;
  int radius;
  DType dtype;
  Extents size, interior;
};

int show_cache(const TuneOpts& o, bool json) {
  const std::filesystem::path file = o.cache.empty() ? default_cache_file() : std::filesystem::path(o.cache);
  const TuningCache c = TuningCache::load(
      file, [](const std::string& w) { std::fprintf(stderr, "fdstencil: warning: %s\n", w.c_str()); });
  const std::filesystem::path wave_file = wave_cache_file(o.cache);
  const nlohmann::json wave = wave_entries(
      wave_file, [](const std::string& w) { std::fprintf(stderr, "fdstencil: warning: %s\n", w.c_str()); });
  if (json) {
    nlohmann::json out = {{"file", file.string()},
                          {"entries", nlohmann::json::array()},
                          {"wave_file", wave_file.string()},
                          {"wave_entries", wave}};
    for (const TuningEntry& e : c.entries()) out["entries"].push_back(to_json(e));
    std::printf("%s\n", out.dump(2).c_str());
    return 0;
  }
  std::printf("# wave tuning cache: %s (%zu entries)\n", wave_file.string().c_str(), wave.size());
  for (const nlohmann::json& e : wave)
    std::printf("%-24s %dD %-16s R=%d cpml %d%s %s (%.1f GPts/s, default %.1f)\n",
                e.value("device", "").c_str(), e.value("dim", 0), e["shape"].dump().c_str(),
                e.value("radius", 0), e.value("cpml", 0),
                e.value("free_surface", false) ? " free surface" : "", e["kernel_params"].dump().c_str(),
                e.value("gpts", 0.0), e.value("default_gpts", 0.0));
  std::printf("# tuning cache: %s (%zu entries)\n", file.string().c_str(), c.entries().size());
  if (c.entries().empty()) return 0;
  std::printf("%-24s %-10s %2s %-6s %-16s %-12s %-44s %9s %7s\n", "device", "op", "R", "type", "interior",
              "variant", "parameters", "ms", "% copy");
  for (const TuningEntry& e : c.entries())
    std::printf("%-24s %-10s %2d %-6s %-16s %-12s %-44s %9.4f %7.1f\n", e.key.device.c_str(),
                std::string(op_name(e.key.op)).c_str(), e.key.radius,
                std::string(dtype_name(e.key.dtype)).c_str(), extents_text(e.key.interior).c_str(),
                e.variant.c_str(), e.params.dump().c_str(), e.median_ms, e.pct_of_copy);
  return 0;
}

int run_tune(const TuneOpts& o, bool json_show) {
  if (o.show) return show_cache(o, json_show);
  if (o.wave) return run_tune_wave(o);
  if (o.ops.empty())
    throw Error(ErrorKind::invalid_argument, "--op is required (or --show to print the cache)");
  if (o.sizes.empty())
    throw Error(ErrorKind::invalid_argument, "--size is required: the extents to tune for");
  if (!(o.budget > 0) || !std::isfinite(o.budget)) {
    char buf[128];
    std::snprintf(buf, sizeof buf, "--budget %g: the time budget must be a positive number of seconds",
                  o.budget);
    throw Error(ErrorKind::invalid_argument, buf);
  }
  std::vector<Case> cases;
  for (const auto& os : split(o.ops, ',')) {
    const Op op = parse_op(os);
    std::vector<int> radii;
    if (o.radii.empty()) {
      if (op != Op::laplacian7) throw Error(ErrorKind::invalid_argument, "--radius is required for " + os);
      radii = {1};
    } else {
      for (const auto& r : split(o.radii, ',')) radii.push_back(parse_int(r, "--radius"));
    }
    for (int r : radii)
      for (const auto& ss : o.sizes)
        for (const auto& ds : split(o.dtypes, ',')) {
          Case c{op, r, parse_dtype(ds), parse_extents(ss, "--size"), {}};
          const Stencil s{op, r, {}};
          validate(s);
          c.interior = interior_from_size(op, c.size);
          validate_extents(s, c.interior);
          Layout::make(c.interior, r, dtype_bytes(c.dtype));  // sizes whose bytes overflow
          cases.push_back(c);
        }
  }
  if (!o.json_path.empty()) {  // fail now, not after the first case is tuned
    check_writable(o.json_path);
  }
  if (gpu_count() == 0)
    throw Error(ErrorKind::unsupported, "fdstencil tune needs a GPU: " + gpu_unavailable_reason());
#ifdef FDSTENCIL_HAVE_CUDA
  // Every case must fit before the first is tuned: input, output and reference on the device.
  for (const Case& c : cases)
    cuda::ensure_device_memory(3 * Layout::make(c.interior, c.radius, dtype_bytes(c.dtype)).alloc_bytes(),
                               ("tuning " + std::string(op_name(c.op)) + " at " + extents_text(c.size) +
                                " (input, output and reference)")
                                   .c_str());
#endif

  TuneOptions to;
  to.budget_seconds = o.budget;
  to.cache_file = o.cache;
  to.store = !o.no_store;
  to.reps = o.reps;
  if (o.quiet) to.progress = [](const std::string&) {};
  nlohmann::json doc = {{"cases", nlohmann::json::array()}};
  std::printf("%-10s %2s %-6s %-16s %-12s %-44s %9s %8s %7s %6s %7s\n", "op", "R", "type", "size", "variant",
              "parameters", "ms", "GB/s", "% copy", "timed", "seconds");
  for (size_t i = 0; i < cases.size(); ++i) {
    const Case& c = cases[i];
    if (!o.quiet)
      std::fprintf(stderr, "[%zu/%zu] tuning %s R=%d %s %s\n", i + 1, cases.size(),
                   std::string(op_name(c.op)).c_str(), c.radius, std::string(dtype_name(c.dtype)).c_str(),
                   extents_text(c.size).c_str());
    const TuneResult r = tune(c.op, c.radius, c.dtype, c.interior, to);
    const TuningEntry& e = r.best;
    std::printf("%-10s %2d %-6s %-16s %-12s %-44s %9.4f %8.0f %7.1f %6d %7.1f\n",
                std::string(op_name(c.op)).c_str(), c.radius, std::string(dtype_name(c.dtype)).c_str(),
                extents_text(c.size).c_str(), e.variant.c_str(), e.params.dump().c_str(), e.median_ms,
                e.effective_gbps, e.pct_of_copy, r.timed, r.seconds);
    std::fflush(stdout);
    // The cache's own entry, with the size as given, the search's counts and every candidate.
    nlohmann::json rec = to_json(r);
    rec["size"] = {c.size.nx, c.size.ny, c.size.nz};
    doc["cases"].push_back(rec);
    if (!o.json_path.empty()) write_json_file(o.json_path, doc);  // a cut-off run keeps its cases
  }
  if (!o.no_store && !cases.empty())
    std::fprintf(stderr, "fdstencil: stored in %s\n",
                 (o.cache.empty() ? default_cache_file() : std::filesystem::path(o.cache)).string().c_str());
  return 0;
}

}  // namespace

Action add_tune(CLI::App& app) {
  auto* cmd = app.add_subcommand(
      "tune",
      "Search the CUDA variants and their parameters for each case, verify every candidate against the "
      "reference before timing it, and store the fastest in the tuning cache that plans read; or --show it");
  auto o = std::make_shared<TuneOpts>();
  auto json = std::make_shared<bool>(false);
  cmd->add_option("--op", o->ops, "Operators, comma-separated (laplacian7,d2x,d2y,d2z,d2xy,d2xyz)");
  cmd->add_option("--radius,-r", o->radii, "Radii, comma-separated (laplacian7: 1, the default for it)");
  cmd->add_option("--size", o->sizes,
                  "NX,NY,NZ; repeat for several. laplacian7 counts the boundary, the seismic operators only "
                  "the interior (as in bench)");
  cmd->add_option("--dtype", o->dtypes, "float, double, or float,double")->capture_default_str();
  cmd->add_option("--budget", o->budget, "Seconds of search per case (the first round always runs)")
      ->capture_default_str();
  cmd->add_option("--reps", o->reps, "Timed applications per candidate (median)")
      ->check(CLI::Range(1, 10000))
      ->capture_default_str();
  cmd->add_option("--cache", o->cache,
                  "The tuning cache file (default: $FDSTENCIL_TUNING_CACHE, else "
                  "$XDG_CACHE_HOME/fdstencil/tuning.json, else ~/.cache/fdstencil/tuning.json)");
  cmd->add_flag("--no-store", o->no_store, "Search and report, but leave the cache as it is");
  cmd->add_option("--json", o->json_path, "Write every case and every candidate tried to this JSON file");
  cmd->add_flag("--quiet,-q", o->quiet, "No progress on stderr");
  cmd->add_flag(
      "--wave", o->wave,
      "Tune the wave step's launch instead (--shape, --radius, --cpml, --free-surface, --steps): "
      "the fastest candidate whose field is the default's to the bit goes into wave-tuning.json beside "
      "the cache, which `fdstencil wave` then takes on this card for runs of that grid");
  cmd->add_option("--shape", o->shapes,
                  "--wave: the model's points NZ,NY,NX (3D) or NZ,NX (2D); repeat for several");
  cmd->add_option("--cpml", o->cpml, "--wave: CPML points on every face")->capture_default_str();
  cmd->add_flag("--free-surface", o->free_surface, "--wave: a free surface at z = 0 instead of the top CPML");
  cmd->add_option("--steps", o->steps, "--wave: steps of each timed run (3 timed runs, their median)")
      ->capture_default_str();
  cmd->add_flag("--show", o->show, "Print the cache (its file, then one row per entry) and exit");
  cmd->add_flag("--show-json", *json, "Print the cache as JSON and exit");
  return [o, json] {
    if (*json) o->show = true;
    return run_tune(*o, *json);
  };
}

}  // namespace fdstencil::cli
