// Checkpoint files and the fingerprint that ties a checkpoint to its run.
//
// The file: 8 bytes of magic, the header's length (8 bytes, little-endian) and
// its CRC-32C (4 bytes), the header (JSON: the step, nt, fingerprint, backend,
// element size, and each array's name, bytes and CRC-32C; trailing spaces may
// pad it, so a split run's ranks fix its length before the checksums are known),
// then the arrays' bytes in the header's order. Its size is therefore known from the header, so a truncated file is
// told from a complete one before any array is read.
#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <bit>
#include <cerrno>
#include <climits>
#include <cstring>
#include <nlohmann/json.hpp>
#include <string>

#include "fdstencil/checksum.hpp"
#include "fdstencil/error.hpp"
#include "fdstencil/wave.hpp"
#include "wave/checkpoint_io.hpp"

namespace fdstencil::wave {

namespace {

static_assert(std::endian::native == std::endian::little, "checkpoints are written little-endian, as stored");

constexpr char kMagic[8] = {'F', 'D', 'S', 'C', 'K', 'P', 'T', '1'};
constexpr int kFormat = 1;
// A header larger than this is not one of ours: it lists at most a dozen
// arrays.
constexpr uint64_t kMaxHeader = 1 << 20;
// The magic, the header's length and the header's checksum.
constexpr int64_t kPreamble = sizeof kMagic + sizeof(uint64_t) + sizeof(uint32_t);

std::string errno_text() { return std::strerror(errno); }

using detail::checkpoint_fail;
using detail::Fd;

// Linux moves at most 0x7ffff000 bytes per call anyway.
constexpr size_t kMaxTransfer = size_t(1) << 30;

// FNV-1a, 64 bits, over the fingerprint's text: the text is short, so speed
// does not matter.
uint64_t fnv1a(const std::string& s) {
  uint64_t h = 0xcbf29ce484222325ull;                        // the FNV offset basis
  for (unsigned char c : s) h = (h ^ c) * 0x100000001b3ull;  // the FNV prime
  return h;
}

// A header field that must be an integer in [lo, hi]. nlohmann's get<int>() converts any number
// regardless: a double beyond the type's range is undefined behaviour (fuzz/fuzz_checkpoint.cpp
// found "format": 23454842345484.36), a larger integer wraps. Only a number is quoted: dump()
// recurses, and a header nested a million levels deep would overflow the stack.
int64_t integer_field(const nlohmann::json& v, const std::string& name, int64_t lo, int64_t hi,
                      const std::filesystem::path& path) {
  // Either kind of integer converts exactly up to INT64_MAX.
  const bool integer =
      v.is_number_integer() && !(v.is_number_unsigned() && v.get<uint64_t>() > uint64_t(INT64_MAX));
  const int64_t x = integer ? v.get<int64_t>() : 0;
  if (!integer || x < lo || x > hi)
    detail::checkpoint_fail(
        path, "malformed header: " + name + " is " + (v.is_number() ? v.dump() : std::string(v.type_name())) +
                  ", not an integer in " + std::to_string(lo) + ".." + std::to_string(hi));
  return x;
}

std::string hex(uint64_t v) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(v));
  return buf;
}

}  // namespace

