// The JSON files the tool writes (bench's results, tune's record): written atomically, and
// checked for writability before the work that fills them starts.
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "commands.hpp"
#include "fdstencil/error.hpp"

namespace fdstencil::cli {

void check_writable(const std::string& path) {
  const std::string probe = path + ".tmp";
  std::ofstream f(probe);
  if (!f) throw Error(ErrorKind::io, "cannot write " + path + ": " + std::strerror(errno));
  f.close();
  std::filesystem::remove(probe);
}

void write_json_file(const std::string& path, const nlohmann::json& doc) {
  const std::filesystem::path target(path);
  const std::filesystem::path tmp = target.string() + ".tmp";
  {
    std::ofstream f(tmp);
    f << doc.dump(1) << "\n";
    f.close();
    if (!f) {
      std::error_code ec;
      std::filesystem::remove(tmp, ec);
      throw Error(ErrorKind::io, "cannot write " + path);
    }
  }
  std::error_code ec;
  std::filesystem::rename(tmp, target, ec);
  if (ec) {
    std::filesystem::remove(tmp, ec);
    throw Error(ErrorKind::io, "cannot write " + path + ": " + ec.message());
  }
}

}  // namespace fdstencil::cli
