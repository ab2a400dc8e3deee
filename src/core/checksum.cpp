// CRC-32C: the SSE4.2 crc32 instruction eight bytes at a time where the CPU has
// it (checked once at run time, so the library still runs on a CPU without it),
// else a byte-wise table.
#include "fdstencil/checksum.hpp"

#include <array>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "fdstencil/error.hpp"

#if defined(__x86_64__)
#include <nmmintrin.h>
#endif

namespace fdstencil {

namespace {

// The reflected Castagnoli polynomial 0x1EDC6F41.
constexpr uint32_t kPolynomial = 0x82F63B78u;

constexpr std::array<uint32_t, 256> make_table() {
  std::array<uint32_t, 256> t{};
  for (uint32_t i = 0; i < 256; ++i) {
    uint32_t c = i;
    for (int k = 0; k < 8; ++k) c = (c & 1u) ? (c >> 1) ^ kPolynomial : c >> 1;
    t[i] = c;
  }
  return t;
}
constexpr std::array<uint32_t, 256> kTable = make_table();

uint32_t update_table(const unsigned char* p, size_t n, uint32_t c) {
  for (size_t i = 0; i < n; ++i) c = kTable[(c ^ p[i]) & 0xFFu] ^ (c >> 8);
  return c;
}

#if defined(__x86_64__)
__attribute__((target("sse4.2"))) uint32_t update_sse42(const unsigned char* p, size_t n, uint32_t c) {
  uint64_t c64 = c;
  for (; n >= 8; n -= 8, p += 8) {
    uint64_t w;
    std::memcpy(&w, p, 8);
    c64 = _mm_crc32_u64(c64, w);
  }
  c = uint32_t(c64);
  for (; n > 0; --n, ++p) c = _mm_crc32_u8(c, *p);
  return c;
}
const bool kHaveSse42 = __builtin_cpu_supports("sse4.2");
#endif

// Polynomials over GF(2) modulo the Castagnoli polynomial, reflected as the checksum is (bit 31
// holds x^0): a times b.
uint32_t multiply_mod(uint32_t a, uint32_t b) {
  uint32_t product = 0;
  for (uint32_t term = 1u << 31; term != 0; term >>= 1) {  // a's x^0, x^1, ... x^31
    if (a & term) product ^= b;
    b = (b & 1u) ? (b >> 1) ^ kPolynomial : b >> 1;  // b times x
  }
  return product;
}

// x^(8 bytes) modulo the polynomial, by squaring: a checksum moved past `bytes` zero bytes.
uint32_t x_to_8n(uint64_t bytes) {
  uint32_t result = 1u << 31;  // x^0
  uint32_t power = 1u << 23;   // x^8: one byte
  for (; bytes != 0; bytes >>= 1) {
    if (bytes & 1u) result = multiply_mod(result, power);
    power = multiply_mod(power, power);
  }
  return result;
}

}  // namespace

uint32_t crc32c(const void* data, size_t bytes, uint32_t crc) {
  const auto* p = static_cast<const unsigned char*>(data);
  uint32_t c = ~crc;
#if defined(__x86_64__)
  if (kHaveSse42) return ~update_sse42(p, bytes, c);
#endif
  return ~update_table(p, bytes, c);
}

// With the initial value equal to the final xor, both cancel: crc(a b) = crc(a) x^(8 |b|) + crc(b).
uint32_t crc32c_combine(uint32_t first, uint32_t second, uint64_t second_bytes) {
  return multiply_mod(first, x_to_8n(second_bytes)) ^ second;
}

uint32_t crc32c_concat(const uint32_t* crcs, size_t count, uint64_t piece_bytes, uint64_t last_bytes) {
  if (count == 0) return 0;
  const uint32_t step = x_to_8n(piece_bytes);
  uint32_t all = crcs[0];
  for (size_t i = 1; i + 1 < count; ++i) all = multiply_mod(all, step) ^ crcs[i];
  return count == 1 ? all : crc32c_combine(all, crcs[count - 1], last_bytes);
}

uint32_t crc32c_file(const std::filesystem::path& path) {
  std::unique_ptr<FILE, int (*)(FILE*)> f(std::fopen(path.c_str(), "rb"), &std::fclose);
  if (!f) throw Error(ErrorKind::io, path.string() + ": cannot open: " + std::strerror(errno));
  // 4 MiB reads: large enough that the calls cost nothing beside the checksum,
  // small enough to leave the caller's memory alone.
  std::vector<unsigned char> buf(size_t(4) << 20);
  uint32_t c = 0;
  size_t n;
  while ((n = std::fread(buf.data(), 1, buf.size(), f.get())) > 0) c = crc32c(buf.data(), n, c);
  if (std::ferror(f.get()))
    throw Error(ErrorKind::io, path.string() + ": read failed: " + std::strerror(errno));
  return c;
}

}  // namespace fdstencil
