// Host memory: refuse sizes the machine cannot hold with a clear error instead of letting Linux
// overcommit and the OOM killer end the process half-way through a run.
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>

#include "fdstencil/error.hpp"
#include "fdstencil/field.hpp"

namespace fdstencil {

int64_t host_memory_available() {
  std::ifstream meminfo("/proc/meminfo");
  std::string key;
  int64_t value = 0;
  std::string unit;
  while (meminfo >> key >> value) {
    std::getline(meminfo, unit);
    if (key == "MemAvailable:") return value * 1024;  // reported in kB
  }
  return 0;
}

namespace {
std::string gib(int64_t bytes) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.2f GiB", static_cast<double>(bytes) / (1024.0 * 1024 * 1024));
  return buf;
}
}  // namespace

void ensure_host_memory(int64_t bytes, const char* what) {
  const int64_t available = host_memory_available();
  if (bytes < 0 || (available > 0 && bytes > available))
    throw Error(ErrorKind::out_of_memory, std::string(what) + " needs " + gib(bytes) +
                                              " but the host has only " + gib(available) + " available");
}

namespace detail {
void* aligned_host_alloc(int64_t bytes, const char* what) {
  ensure_host_memory(bytes, what);
  // aligned_alloc wants a size that is a multiple of the alignment.
  const int64_t rounded = (bytes + kAlignBytes - 1) / kAlignBytes * kAlignBytes;
  void* p = std::aligned_alloc(kAlignBytes, static_cast<size_t>(rounded));
  if (p == nullptr)
    throw Error(ErrorKind::out_of_memory, std::string("cannot allocate ") + gib(bytes) + " for " + what);
  return p;
}
}  // namespace detail

}  // namespace fdstencil
