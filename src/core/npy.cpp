// NumPy .npy reader and writer. The header is a Python dict literal; we parse the small subset
// NumPy writes (strings, True/False, integer tuples) by hand rather than pulling in a library,
// and treat every size in the file as hostile until it is checked against the file's real size.
#include "fdstencil/npy.hpp"

#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <bit>
#include <cctype>
#include <cerrno>
#include <cstdio>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>

#include "fdstencil/error.hpp"

namespace fdstencil {
namespace {

constexpr std::string_view kMagic = "\x93NUMPY";
constexpr int64_t kMagicLen = 6;
// NumPy aligns the start of the data to this many bytes so the file can be memory-mapped.
constexpr int64_t kArrayAlign = 64;
// NumPy (>= 1.24) leaves room to rewrite the header in place when appending along axis 0; we pad
// the same way so our files are byte-identical to np.save's.
constexpr int64_t kGrowthAxisMaxDigits = 21;
constexpr int64_t kMaxV1HeaderLen = std::numeric_limits<uint16_t>::max();
constexpr int64_t kMaxV2HeaderLen = std::numeric_limits<uint32_t>::max();

[[noreturn]] void fail_io(const std::filesystem::path& path, const std::string& problem) {
  throw Error(ErrorKind::io, path.string() + ": " + problem);
}

[[noreturn]] void fail_arg(const std::filesystem::path& path, const std::string& problem) {
  throw Error(ErrorKind::invalid_argument, path.string() + ": " + problem);
}

std::string errno_text(int err) { return std::error_code(err, std::generic_category()).message(); }

int64_t element_size(DType dtype) { return dtype == DType::f32 ? 4 : 8; }

// Returns nullopt on overflow so each caller can word the error for its own context.
std::optional<int64_t> checked_product(const std::vector<int64_t>& shape, int64_t factor) {
  int64_t total = factor;
  for (int64_t dim : shape) {
    if (__builtin_mul_overflow(total, dim, &total)) return std::nullopt;
  }
  return total;
}

std::string shape_text(const std::vector<int64_t>& shape) {
  std::string text = "(";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i > 0) text += ", ";
    text += std::to_string(shape[i]);
  }
  // Python spells a one-element tuple with a trailing comma.
  if (shape.size() == 1) text += ",";
  return text + ")";
}

struct FileCloser {
  void operator()(std::FILE* file) const noexcept { std::fclose(file); }
};
using FilePtr = std::unique_ptr<std::FILE, FileCloser>;

// ---------------------------------------------------------------------------------------------
// Header parsing

struct HeaderValue {
  enum class Kind { string, boolean, int_tuple, other };
  Kind kind = Kind::other;
  std::string text;           // string contents, or the raw source text of the value
  bool flag = false;          // for boolean
  std::vector<int64_t> dims;  // for int_tuple
};

struct Header {
  std::optional<HeaderValue> descr;
  std::optional<HeaderValue> fortran_order;
  std::optional<HeaderValue> shape;
};

class HeaderParser {
 public:
  HeaderParser(std::string_view text, const std::filesystem::path& path) : text_(text), path_(path) {}

  Header parse() {
    Header header;
    skip_space();
    expect('{', "header does not start with '{'");
    skip_space();
    while (!at('}')) {
      if (pos_ >= text_.size()) malformed("header ends before the closing '}'");
      const std::string key = parse_key();
      skip_space();
      expect(':', "expected ':' after key '" + key + "'");
      skip_space();
      std::optional<HeaderValue>* slot = nullptr;
      if (key == "descr") slot = &header.descr;
      if (key == "fortran_order") slot = &header.fortran_order;
      if (key == "shape") slot = &header.shape;
      if (slot == nullptr) malformed("unexpected key '" + key + "'");
      if (slot->has_value()) malformed("duplicate key '" + key + "'");
      *slot = parse_value();
      skip_space();
      // A comma may follow the last item (NumPy always writes one); '}' may follow any item.
      if (at(',')) {
        ++pos_;
        skip_space();
      } else if (!at('}')) {
        malformed("expected ',' or '}' after the value of '" + key + "'");
      }
    }
    ++pos_;
    skip_space();
    if (pos_ != text_.size()) malformed("unexpected text after the closing '}'");
    if (!header.descr) malformed("missing key 'descr'");
    if (!header.fortran_order) malformed("missing key 'fortran_order'");
    if (!header.shape) malformed("missing key 'shape'");
    return header;
  }

