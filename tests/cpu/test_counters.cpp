// bench --profile's host side, without a GPU or Nsight Compute: the CSV parser on ncu-shaped
// output, the derived figures on hand-computed numbers, and profile_job end to end against a
// stand-in `ncu` script (the command it builds, the log file it reads, the permission error).
#include <gtest/gtest.h>

#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "bench/counters.hpp"
#include "fdstencil/error.hpp"

using namespace fdstencil;
using namespace fdstencil::bench;

namespace {

// Two kernels (a two-pass pipeline), preceded by ncu's log and followed by nothing; numbers with
// thousands separators, a units row, as `ncu --csv --page raw --print-units base` prints them.
std::string sample_csv() {
  std::string h = "\"ID\",\"Process ID\",\"Kernel Name\"";
  std::string u = "\"\",\"\",\"\"";
  std::string k1 = "\"0\",\"4242\",\"xy_fused\"";
  std::string k2 = "\"1\",\"4242\",\"z_window\"";
  const std::map<std::string, std::pair<std::string, std::string>> v = {
      {"dram__bytes_read.sum", {"\"1,000,000\"", "\"3,000,000\""}},
      {"dram__bytes_write.sum", {"\"500,000\"", "\"500,000\""}},
      {"lts__t_sectors_srcunit_tex_op_read.sum", {"\"40,000\"", "\"60,000\""}},
      {"lts__t_sectors_srcunit_tex_op_write.sum", {"\"10,000\"", "\"10,000\""}},
      {"lts__t_sector_hit_rate.pct", {"\"50\"", "\"80\""}},
      {"l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum", {"\"100,000\"", "\"200,000\""}},
      {"l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum", {"\"15,625\"", "\"15,625\""}},
      {"gpu__time_duration.sum", {"\"1,500\"", "\"2,500\""}},
  };
  for (const auto& [m, vals] : v) {
    h += ",\"" + m + "\"";
    u += m == "lts__t_sector_hit_rate.pct" ? std::string(",\"%\"") : std::string(",\"byte\"");
    k1 += "," + vals.first;
    k2 += "," + vals.second;
  }
  std::string out = "==PROF== Connected to process 4242\n==PROF== Profiling \"xy_fused\": 0%....100%\n";
  out += h;
  out += '\n';
  out += u;
  out += '\n';
  out += k1;
  out += '\n';
  out += k2;
  out += '\n';
  return out;
}

nlohmann::json sample_record() {
  // One cube of 1,000,000 bytes written; the model's fetch 1,200,000 bytes; 1 ms median.
  return {{"median_ms", 1.0}, {"fetch_bytes", 1200000.0}, {"write_bytes", 1000000.0}};
}

// A stand-in for ncu: writes `body` to the file after --log-file and exits with `rc`.
std::string fake_ncu(const std::filesystem::path& dir, const std::string& body, int rc) {
  const std::filesystem::path data = dir / "body.txt", script = dir / "ncu";
  std::ofstream(data) << body;
  std::ofstream s(script);
  s << "#!/bin/sh\nwhile [ $# -gt 0 ]; do if [ \"$1\" = --log-file ]; then cp '" << data.string()
    << "' \"$2\"; fi; if [ \"$1\" = -- ]; then shift; echo \"$@\" > '" << (dir / "child.txt").string()
    << "'; break; fi; shift; done\nexit " << rc << "\n";
  s.close();
  chmod(script.c_str(), 0755);
  return script.string();
}

}  // namespace

TEST(Counters, ParsesNcuCsvSummingKernels) {
  const CounterSums s = parse_ncu_csv(sample_csv());
  EXPECT_EQ(s.kernels, 2);
  EXPECT_EQ(s.kernel_names, (std::vector<std::string>{"xy_fused", "z_window"}));
  EXPECT_DOUBLE_EQ(s.sum.at("dram__bytes_read.sum"), 4e6);
  EXPECT_DOUBLE_EQ(s.sum.at("dram__bytes_write.sum"), 1e6);
  EXPECT_DOUBLE_EQ(s.sum.at("gpu__time_duration.sum"), 4000);
  // Hit rate weighted by each kernel's L2 sectors: (50 * 50,000 + 80 * 70,000) / 120,000.
  EXPECT_DOUBLE_EQ(s.sum.at("lts__t_sector_hit_rate.pct"), (50.0 * 50000 + 80.0 * 70000) / 120000);
}

