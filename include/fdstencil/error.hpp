// Errors the library reports. Library code throws; only main() chooses an exit code.
#pragma once

#include <stdexcept>
#include <string>

namespace fdstencil {

enum class ErrorKind {
  invalid_argument,  // a bad radius, size, spacing, shape, name or flag value
  out_of_memory,     // a size whose bytes overflow or exceed the memory available
  io,                // a file that cannot be read, is malformed, or cannot be written
  unsupported,       // a valid request this build or variant cannot serve
  device,            // a CUDA call failed
  verification,      // a result differs from the reference beyond its tolerance
  interrupted,       // the caller's stop check asked a computation to stop (Options::stop_requested)
};

class Error : public std::runtime_error {
 public:
  Error(ErrorKind kind, const std::string& message) : std::runtime_error(message), kind_(kind) {}
  ErrorKind kind() const noexcept { return kind_; }

 private:
  ErrorKind kind_;
};

// The user's input was at fault (exit code 2 in the CLI) rather than the machine.
inline bool is_input_error(ErrorKind kind) {
  return kind == ErrorKind::invalid_argument || kind == ErrorKind::out_of_memory || kind == ErrorKind::io ||
         kind == ErrorKind::unsupported;
}

}  // namespace fdstencil