 private:
  [[noreturn]] void malformed(const std::string& problem) const {
    fail_io(path_, "malformed header: " + problem + " (at byte " + std::to_string(pos_) + " of the header)");
  }

  bool at(char c) const { return pos_ < text_.size() && text_[pos_] == c; }

  void expect(char c, const std::string& problem) {
    if (!at(c)) malformed(problem);
    ++pos_;
  }

  void skip_space() {
    // Python's whitespace; NumPy pads with spaces and ends the header with '\n'.
    while (pos_ < text_.size() && std::isspace(static_cast<unsigned char>(text_[pos_]))) ++pos_;
  }

  bool starts_with_word(std::string_view word) const {
    if (text_.substr(pos_, word.size()) != word) return false;
    // "Trueish" is a name, not the literal True.
    const size_t end = pos_ + word.size();
    return end == text_.size() ||
           !(std::isalnum(static_cast<unsigned char>(text_[end])) || text_[end] == '_');
  }

  std::string parse_key() {
    if (!at('\'') && !at('"')) malformed("expected a quoted key");
    return parse_string();
  }

  std::string parse_string() {
    const char quote = text_[pos_++];
    const size_t start = pos_;
    while (pos_ < text_.size() && text_[pos_] != quote) {
      // NumPy never writes escapes or line breaks inside its strings; refusing them keeps the
      // parser from having to implement Python's escape rules.
      if (text_[pos_] == '\\' || text_[pos_] == '\n') malformed("unsupported character in string");
      ++pos_;
    }
    if (pos_ >= text_.size()) malformed("unterminated string");
    std::string value(text_.substr(start, pos_ - start));
    ++pos_;
    return value;
  }

  HeaderValue parse_value() {
    HeaderValue value;
    const size_t start = pos_;
    if (at('\'') || at('"')) {
      value.kind = HeaderValue::Kind::string;
      value.text = parse_string();
    } else if (starts_with_word("True") || starts_with_word("False")) {
      value.kind = HeaderValue::Kind::boolean;
      value.flag = starts_with_word("True");
      pos_ += value.flag ? 4 : 5;
      value.text = value.flag ? "True" : "False";
    } else if (at('(')) {
      value.kind = HeaderValue::Kind::int_tuple;
      value.dims = parse_int_tuple();
      value.text = std::string(text_.substr(start, pos_ - start));
    } else if (at('[') || at('{')) {
      // Structured dtypes use a list as 'descr'; keep its text so the dtype error can show it.
      skip_nested();
      value.text = std::string(text_.substr(start, pos_ - start));
    } else {
      malformed("unrecognized value");
    }
    return value;
  }

  std::vector<int64_t> parse_int_tuple() {
    ++pos_;  // '('
    std::vector<int64_t> dims;
    bool trailing_comma = false;
    skip_space();
    while (!at(')')) {
      dims.push_back(parse_int());
      skip_space();
      trailing_comma = false;
      if (at(',')) {
        ++pos_;
        trailing_comma = true;
        skip_space();
      } else if (!at(')')) {
        malformed("expected ',' or ')' in shape");
      }
    }
    ++pos_;
    // In Python "(3)" is the integer 3, not a tuple; NumPy rejects it, so do we.
    if (dims.size() == 1 && !trailing_comma) malformed("shape (n) must be written as a tuple (n,)");
    return dims;
  }

