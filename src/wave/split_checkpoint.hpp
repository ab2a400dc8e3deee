// A split run's checkpoint written and read by every rank in the one-rank file (issue 31), so that
// no rank holds more than its own slab's arrays, one array at a time. The file is the one a single
// rank writes (checkpoint.cpp's format): it resumes on any number of ranks, or in one process.
//
// Writing: every rank knows the arrays' sizes, and the header's length is fixed before any
// checksum is known (header_text_bound), so each rank writes its segments (slab_state.hpp) at their
// places in a SharedFile; rank 0 sums the traces, combines the ranks' checksums (crc32c_combine)
// into each array's and writes the header last. Reading: each rank reads its cut before the ranks
// vote and checksums its segments; after the vote rank 0 combines them with the bytes no segment
// covers and every rank learns whether the file is whole.
#pragma once

#include <fcntl.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <vector>

#include "physics/acoustic.hpp"
#include "fdstencil/checksum.hpp"
#include "fdstencil/error.hpp"
#include "fdstencil/wave_comm.hpp"
#include "wave/checkpoint_io.hpp"
#include "wave/shared_file.hpp"
#include "wave/slab_state.hpp"

namespace fdstencil::wave::detail {

// One rank's checksum of one of its segments: the array, the segment's first byte in the array,
// its bytes and their CRC-32C.
struct PartCrc {
  int64_t array = 0, at = 0, bytes = 0;
  uint32_t crc = 0, unused = 0;  // (keeps the struct free of padding bytes on the wire)
};

// The checksum of an array of `bytes` bytes from its parts (not overlapping, any order), the bytes
// between them checksummed by gap(at, bytes).
template <class Gap>
uint32_t combine_parts(std::vector<PartCrc> parts, int64_t bytes, Gap gap) {
  std::sort(parts.begin(), parts.end(), [](const PartCrc& a, const PartCrc& b) { return a.at < b.at; });
  uint32_t crc = 0;  // the empty prefix's
  int64_t at = 0;
  for (const PartCrc& p : parts) {
    if (p.at < at || p.at + p.bytes > bytes)
      throw std::logic_error("a split checkpoint: the ranks' parts of array " + std::to_string(p.array) +
                             " overlap or overrun it");
    if (p.at > at) crc = crc32c_combine(crc, gap(at, p.at - at), uint64_t(p.at - at));
    crc = crc32c_combine(crc, p.crc, uint64_t(p.bytes));
    at = p.at + p.bytes;
  }
  if (at < bytes) crc = crc32c_combine(crc, gap(at, bytes - at), uint64_t(bytes - at));
  return crc;
}

inline uint32_t crc32c_of_zeros(int64_t bytes) {
  static const std::vector<char> zeros(size_t(1) << 16, 0);
  uint32_t crc = 0;
  for (; bytes > 0; bytes -= int64_t(zeros.size()))
    crc = crc32c(zeros.data(), size_t(std::min<int64_t>(bytes, int64_t(zeros.size()))), crc);
  return crc;
}

// The header's arrays for a slab of shape g: their names and the whole domain's sizes.
template <class T>
void size_arrays(CheckpointHeader& h, const SlabShape& g, const std::vector<std::string>& names) {
  h.arrays.clear();
  for (int i = 0; i < acoustic::kStateArrays; ++i)
    h.arrays.push_back({names[size_t(i)], whole_elements(g, i) * int64_t(sizeof(T)), 0});
}

// Every rank's slab into `path` (collective). `h` holds the run's facts (step, nt, fingerprint,
// backend, element size); `Backend` has state_array_bytes(i) and copy_state_array(i, host).
// Returns the arrays' bytes.
template <class T, class Backend>
int64_t write_checkpoint_file(Backend& b, Comm& comm, const SlabShape& g, const std::filesystem::path& path,
                              CheckpointHeader h, const std::vector<std::string>& names) {
  size_arrays<T>(h, g, names);
  const size_t text_bytes = header_text_bound(h);
  h.head = int64_t(head_bytes(std::string(text_bytes, ' ')).size());
  SharedFile f(comm, path, h.file_bytes(), "checkpoint");
  const int64_t z = sizeof(T);
  std::vector<T> mine;
  std::vector<PartCrc> parts;
  for (int i = 0; i < acoustic::kStateArrays; ++i) {
    mine.resize(size_t(b.state_array_bytes(i) / z));
    if (!mine.empty()) b.copy_state_array(i, mine.data());
    const int64_t start = h.array_offset(size_t(i));
    if (i == acoustic::kStateArrays - 1) {  // the traces: every rank's summed on rank 0
      comm.sum_to_root(mine.data(), int64_t(mine.size()));
      if (g.first) {
        f.write(mine.data(), int64_t(mine.size()) * z, start);
        h.arrays[size_t(i)].crc = crc32c(mine.data(), mine.size() * sizeof(T));
      }
      continue;
    }
    for (const Segment& s : gather_segments(g, i)) {
      if (s.count == 0) continue;
      f.write(mine.data() + s.local, s.count * z, start + s.at * z);
      parts.push_back({i, s.at * z, s.count * z, crc32c(mine.data() + s.local, size_t(s.count * z)), 0});
    }
  }
  const std::vector<PartCrc> all = gather_to_root(comm, parts);
  if (g.first) {
    for (int i = 0; i + 1 < acoustic::kStateArrays; ++i) {
      std::vector<PartCrc> of;
      for (const PartCrc& p : all)
        if (p.array == i) of.push_back(p);
      // The bytes no slab holds (the storage's alignment before the first plane) are the holes
      // of the sized file: zeros, as a gathered checkpoint has them.
      h.arrays[size_t(i)].crc =
          combine_parts(of, h.arrays[size_t(i)].bytes, [](int64_t, int64_t n) { return crc32c_of_zeros(n); });
    }
    const std::string head = head_bytes(header_text(h, text_bytes));
    f.write(head.data(), int64_t(head.size()), 0);
  }
  f.commit();
  return h.file_bytes() - h.head;
}

template <class T>
struct FileCut {
  acoustic::State<T> state;    // this slab's arrays, as scatter_state cuts them
  std::vector<PartCrc> parts;  // the checksums of this rank's segments
};

// This rank's cut of the checkpoint at `path` (its header `h`, already read and checked against the
// run), without communicating: before the vote, so a file that does not fit stops every rank.
template <class T>
FileCut<T> read_checkpoint_cut(const std::filesystem::path& path, const CheckpointHeader& h,
                               const SlabShape& g, const std::vector<std::string>& names) {
  CheckpointHeader want;
  size_arrays<T>(want, g, names);
  if (h.arrays.size() != want.arrays.size()) checkpoint_fail(path, "it does not hold this run's arrays");
  for (size_t i = 0; i < want.arrays.size(); ++i)
    if (h.arrays[i].name != want.arrays[i].name || h.arrays[i].bytes != want.arrays[i].bytes)
      checkpoint_fail(path, "its array '" + h.arrays[i].name + "' (" + std::to_string(h.arrays[i].bytes) +
                                " bytes) is not this run's '" + want.arrays[i].name + "' (" +
                                std::to_string(want.arrays[i].bytes) + " bytes)");
  Fd f(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (f.fd < 0) checkpoint_fail(path, std::string("cannot open: ") + std::strerror(errno));
  const int64_t z = sizeof(T);
  FileCut<T> out;
  out.state.step = h.step;
  for (int i = 0; i < acoustic::kStateArrays; ++i) {
    std::vector<T>& a = state_array(out.state, i);
    const int64_t start = h.array_offset(size_t(i));
    const std::string what = "array " + h.arrays[size_t(i)].name;
    if (i == acoustic::kStateArrays - 1) {  // the traces: rank 0 keeps the whole's, the others add zeros
      a.assign(size_t(whole_elements(g, i)), T(0));
      if (!g.first) continue;
      pread_all(f.fd, a.data(), int64_t(a.size()) * z, start, path, what);
      out.parts.push_back({i, 0, int64_t(a.size()) * z, crc32c(a.data(), a.size() * sizeof(T)), 0});
      continue;
    }
    const Cut c = cut_of(g, i);
    a.assign(size_t(c.local_size), T(0));
    pread_all(f.fd, a.data() + c.local, c.count * z, start + c.whole * z, path, what);
    for (const Segment& s : gather_segments(g, i))
      if (s.count > 0)
        out.parts.push_back({i, s.at * z, s.count * z, crc32c(a.data() + s.local, size_t(s.count * z)), 0});
  }
  return out;
}

// After the vote, every rank: rank 0 combines the ranks' checksums with those of the bytes no
// segment covers (read again from the file) and compares each array's with its header's; every
// rank throws the same Error(io) naming the first array that differs.
inline void verify_checkpoint_cut(Comm& comm, const std::filesystem::path& path, const CheckpointHeader& h,
                                  const std::vector<PartCrc>& parts) {
  const std::vector<PartCrc> all = gather_to_root(comm, parts);
  int64_t bad = -1;  // the first array that differs; -2: rank 0 could not read the file again
  if (comm.rank() == 0) {
    try {
      Fd f(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
      if (f.fd < 0) checkpoint_fail(path, std::string("cannot open: ") + std::strerror(errno));
      std::vector<char> buf;
      for (size_t i = 0; i < h.arrays.size() && bad < 0; ++i) {
        std::vector<PartCrc> of;
        for (const PartCrc& p : all)
          if (p.array == int64_t(i)) of.push_back(p);
        const auto gap = [&](int64_t at, int64_t n) {
          buf.resize(size_t(n));
          pread_all(f.fd, buf.data(), n, h.array_offset(i) + at, path, "array " + h.arrays[i].name);
          return crc32c(buf.data(), buf.size());
        };
        if (combine_parts(of, h.arrays[i].bytes, gap) != h.arrays[i].crc) bad = int64_t(i);
      }
    } catch (...) {  // (whatever it is, the other ranks are waiting in the broadcast below)
      bad = -2;
    }
  }
  comm.broadcast(&bad, sizeof bad);
  if (bad == -2) checkpoint_fail(path, "rank 0 could not read it again to check its checksums");
  if (bad >= 0)
    checkpoint_fail(path, "array " + h.arrays[size_t(bad)].name + " does not match its checksum (corrupt)");
}

}  // namespace fdstencil::wave::detail
