// fdstencil info: version, build options (CUDA, SEG-Y), backends, and the GPU if there is one.
#include <omp.h>

#include <cstdio>

#include "commands.hpp"
#include "fdstencil/backend.hpp"
#include "fdstencil/segy.hpp"
#include "fdstencil/tuning_cache.hpp"
#include "fdstencil/version.hpp"
#include "plan/registry.hpp"
#ifdef FDSTENCIL_HAVE_CUDA
#include "fdstencil/device.hpp"
#endif

namespace fdstencil::cli {

bool gpu_available() {
#ifdef FDSTENCIL_HAVE_CUDA
  return cuda::device_count() > 0;
#else
  return false;
#endif
}

Action add_info(CLI::App& app) {
  auto* cmd = app.add_subcommand("info", "Print version, build options, backends and the GPU");
  auto json = std::make_shared<bool>(false);
  cmd->add_flag("--json", *json, "Print JSON");
  return [json] {
    nlohmann::json j;
    j["version"] = FDSTENCIL_VERSION;
    j["build"] = {{"cuda", false}, {"openmp_threads", omp_get_max_threads()}, {"segy", true}};
    std::vector<std::string> backends;
    for (const Backend* b : host_backends()) backends.emplace_back(b->name());
#ifdef FDSTENCIL_HAVE_CUDA
    j["build"]["cuda"] = true;
    j["build"]["cuda_runtime"] = cuda::runtime_version();
    j["build"]["cuda_architectures"] = FDSTENCIL_CUDA_ARCHITECTURES;
    backends.emplace_back("cuda");
    j["gpus"] = nlohmann::json::array();
    const int n = cuda::device_count();
    for (int d = 0; d < n; ++d) j["gpus"].push_back(cuda::device_info(d));
    if (n == 0) j["gpu_status"] = cuda::no_device_reason();
#else
    j["gpu_status"] = "this build has no CUDA backend (configure with FDSTENCIL_CUDA=ON)";
#endif
    j["backends"] = backends;
    size_t variants = all_variants().size();
    j["variants"] = variants;
    const TuningCache cache = TuningCache::load(default_cache_file(), [](const std::string& w) {
      std::fprintf(stderr, "fdstencil: warning: %s\n", w.c_str());
    });
    j["tuning_cache"] = {{"file", cache.file().string()}, {"entries", cache.entries().size()}};
    if (*json) {
      std::printf("%s\n", j.dump(2).c_str());
      return 0;
    }
    std::printf("fdstencil %s\n", FDSTENCIL_VERSION);
    std::printf("build: CUDA %s, OpenMP threads %d\n", j["build"]["cuda"].get<bool>() ? "on" : "off",
                omp_get_max_threads());
    std::printf("SEG-Y: on (fdstencil's own reader and writer)\n");
    std::printf("backends:");
    for (const auto& b : backends) std::printf(" %s", b.c_str());
    std::printf("\nvariants registered: %zu\n", variants);
    std::printf("tuning cache: %s (%zu entries)\n", cache.file().string().c_str(), cache.entries().size());
    if (j.contains("gpus") && !j["gpus"].empty()) {
      for (const auto& g : j["gpus"])
        std::printf("gpu %d: %s, %.1f GiB, %d SMs, L2 %.1f MB, compute capability %s\n",
                    g["index"].get<int>(), g["name"].get<std::string>().c_str(),
                    g["memory_bytes"].get<double>() / (1 << 30), g["sms"].get<int>(),
                    g["l2_bytes"].get<double>() / 1e6, g["compute_capability"].get<std::string>().c_str());
    } else {
      std::printf("gpu: none (%s)\n", j["gpu_status"].get<std::string>().c_str());
    }
    return 0;
  };
}

}  // namespace fdstencil::cli