  int64_t parse_int() {
    bool negative = false;
    if (at('-')) {
      negative = true;
      ++pos_;
    }
    if (pos_ >= text_.size() || !std::isdigit(static_cast<unsigned char>(text_[pos_]))) {
      malformed("expected an integer in shape");
    }
    int64_t magnitude = 0;
    while (pos_ < text_.size() && std::isdigit(static_cast<unsigned char>(text_[pos_]))) {
      if (__builtin_mul_overflow(magnitude, int64_t{10}, &magnitude) ||
          __builtin_add_overflow(magnitude, int64_t{text_[pos_] - '0'}, &magnitude)) {
        fail_io(path_, "shape dimension overflows int64");
      }
      ++pos_;
    }
    // Python 2 wrote long integers with an 'L' suffix; NumPy still reads such files.
    if (at('L') || at('l')) ++pos_;
    return negative ? -magnitude : magnitude;
  }

  void skip_nested() {
    int depth = 0;
    while (pos_ < text_.size()) {
      const char c = text_[pos_];
      if (c == '\'' || c == '"') {
        parse_string();
        continue;
      }
      if (c == '[' || c == '(' || c == '{') ++depth;
      if (c == ']' || c == ')' || c == '}') --depth;
      ++pos_;
      if (depth == 0) return;
    }
    malformed("unterminated value");
  }

  std::string_view text_;
  const std::filesystem::path& path_;
  size_t pos_ = 0;
};

DType dtype_from_descr(const HeaderValue& descr, const std::filesystem::path& path, bool& big_endian) {
  const std::string shown = descr.kind == HeaderValue::Kind::string ? "'" + descr.text + "'" : descr.text;
  const std::string need = " (need float32 '<f4' or '>f4', or float64 '<f8' or '>f8')";
  if (descr.kind != HeaderValue::Kind::string) {
    fail_io(path, "dtype " + shown + " is not supported" + need);
  }
  const std::string& d = descr.text;
  const bool float_code = d.size() == 3 && d[1] == 'f' && (d[2] == '4' || d[2] == '8');
  if (!float_code) fail_io(path, "dtype " + shown + " is not supported" + need);
  // '=' is native order, taken as this host's; '|' (no order) is not valid for floats, and a bare
  // 'f8' is not what NumPy writes.
  if (d[0] != '<' && d[0] != '>' && d[0] != '=') fail_io(path, "dtype " + shown + " is not supported" + need);
  big_endian = d[0] == '>' || (d[0] == '=' && std::endian::native == std::endian::big);
  return d[2] == '4' ? DType::f32 : DType::f64;
}

// A short fread is either an I/O error or the file shrinking under us; errno only means
// something in the first case.
[[noreturn]] void fail_read(const std::filesystem::path& path, std::FILE* file, const std::string& where) {
  const int err = errno;
  if (std::ferror(file)) fail_io(path, "read error in " + where + ": " + errno_text(err));
  fail_io(path, "truncated " + where + ": file ended early while reading");
}

uint32_t load_le(const unsigned char* bytes, int count) {
  uint32_t value = 0;
  for (int i = count - 1; i >= 0; --i) value = (value << 8) | bytes[i];
  return value;
}

}  // namespace

