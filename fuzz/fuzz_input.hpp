// What the fuzz harnesses share (docs/wave.md, "Fuzzing the readers"): the input as a
// file, since every reader takes a path, and the line between a reader's refusal and a bug.
#pragma once

#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <string>
#include <system_error>

#include "fdstencil/error.hpp"

namespace fdstencil::fuzz {

// This process's folder for its inputs: in memory (/dev/shm) where there is one, as libFuzzer
// rewrites the file for every input, and removed when the process ends normally.
class InputFolder {
 public:
  InputFolder() {
    std::error_code ec;
    const std::filesystem::path shm = "/dev/shm";
    const std::filesystem::path base =
        std::filesystem::is_directory(shm, ec) ? shm : std::filesystem::temp_directory_path();
    dir_ = base / ("fdstencil-fuzz-" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir_);
  }
  ~InputFolder() {
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }
  InputFolder(const InputFolder&) = delete;
  InputFolder& operator=(const InputFolder&) = delete;
  const std::filesystem::path& dir() const { return dir_; }

 private:
  std::filesystem::path dir_;
};

inline const std::filesystem::path& input_dir() {
  static const InputFolder folder;
  return folder.dir();
}

// `size` bytes at `data` as the file `name` of this process's folder (its extension picks the
// reader where the tool looks at it: .npy, .sgy).
inline std::filesystem::path input_file(const void* data, size_t size, const std::string& name) {
  const std::filesystem::path path = input_dir() / name;
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (!f || (size > 0 && std::fwrite(data, 1, size, f) != size) || std::fclose(f) != 0) {
    std::perror(path.c_str());
    std::abort();  // the harness's own failure, not the reader's: stop rather than fuzz nothing
  }
  return path;
}

// Runs `read`. An Error is the reader refusing the input, which is its job: the tool reports it
// and exits 2. Anything else leaves for libFuzzer (or the replay) to report as a bug: another
// exception, which the tool would report as an "internal error" with exit 1, a crash, or a
// sanitizer's report.
template <class Read>
void refusals_only(Read&& read) {
  try {
    read();
  } catch (const Error&) {
  }
}

}  // namespace fdstencil::fuzz
