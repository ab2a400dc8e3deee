// SEG-Y's numbers decoded (segy_encoding.hpp).
#include "wave/segy_encoding.hpp"

#include <bit>
#include <cstring>
#include <limits>

namespace fdstencil::segy::detail {

uint64_t read_unsigned(const unsigned char* p, int size, ByteOrder order) {
  uint64_t v = 0;
  for (int k = 0; k < size; ++k) {
    const int from = order == ByteOrder::big ? k : size - 1 - k;
    v = (v << 8) | p[from];
  }
  return v;
}

int64_t read_signed(const unsigned char* p, int size, ByteOrder order) {
  const uint64_t u = read_unsigned(p, size, order);
  if (size >= 8) return static_cast<int64_t>(u);
  const uint64_t sign = uint64_t(1) << (8 * size - 1);
  return static_cast<int64_t>(u ^ sign) - static_cast<int64_t>(sign);  // sign-extends
}

void write_bytes(unsigned char* p, int size, uint64_t value, ByteOrder order) {
  for (int k = 0; k < size; ++k) {
    const int to = order == ByteOrder::big ? size - 1 - k : k;
    p[to] = static_cast<unsigned char>(value >> (8 * k));
  }
}

const SampleFormat* sample_format(int code) {
  static constexpr SampleFormat kFormats[] = {
      {1, 4, "IBM float", true},  {2, 4, "int32", true},
      {3, 2, "int16", true},      {4, 4, "fixed point with gain, obsolete", false},
      {5, 4, "IEEE float", true}, {6, 8, "IEEE double", true},
      {7, 3, "int24", true},      {8, 1, "int8", true},
      {9, 8, "int64", true},      {10, 4, "uint32", true},
      {11, 2, "uint16", true},    {12, 8, "uint64", true},
      {15, 3, "uint24", true},    {16, 1, "uint8", true}};
  for (const SampleFormat& f : kFormats)
    if (f.code == code) return &f;
  return nullptr;
}

float ibm_to_ieee(uint32_t bits) {
  const uint32_t sign = bits & 0x80000000u;
  // The fraction's 24 bits, radix point before them; the exponent a power of 16, biased by 64.
  uint32_t fraction = bits & 0x00FFFFFFu;
  if (fraction == 0) return std::bit_cast<float>(sign);
  int exponent = int((bits >> 24) & 0x7F);
  // As a binary fraction 0.f times 2^(4 (e - 64)); IEEE wants 1.f times 2^(E - 127). Normalize so
  // that bit 23 is the leading one: each shift takes one from the binary exponent.
  int e2 = 4 * (exponent - 64) + 127 - 1;
  while ((fraction & 0x00800000u) == 0) {
    fraction <<= 1;
    --e2;
  }
  if (e2 >= 255) return std::bit_cast<float>(sign | 0x7F800000u);  // beyond float: infinity
  if (e2 <= 0) {  // below float's normal range: a subnormal, its low bits dropped
    const int shift = 1 - e2;
    return std::bit_cast<float>(shift > 24 ? sign : sign | (fraction >> shift));
  }
  return std::bit_cast<float>(sign | (uint32_t(e2) << 23) | (fraction & 0x007FFFFFu));
}

namespace {

float decode_one(int code, ByteOrder order, const unsigned char* p) {
  switch (code) {
    case 1: return ibm_to_ieee(uint32_t(read_unsigned(p, 4, order)));
    case 5: return std::bit_cast<float>(uint32_t(read_unsigned(p, 4, order)));
    case 6: {  // beyond float's range: infinity (the cast itself would be undefined there)
      const double d = std::bit_cast<double>(read_unsigned(p, 8, order));
      constexpr double kMax = std::numeric_limits<float>::max();
      return d > kMax    ? std::numeric_limits<float>::infinity()
             : d < -kMax ? -std::numeric_limits<float>::infinity()
                         : float(d);
    }
    case 2:
    case 3:
    case 7:
    case 8:
    case 9: return float(read_signed(p, sample_format(code)->bytes, order));
    default: return float(read_unsigned(p, sample_format(code)->bytes, order));  // 10, 11, 12, 15, 16
  }
}

}  // namespace

void decode_samples(int code, ByteOrder order, const unsigned char* raw, int64_t n, float* out) {
  const int bytes = sample_format(code)->bytes;
  for (int64_t k = 0; k < n; ++k) out[k] = decode_one(code, order, raw + k * bytes);
}

}  // namespace fdstencil::segy::detail