NpyHeader read_npy_header(const std::filesystem::path& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) fail_io(path, "is a directory, not a .npy file");
  FilePtr file(std::fopen(path.c_str(), "rb"));
  if (!file) fail_io(path, "cannot open for reading: " + errno_text(errno));

  if (std::fseek(file.get(), 0, SEEK_END) != 0) fail_io(path, "cannot seek: " + errno_text(errno));
  const long end = std::ftell(file.get());
  if (end < 0) fail_io(path, "cannot determine file size: " + errno_text(errno));
  const int64_t file_size = end;
  std::rewind(file.get());

  auto read_exact = [&](void* dst, int64_t count) {
    return std::fread(dst, 1, static_cast<size_t>(count), file.get()) == static_cast<size_t>(count);
  };

  // Magic, version, and up to 4 bytes of header length.
  std::array<unsigned char, 12> prefix{};
  const int64_t have = std::min<int64_t>(file_size, static_cast<int64_t>(prefix.size()));
  if (!read_exact(prefix.data(), have)) fail_read(path, file.get(), "header");
  const std::string_view magic(reinterpret_cast<const char*>(prefix.data()),
                               static_cast<size_t>(std::min(have, kMagicLen)));
  if (magic != kMagic.substr(0, magic.size()) || file_size == 0) {
    fail_io(path, "not a .npy file (does not start with the magic string \\x93NUMPY)");
  }
  if (have < kMagicLen + 2) fail_io(path, "truncated header: file ends inside the magic/version");

  const int major = prefix[6];
  const int minor = prefix[7];
  if (minor != 0 || major < 1 || major > 3) {
    fail_io(path, "unsupported .npy format version " + std::to_string(major) + "." + std::to_string(minor) +
                      " (need 1.0, 2.0 or 3.0)");
  }
  const int len_bytes = major == 1 ? 2 : 4;
  const int64_t prefix_len = kMagicLen + 2 + len_bytes;
  if (have < prefix_len) fail_io(path, "truncated header: file ends inside the header length");
  const int64_t header_len = load_le(prefix.data() + kMagicLen + 2, len_bytes);
  if (header_len > file_size - prefix_len) {
    fail_io(path, "truncated header: header length is " + std::to_string(header_len) + " bytes but only " +
                      std::to_string(file_size - prefix_len) + " bytes follow");
  }

  std::string header_text(static_cast<size_t>(header_len), '\0');
  if (std::fseek(file.get(), static_cast<long>(prefix_len), SEEK_SET) != 0) {
    fail_io(path, "cannot seek: " + errno_text(errno));
  }
  if (!read_exact(header_text.data(), header_len)) fail_read(path, file.get(), "header");
  const Header header = HeaderParser(header_text, path).parse();

  NpyHeader array;
  array.dtype = dtype_from_descr(*header.descr, path, array.big_endian);
  if (header.fortran_order->kind != HeaderValue::Kind::boolean) {
    fail_io(path,
            "malformed header: 'fortran_order' must be True or False, not " + header.fortran_order->text);
  }
  array.fortran_order = header.fortran_order->flag;
  if (header.shape->kind != HeaderValue::Kind::int_tuple) {
    fail_io(path, "malformed header: 'shape' must be a tuple of integers, not " + header.shape->text);
  }
  array.shape = header.shape->dims;
  for (int64_t dim : array.shape) {
    if (dim < 0) {
      fail_io(path, "negative dimension " + std::to_string(dim) + " in shape " + shape_text(array.shape));
    }
  }
  if (!checked_product(array.shape, 1)) {
    fail_io(path, "element count of shape " + shape_text(array.shape) + " overflows int64");
  }
  const std::optional<int64_t> data_bytes = checked_product(array.shape, element_size(array.dtype));
  if (!data_bytes) {
    fail_io(path, "byte count of shape " + shape_text(array.shape) + " overflows int64");
  }

  // Compare against the real file size before allocating, so a forged shape cannot make us
  // reserve memory the file does not back.
  const int64_t data_in_file = file_size - prefix_len - header_len;
  if (data_in_file < *data_bytes) {
    fail_io(path, "truncated: expected " + std::to_string(*data_bytes) + " bytes of data, found " +
                      std::to_string(data_in_file));
  }
  if (data_in_file > *data_bytes) {
    fail_io(path, "trailing bytes: expected " + std::to_string(*data_bytes) + " bytes of data, found " +
                      std::to_string(data_in_file) + " (" + std::to_string(data_in_file - *data_bytes) +
                      " extra)");
  }
  array.data_offset = prefix_len + header_len;
  array.data_bytes = *data_bytes;
  return array;
}

