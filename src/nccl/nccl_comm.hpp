// wave::Comm for runs split across GPUs (issue 14): the halo exchange of device memory by NCCL
// point-to-point, everything else (sums, the gather, votes, abort) by the host transport it wraps,
// MPI's. One GPU per rank.
#pragma once

#include <memory>

#include "fdstencil/wave_comm.hpp"

namespace fdstencil::nccl {

// Every rank of MPI_COMM_WORLD (MPI initialised; `host` its wave::Comm) takes the GPU of its rank
// among its node's ranks, then joins one NCCL communicator. A rank without a GPU, or a node with
// more ranks than GPUs, is refused on every rank with the reason; a failure inside NCCL's setup
// ends every rank (host->abort), since the others may be waiting in it. NCCL_NVLS_ENABLE is set
// to 0 unless already set: NVLink multicast is not used and never set up.
std::unique_ptr<wave::Comm> over_gpus(std::unique_ptr<wave::Comm> host);

}  // namespace fdstencil::nccl
