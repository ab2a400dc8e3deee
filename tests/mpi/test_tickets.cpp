// The ranks' shared counter (Comm::make_tickets), which a survey across ranks deals its shots by:
// every value goes to exactly one rank, whichever ranks ask and however often. Part of test_mpi
// (main() in test_wave_slabs.cpp), launched with 2 ranks and with 3.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <numeric>
#include <vector>

#include "fdstencil/wave_comm.hpp"
#include "mpi/slab_test_util.hpp"

using namespace fdstencil::wave;
using namespace fdstencil::wave::test;

namespace {

// Every rank takes until it draws `n` or more; what all of them drew, on rank 0.
std::vector<int64_t> draw_until(Comm& comm, int64_t n) {
  std::unique_ptr<Comm::Tickets> tickets = comm.make_tickets();
  std::vector<int64_t> mine;
  do {
    mine.push_back(tickets->take());
  } while (mine.back() < n);
  tickets.reset();  // every rank together
  return gather_to_root(comm, mine);
}

}  // namespace

// Each rank's last draw is the first it got at or past n, so the draws are 0 .. n + P - 1, each
// once; a second counter starts from 0 again.
TEST(SharedTickets, EveryValueGoesToOneRank) {
  Comm& comm = *test_comm();
  for (const int64_t n : {int64_t(0), int64_t(200)}) {
    std::vector<int64_t> all = draw_until(comm, n);
    if (comm.rank() != 0) continue;
    std::sort(all.begin(), all.end());
    std::vector<int64_t> want(size_t(n + comm.size()));
    std::iota(want.begin(), want.end(), int64_t(0));
    EXPECT_EQ(all, want) << "n = " << n;
  }
}