NpyFile open_npy_data(const std::filesystem::path& path, const NpyHeader& header) {
  NpyFile file(std::fopen(path.c_str(), "rb"), &std::fclose);
  if (!file) fail_io(path, "cannot open for reading: " + errno_text(errno));
  if (std::fseek(file.get(), 0, SEEK_END) != 0) fail_io(path, "cannot seek: " + errno_text(errno));
  if (std::ftell(file.get()) != static_cast<long>(header.data_offset + header.data_bytes))
    fail_io(path, "the file changed while it was read");
  if (std::fseek(file.get(), static_cast<long>(header.data_offset), SEEK_SET) != 0)
    fail_io(path, "cannot seek: " + errno_text(errno));
  return file;
}

NpyArray read_npy(const std::filesystem::path& path) {
  const NpyHeader header = read_npy_header(path);
  NpyArray array;
  array.dtype = header.dtype;
  array.shape = header.shape;
  const std::optional<int64_t> data_bytes = header.data_bytes;
  const NpyFile file = open_npy_data(path, header);
  array.bytes.resize(static_cast<size_t>(*data_bytes));
  // The file may have changed since we measured it; re-check against what we actually read.
  const size_t got = std::fread(array.bytes.data(), 1, array.bytes.size(), file.get());
  if (got != array.bytes.size()) {
    const int err = errno;
    if (std::ferror(file.get())) fail_io(path, "read error in data: " + errno_text(err));
    fail_io(path, "truncated: expected " + std::to_string(*data_bytes) + " bytes of data, found " +
                      std::to_string(got));
  }
  if (std::fgetc(file.get()) != EOF) {
    fail_io(path, "trailing bytes after the " + std::to_string(*data_bytes) + " bytes of data");
  }
  npy_to_native(header, array.bytes);
  return array;
}

namespace {

void swap_bytes(std::vector<unsigned char>& bytes, int64_t element) {
  for (size_t at = 0; at + size_t(element) <= bytes.size(); at += size_t(element))
    std::reverse(bytes.begin() + std::ptrdiff_t(at), bytes.begin() + std::ptrdiff_t(at) + element);
}

// Fortran order (the first index fastest) to C order (the last fastest): the file is walked in its
// own order with a counter over the indices, each element going to its C offset.
void fortran_to_c(std::vector<unsigned char>& bytes, const std::vector<int64_t>& shape, int64_t element) {
  const size_t rank = shape.size();
  std::vector<int64_t> c_stride(rank, 1), index(rank, 0);
  for (size_t d = rank; d-- > 1;) c_stride[d - 1] = c_stride[d] * shape[d];
  std::vector<unsigned char> out(bytes.size());
  int64_t c = 0;
  for (size_t f = 0; f < bytes.size(); f += size_t(element)) {
    std::copy_n(bytes.begin() + std::ptrdiff_t(f), element, out.begin() + std::ptrdiff_t(c * element));
    for (size_t d = 0; d < rank; ++d) {  // the next index in Fortran order
      c += c_stride[d];
      if (++index[d] < shape[d]) break;
      c -= c_stride[d] * shape[d];
      index[d] = 0;
    }
  }
  bytes.swap(out);
}

}  // namespace

void npy_to_native(const NpyHeader& header, std::vector<unsigned char>& bytes) {
  const int64_t element = element_size(header.dtype);
  if (header.big_endian != (std::endian::native == std::endian::big)) swap_bytes(bytes, element);
  if (header.fortran_order && header.shape.size() > 1) fortran_to_c(bytes, header.shape, element);
}

