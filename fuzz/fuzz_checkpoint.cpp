// libFuzzer harness of the checkpoint reader (load_checkpoint, what --resume reads): the magic, the
// header's length and checksum, its JSON, the arrays' sizes against the file's, their checksums.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

#include "fdstencil/checksum.hpp"
#include "fdstencil/wave.hpp"
#include "fuzz_input.hpp"

namespace {

// The file's layout (src/wave/checkpoint.cpp): 8 bytes of magic, the header's length (8 bytes),
// its CRC-32C (4 bytes), then the header.
constexpr size_t kLengthAt = 8, kCrcAt = 16, kHeaderAt = 20;

// The header's checksum made right, where the length leaves a header inside the input: a mutated
// header would otherwise fail its checksum almost always, and the JSON behind it go unexplored.
// A wrong checksum's refusal is a unit test's (tests/wave/test_wave_checkpoint.cpp).
void fix_header_crc(std::vector<unsigned char>& bytes) {
  if (bytes.size() < kHeaderAt) return;
  uint64_t length = 0;
  std::memcpy(&length, bytes.data() + kLengthAt, sizeof length);
  if (length > bytes.size() - kHeaderAt) return;
  const uint32_t crc = fdstencil::crc32c(bytes.data() + kHeaderAt, size_t(length));
  std::memcpy(bytes.data() + kCrcAt, &crc, sizeof crc);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace fdstencil;
  std::vector<unsigned char> bytes(data, data + size);
  fix_header_crc(bytes);
  const auto path = fuzz::input_file(bytes.data(), bytes.size(), "checkpoint.ckpt");
  fuzz::refusals_only([&] { wave::load_checkpoint(path); });
  return 0;
}
