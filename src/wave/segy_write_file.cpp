// A SEG-Y file written without libsegyio (segy_write_file.hpp).
#include "wave/segy_write_file.hpp"

#include <unistd.h>

#include <atomic>
#include <bit>
#include <cerrno>
#include <cstring>
#include <system_error>

#include "fdstencil/error.hpp"

namespace fdstencil::segy::detail {

namespace fs = std::filesystem;

namespace {

// EBCDIC (code page 037) of printable ASCII, ' ' (32) to '~' (126).
constexpr unsigned char kEbcdic[95] = {
    0x40, 0x5A, 0x7F, 0x7B, 0x5B, 0x6C, 0x50, 0x7D, 0x4D, 0x5D, 0x5C, 0x4E, 0x6B, 0x60, 0x4B, 0x61,
    0xF0, 0xF1, 0xF2, 0xF3, 0xF4, 0xF5, 0xF6, 0xF7, 0xF8, 0xF9, 0x7A, 0x5E, 0x4C, 0x7E, 0x6E, 0x6F,
    0x7C, 0xC1, 0xC2, 0xC3, 0xC4, 0xC5, 0xC6, 0xC7, 0xC8, 0xC9, 0xD1, 0xD2, 0xD3, 0xD4, 0xD5, 0xD6,
    0xD7, 0xD8, 0xD9, 0xE2, 0xE3, 0xE4, 0xE5, 0xE6, 0xE7, 0xE8, 0xE9, 0xBA, 0xE0, 0xBB, 0xB0, 0x6D,
    0x79, 0x81, 0x82, 0x83, 0x84, 0x85, 0x86, 0x87, 0x88, 0x89, 0x91, 0x92, 0x93, 0x94, 0x95, 0x96,
    0x97, 0x98, 0x99, 0xA2, 0xA3, 0xA4, 0xA5, 0xA6, 0xA7, 0xA8, 0xA9, 0xC0, 0x4F, 0xD0, 0xA1};
constexpr int kCards = 40, kCardWidth = 80;

}  // namespace

std::vector<unsigned char> ebcdic_text_header(std::vector<std::string> lines, int revision) {
  lines.resize(kCards - 2);
  lines.push_back(revision >= 2 ? "SEG-Y_REV2.0" : "SEG Y REV1");
  lines.push_back("END TEXTUAL HEADER");
  std::vector<unsigned char> out;
  for (size_t l = 0; l < lines.size(); ++l) {
    std::string card = (l + 1 < 10 ? "C " : "C") + std::to_string(l + 1) + " " + lines[l];
    card.resize(kCardWidth, ' ');
    for (char c : card) {
      const auto u = static_cast<unsigned char>(c);
      out.push_back(u >= 32 && u <= 126 ? kEbcdic[u - 32] : kEbcdic['?' - 32]);
    }
  }
  return out;
}

SegyWriter::SegyWriter(const fs::path& path, const std::vector<unsigned char>& text,
                       const BinaryHeaderBytes& bin, int64_t ns)
    : path_(path), order_(bin.order), ns_(ns) {
  // pid keeps concurrent processes apart; the counter keeps threads of one process apart. "x"
  // refuses an existing file, so we never write through someone else's temporary.
  static std::atomic<uint64_t> counter{0};
  temp_ = path;
  temp_ += ".tmp." + std::to_string(::getpid()) + "." + std::to_string(counter++);
  file_ = std::fopen(temp_.c_str(), "wbx");
  if (!file_) fail("cannot create the temporary file " + temp_.string() + ": " + std::strerror(errno));
  try {
    write(text.data(), text.size(), "the textual header");
    write(bin.bytes, sizeof bin.bytes, "the binary header");
    buffer_.resize(size_t(ns) * 4);
  } catch (...) {  // the destructor does not run for a constructor that throws: its cleanup here
    discard();
    throw;
  }
}

void SegyWriter::discard() {
  if (file_ == nullptr) return;
  std::fclose(file_);
  file_ = nullptr;
  std::error_code ec;
  fs::remove(temp_, ec);
}

SegyWriter::~SegyWriter() { discard(); }  // not committed: the temporary goes

void SegyWriter::fail(const std::string& what) const {
  throw Error(ErrorKind::io, path_.string() + ": " + what);
}

void SegyWriter::write(const void* data, size_t bytes, const std::string& what) {
  if (std::fwrite(data, 1, bytes, file_) != bytes)
    fail("writing " + what + " failed: " + std::strerror(errno));
}

void SegyWriter::trace(const TraceHeaderBytes& header, const float* samples) {
  write(header.bytes, sizeof header.bytes, "trace " + std::to_string(traces_) + "'s header");
  for (int64_t k = 0; k < ns_; ++k)
    write_bytes(buffer_.data() + 4 * k, 4, std::bit_cast<uint32_t>(samples[k]), order_);
  write(buffer_.data(), buffer_.size(), "trace " + std::to_string(traces_));
  ++traces_;
}

void SegyWriter::commit() {
  if (std::fflush(file_) != 0 || ::fsync(fileno(file_)) != 0)
    fail("writing " + temp_.string() + " to the disk failed: " + std::strerror(errno));
  const int closed = std::fclose(file_);
  const int error = errno;  // before remove() may change it
  file_ = nullptr;
  std::error_code ec;
  if (closed != 0) {
    fs::remove(temp_, ec);
    fail("closing " + temp_.string() + " failed: " + std::strerror(error));
  }
  fs::rename(temp_, path_, ec);
  if (ec) {
    fs::remove(temp_, ec);
    fail("cannot rename " + temp_.string() + " into place: " + ec.message());
  }
}

}  // namespace fdstencil::segy::detail
