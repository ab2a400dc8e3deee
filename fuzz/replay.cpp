// Every file of the folders on the command line through a harness's LLVMFuzzerTestOneInput, in
// name order: the committed corpus as a test of the normal build (tests/CMakeLists.txt), without
// clang or libFuzzer. A reader's bug ends the process the way it would end the tool's.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

namespace {

std::vector<std::filesystem::path> files_in(const std::filesystem::path& dir) {
  std::vector<std::filesystem::path> files;
  for (const auto& entry : std::filesystem::directory_iterator(dir))
    if (entry.is_regular_file()) files.push_back(entry.path());
  std::sort(files.begin(), files.end());
  return files;
}

std::vector<unsigned char> contents(const std::filesystem::path& file) {
  std::ifstream in(file, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s CORPUS_DIR...\n", argv[0]);
    return 2;
  }
  size_t inputs = 0;
  for (int a = 1; a < argc; ++a) {
    const std::vector<std::filesystem::path> files = files_in(argv[a]);
    if (files.empty()) {
      std::fprintf(stderr, "%s: no inputs\n", argv[a]);
      return 1;  // a corpus that went missing must not pass as a clean replay
    }
    for (const auto& file : files) {
      std::fprintf(stderr, "%s\n", file.c_str());  // the last name shown is the one that failed
      const std::vector<unsigned char> bytes = contents(file);
      LLVMFuzzerTestOneInput(bytes.data(), bytes.size());
      ++inputs;
    }
  }
  std::printf("replayed %zu inputs\n", inputs);
  return 0;
}
