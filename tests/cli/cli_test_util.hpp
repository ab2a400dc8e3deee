// Shared helpers of the command-line tests (test_cli.cpp, test_wave_cli.cpp...): running the built
// tool as a user would, with its exit code and its output, in the foreground or in the background
// (to be signalled), and a fresh scratch directory per test.
#pragma once

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <thread>

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

inline std::string bytes_of(const std::filesystem::path& p) {
  std::ifstream f(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(f), {}};
}

// The tool started in the background with `args`, its output into `log`: the pid, for kill and
// exit_code. `env` as run_cli's.
inline pid_t start_cli(const std::string& args, const std::filesystem::path& log,
                       const std::string& env = "") {
  const std::string cmd =
      env + "exec " + std::string(FDSTENCIL_CLI_PATH) + " " + args + " >" + log.string() + " 2>&1";
  const pid_t pid = fork();
  if (pid == 0) {
    execl("/bin/sh", "sh", "-c", cmd.c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  return pid;
}

// Waits (at most two minutes) until `p` exists, or the process ends; true when it exists.
inline bool wait_for(const std::filesystem::path& p, pid_t pid) {
  const auto until = std::chrono::steady_clock::now() + std::chrono::minutes(2);
  while (std::chrono::steady_clock::now() < until) {
    if (std::filesystem::exists(p)) return true;
    int status;
    if (waitpid(pid, &status, WNOHANG) == pid) return std::filesystem::exists(p);
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return false;
}

// The background tool's exit code, once it ends (minus the signal that ended it).
inline int exit_code(pid_t pid) {
  int status = 0;
  waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -WTERMSIG(status);
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
