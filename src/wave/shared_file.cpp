#include "wave/shared_file.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>

#include "fdstencil/error.hpp"
#include "wave/checkpoint_io.hpp"

namespace fdstencil::wave::detail {

namespace {

std::string errno_text() { return std::strerror(errno); }

}  // namespace

// Rank 0's pid and a counter name the temporary (as save_checkpoint's), so a killed run's leftovers
// are told from a live run's and concurrent writers stay apart; the other ranks learn the name.
SharedFile::SharedFile(Comm& comm, std::filesystem::path path, int64_t bytes, std::string kind)
    : comm_(comm), path_(std::move(path)), kind_(std::move(kind)) {
  static std::atomic<int64_t> counter{0};
  int64_t name[2] = {::getpid(), counter++};
  comm_.broadcast(name, sizeof name);
  temp_ = path_;
  temp_ += ".tmp." + std::to_string(name[0]) + "." + std::to_string(name[1]);
  if (comm_.rank() == 0) {
    // 0666 less the umask, as write_npy's files
    fd_ = ::open(temp_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    created_ = fd_ >= 0;
    if (fd_ < 0)
      error_ = what("cannot create " + temp_.string() + ": " + errno_text());
    else if (::ftruncate(fd_, off_t(bytes)) != 0)
      error_ = what("cannot size " + temp_.string() + ": " + errno_text());
  }
  // A constructor that throws runs no destructor: the temporary is removed here.
  try {
    agree("could not create its temporary");
    if (comm_.rank() != 0) {
      fd_ = ::open(temp_.c_str(), O_WRONLY | O_CLOEXEC);
      if (fd_ < 0)
        error_ =
            what("cannot open " + temp_.string() + " (the ranks must share its folder): " + errno_text());
    }
    agree("could not open its temporary");
  } catch (...) {
    discard();
    throw;
  }
}

void SharedFile::discard() {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
  if (created_ && !committed_) {  // (never a file of that name this rank did not create)
    std::error_code ec;
    std::filesystem::remove(temp_, ec);
  }
}

SharedFile::~SharedFile() { discard(); }

std::string SharedFile::what(const std::string& text) const {
  return kind_ + " " + path_.string() + ": " + text;
}

// Every rank's verdict; on a failure every rank throws: its own error, or that of another rank.
void SharedFile::agree(const std::string& failed) {
  if (comm_.all(error_.empty())) return;
  throw Error(ErrorKind::io,
              !error_.empty() ? error_ : what("another rank " + failed + " (its own error says why)"));
}

void SharedFile::write(const void* data, int64_t bytes, int64_t offset) {
  if (!error_.empty()) return;
  if (const int e = pwrite_all(fd_, data, bytes, offset); e != 0)
    error_ = what(std::string("write failed: ") + std::strerror(e));
}

void SharedFile::commit() {
  // On the disk before the rename makes it the file: a crash after the rename must not find a name
  // pointing at blocks that were never written.
  if (error_.empty() && ::fsync(fd_) != 0) error_ = what("fsync failed: " + errno_text());
  if (::close(fd_) != 0 && error_.empty()) error_ = what("close failed: " + errno_text());
  fd_ = -1;
  agree("could not write its part");
  if (comm_.rank() == 0) {
    std::error_code ec;
    std::filesystem::rename(temp_, path_, ec);
    if (ec) {
      error_ = what("cannot rename " + temp_.string() + " into place: " + ec.message());
    } else {
      committed_ = true;
      // The rename itself on the disk: the directory's entry.
      const int dir = ::open(path_.has_parent_path() ? path_.parent_path().c_str() : ".",
                             O_RDONLY | O_DIRECTORY | O_CLOEXEC);
      if (dir >= 0) {
        ::fsync(dir);
        ::close(dir);
      }
    }
  }
  agree("could not rename the file into place");
  committed_ = true;
}

}  // namespace fdstencil::wave::detail
