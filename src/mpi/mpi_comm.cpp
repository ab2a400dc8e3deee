// wave::Comm over MPI: the halo exchange as two MPI_Sendrecv (upwards, then downwards; the ends
// talk to MPI_PROC_NULL, which makes their missing side a no-op), sums by MPI_Reduce, the gather
// by point-to-point messages to rank 0, the broadcast by MPI_Bcast, the scatter by point-to-point
// messages from rank 0, the tickets by one-sided atomics on rank 0's window. Counts above what one
// MPI call takes (int) go in pieces.
#include "mpi/mpi_comm.hpp"

#include <mpi.h>

#include <algorithm>
#include <climits>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "fdstencil/error.hpp"

namespace fdstencil::mpi {

namespace {

// The largest piece one call moves: int counts, with room to spare.
constexpr int64_t kPiece = int64_t(1) << 30;

void check(int rc, const char* what) {
  if (rc == MPI_SUCCESS) return;
  char text[MPI_MAX_ERROR_STRING];
  int len = 0;
  MPI_Error_string(rc, text, &len);
  throw Error(ErrorKind::io, std::string(what) + ": " + std::string(text, size_t(len)));
}

// The counter is one int64 in rank 0's window; a take is one MPI_Fetch_and_op under a shared
// lock, a passive-target operation: rank 0 need not be in an MPI call for another rank's take to
// complete where the transport does atomics itself (shared memory within a node, InfiniBand
// through UCX); elsewhere MPI may complete it only at rank 0's next MPI call.
class MpiTickets final : public wave::Comm::Tickets {
 public:
  explicit MpiTickets(int rank) {
    const MPI_Aint bytes = rank == 0 ? MPI_Aint(sizeof(int64_t)) : 0;
    check(MPI_Win_allocate(bytes, int(sizeof(int64_t)), MPI_INFO_NULL, MPI_COMM_WORLD, &base_, &win_),
          "MPI_Win_allocate");
    if (rank == 0) {  // a local store into a window belongs in an epoch of its own
      check(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win_), "MPI_Win_lock");
      *static_cast<int64_t*>(base_) = 0;
      check(MPI_Win_unlock(0, win_), "MPI_Win_unlock");
    }
    check(MPI_Barrier(MPI_COMM_WORLD), "MPI_Barrier");  // nobody takes before the counter is 0
  }
  ~MpiTickets() override { MPI_Win_free(&win_); }
  MpiTickets(const MpiTickets&) = delete;
  MpiTickets& operator=(const MpiTickets&) = delete;

  int64_t take() override {
    const int64_t one = 1;
    int64_t got = -1;
    check(MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win_), "MPI_Win_lock");
    check(MPI_Fetch_and_op(&one, &got, MPI_INT64_T, 0, 0, MPI_SUM, win_), "MPI_Fetch_and_op");
    check(MPI_Win_unlock(0, win_), "MPI_Win_unlock");
    return got;
  }

 private:
  void* base_ = nullptr;
  MPI_Win win_ = MPI_WIN_NULL;
};

