// A SEG-Y file written without libsegyio: headers set field by field in either byte order, the
// textual header in EBCDIC, IEEE float samples, all to a temporary name beside the target that
// is renamed over it only when every byte is on the disk, so a failed write leaves nothing.
#pragma once

#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "wave/segy_encoding.hpp"
#include "wave/segy_fields.hpp"

namespace fdstencil::segy::detail {

// A header's bytes, fields set at their standard positions (`first`: the position of byte 0).
template <int Bytes, int First>
struct HeaderBytes {
  unsigned char bytes[Bytes] = {};
  ByteOrder order = ByteOrder::big;
  void set(Field f, int64_t value) {
    write_bytes(bytes + (f.position - First), f.size, uint64_t(value), order);
  }
};
using TraceHeaderBytes = HeaderBytes<240, 1>;
using BinaryHeaderBytes = HeaderBytes<400, 3201>;

// 40 card images "C nn ..." of 80 characters, the last two as SEG-Y rev 1 and 2 ask, in EBCDIC
// (code page 037); characters outside printable ASCII become '?'.
std::vector<unsigned char> ebcdic_text_header(std::vector<std::string> lines, int revision);

class SegyWriter {
 public:
  // Creates the temporary file and writes the textual and binary headers; throws Error(io) naming
  // `path` when it cannot.
  SegyWriter(const std::filesystem::path& path, const std::vector<unsigned char>& text,
             const BinaryHeaderBytes& bin, int64_t ns);
  ~SegyWriter();
  SegyWriter(const SegyWriter&) = delete;
  SegyWriter& operator=(const SegyWriter&) = delete;
  // The next trace: its header and ns IEEE float samples in the file's byte order.
  void trace(const TraceHeaderBytes& header, const float* samples);
  // Flushes, syncs and renames the temporary over the target.
  void commit();

 private:
  [[noreturn]] void fail(const std::string& what) const;
  void discard();  // closes and removes the temporary, if still open
  void write(const void* data, size_t bytes, const std::string& what);
  std::filesystem::path path_, temp_;
  std::FILE* file_ = nullptr;
  ByteOrder order_;
  int64_t ns_ = 0, traces_ = 0;
  std::vector<unsigned char> buffer_;
};

}  // namespace fdstencil::segy::detail
