// Parsing of the list-valued flags shared by the subcommands.
#include <charconv>
#include <cmath>
#include <string>

#include "commands.hpp"
#include "fdstencil/error.hpp"

namespace fdstencil::cli {

std::vector<std::string> split(const std::string& text, char sep) {
  std::vector<std::string> out;
  size_t start = 0;
  while (true) {
    const size_t pos = text.find(sep, start);
    out.push_back(text.substr(start, pos - start));
    if (pos == std::string::npos) break;
    start = pos + 1;
  }
  return out;
}

int parse_int(const std::string& text, const char* what) {
  long long v = 0;
  const auto [p, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || p != text.data() + text.size() || v < -(1ll << 31) || v > (1ll << 31) - 1)
    throw Error(ErrorKind::invalid_argument, std::string(what) + ": '" + text + "' is not an integer");
  return int(v);
}

Extents parse_extents(const std::string& text, const char* what) {
  const auto parts = split(text, ',');
  if (parts.size() != 3)
    throw Error(ErrorKind::invalid_argument,
                std::string(what) + ": '" + text + "' must be three integers NX,NY,NZ");
  int64_t v[3];
  for (int a = 0; a < 3; ++a) {
    const auto [p, ec] = std::from_chars(parts[a].data(), parts[a].data() + parts[a].size(), v[a]);
    if (ec != std::errc() || p != parts[a].data() + parts[a].size())
      throw Error(ErrorKind::invalid_argument, std::string(what) + ": '" + parts[a] + "' is not an integer");
    if (v[a] < 1)
      throw Error(ErrorKind::invalid_argument,
                  std::string(what) + ": " + std::to_string(v[a]) + " must be at least 1");
  }
  return {v[0], v[1], v[2]};
}

Spacing parse_spacing(const std::string& text) {
  const auto parts = split(text, ',');
  if (parts.size() != 3 && parts.size() != 1)
    throw Error(ErrorKind::invalid_argument, "--spacing: '" + text + "' must be H or HX,HY,HZ");
  double h[3];
  for (size_t a = 0; a < parts.size(); ++a) {
    size_t used = 0;
    try {
      h[a] = std::stod(parts[a], &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used == 0 || used != parts[a].size())
      throw Error(ErrorKind::invalid_argument, "--spacing: '" + parts[a] + "' is not a number");
  }
  if (parts.size() == 1) h[1] = h[2] = h[0];
  return {h[0], h[1], h[2]};  // validate() rejects zero, negative and non-finite values
}

void check_backend_name(const std::string& name) {
  if (name != "auto" && name != "cuda" && name != "cpu" && name != "reference")
    throw Error(ErrorKind::invalid_argument,
                "--backend: unknown backend '" + name + "' (valid: auto, cuda, cpu, reference)");
}

}  // namespace fdstencil::cli
