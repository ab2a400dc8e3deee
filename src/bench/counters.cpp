// Running a job under Nsight Compute and turning its CSV into the posts' counter figures.
#include "bench/counters.hpp"

#include <sys/wait.h>
#include <csignal>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "fdstencil/error.hpp"

namespace fdstencil::bench {

namespace {

constexpr double kSectorBytes = 32.0;  // the L1 and L2 count traffic in 32-byte sectors

// One CSV line, fields unquoted ("" inside quotes is a literal quote).
std::vector<std::string> split_csv(const std::string& line) {
  std::vector<std::string> out;
  std::string field;
  bool quoted = false;
  for (size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (quoted) {
      if (c == '"' && i + 1 < line.size() && line[i + 1] == '"') {
        field += '"';
        ++i;
      } else if (c == '"') {
        quoted = false;
      } else {
        field += c;
      }
    } else if (c == '"') {
      quoted = true;
    } else if (c == ',') {
      out.push_back(field);
      field.clear();
    } else if (c != '\r') {
      field += c;
    }
  }
  out.push_back(field);
  return out;
}

bool parse_number(std::string s, double& v) {
  std::string digits;
  for (char c : s)
    if (c != ',' && c != ' ') digits += c;  // "1,234,567" (thousands separators)
  if (digits.empty()) return false;
  char* end = nullptr;
  v = std::strtod(digits.c_str(), &end);
  return end != nullptr && *end == '\0';
}

std::string shell_quote(const std::string& s) {
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

}  // namespace

const std::vector<std::string>& counter_metrics() {
  static const std::vector<std::string> m = {
      "dram__bytes_read.sum",
      "dram__bytes_write.sum",
      "lts__t_sectors_srcunit_tex_op_read.sum",
      "lts__t_sectors_srcunit_tex_op_write.sum",
      "lts__t_sector_hit_rate.pct",
      "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum",
      "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum",  // cp.async / bulk-copy loads are not in these two
      "gpu__time_duration.sum",
  };
  return m;
}

CounterSums parse_ncu_csv(const std::string& text) {
  std::istringstream in(text);
  std::string line;
  std::vector<std::string> header;
  CounterSums s;
  double hit_weighted = 0, hit_weight = 0;
  while (std::getline(in, line)) {
    if (header.empty()) {
      if (line.rfind("\"ID\"", 0) == 0) header = split_csv(line);
      continue;
    }
    const std::vector<std::string> f = split_csv(line);
    double id = 0;
    if (f.size() != header.size() || !parse_number(f[0], id)) continue;  // units row, log lines
    std::map<std::string, double> row;
    for (const std::string& m : counter_metrics()) {
      size_t col = header.size();
      for (size_t c = 0; c < header.size(); ++c)
        if (header[c] == m) col = c;
      if (col == header.size()) throw Error(ErrorKind::io, "ncu output has no column " + m);
      double v = 0;
      if (!parse_number(f[col], v))
        throw Error(ErrorKind::io, "ncu output: '" + f[col] + "' is not a number (" + m + ")");
      row[m] = v;
    }
    for (size_t c = 0; c < header.size(); ++c)
      if (header[c] == "Kernel Name") s.kernel_names.push_back(f[c]);
    const double l2 =
        row["lts__t_sectors_srcunit_tex_op_read.sum"] + row["lts__t_sectors_srcunit_tex_op_write.sum"];
    hit_weighted += row["lts__t_sector_hit_rate.pct"] * l2;
    hit_weight += l2;
    for (const auto& [m, v] : row)
      if (m != "lts__t_sector_hit_rate.pct") s.sum[m] += v;
    ++s.kernels;
  }
  if (header.empty())
    throw Error(ErrorKind::io, "no ncu CSV header (a line starting with \"ID\") in its output");
  s.sum["lts__t_sector_hit_rate.pct"] = hit_weight > 0 ? hit_weighted / hit_weight : 0.0;
  return s;
}

nlohmann::json derive_counters(const CounterSums& s, const nlohmann::json& r) {
  const auto get = [&](const char* m) { return s.sum.count(m) ? s.sum.at(m) : 0.0; };
  const double read = get("dram__bytes_read.sum"), write = get("dram__bytes_write.sum");
  const double cube = r.at("write_bytes").get<double>();  // the write is the interior: one cube
  const double fetch = r.at("fetch_bytes").get<double>();
  const double ms = r.at("median_ms").get<double>();
  nlohmann::json c;
  c["status"] = "ok";
  c["kernels"] = s.kernels;
  c["kernel_names"] = s.kernel_names;
  c["dram_read_bytes"] = read;
  c["dram_write_bytes"] = write;
  c["ncu_duration_ms"] = get("gpu__time_duration.sum") * 1e-6;
  // Against the bench's own median (un-profiled), so achieved and effective share a time base.
  c["achieved_gbps"] = (read + write) / (ms * 1e6);
  // null where a kernel moved no bytes in that direction (nothing to divide by)
  const auto ratio = [](double num, double den) {
    return den > 0 ? nlohmann::json(num / den) : nlohmann::json(nullptr);
  };
  c["fetch_efficiency"] = ratio(fetch, read);
  c["write_efficiency"] = ratio(cube, write);
  c["read_write_ratio"] = ratio(read, write);
  c["dram_read_per_cube"] = read / cube;
  c["dram_write_per_cube"] = write / cube;
  c["l2_read_per_cube"] = get("lts__t_sectors_srcunit_tex_op_read.sum") * kSectorBytes / cube;
  c["l2_write_per_cube"] = get("lts__t_sectors_srcunit_tex_op_write.sum") * kSectorBytes / cube;
  c["l1_read_per_cube"] = get("l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum") * kSectorBytes / cube;
  c["l1_write_per_cube"] = get("l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum") * kSectorBytes / cube;
  c["l2_hit_rate_pct"] = get("lts__t_sector_hit_rate.pct");
  return c;
}

std::string find_ncu(const std::string& hint) {
  namespace fs = std::filesystem;
  const auto runnable = [](const fs::path& p) { return !p.empty() && access(p.c_str(), X_OK) == 0; };
  if (!hint.empty()) return runnable(hint) ? hint : "";
  if (const char* env = std::getenv("NCU"); env != nullptr && runnable(env)) return env;
  if (const char* path = std::getenv("PATH")) {
    std::istringstream dirs(path);
    std::string d;
    while (std::getline(dirs, d, ':'))
      if (!d.empty() && runnable(fs::path(d) / "ncu")) return (fs::path(d) / "ncu").string();
  }
  return runnable("/usr/local/cuda/bin/ncu") ? "/usr/local/cuda/bin/ncu" : "";
}

nlohmann::json profile_job(const std::string& ncu, const std::vector<std::string>& child,
                           const nlohmann::json& record, const std::filesystem::path& scratch_parent) {
  namespace fs = std::filesystem;
  if (ncu.empty()) return {{"status", "unavailable"}, {"reason", "Nsight Compute (ncu) not found"}};
  std::string metrics;
  for (const std::string& m : counter_metrics()) metrics += (metrics.empty() ? "" : ",") + m;
  // A private directory (mkdtemp), not a guessable name in /tmp: ncu may run as root.
  std::string dir_template = (scratch_parent / "fdstencil-ncu-XXXXXX").string();
  if (mkdtemp(dir_template.data()) == nullptr)
    return {{"status", "failed"}, {"reason", "cannot create a temporary directory"}};
  const fs::path dir = dir_template, log = dir / "report.csv", err = dir / "stderr.txt";
  // --clock-control none: the clocks the timing ran at, not ncu's locked base clock.
  std::string cmd = shell_quote(ncu) + " --clock-control none --csv --page raw --print-units base --nvtx" +
                    " --nvtx-include " + shell_quote(std::string(kTimedRange) + "/") + " --metrics " +
                    metrics + " --log-file " + shell_quote(log.string()) + " --";
  for (const std::string& a : child) {  // appends: "lit" + string trips a false GCC 12 -Wrestrict
    cmd += ' ';
    cmd += shell_quote(a);
  }
  cmd += " >/dev/null 2>";
  cmd += shell_quote(err.string());
  const int rc = std::system(cmd.c_str());
  const auto slurp = [](const fs::path& p) {
    std::ifstream f(p);
    std::stringstream t;
    t << f.rdbuf();
    return t.str();
  };
  const std::string out = slurp(log), errors = slurp(err);
  std::error_code ec;
  fs::remove_all(dir, ec);
  // std::system ignores SIGINT in this process while the child runs: pass a Ctrl-C on.
  if (rc != -1 && WIFSIGNALED(rc) && WTERMSIG(rc) == SIGINT) std::raise(SIGINT);
  const std::string all = out + errors;
  if (all.find("ERR_NVGPUCTRPERM") != std::string::npos)
    return {{"status", "unavailable"},
            {"reason",
             "no permission to read the GPU performance counters (ERR_NVGPUCTRPERM): run as root or set "
             "NVreg_RestrictProfilingToAdminUsers=0"}};
  // The lines that say what went wrong: ncu's ==ERROR== lines, else the tail of what it printed.
  const auto why = [&] {
    std::string lines;
    std::istringstream in(all);
    for (std::string l; std::getline(in, l);)
      if (l.find("==ERROR==") != std::string::npos) lines += l + " ";
    return lines.empty() ? all.substr(all.size() > 400 ? all.size() - 400 : 0) : lines;
  };
  const std::string status =
      WIFEXITED(rc) ? "exit status " + std::to_string(WEXITSTATUS(rc)) : "killed by a signal";
  if (out.find("\"ID\"") == std::string::npos)
    return {
        {"status", "failed"},
        {"reason", rc == 0 ? "ncu profiled no kernel in the timed range" : "ncu: " + status + ": " + why()}};
  try {
    const CounterSums s = parse_ncu_csv(out);
    if (s.kernels == 0)
      return {{"status", "failed"}, {"reason", "ncu profiled no kernel in the timed range"}};
    nlohmann::json c = derive_counters(s, record);
    if (rc != 0) c["warning"] = "ncu ended with " + status + " after writing its report: " + why();
    return c;
  } catch (const std::exception& e) {
    return {{"status", "failed"}, {"reason", e.what()}};
  }
}

}  // namespace fdstencil::bench
