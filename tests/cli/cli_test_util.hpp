// Shared helpers of the command-line tests (test_cli.cpp, test_wave_cli.cpp): running the built
// tool as a user would, with its exit code and its output, and a fresh scratch directory per test.
#pragma once

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <string>

namespace fdstencil::test {

struct Result {
  int code = -1;
  std::string out;  // stdout and stderr together
};

// Runs the tool (FDSTENCIL_CLI_PATH, set by tests/CMakeLists.txt) with `args`; `env` is put before
// the command, for variables such as "NAME=value ".
inline Result run_cli(const std::string& args, const std::string& env = "") {
  const std::string cmd = env + std::string(FDSTENCIL_CLI_PATH) + " " + args + " 2>&1";
  Result r;
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) return r;
  std::array<char, 4096> buf{};
  size_t n;
  while ((n = fread(buf.data(), 1, buf.size(), p)) > 0) r.out.append(buf.data(), n);
  const int status = pclose(p);
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

inline bool gpu_present() {
  return run_cli("info --json").out.find("\"gpus\": [\n    {") != std::string::npos;
}

// A test with its own empty directory, <temp>/<prefix><pid>_<test name>, removed afterwards.
class ScratchDirTest : public ::testing::Test {
 protected:
  explicit ScratchDirTest(std::string prefix) : prefix_(std::move(prefix)) {}
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           (prefix_ + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string path(const std::string& name) const { return (dir_ / name).string(); }
  std::string prefix_;
  std::filesystem::path dir_;
};

}  // namespace fdstencil::test
