// The checkpoint file's pieces (the format is described in checkpoint.cpp), shared by the writer of
// a whole Checkpoint (save_checkpoint) and by a split run's ranks, which write and read their own
// slabs' bytes of one file without any rank holding the whole state (split_checkpoint.hpp).
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace fdstencil::wave::detail {

[[noreturn]] void checkpoint_fail(const std::filesystem::path& p, const std::string& what);

// A file descriptor closed on every way out.
struct Fd {
  int fd = -1;
  Fd() = default;
  explicit Fd(int f) : fd(f) {}
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  ~Fd();
};

// A whole write at a file offset, retried after a signal: 0, or the errno of the failure.
int pwrite_all(int fd, const void* data, int64_t bytes, int64_t offset);
// A whole read at a file offset, retried after a signal; throws Error(io) naming `p` and `what`.
void pread_all(int fd, void* data, int64_t bytes, int64_t offset, const std::filesystem::path& p,
               const std::string& what);

struct ArrayEntry {
  std::string name;
  int64_t bytes = 0;
  uint32_t crc = 0;  // CRC-32C of the array's bytes
};

struct CheckpointHeader {
  int64_t step = 0, nt = 0;
  uint64_t fingerprint = 0;
  std::string backend;
  int element_bytes = 4;
  std::vector<ArrayEntry> arrays;
  int64_t head = 0;  // the file's bytes before the first array: magic, length, checksum, text
  int64_t array_offset(size_t i) const;
  int64_t file_bytes() const;
};

// The header's JSON text, padded with spaces to `pad_to` characters (JSON ignores them).
std::string header_text(const CheckpointHeader& h, size_t pad_to = 0);
// The longest text of a header with these arrays (every checksum at its widest): the ranks agree on
// the arrays' offsets before any checksum is known.
size_t header_text_bound(const CheckpointHeader& h);
// The file's first bytes for a header text: magic, length, the text's checksum, the text.
std::string head_bytes(const std::string& text);
// Reads and checks a file's head: the magic, the header's checksum, its format, and the file's size
// against the size the header describes. Sets head.
CheckpointHeader read_head(int fd, const std::filesystem::path& p);
CheckpointHeader read_head(const std::filesystem::path& p);

}  // namespace fdstencil::wave::detail
