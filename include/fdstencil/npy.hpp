// NumPy .npy files (format versions 1.0, 2.0 and 3.0): how a user brings a field in and takes a
// result out. float32 and float64 are read in either byte order and in C or Fortran order (what
// np.save writes for a transposed array), and handed out little-endian in C order; they are
// written little-endian in C order.
#pragma once

#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "fdstencil/dtype.hpp"

namespace fdstencil {

struct NpyArray {
  DType dtype = DType::f64;
  std::vector<int64_t> shape;        // as in the file, slowest dimension first
  std::vector<unsigned char> bytes;  // the raw little-endian element data, C order
};

// What read_npy checks before the data (the header, and the file's size against it), and where
// the data start: a reader that takes the data piece by piece (a model read by planes).
struct NpyHeader {
  DType dtype = DType::f64;
  std::vector<int64_t> shape;
  int64_t data_offset = 0, data_bytes = 0;
  bool fortran_order = false;  // the first index varies fastest in the file
  bool big_endian = false;     // the elements' bytes in the file, most significant first
};
NpyHeader read_npy_header(const std::filesystem::path& path);
// The file opened again at its data, checked to be still the size `header` describes (not replaced
// since the header was read); throws Error(io) naming it.
using NpyFile = std::unique_ptr<std::FILE, int (*)(std::FILE*)>;
NpyFile open_npy_data(const std::filesystem::path& path, const NpyHeader& header);

// Throws Error(io) with a message naming the file and the problem (missing, not .npy, unknown
// version, wrong dtype, truncated data, trailing bytes, shape overflow). A big-endian or
// Fortran-order file comes back little-endian in C order.
NpyArray read_npy(const std::filesystem::path& path);
// Bytes read as `header` describes them, in place: swapped to little-endian and transposed to C
// order where the file's were not (read_npy's conversion, for readers of the data by pieces).
void npy_to_native(const NpyHeader& header, std::vector<unsigned char>& bytes);

// Writes to a temporary file beside `path`, then renames it over `path`, so a failed write never
// leaves a partial file. Throws Error(io) on failure (the temporary is removed).
void write_npy(const std::filesystem::path& path, DType dtype, const std::vector<int64_t>& shape,
               const void* data, int64_t bytes);

// The bytes write_npy puts before the data: the magic string, the version and the header, padded
// so the data starts on a 64-byte boundary. Writers that place the data themselves (a split run's
// ranks, each its own planes) write these first.
std::string npy_header(DType dtype, const std::vector<int64_t>& shape);

}  // namespace fdstencil
