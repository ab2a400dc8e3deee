// wave::Comm over NCCL: each step's halo exchange is one NCCL group of a send and a receive to
// each neighbour (two at most), enqueued on the caller's stream; nothing waits on the host. The
// NCCL communicator's unique id goes from rank 0 to the others by MPI_Bcast.
#include "nccl/nccl_comm.hpp"

#include <cuda_runtime.h>
#include <mpi.h>
#include <nccl.h>

#include <cstdlib>
#include <string>
#include <utility>

#include "fdstencil/error.hpp"

namespace fdstencil::nccl {

namespace {

std::string nccl_text(ncclResult_t r) { return ncclGetErrorString(r); }

class NcclComm final : public wave::Comm {
 public:
  NcclComm(std::unique_ptr<wave::Comm> host, ncclComm_t comm) : host_(std::move(host)), comm_(comm) {}
  ~NcclComm() override { ncclCommDestroy(comm_); }
  NcclComm(const NcclComm&) = delete;
  NcclComm& operator=(const NcclComm&) = delete;

  int rank() const override { return host_->rank(); }
  int size() const override { return host_->size(); }
  NodePlace node_place() const override { return host_->node_place(); }
  void exchange(const void* to_lower, void* from_lower, const void* to_upper, void* from_upper,
                int64_t bytes) override {
    host_->exchange(to_lower, from_lower, to_upper, from_upper, bytes);
  }
  bool carries_device_memory() const override { return true; }
  void exchange_device(const void* to_lower, void* from_lower, const void* to_upper, void* from_upper,
                       int64_t bytes, void* stream) override {
    const cudaStream_t s = static_cast<cudaStream_t>(stream);
    const int r = rank(), n = size();
    const size_t count = size_t(bytes);
    check(ncclGroupStart(), "ncclGroupStart");
    if (r > 0) {
      check(ncclSend(to_lower, count, ncclUint8, r - 1, comm_, s), "ncclSend to rank - 1");
      check(ncclRecv(from_lower, count, ncclUint8, r - 1, comm_, s), "ncclRecv from rank - 1");
    }
    if (r + 1 < n) {
      check(ncclSend(to_upper, count, ncclUint8, r + 1, comm_, s), "ncclSend to rank + 1");
      check(ncclRecv(from_upper, count, ncclUint8, r + 1, comm_, s), "ncclRecv from rank + 1");
    }
    check(ncclGroupEnd(), "ncclGroupEnd");
  }
  void sum_to_root(float* data, int64_t count) override { host_->sum_to_root(data, count); }
  void sum_to_root(double* data, int64_t count) override { host_->sum_to_root(data, count); }
  std::vector<char> gather_bytes(const void* part, int64_t bytes) override {
    return host_->gather_bytes(part, bytes);
  }
  void broadcast(void* data, int64_t bytes) override { host_->broadcast(data, bytes); }
  void scatter_bytes(const void* whole, int64_t offset, void* mine, int64_t bytes) override {
    host_->scatter_bytes(whole, offset, mine, bytes);
  }
  bool all(bool ok) override { return host_->all(ok); }
  bool same(uint64_t value) override { return host_->same(value); }
  std::unique_ptr<Tickets> make_tickets() override { return host_->make_tickets(); }
  [[noreturn]] void abort(const std::string& why) override {
    host_->abort(why);
    std::abort();  // the host's abort does not return; should it, this process still ends
  }

 private:
  // An NCCL call failing mid-run leaves the other ranks inside theirs: every rank ends.
  void check(ncclResult_t r, const char* what) {
    if (r != ncclSuccess) host_->abort(std::string(what) + ": " + nccl_text(r));
  }
  std::unique_ptr<wave::Comm> host_;
  ncclComm_t comm_;
};

}  // namespace

std::unique_ptr<wave::Comm> over_gpus(std::unique_ptr<wave::Comm> host) {
  setenv("NCCL_NVLS_ENABLE", "0", /*overwrite=*/0);
  const wave::Comm::NodePlace node = host->node_place();
  int gpus = 0;
  if (cudaGetDeviceCount(&gpus) != cudaSuccess) gpus = 0;
  std::string why;
  if (gpus == 0)
    why = "rank " + std::to_string(host->rank()) + " has no GPU";
  else if (node.size > gpus)
    why = "rank " + std::to_string(host->rank()) + "'s node runs " + std::to_string(node.size) +
          " ranks on " + std::to_string(gpus) + " GPU(s): a run across GPUs takes one GPU per rank";
  if (!host->all(why.empty()))
    throw Error(ErrorKind::unsupported,
                why.empty() ? "another rank cannot take a GPU of its own (its own error says why)" : why);
  if (cudaSetDevice(node.rank) != cudaSuccess)
    host->abort("cudaSetDevice(" + std::to_string(node.rank) + ") failed");
  ncclUniqueId id{};
  if (host->rank() == 0) {
    const ncclResult_t r = ncclGetUniqueId(&id);
    if (r != ncclSuccess) host->abort("ncclGetUniqueId: " + nccl_text(r));
  }
  if (MPI_Bcast(&id, int(sizeof id), MPI_BYTE, 0, MPI_COMM_WORLD) != MPI_SUCCESS)
    host->abort("MPI_Bcast of the NCCL id failed");
  ncclComm_t comm = nullptr;
  const ncclResult_t r = ncclCommInitRank(&comm, host->size(), id, host->rank());
  if (r != ncclSuccess) host->abort("ncclCommInitRank: " + nccl_text(r));
  return std::make_unique<NcclComm>(std::move(host), comm);
}

}  // namespace fdstencil::nccl
