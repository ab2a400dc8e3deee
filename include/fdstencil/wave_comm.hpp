// The ranks of a run split along z (issue 14): what the wave solver needs from them, whatever
// carries the bytes. A run on P ranks gives each rank one slab of the computational planes
// (Domain::split_z); each step a slab sends its R planes at each face to the neighbour there and
// receives the neighbour's into its halo. The MPI implementation (src/mpi/, built when MPI is
// found) carries host memory; the NCCL one (src/nccl/, built when NCCL, CUDA and MPI are found)
// carries device memory, with MPI for the rest.
#pragma once

#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "fdstencil/error.hpp"

namespace fdstencil::wave {

class Comm {
 public:
  virtual ~Comm() = default;
  virtual int rank() const = 0;
  virtual int size() const = 0;
  // This rank's index among the ranks sharing its node (its memory), and their count: one GPU per
  // rank takes the GPU of that index, and a node of more ranks than GPUs cannot give each its own.
  // By default every rank is alone on its node.
  struct NodePlace {
    int rank = 0, size = 1;
  };
  virtual NodePlace node_place() const { return {}; }
  // One halo exchange of `bytes` bytes each way: `to_lower` goes to rank - 1, whose `to_upper`
  // arrives in `from_lower`; likewise upwards. The first and last rank skip their missing side
  // (their from_ buffers are left as they are).
  virtual void exchange(const void* to_lower, void* from_lower, const void* to_upper, void* from_upper,
                        int64_t bytes) = 0;
  // Whether exchange_device() carries device memory: then a split run may run on the GPUs.
  virtual bool carries_device_memory() const { return false; }
  // The same exchange of device memory, enqueued on `stream` (a cudaStream_t) and not waited for.
  virtual void exchange_device(const void* /*to_lower*/, void* /*from_lower*/, const void* /*to_upper*/,
                               void* /*from_upper*/, int64_t /*bytes*/, void* /*stream*/) {
    throw Error(ErrorKind::unsupported, "this transport carries host memory only");
  }
  // Element-wise sums over the ranks into rank 0's `data` (the others' are left unspecified).
  virtual void sum_to_root(float* data, int64_t count) = 0;
  virtual void sum_to_root(double* data, int64_t count) = 0;
  // Rank 0 receives every rank's `bytes` bytes at `part` concatenated in rank order (the ranks'
  // sizes may differ); the others get nothing. gather_to_root below is the typed form.
  virtual std::vector<char> gather_bytes(const void* part, int64_t bytes) = 0;
  // Rank 0's `bytes` bytes at `data` into every other rank's `data`.
  virtual void broadcast(void* data, int64_t bytes) = 0;
  // Each rank's `bytes` bytes of rank 0's `whole`, from byte `offset`, into its `mine`: every rank
  // names its own range (ranges may overlap, and rank 0's is copied in place); `whole` is read on
  // rank 0 only (the others may pass nullptr). A resumed split run's state, each slab its part.
  virtual void scatter_bytes(const void* whole, int64_t offset, void* mine, int64_t bytes) = 0;
  // True on every rank when `ok` is true on every rank. wave::run votes once, after every rank
  // has built its slab and before the first exchange, so a failure on one rank (memory, say)
  // stops all of them with an error instead of leaving the others waiting in the exchange.
  virtual bool all(bool ok) = 0;
  // True on every rank when every rank passed the same value (a build's or a run's fingerprint).
  virtual bool same(uint64_t value) = 0;
  // Ends every rank's process (MPI_Abort): for a failure after that vote, when the other ranks
  // may already be inside a collective and cannot be told otherwise.
  [[noreturn]] virtual void abort(const std::string& why) = 0;

  // A counter the ranks draw from: take() gives 0, 1, 2, ... each value to one rank only, in the
  // order the ranks ask, and no rank waits for another to hand it out. A survey deals its shots
  // so: a rank that finishes early takes more of them. Made, and destroyed, on every rank
  // together; take() only on the thread that made it.
  class Tickets {
   public:
    virtual ~Tickets() = default;
    virtual int64_t take() = 0;
  };
  virtual std::unique_ptr<Tickets> make_tickets() {
    throw Error(ErrorKind::unsupported, "this transport has no shared counter");
  }
};

// Every rank's `part` concatenated in rank order on rank 0; nothing on the others.
template <class T>
std::vector<T> gather_to_root(Comm& comm, const std::vector<T>& part) {
  const std::vector<char> b = comm.gather_bytes(part.data(), int64_t(part.size() * sizeof(T)));
  std::vector<T> out(b.size() / sizeof(T));
  if (!b.empty()) std::memcpy(out.data(), b.data(), b.size());
  return out;
}

}  // namespace fdstencil::wave
