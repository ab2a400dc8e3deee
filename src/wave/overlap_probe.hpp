// The split GPU step's choice between its two paths, by measurement (issue 31): the halo exchange
// beside the inner planes' update (overlap on) or before it (off). The overlap hides the exchange
// only where the exchange is longer than what it costs: a second stream, the face chunks apart
// from the inner ones, NCCL's copy kernel taking SMs from them. Where the exchange is short it can
// cost more than it hides (docs/multigpu.md names the runs), so neither path is right everywhere.
// Both compute the same field to the bit, so the run's own first steps can time both: a warm-up
// block, then four blocks of each path in the order on off, off on, on off, off on (each path
// leads as many pairs as the other, so a drift of the device's clocks favours neither), and the
// path whose fastest block was faster is kept; a tie keeps off, the path with nothing to lose. The fastest block, not the mean: a
// snapshot, a checkpoint or a progress report inside a block only lengthens it. Rank 0's timing
// decides for every rank (the ranks step in lockstep with their neighbours, so rank 0's blocks
// see the slowest).
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <limits>

namespace fdstencil::wave::detail {

class OverlapProbe {
 public:
  // Steps a block: long enough that the two synchronisations around it cost little beside ten
  // steps, short enough that the probe is a small part of the runs it matters for.
  static constexpr int64_t kBlock = 10;
  static constexpr int kTimedBlocks = 8;
  // The warm-up block and the timed ones.
  static constexpr int64_t kSteps = kBlock * (1 + kTimedBlocks);
  // Runs of fewer steps than this take the overlap without probing: the probe would be much of
  // the run, and such a run's time is mostly its setup.
  static constexpr int64_t kMinRun = 4 * kSteps;

  // Whether a run of `steps` steps (from its first, a resume's included) probes.
  static bool probes(int64_t steps) { return steps >= kMinRun; }

  // The path of the probe's step i (0 ≤ i < kSteps): the warm-up block on, then the timed blocks.
  static bool overlap_at(int64_t i) { return i < kBlock ? true : kOrder[size_t(i / kBlock - 1)]; }
  // Whether step i is the first or the last of a timed block.
  static bool starts_block(int64_t i) { return i >= kBlock && i < kSteps && i % kBlock == 0; }
  static bool ends_block(int64_t i) { return i >= kBlock && i < kSteps && i % kBlock == kBlock - 1; }

  // The wall time of the timed block that ended at step i.
  void record(int64_t i, double seconds) {
    const bool on = overlap_at(i);
    double& best = on ? best_on_ : best_off_;
    best = std::min(best, seconds);
  }
  // After every timed block: overlap on when its fastest block beat off's.
  bool overlap_wins() const { return best_on_ < best_off_; }
  // Each path's fastest block per step, ms.
  double on_ms() const { return 1e3 * best_on_ / double(kBlock); }
  double off_ms() const { return 1e3 * best_off_ / double(kBlock); }

 private:
  static constexpr std::array<bool, kTimedBlocks> kOrder = {true, false, false, true,
                                                            true, false, false, true};
  double best_on_ = std::numeric_limits<double>::infinity();
  double best_off_ = std::numeric_limits<double>::infinity();
};

}  // namespace fdstencil::wave::detail
