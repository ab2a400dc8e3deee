// A SEG-Y file's layout and its traces, read by position: the byte order, the sample format, the
// extended textual headers (a count, or rev 2's variable number ended by an "EndText" stanza),
// additional trace headers, and the samples per trace and sample interval where the headers
// disagree, resolved as segyio resolves them with a warning naming the bytes and the choice.
// Reads without libsegyio: every format and byte order of rev 2 is decoded here
// (segy_encoding.hpp).
#pragma once

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "wave/segy_encoding.hpp"

namespace fdstencil::segy::detail {

inline constexpr int kTextHeaderBytes = 3200;
inline constexpr int kBinaryHeaderBytes = 400;
inline constexpr int kTraceHeaderBytes = 240;

struct FileLayout {
  ByteOrder order = ByteOrder::big;
  std::string order_source;  // how the byte order was told: the constant at 3297, or the format code
  int format = 0;
  int revision = 0;             // the major revision (byte 3501)
  int extended_text = 0;        // extended textual headers read
  int trace_headers = 1;        // 240-byte headers per trace (rev 2: 1 + bytes 3507-3508)
  int64_t ns = 0;               // samples per trace
  int64_t sample_interval = 0;  // the raw field (microseconds, or the depth unit), 0 if unknown
  int64_t trace0 = 0, trace_bytes = 0, traces = 0, size = 0;
  std::vector<std::string> warnings;
  unsigned char bin[kBinaryHeaderBytes] = {};
};

class TraceFile {
 public:
  // Opens and reads the layout; throws Error(io) for a file that cannot be read or is cut short,
  // Error(invalid_argument) for headers no reading of the standard makes sense of. `where` starts
  // every message ("path: ").
  TraceFile(const std::filesystem::path& path, const std::string& where);
  const FileLayout& layout() const { return l_; }
  // Trace t's standard (first) 240-byte header.
  void header(int64_t t, unsigned char* out);
  // Trace t's samples as float32, ns of them.
  void samples(int64_t t, float* out);
  // A trace header field, signed, at its 1-based byte position.
  int64_t field(const unsigned char* header, int position, int size) const {
    return detail::field(header, position, size, l_.order);
  }

 private:
  void read_at(int64_t offset, void* data, int64_t bytes, const std::string& what);
  void find_byte_order();
  void find_trace0();
  void find_samples();
  void find_interval();
  std::ifstream in_;
  std::string where_;
  FileLayout l_;
  std::vector<unsigned char> raw_;
};

}  // namespace fdstencil::segy::detail