namespace detail {

void checkpoint_fail(const std::filesystem::path& p, const std::string& what) {
  throw Error(ErrorKind::io, "checkpoint " + p.string() + ": " + what);
}

Fd::~Fd() {
  if (fd >= 0) ::close(fd);
}

int pwrite_all(int fd, const void* data, int64_t bytes, int64_t offset) {
  const char* c = static_cast<const char*>(data);
  while (bytes > 0) {
    const ssize_t w = ::pwrite(fd, c, std::min(size_t(bytes), kMaxTransfer), off_t(offset));
    if (w < 0 && errno == EINTR) continue;  // a signal (the SIGINT that asked for a checkpoint) is no error
    if (w < 0) return errno;
    c += w;
    bytes -= w;
    offset += w;
  }
  return 0;
}

void pread_all(int fd, void* data, int64_t bytes, int64_t offset, const std::filesystem::path& p,
               const std::string& what) {
  char* c = static_cast<char*>(data);
  while (bytes > 0) {
    const ssize_t r = ::pread(fd, c, std::min(size_t(bytes), kMaxTransfer), off_t(offset));
    if (r < 0) {
      if (errno == EINTR) continue;
      checkpoint_fail(p, "read failed: " + errno_text());
    }
    if (r == 0) checkpoint_fail(p, "truncated in " + what);
    c += r;
    bytes -= r;
    offset += r;
  }
}

int64_t CheckpointHeader::array_offset(size_t i) const {
  int64_t at = head;
  for (size_t k = 0; k < i; ++k) at += arrays[k].bytes;
  return at;
}

int64_t CheckpointHeader::file_bytes() const { return array_offset(arrays.size()); }

std::string header_text(const CheckpointHeader& c, size_t pad_to) {
  nlohmann::json h;
  h["format"] = kFormat;
  h["step"] = c.step;
  h["nt"] = c.nt;
  h["fingerprint"] = hex(c.fingerprint);
  h["backend"] = c.backend;
  h["element_bytes"] = c.element_bytes;
  h["arrays"] = nlohmann::json::array();
  for (const ArrayEntry& a : c.arrays)
    h["arrays"].push_back({{"name", a.name}, {"bytes", a.bytes}, {"crc32c", a.crc}});
  std::string text = h.dump();
  if (text.size() < pad_to) text.append(pad_to - text.size(), ' ');
  return text;
}

size_t header_text_bound(const CheckpointHeader& h) {
  CheckpointHeader widest = h;
  for (ArrayEntry& a : widest.arrays) a.crc = 0xFFFFFFFFu;
  return header_text(widest).size();
}

std::string head_bytes(const std::string& text) {
  const uint64_t len = text.size();
  const uint32_t crc = crc32c(text.data(), text.size());
  std::string out(kMagic, sizeof kMagic);
  out.append(reinterpret_cast<const char*>(&len), sizeof len);
  out.append(reinterpret_cast<const char*>(&crc), sizeof crc);
  return out + text;
}

CheckpointHeader read_head(int fd, const std::filesystem::path& path) {
  char pre[kPreamble];
  pread_all(fd, pre, sizeof kMagic, 0, path, "the magic bytes");
  if (std::memcmp(pre, kMagic, sizeof kMagic) != 0)
    checkpoint_fail(path, "not an fdstencil checkpoint (wrong magic bytes)");
  pread_all(fd, pre + sizeof kMagic, kPreamble - int64_t(sizeof kMagic), sizeof kMagic, path,
            "the header's length");
  uint64_t header_len = 0;
  uint32_t header_crc = 0;
  std::memcpy(&header_len, pre + sizeof kMagic, sizeof header_len);
  std::memcpy(&header_crc, pre + sizeof kMagic + sizeof header_len, sizeof header_crc);
  if (header_len == 0 || header_len > kMaxHeader)
    checkpoint_fail(path, "header length " + std::to_string(header_len) + " is implausible");
  std::string header(header_len, '\0');
  pread_all(fd, header.data(), int64_t(header.size()), kPreamble, path, "the header");
  // The header says which step the state is: a changed digit there would resume at the wrong time.
  if (crc32c(header.data(), header.size()) != header_crc)
    checkpoint_fail(path, "the header does not match its checksum (corrupt)");
  CheckpointHeader c;
  try {
    const nlohmann::json h = nlohmann::json::parse(header);
    const auto integer = [&](const nlohmann::json& v, const std::string& name, int64_t lo, int64_t hi) {
      return integer_field(v, name, lo, hi, path);
    };
    constexpr int64_t kMin = INT64_MIN, kMax = INT64_MAX;
    if (const int64_t format = integer(h.at("format"), "format", kMin, kMax); format != kFormat)
      checkpoint_fail(
          path, "format " + std::to_string(format) + ", this build reads format " + std::to_string(kFormat));
    c.step = integer(h.at("step"), "step", kMin, kMax);
    c.nt = integer(h.at("nt"), "nt", kMin, kMax);
    c.fingerprint = std::stoull(h.at("fingerprint").get<std::string>(), nullptr, 16);
    c.backend = h.at("backend").get<std::string>();
    c.element_bytes = int(integer(h.at("element_bytes"), "element_bytes", INT_MIN, INT_MAX));
    for (const auto& a : h.at("arrays")) {
      const std::string name = a.at("name").get<std::string>();
      c.arrays.push_back({name, integer(a.at("bytes"), "array " + name + "'s bytes", kMin, kMax),
                          uint32_t(integer(a.at("crc32c"), "array " + name + "'s crc32c", 0, UINT32_MAX))});
    }
  } catch (const Error&) {
    throw;
  } catch (const std::exception& e) {
    checkpoint_fail(path, std::string("malformed header: ") + e.what());
  }
  for (const ArrayEntry& a : c.arrays)
    if (a.bytes < 0) checkpoint_fail(path, "array " + a.name + " has a negative size");
  c.head = kPreamble + int64_t(header_len);
  // The sizes against the file's before any array is allocated.
  const off_t size = ::lseek(fd, 0, SEEK_END);
  // Summed with a check: sizes near 2^63 wrapped (undefined behaviour) before the comparison.
  int64_t expected = c.head;
  for (const ArrayEntry& a : c.arrays)
    if (__builtin_add_overflow(expected, a.bytes, &expected))
      checkpoint_fail(path, "its header's array sizes add up to more than 2^63 bytes (corrupt)");
  if (size != expected)
    checkpoint_fail(path, std::to_string(size) + " bytes where its header describes " +
                              std::to_string(expected) +
                              (size < expected ? " (truncated)" : " (trailing bytes)"));
  return c;
}

CheckpointHeader read_head(const std::filesystem::path& path) {
  Fd f(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (f.fd < 0) checkpoint_fail(path, "cannot open: " + errno_text());
  return read_head(f.fd, path);
}

}  // namespace detail

int64_t Checkpoint::bytes() const {
  int64_t b = 0;
  for (const auto& a : arrays) b += int64_t(a.second.size());
  return b;
}

uint64_t run_fingerprint(const Model& model, const Options& o) {
  nlohmann::json j;
  j["model"] = {model.dim, model.nz, model.ny, model.nx, model.h, model.checksum()};
  j["radius"] = o.radius;
  j["dt"] = run_dt(model, o);  // the step itself: dt or cfl_safety, whichever made it
  j["nt"] = o.nt;
  const Boundary& b = o.boundary;
  j["boundary"] = {b.cpml_width, b.free_surface, b.reflection, b.cpml_frequency};
  j["interpolation"] = int(o.interpolation);
  for (const Source& s : o.sources)
    j["sources"].push_back(
        {s.at.z, s.at.y, s.at.x, crc32c(s.wavelet.data(), s.wavelet.size() * sizeof(double))});
  std::vector<double> r;
  for (const Point& p : o.receivers) r.insert(r.end(), {p.z, p.y, p.x});
  j["receivers"] = {o.receivers.size(), crc32c(r.data(), r.size() * sizeof(double))};
  j["double"] = o.double_precision;
  return fnv1a(j.dump());
}

void save_checkpoint(const std::filesystem::path& path, const Checkpoint& c) {
  detail::CheckpointHeader h{c.step, c.nt, c.fingerprint, c.backend, c.element_bytes, {}, 0};
  for (const auto& [name, data] : c.arrays)
    h.arrays.push_back({name, int64_t(data.size()), crc32c(data.data(), data.size())});
  const std::string head = detail::head_bytes(detail::header_text(h));

  // pid and a counter keep concurrent writers (processes, a survey's threads)
  // apart.
  static std::atomic<uint64_t> counter{0};
  std::filesystem::path temp = path;
  temp += ".tmp." + std::to_string(::getpid()) + "." + std::to_string(counter++);
  Fd f;
  f.fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (f.fd < 0) checkpoint_fail(path, "cannot create " + temp.string() + ": " + errno_text());
  try {
    int64_t at = 0;
    const auto put = [&](const void* data, size_t bytes) {
      if (const int e = detail::pwrite_all(f.fd, data, int64_t(bytes), at); e != 0)
        checkpoint_fail(path, std::string("write failed: ") + std::strerror(e));
      at += int64_t(bytes);
    };
    put(head.data(), head.size());
    for (const auto& a : c.arrays) put(a.second.data(), a.second.size());
    // On the disk before the rename makes it the checkpoint: a crash after the
    // rename must not find a name pointing at blocks that were never written.
    if (::fsync(f.fd) != 0) checkpoint_fail(path, "fsync failed: " + errno_text());
    if (::close(f.fd) != 0) {
      f.fd = -1;
      checkpoint_fail(path, "close failed: " + errno_text());
    }
    f.fd = -1;
    std::error_code ec;
    std::filesystem::rename(temp, path, ec);
    if (ec) checkpoint_fail(path, "cannot rename " + temp.string() + " into place: " + ec.message());
  } catch (...) {
    std::error_code ec;
    std::filesystem::remove(temp, ec);
    throw;
  }
  // The rename itself on the disk: the directory's entry.
  Fd dir;
  dir.fd =
      ::open(path.has_parent_path() ? path.parent_path().c_str() : ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir.fd >= 0) ::fsync(dir.fd);
}

Checkpoint load_checkpoint(const std::filesystem::path& path) {
  Fd f(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (f.fd < 0) checkpoint_fail(path, "cannot open: " + errno_text());
  const detail::CheckpointHeader h = detail::read_head(f.fd, path);
  Checkpoint c;
  c.step = h.step;
  c.nt = h.nt;
  c.fingerprint = h.fingerprint;
  c.backend = h.backend;
  c.element_bytes = h.element_bytes;
  for (size_t i = 0; i < h.arrays.size(); ++i) {
    const detail::ArrayEntry& a = h.arrays[i];
    c.arrays.emplace_back(a.name, std::vector<char>(size_t(a.bytes)));
    std::vector<char>& data = c.arrays.back().second;
    detail::pread_all(f.fd, data.data(), a.bytes, h.array_offset(i), path, "array " + a.name);
    if (crc32c(data.data(), data.size()) != a.crc)
      checkpoint_fail(path, "array " + a.name + " does not match its checksum (corrupt)");
  }
  return c;
}

}  // namespace fdstencil::wave
