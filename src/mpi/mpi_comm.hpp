// wave::Comm over MPI (issue 14): the ranks of MPI_COMM_WORLD, host memory. The caller initialises
// and finalises MPI (MpiSession does both).
#pragma once

#include <memory>

#include "fdstencil/wave_comm.hpp"

namespace fdstencil::mpi {

// MPI_Init_thread on construction (funneled: only the thread that made it calls MPI), MPI_Finalize
// on destruction; one per process.
class MpiSession {
 public:
  MpiSession(int& argc, char**& argv);
  MpiSession();  // without the command line (MPI's own arguments are in the environment)
  ~MpiSession();
  MpiSession(const MpiSession&) = delete;
  MpiSession& operator=(const MpiSession&) = delete;
};

// The world communicator as a wave::Comm; MPI must be initialised.
std::unique_ptr<wave::Comm> world();

}  // namespace fdstencil::mpi
