// Hardware counters for bench records (the seeds' profiler tables on NVIDIA): run one benchmark
// job under Nsight Compute (ncu), read its machine-readable CSV, and derive the posts' figures
// (achieved bandwidth, fetch and write efficiency, traffic per cube at DRAM, L2 and L1).
// Host-only: the device side is one NVTX range around the timed launches (cuda/common/runner).
#pragma once

#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace fdstencil::bench {

// The name of the NVTX push/pop range around each timed application; ncu profiles only the
// kernels launched inside it (not the verification runs, the L2 flush or the copy benchmark).
inline constexpr const char* kTimedRange = "fdstencil-timed";

// The metrics collected (Hopper names). Bytes at DRAM; 32-byte sectors at L2 (requests from L1)
// and at L1 (global loads and stores); the L2 hit rate; the kernel's duration.
const std::vector<std::string>& counter_metrics();

// Per-metric sums over the profiled kernels (the hit rate: weighted by the L2 sectors of each
// kernel), and how many kernels there were.
struct CounterSums {
  std::map<std::string, double> sum;
  int kernels = 0;
  std::vector<std::string> kernel_names;
};

// Parses ncu's `--csv --page raw` output: a header row naming "ID", "Kernel Name" and the metric
// columns, an optional units row, then one row per profiled kernel. Lines before the header
// (ncu's ==PROF== log, the application's own output) are ignored; numbers may carry thousands
// separators. Throws Error(io) when there is no header or a metric column is missing.
CounterSums parse_ncu_csv(const std::string& text);

// The derived figures, merged into a bench record (which must carry median_ms, fetch_bytes and
// write_bytes; the write is the interior, i.e. one cube).
nlohmann::json derive_counters(const CounterSums& s, const nlohmann::json& record);

// The ncu executable: `hint` if given, else $NCU, else `ncu` on PATH, else
// /usr/local/cuda/bin/ncu; "" when none is found.
std::string find_ncu(const std::string& hint);

// Profiles one job: runs `ncu <options> -- <child>` and parses its CSV. On failure the result's
// "status" says why (ncu missing, no permission to read counters, the child failed) and the
// caller keeps the timing record as it is. ncu's report goes to a private folder made (and
// removed) inside `scratch_parent`.
nlohmann::json profile_job(
    const std::string& ncu, const std::vector<std::string>& child, const nlohmann::json& record,
    const std::filesystem::path& scratch_parent = std::filesystem::temp_directory_path());

}  // namespace fdstencil::bench
