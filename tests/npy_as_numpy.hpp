// .npy files as NumPy writes them from arrays it did not make itself, which the library reads
// without help (issue 33): float64 in either byte order, and Fortran order (np.save of a
// transposed array). Written byte by byte here, not by the library's own writer.
#pragma once

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

namespace fdstencil::test {

// `c_order` holds the values in C order (the last index fastest) for `shape`; the file stores
// them as float64, big-endian or little, in Fortran order (the first index fastest) or C order.
inline void write_numpy_style(const std::filesystem::path& path, const std::vector<int64_t>& shape,
                              const std::vector<double>& c_order, bool big_endian, bool fortran_order) {
  std::vector<double> values = c_order;
  if (fortran_order) {
    std::vector<int64_t> index(shape.size(), 0);
    for (double v : c_order) {  // C order's walk, each value to its Fortran offset
      int64_t f = 0, stride = 1;
      for (size_t d = 0; d < shape.size(); ++d) f += index[d] * stride, stride *= shape[d];
      values[size_t(f)] = v;
      for (size_t d = shape.size(); d-- > 0;)
        if (++index[d] < shape[d])
          break;
        else
          index[d] = 0;
    }
  }
  std::string data(reinterpret_cast<const char*>(values.data()), values.size() * sizeof(double));
  if (big_endian)
    for (size_t at = 0; at < data.size(); at += 8)
      std::reverse(data.begin() + long(at), data.begin() + long(at) + 8);
  std::string dims;
  for (int64_t n : shape) dims += std::to_string(n) + ", ";
  std::string dict = std::string("{'descr': '") + (big_endian ? ">f8" : "<f8") +
                     "', 'fortran_order': " + (fortran_order ? "True" : "False") + ", 'shape': (" + dims +
                     "), }";
  dict.resize((dict.size() + 10 + 1 + 63) / 64 * 64 - 10 - 1, ' ');  // the data on a 64-byte boundary
  dict += '\n';
  std::ofstream(path, std::ios::binary) << std::string("\x93NUMPY\x01\x00", 8) << char(dict.size() & 0xff)
                                        << char(dict.size() >> 8) << dict << data;
}

}  // namespace fdstencil::test
