// How SEG-Y stores numbers: header fields and samples in either byte order (rev 2 allows
// little-endian files, marked by the constant at bytes 3297-3300), and every sample format of
// rev 2. The file layer (segy_file.hpp) reads bytes; this one only decodes them.
#pragma once

#include <cstdint>

namespace fdstencil::segy::detail {

enum class ByteOrder { big, little };

// The unsigned value of `size` bytes (1 to 8) in `order`.
uint64_t read_unsigned(const unsigned char* p, int size, ByteOrder order);
// The same bytes as a two's-complement signed value.
int64_t read_signed(const unsigned char* p, int size, ByteOrder order);
// `value`'s low `size` bytes into p, in `order`.
void write_bytes(unsigned char* p, int size, uint64_t value, ByteOrder order);

// A field at a 1-based byte position of a header, as the standard numbers them within the header
// (a trace header's bytes 1-240; a binary header's 3201-3600 as given, offset by `first`).
inline int64_t field(const unsigned char* header, int position, int size, ByteOrder order, int first = 1) {
  return read_signed(header + (position - first), size, order);
}
inline uint64_t ufield(const unsigned char* header, int position, int size, ByteOrder order, int first = 1) {
  return read_unsigned(header + (position - first), size, order);
}

// A sample format of rev 2 (bytes 3225-3226): its code, bytes per sample and name; nullptr for a
// code the standard does not define.
struct SampleFormat {
  int code;
  int bytes;
  const char* name;
  bool decoded;  // false: 4, fixed point with gain, obsolete since rev 1 and refused
};
const SampleFormat* sample_format(int code);

// n samples of format `code` in `order` as float32: IBM floats exactly where IEEE single holds
// them (truncated below its normal range, as the usual conversion does), integers and doubles
// rounded to the nearest float.
void decode_samples(int code, ByteOrder order, const unsigned char* raw, int64_t n, float* out);

// One IBM System/360 single-precision float (its 32 bits) as IEEE single.
float ibm_to_ieee(uint32_t bits);

}  // namespace fdstencil::segy::detail
