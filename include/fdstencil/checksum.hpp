// CRC-32C (Castagnoli), the checksum of checkpoints and of a survey's finished
// outputs: a standard polynomial (iSCSI, ext4, Btrfs) with a hardware
// instruction on x86-64 (SSE4.2), so a checkpoint of a 512^3 run (~1.6 GB) is
// checked in well under a second.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>

namespace fdstencil {

// The CRC-32C of `bytes` bytes at `data`, continuing from `crc` (0 to start):
// crc32c(b, crc32c(a)) is the checksum of a followed by b. Reflected, initial
// value and final xor 0xFFFFFFFF, so crc32c("123456789") = 0xE3069283, the
// polynomial's published check value.
uint32_t crc32c(const void* data, size_t bytes, uint32_t crc = 0);

// The CRC-32C of a followed by b from crc32c(a), crc32c(b) and b's length, without the bytes:
// ranks that each checksum their own part of one file give the whole file's checksum.
uint32_t crc32c_combine(uint32_t first, uint32_t second, uint64_t second_bytes);

// The CRC-32C of `count` pieces laid end to end, from their CRCs: each piece `piece_bytes` long
// but the last, `last_bytes`. One power of x serves every combine but the last, so that the many
// pieces a GPU checksums side by side (a model kept on it) combine in microseconds.
uint32_t crc32c_concat(const uint32_t* crcs, size_t count, uint64_t piece_bytes, uint64_t last_bytes);

// The CRC-32C of a whole file; throws Error(io) naming the file when it cannot
// be read.
uint32_t crc32c_file(const std::filesystem::path& path);

}  // namespace fdstencil