namespace {

// Produces exactly what numpy.lib.format writes for a C-order array: the dict with sorted keys,
// growth padding, then spaces and '\n' so the data starts on a 64-byte boundary.
std::string npy_preamble(DType dtype, const std::vector<int64_t>& shape, const std::filesystem::path& path) {
  std::string dict = std::string("{'descr': '") + (dtype == DType::f32 ? "<f4" : "<f8") +
                     "', 'fortran_order': False, 'shape': " + shape_text(shape) + ", }";
  if (!shape.empty()) {
    const auto digits = static_cast<int64_t>(std::to_string(shape[0]).size());
    dict.append(static_cast<size_t>(std::max<int64_t>(0, kGrowthAxisMaxDigits - digits)), ' ');
  }
  for (const int major : {1, 2}) {
    const int64_t prefix_len = kMagicLen + 2 + (major == 1 ? 2 : 4);
    const int64_t text_len = static_cast<int64_t>(dict.size()) + 1;  // + '\n'
    // Like NumPy, a full block of padding when already aligned (padlen is never 0).
    const int64_t pad = kArrayAlign - (prefix_len + text_len) % kArrayAlign;
    const int64_t header_len = text_len + pad;
    if (header_len > (major == 1 ? kMaxV1HeaderLen : kMaxV2HeaderLen)) continue;

    std::string out(kMagic);
    out += static_cast<char>(major);
    out += '\0';
    for (int i = 0; i < prefix_len - kMagicLen - 2; ++i) {
      out += static_cast<char>((header_len >> (8 * i)) & 0xff);
    }
    out += dict;
    out.append(static_cast<size_t>(pad), ' ');
    out += '\n';
    return out;
  }
  fail_arg(path, "shape has too many dimensions for a .npy header");
}

// Removes the temporary unless the rename succeeded, whichever way we leave write_npy.
class TempFileGuard {
 public:
  explicit TempFileGuard(std::filesystem::path path) : path_(std::move(path)) {}
  TempFileGuard(const TempFileGuard&) = delete;
  TempFileGuard& operator=(const TempFileGuard&) = delete;
  ~TempFileGuard() {
    if (armed_) {
      std::error_code ec;
      std::filesystem::remove(path_, ec);
    }
  }
  void dismiss() { armed_ = false; }

 private:
  std::filesystem::path path_;
  bool armed_ = true;
};

}  // namespace

void write_npy(const std::filesystem::path& path, DType dtype, const std::vector<int64_t>& shape,
               const void* data, int64_t bytes) {
  for (int64_t dim : shape) {
    if (dim < 0) fail_arg(path, "negative dimension in shape " + shape_text(shape));
  }
  const std::optional<int64_t> expected = checked_product(shape, element_size(dtype));
  if (!expected) fail_arg(path, "byte count of shape " + shape_text(shape) + " overflows int64");
  if (bytes != *expected) {
    fail_arg(path, "data is " + std::to_string(bytes) + " bytes but shape " + shape_text(shape) + " needs " +
                       std::to_string(*expected));
  }
  if (bytes > 0 && data == nullptr) fail_arg(path, "data is null");
  const std::string preamble = npy_preamble(dtype, shape, path);

  // pid keeps concurrent processes apart; the counter keeps threads of one process apart.
  static std::atomic<uint64_t> counter{0};
  std::filesystem::path temp = path;
  temp += ".tmp." + std::to_string(::getpid()) + "." + std::to_string(counter++);

  // "x" refuses to reuse an existing file, so we never write through someone else's temporary.
  FilePtr file(std::fopen(temp.c_str(), "wbx"));
  if (!file) {
    fail_io(path, "cannot create temporary file " + temp.string() + ": " + errno_text(errno));
  }
  TempFileGuard guard(temp);

  auto write_all = [&](const void* src, size_t count) {
    if (count > 0 && std::fwrite(src, 1, count, file.get()) != count) {
      fail_io(path, "write failed: " + errno_text(errno));
    }
  };
  write_all(preamble.data(), preamble.size());
  write_all(data, static_cast<size_t>(bytes));
  if (std::fflush(file.get()) != 0) fail_io(path, "write failed: " + errno_text(errno));
  // fclose can report a deferred write error, so it must be checked, not left to the deleter.
  if (std::fclose(file.release()) != 0) fail_io(path, "close failed: " + errno_text(errno));

  std::error_code ec;
  std::filesystem::rename(temp, path, ec);
  if (ec) fail_io(path, "cannot rename " + temp.string() + " into place: " + ec.message());
  guard.dismiss();
}

std::string npy_header(DType dtype, const std::vector<int64_t>& shape) {
  return npy_preamble(dtype, shape, "(a header)");
}

}  // namespace fdstencil