class MpiComm final : public wave::Comm {
 public:
  MpiComm() {
    check(MPI_Comm_rank(MPI_COMM_WORLD, &rank_), "MPI_Comm_rank");
    check(MPI_Comm_size(MPI_COMM_WORLD, &size_), "MPI_Comm_size");
    // The node's ranks, found once here: MPI_Comm_split_type is collective, and every rank makes
    // its MpiComm together.
    MPI_Comm node = MPI_COMM_NULL;
    if (MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank_, MPI_INFO_NULL, &node) ==
        MPI_SUCCESS) {
      MPI_Comm_rank(node, &node_.rank);
      MPI_Comm_size(node, &node_.size);
      MPI_Comm_free(&node);
    }
  }
  int rank() const override { return rank_; }
  int size() const override { return size_; }
  NodePlace node_place() const override { return node_; }

  void exchange(const void* to_lower, void* from_lower, const void* to_upper, void* from_upper,
                int64_t bytes) override {
    const int lower = rank_ > 0 ? rank_ - 1 : MPI_PROC_NULL;
    const int upper = rank_ + 1 < size_ ? rank_ + 1 : MPI_PROC_NULL;
    for (int64_t at = 0; at < bytes; at += kPiece) {
      const int n = int(std::min(kPiece, bytes - at));
      // Upwards: my top planes to rank + 1, rank - 1's into my bottom halo.
      check(MPI_Sendrecv(static_cast<const char*>(to_upper) + at, n, MPI_BYTE, upper, kUp,
                         static_cast<char*>(from_lower) + at, n, MPI_BYTE, lower, kUp, MPI_COMM_WORLD,
                         MPI_STATUS_IGNORE),
            "the halo exchange upwards");
      check(MPI_Sendrecv(static_cast<const char*>(to_lower) + at, n, MPI_BYTE, lower, kDown,
                         static_cast<char*>(from_upper) + at, n, MPI_BYTE, upper, kDown, MPI_COMM_WORLD,
                         MPI_STATUS_IGNORE),
            "the halo exchange downwards");
    }
  }

  void sum_to_root(float* data, int64_t count) override { reduce(data, count, MPI_FLOAT); }
  void sum_to_root(double* data, int64_t count) override { reduce(data, count, MPI_DOUBLE); }

  std::vector<char> gather_bytes(const void* part, int64_t bytes) override {
    std::vector<int64_t> counts(size_t(size_), 0);
    check(MPI_Gather(&bytes, 1, MPI_INT64_T, counts.data(), 1, MPI_INT64_T, 0, MPI_COMM_WORLD), "MPI_Gather");
    const char* mine = static_cast<const char*>(part);
    if (rank_ != 0) {
      for (int64_t at = 0; at < bytes; at += kPiece)
        check(MPI_Send(mine + at, int(std::min(kPiece, bytes - at)), MPI_BYTE, 0, kGather, MPI_COMM_WORLD),
              "sending a part to rank 0");
      return {};
    }
    int64_t total = 0;
    for (int64_t c : counts) total += c;
    std::vector<char> whole(static_cast<size_t>(total));
    if (bytes > 0) std::copy_n(mine, bytes, whole.data());
    int64_t offset = bytes;
    for (int r = 1; r < size_; ++r) {
      const int64_t n = counts[size_t(r)];
      for (int64_t at = 0; at < n; at += kPiece)
        check(MPI_Recv(whole.data() + offset + at, int(std::min(kPiece, n - at)), MPI_BYTE, r, kGather,
                       MPI_COMM_WORLD, MPI_STATUS_IGNORE),
              "receiving a part on rank 0");
      offset += n;
    }
    return whole;
  }

  void broadcast(void* data, int64_t bytes) override {
    for (int64_t at = 0; at < bytes; at += kPiece)
      check(MPI_Bcast(static_cast<char*>(data) + at, int(std::min(kPiece, bytes - at)), MPI_BYTE, 0,
                      MPI_COMM_WORLD),
            "MPI_Bcast");
  }

  // Rank 0 learns every rank's range (one MPI_Gather of two numbers), then sends each its bytes.
  void scatter_bytes(const void* whole, int64_t offset, void* mine, int64_t bytes) override {
    const int64_t want[2] = {offset, bytes};
    std::vector<int64_t> ranges(size_t(2 * size_), 0);
    check(MPI_Gather(want, 2, MPI_INT64_T, ranges.data(), 2, MPI_INT64_T, 0, MPI_COMM_WORLD), "MPI_Gather");
    char* into = static_cast<char*>(mine);
    if (rank_ != 0) {
      for (int64_t at = 0; at < bytes; at += kPiece)
        check(MPI_Recv(into + at, int(std::min(kPiece, bytes - at)), MPI_BYTE, 0, kScatter, MPI_COMM_WORLD,
                       MPI_STATUS_IGNORE),
              "receiving a part from rank 0");
      return;
    }
    const char* from = static_cast<const char*>(whole);
    if (bytes > 0) std::copy_n(from + offset, bytes, into);
    for (int r = 1; r < size_; ++r) {
      const int64_t at0 = ranges[size_t(2 * r)], n = ranges[size_t(2 * r + 1)];
      for (int64_t at = 0; at < n; at += kPiece)
        check(MPI_Send(from + at0 + at, int(std::min(kPiece, n - at)), MPI_BYTE, r, kScatter, MPI_COMM_WORLD),
              "sending a part from rank 0");
    }
  }

  [[noreturn]] void abort(const std::string& why) override {
    std::fprintf(stderr, "fdstencil: rank %d of %d: %s; ending every rank\n", rank_, size_, why.c_str());
    std::fflush(stderr);
    MPI_Abort(MPI_COMM_WORLD, 1);
    std::abort();  // MPI_Abort does not return; should it, this process still ends
  }

  bool same(uint64_t value) override {
    uint64_t lo = 0, hi = 0;
    check(MPI_Allreduce(&value, &lo, 1, MPI_UINT64_T, MPI_MIN, MPI_COMM_WORLD), "MPI_Allreduce");
    check(MPI_Allreduce(&value, &hi, 1, MPI_UINT64_T, MPI_MAX, MPI_COMM_WORLD), "MPI_Allreduce");
    return lo == hi;
  }

  std::unique_ptr<Tickets> make_tickets() override { return std::make_unique<MpiTickets>(rank_); }

  bool all(bool ok) override {
    int mine = ok ? 1 : 0, every = 0;
    check(MPI_Allreduce(&mine, &every, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD), "MPI_Allreduce");
    return every != 0;
  }

 private:
  static constexpr int kUp = 101, kDown = 102, kGather = 103, kScatter = 104;
  int rank_ = 0, size_ = 1;
  NodePlace node_;

  template <class T>
  void reduce(T* data, int64_t count, MPI_Datatype type) {
    for (int64_t at = 0; at < count; at += kPiece) {
      const int n = int(std::min(kPiece, count - at));
      if (rank_ == 0)
        check(MPI_Reduce(MPI_IN_PLACE, data + at, n, type, MPI_SUM, 0, MPI_COMM_WORLD), "MPI_Reduce");
      else
        check(MPI_Reduce(data + at, nullptr, n, type, MPI_SUM, 0, MPI_COMM_WORLD), "MPI_Reduce");
    }
  }
};

}  // namespace

namespace {

void init(int* argc, char*** argv) {
  int provided = 0;
  check(MPI_Init_thread(argc, argv, MPI_THREAD_FUNNELED, &provided), "MPI_Init_thread");
  // Only the thread that started MPI calls it (OpenMP threads only compute).
  if (provided < MPI_THREAD_FUNNELED) {
    MPI_Finalize();
    throw Error(ErrorKind::unsupported, "this MPI does not provide MPI_THREAD_FUNNELED");
  }
}

}  // namespace

MpiSession::MpiSession(int& argc, char**& argv) { init(&argc, &argv); }
MpiSession::MpiSession() { init(nullptr, nullptr); }

MpiSession::~MpiSession() { MPI_Finalize(); }

std::unique_ptr<wave::Comm> world() { return std::make_unique<MpiComm>(); }

}  // namespace fdstencil::mpi