TEST(Counters, MissingHeaderOrColumnIsAnError) {
  EXPECT_THROW(parse_ncu_csv("==PROF== nothing profiled\n"), Error);
  std::string csv = sample_csv();
  const size_t at = csv.find("\"dram__bytes_write.sum\"");
  csv.replace(at, std::string("\"dram__bytes_write.sum\"").size(), "\"something_else\"");
  EXPECT_THROW(parse_ncu_csv(csv), Error);
}

TEST(Counters, DerivedFiguresByHand) {
  const nlohmann::json c = derive_counters(parse_ncu_csv(sample_csv()), sample_record());
  EXPECT_EQ(c["status"], "ok");
  EXPECT_DOUBLE_EQ(c["achieved_gbps"].get<double>(), 5e6 / 1e6);       // 5 MB in 1 ms
  EXPECT_DOUBLE_EQ(c["fetch_efficiency"].get<double>(), 1.2e6 / 4e6);  // model / measured
  EXPECT_DOUBLE_EQ(c["write_efficiency"].get<double>(), 1.0);
  EXPECT_DOUBLE_EQ(c["read_write_ratio"].get<double>(), 4.0);
  EXPECT_DOUBLE_EQ(c["dram_read_per_cube"].get<double>(), 4.0);
  EXPECT_DOUBLE_EQ(c["l2_read_per_cube"].get<double>(), 100000 * 32.0 / 1e6);
  EXPECT_DOUBLE_EQ(c["l1_write_per_cube"].get<double>(), 31250 * 32.0 / 1e6);
  EXPECT_DOUBLE_EQ(c["ncu_duration_ms"].get<double>(), 4000 * 1e-6);
}

// ncu's working folders (private mkdtemp folders) left behind in `parent`. The test gives
// profile_job a parent of its own: counting in the shared temporary directory raced with the
// other tests that profile at the same time under ctest -j.
int ncu_leftovers(const std::filesystem::path& parent) {
  int n = 0;
  for (const auto& e : std::filesystem::directory_iterator(parent))
    n += e.path().filename().string().rfind("fdstencil-ncu-", 0) == 0;
  return n;
}

TEST(Counters, ProfileJobAgainstAStandInNcu) {
  const auto dir = std::filesystem::temp_directory_path() / ("fds-counters-" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  const std::string ncu = fake_ncu(dir, sample_csv(), 0);
  const auto scratch = dir / "scratch";
  std::filesystem::create_directories(scratch);
  const nlohmann::json c =
      profile_job(ncu, {"/bin/fdstencil", "bench", "--op", "d2xyz"}, sample_record(), scratch);
  EXPECT_EQ(c["status"], "ok") << c.dump();
  EXPECT_EQ(c["kernels"], 2);
  EXPECT_EQ(ncu_leftovers(scratch), 0);
  EXPECT_FALSE(c.contains("warning"));
  std::ifstream child(dir / "child.txt");
  std::string line;
  std::getline(child, line);
  EXPECT_EQ(line, "/bin/fdstencil bench --op d2xyz");  // the child runs as given, after --
  // A report written, then a non-zero exit: the figures stand, with a warning naming the status.
  const nlohmann::json w = profile_job(fake_ncu(dir, sample_csv(), 5), {"/bin/true"}, sample_record());
  EXPECT_EQ(w["status"], "ok");
  EXPECT_NE(w.value("warning", std::string()).find("exit status 5"), std::string::npos) << w.dump();
  std::filesystem::remove_all(dir);
}

TEST(Counters, NoPermissionOrNoNcuSaysWhy) {
  const auto dir = std::filesystem::temp_directory_path() / ("fds-counters-perm-" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  const std::string ncu = fake_ncu(dir,
                                   "==ERROR== ERR_NVGPUCTRPERM - The user does not have permission to access "
                                   "NVIDIA GPU Performance Counters\n",
                                   1);
  nlohmann::json c = profile_job(ncu, {"/bin/true"}, sample_record());
  EXPECT_EQ(c["status"], "unavailable");
  EXPECT_NE(c["reason"].get<std::string>().find("permission"), std::string::npos);
  const std::string broken = fake_ncu(dir, "==ERROR== something else\n", 3);
  c = profile_job(broken, {"/bin/true"}, sample_record());
  EXPECT_EQ(c["status"], "failed");
  EXPECT_NE(c["reason"].get<std::string>().find("status 3"), std::string::npos);
  c = profile_job("", {"/bin/true"}, sample_record());
  EXPECT_EQ(c["status"], "unavailable");
  EXPECT_EQ(find_ncu((dir / "no-such-ncu").string()), "");
  EXPECT_EQ(find_ncu(ncu), ncu);
  std::filesystem::remove_all(dir);
}
