// A SEG-Y file's layout and traces (segy_file.hpp). Byte positions are the standard's, 1-based;
// the binary header's are those of the file (3201-3600).
#include "wave/segy_file.hpp"

#include <cctype>
#include <cstring>
#include <system_error>

#include "fdstencil/error.hpp"

namespace fdstencil::segy::detail {

namespace fs = std::filesystem;

namespace {

// Binary header fields: position, size.
constexpr int kBinInterval = 3217, kBinSamples = 3221, kBinFormat = 3225, kBinExtSamples = 3269;
constexpr int kBinConstant = 3297, kBinRevision = 3501, kBinExtText = 3505, kBinExtraHeaders = 3507;
constexpr int kBinFirstTrace = 3521;
// Trace header fields.
constexpr int kTrSamples = 115, kTrInterval = 117;
// The byte-order constant 0x01020304 (bytes 3297-3300), as each order reads it.
constexpr int64_t kConstantAsWritten = 0x01020304, kConstantSwapped = 0x04030201;
// rev 2's last extended textual header begins with this stanza, in ASCII or EBCDIC; files write
// it in any case and with spaces inside ("((  seg: endTEXt  ))"), which segyio accepts too.
constexpr char kEndTextAscii[] = "((SEG: EndText))";
constexpr const char* kEndTextKey = "((seg:endtext))";  // lower case, no spaces
// A variable number of extended headers is searched this far: rev 2 allows any count, and a
// file without its stanza must not make us read it whole as text.
constexpr int kMaxVariableTextHeaders = 10000;

[[noreturn]] void bad(const std::string& what) { throw Error(ErrorKind::invalid_argument, what); }

std::string bin_bytes(int position, int size) {
  return "bytes " + std::to_string(position) + "-" + std::to_string(position + size - 1);
}

// An EBCDIC byte as the ASCII character a stanza's name may hold (letters, '(', ')', ':', space);
// 0 for any other.
char from_ebcdic(unsigned char c) {
  const auto in = [c](unsigned a, unsigned b) { return c >= a && c <= b; };
  if (in(0x81, 0x89)) return char('a' + (c - 0x81));
  if (in(0x91, 0x99)) return char('j' + (c - 0x91));
  if (in(0xA2, 0xA9)) return char('s' + (c - 0xA2));
  if (in(0xC1, 0xC9)) return char('A' + (c - 0xC1));
  if (in(0xD1, 0xD9)) return char('J' + (c - 0xD1));
  if (in(0xE2, 0xE9)) return char('S' + (c - 0xE2));
  switch (c) {
    case 0x4D: return '(';
    case 0x5D: return ')';
    case 0x7A: return ':';
    case 0x40: return ' ';
    default: return 0;
  }
}

// Whether a record's first line is the EndText stanza: ASCII, or EBCDIC where it starts with
// EBCDIC's '(' (0x4D, which is 'M' in ASCII), compared without case or spaces.
bool is_end_text(const unsigned char* record) {
  constexpr int kLine = 80;
  const bool ebcdic = record[0] == 0x4D;
  std::string key;
  for (int k = 0; k < kLine && key.size() < std::strlen(kEndTextKey); ++k) {
    const char c = ebcdic ? from_ebcdic(record[k]) : char(record[k]);
    if (c != ' ') key += char(std::tolower(static_cast<unsigned char>(c)));
  }
  return key == kEndTextKey;
}

}  // namespace

TraceFile::TraceFile(const fs::path& path, const std::string& where) : where_(where) {
  std::error_code ec;
  if (!fs::exists(path, ec)) throw Error(ErrorKind::io, where + "no such file");
  if (fs::is_directory(path, ec)) throw Error(ErrorKind::io, where + "a directory, not a SEG-Y file");
  l_.size = int64_t(fs::file_size(path, ec));
  if (ec) throw Error(ErrorKind::io, where + "cannot read: " + ec.message());
  constexpr int64_t headers = kTextHeaderBytes + kBinaryHeaderBytes;
  if (l_.size < headers)
    throw Error(ErrorKind::io,
                where + std::to_string(l_.size) + " bytes, fewer than the " + std::to_string(headers) +
                    " of a SEG-Y file's textual and binary headers: not a SEG-Y file, or truncated");
  in_.open(path, std::ios::binary);
  if (!in_) throw Error(ErrorKind::io, where + "cannot open: " + std::strerror(errno));
  read_at(kTextHeaderBytes, l_.bin, kBinaryHeaderBytes, "the binary header");
  find_byte_order();
  const int64_t format = ufield(l_.bin, kBinFormat, 2, l_.order, 3201);
  const SampleFormat* f = sample_format(int(format));
  if (f == nullptr || !f->decoded)
    bad(where + "sample format code " + std::to_string(format) +
        (f ? std::string(" (") + f->name + ")" : "") +
        " in the binary header (bytes 3225-3226) is not read; SEG-Y rev 2 defines 1-3, 5-12, 15 and 16" +
        (f ? ", and 4 has been obsolete since rev 1" : ""));
  l_.format = int(format);
  l_.revision = int(ufield(l_.bin, kBinRevision, 1, l_.order, 3201));
  if (l_.revision >= 2) {
    const int64_t extra = detail::field(l_.bin, kBinExtraHeaders, 2, l_.order, 3201);
    if (extra < 0) bad(where + "a negative count of additional trace headers (bytes 3507-3508)");
    l_.trace_headers = int(1 + extra);
  }
  find_trace0();
  find_samples();
  find_interval();
}

void TraceFile::read_at(int64_t offset, void* data, int64_t bytes, const std::string& what) {
  if (offset < 0 || offset + bytes > l_.size)
    throw Error(ErrorKind::io, where_ + "truncated: " + what + " would end at byte " +
                                   std::to_string(offset + bytes) + " of a " + std::to_string(l_.size) +
                                   "-byte file");
  in_.clear();
  in_.seekg(offset);
  in_.read(static_cast<char*>(data), bytes);
  if (!in_) throw Error(ErrorKind::io, where_ + "cannot read " + what + ": " + std::strerror(errno));
}

// The constant 16909060 at bytes 3297-3300 (rev 2) tells the order; without it (0 in older
// files, or a value neither order makes 16909060) the sample format code does: 1-16 read in
// one order is 256 or more in the other.
void TraceFile::find_byte_order() {
  const int64_t constant = int64_t(ufield(l_.bin, kBinConstant, 4, ByteOrder::big, 3201));
  if (constant == kConstantAsWritten || constant == kConstantSwapped) {
    l_.order = constant == kConstantAsWritten ? ByteOrder::big : ByteOrder::little;
    l_.order_source = "the byte-order constant (bytes 3297-3300)";
    return;
  }
  const uint64_t as_big = ufield(l_.bin, kBinFormat, 2, ByteOrder::big, 3201);
  const uint64_t as_little = ufield(l_.bin, kBinFormat, 2, ByteOrder::little, 3201);
  if (sample_format(int(as_big)) != nullptr) {
    l_.order = ByteOrder::big;
  } else if (sample_format(int(as_little)) != nullptr) {
    l_.order = ByteOrder::little;
  } else {
    bad(where_ + "sample format code " + std::to_string(as_big) + " (bytes 3225-3226; " +
        std::to_string(as_little) +
        " read little-endian) is no SEG-Y format: rev 2 defines 1-3, 5-12, 15 and 16 (not a SEG-Y file?)");
  }
  l_.order_source = "the sample format code (bytes 3225-3226)";
  if (constant != 0)
    l_.warnings.push_back("the byte-order constant (bytes 3297-3300) is " + std::to_string(constant) +
                          ", neither order of 16909060: the order was taken from the sample format code");
}

// Where the first trace starts: rev 2's byte offset where given, else after the textual headers,
// counted (bytes 3505-3506) or, for -1, read up to the one that starts with the EndText stanza.
void TraceFile::find_trace0() {
  const int64_t after_headers = kTextHeaderBytes + kBinaryHeaderBytes;
  const int64_t count = detail::field(l_.bin, kBinExtText, 2, l_.order, 3201);
  const int64_t first = l_.revision >= 2 ? int64_t(ufield(l_.bin, kBinFirstTrace, 8, l_.order, 3201)) : 0;
  if (count == -1 && first >= after_headers && first <= l_.size) {
    // rev 2 says where the traces start: no stanza to look for.
    l_.extended_text = int((first - after_headers) / kTextHeaderBytes);
  } else if (count >= 0) {
    l_.extended_text = int(count);
  } else if (count == -1) {
    unsigned char record[kTextHeaderBytes];
    int n = 0;
    for (;;) {
      if (n == kMaxVariableTextHeaders)
        bad(where_ + "a variable number of extended textual headers (bytes 3505-3506 = -1) and no " +
            kEndTextAscii + " stanza in the first " + std::to_string(kMaxVariableTextHeaders));
      read_at(after_headers + int64_t(n) * kTextHeaderBytes, record, kTextHeaderBytes,
              "extended textual header " + std::to_string(n + 1) + " (looking for the EndText stanza)");
      ++n;
      if (is_end_text(record)) break;
    }
    l_.extended_text = n;
  } else {
    bad(where_ + "extended textual headers: bytes 3505-3506 say " + std::to_string(count) +
        ", and the standard allows a count or -1 (variable)");
  }
  l_.trace0 = after_headers + int64_t(l_.extended_text) * kTextHeaderBytes;
  if (l_.revision >= 2) {
    if (first > 0 && first != l_.trace0) {
      if (first < after_headers || first > l_.size)
        bad(where_ + "the first trace's offset (bytes 3521-3528) is " + std::to_string(first) +
            ", outside the file's " + std::to_string(l_.size) + " bytes after its headers");
      l_.trace0 = first;
    }
  }
  if (l_.trace0 > l_.size)
    throw Error(ErrorKind::io, where_ + "the headers announce " + std::to_string(l_.extended_text) +
                                   " extended textual headers (bytes 3505-3506) of 3200 bytes, and the file "
                                   "ends at byte " +
                                   std::to_string(l_.size));
}

// The samples per trace: the binary header's (rev 2's 32-bit field where the 16-bit one is 0 or
// the revision is 2), as segyio takes it; trace 0's where the binary header has none or the
// file's size does not fit it but fits trace 0's. A disagreement is a warning naming both.
void TraceFile::find_samples() {
  const int64_t bin16 = int64_t(ufield(l_.bin, kBinSamples, 2, l_.order, 3201));
  const int64_t bin32 = detail::field(l_.bin, kBinExtSamples, 4, l_.order, 3201);
  const bool use32 = bin32 > 0 && (bin16 == 0 || l_.revision >= 2);
  const int64_t from_bin = use32 ? bin32 : bin16;
  const std::string bin_where = use32 ? bin_bytes(kBinExtSamples, 4) : bin_bytes(kBinSamples, 2);
  int64_t from_trace = 0;
  if (l_.size >= l_.trace0 + kTraceHeaderBytes) {
    unsigned char h[kTraceHeaderBytes];
    read_at(l_.trace0, h, kTraceHeaderBytes, "trace 0's header");
    from_trace = int64_t(ufield(h, kTrSamples, 2, l_.order));
  }
  const int bytes = sample_format(l_.format)->bytes;
  const int64_t data = l_.size - l_.trace0, headers = int64_t(l_.trace_headers) * kTraceHeaderBytes;
  const auto fits = [&](int64_t ns) { return ns > 0 && data > 0 && data % (headers + ns * bytes) == 0; };
  if (from_bin == 0 && from_trace == 0)
    bad(where_ + "no samples per trace: 0 in the binary header (" + bin_where +
        ") and in trace 0's (bytes 115-116)");
  if (fits(from_bin) || (from_bin > 0 && !fits(from_trace))) {
    l_.ns = from_bin;
    if (from_trace != 0 && from_trace != from_bin)
      l_.warnings.push_back("trace 0's header says " + std::to_string(from_trace) +
                            " samples (bytes 115-116), the binary header " + std::to_string(from_bin) + " (" +
                            bin_where + "): read " + std::to_string(from_bin) + ", the binary header's" +
                            (fits(from_bin) ? ", which the file's size fits" : ""));
  } else {
    l_.ns = from_trace;
    if (from_bin != 0)
      l_.warnings.push_back("the binary header says " + std::to_string(from_bin) + " samples (" + bin_where +
                            "), trace 0's header " + std::to_string(from_trace) + " (bytes 115-116): read " +
                            std::to_string(from_trace) + ", trace 0's, which the file's size fits");
  }
  l_.trace_bytes = headers + l_.ns * bytes;
  if (data <= 0) bad(where_ + "the file holds no traces");
  l_.traces = data / l_.trace_bytes;
  const int64_t left = data % l_.trace_bytes;
  if (left != 0)
    throw Error(ErrorKind::io, where_ + "truncated, or not fixed-length: after the " +
                                   std::to_string(l_.trace0) + " bytes of headers, " + std::to_string(data) +
                                   " bytes hold " + std::to_string(l_.traces) + " whole traces of " +
                                   std::to_string(headers) + " + " + std::to_string(l_.ns * bytes) +
                                   " bytes (" + std::to_string(l_.ns) + " samples of format " +
                                   std::to_string(l_.format) + ") and " + std::to_string(left) +
                                   " bytes are left over");
  if (l_.traces == 0) bad(where_ + "the file holds no traces");
}

// The sample interval: the binary header's (bytes 3217-3218), else trace 0's (bytes 117-118).
// Where both are set and differ segyio takes neither (its 4 ms default); a reader of one file
// has a better guess in the binary header, which the standard makes the file's, and says so.
void TraceFile::find_interval() {
  unsigned char h[kTraceHeaderBytes];
  header(0, h);
  const int64_t bin = int64_t(ufield(l_.bin, kBinInterval, 2, l_.order, 3201));
  const int64_t trace = int64_t(ufield(h, kTrInterval, 2, l_.order));
  l_.sample_interval = bin != 0 ? bin : trace;
  if (bin != 0 && trace != 0 && bin != trace)
    l_.warnings.push_back("the sample interval is " + std::to_string(bin) +
                          " in the binary header (bytes 3217-3218) and " + std::to_string(trace) +
                          " in trace 0's (bytes 117-118): read " + std::to_string(bin) +
                          ", the binary header's (segyio would take neither and assume 4000)");
}

void TraceFile::header(int64_t t, unsigned char* out) {
  read_at(l_.trace0 + t * l_.trace_bytes, out, kTraceHeaderBytes, "trace " + std::to_string(t) + "'s header");
}

void TraceFile::samples(int64_t t, float* out) {
  const int bytes = sample_format(l_.format)->bytes;
  raw_.resize(size_t(l_.ns * bytes));
  read_at(l_.trace0 + t * l_.trace_bytes + int64_t(l_.trace_headers) * kTraceHeaderBytes, raw_.data(),
          int64_t(raw_.size()), "trace " + std::to_string(t) + "'s samples");
  decode_samples(l_.format, l_.order, raw_.data(), l_.ns, out);
}

}  // namespace fdstencil::segy::detail
