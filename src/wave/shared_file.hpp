// One file written by every rank of a split run together (issue 31): a checkpoint's or a field's
// bytes, each rank writing its own slab's ranges, so that no rank gathers the whole. Rank 0 makes a
// temporary beside the file at its final size; every rank writes its ranges into it; commit() makes
// it the file once every rank's bytes are on the disk. The file is therefore whole, or as it was
// before, never a mix. The ranks must share the file system of the file's folder.
//
// The constructor and commit() are collective (every rank, in the same order) and throw on every
// rank together, each naming the file; write() is local, and its failure is reported by commit().
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>

#include "fdstencil/wave_comm.hpp"

namespace fdstencil::wave::detail {

class SharedFile {
 public:
  // `kind` names the file in messages ("checkpoint", "snapshot").
  SharedFile(Comm& comm, std::filesystem::path path, int64_t bytes, std::string kind);
  ~SharedFile();  // uncommitted: every rank closes it, rank 0 removes the temporary
  SharedFile(const SharedFile&) = delete;
  SharedFile& operator=(const SharedFile&) = delete;

  // This rank's `bytes` at `offset`: a failure is kept for commit().
  void write(const void* data, int64_t bytes, int64_t offset);
  // Every rank's bytes on the disk, then the temporary renamed over the file.
  void commit();

 private:
  Comm& comm_;
  std::filesystem::path path_, temp_;
  std::string kind_;
  int fd_ = -1;
  std::string error_;     // this rank's first failure
  bool created_ = false;  // rank 0 made the temporary
  bool committed_ = false;
  std::string what(const std::string& text) const;  // the message naming the file
  void discard();  // closes it; rank 0 removes the temporary it made unless committed
  void agree(const std::string& failed);
};

}  // namespace fdstencil::wave::detail
