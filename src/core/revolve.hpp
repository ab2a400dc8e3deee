// Binomial checkpointing of the backward pass (Griewank's "Revolve", issue 37): the forward states
// kept in a fixed number of slots, and the steps between them run again, as few as that number of
// slots allows, so that the adjoint of nt steps needs memory for `slots` states, not nt fields.
//
// State S_n is what step n starts from (u^n, u^{n-1}, the CPML memory). The adjoint of step n reads
// u^{n+1}, u^n and u^{n-1}. Going backwards, the first two are the last adjoint step's u^n and
// u^{n-1}, so each adjoint step needs only u^{n-1}, which is S_n's: the schedule reaches S_n and
// hands it over, and no step is run twice for the adjoint itself.
//
// forward_steps(l, s) = r l - C(s + r, s + 1), for the r with C(s + r - 1, s) < l <= C(s + r, s), is
// the fewest steps that reverse l steps with s slots, the start's included (Griewank and Walther
// 2000, Algorithm 799). split() takes min(C(s + r - 1, s), l - C(s + r - 2, s - 1)) steps before
// the next checkpoint, a choice that attains that count (tests/core/test_revolve.cpp checks it
// against the minimum over every choice).
#pragma once

#include <cstdint>

namespace fdstencil::revolve {

// The fewest forward steps that reverse `steps` steps from a start kept in one of `slots` slots.
int64_t forward_steps(int64_t steps, int64_t slots);

// Where, counted from the start, the next checkpoint goes when `steps` steps are to be reversed
// with `slots` slots (the start's included; slots >= 2, steps >= 2).
int64_t split(int64_t steps, int64_t slots);

// How the backward pass keeps the forward run within `budget` bytes (0: `available`, the memory
// free): 0 for every step's field (nt + 1 fields of field_bytes, u^0 .. u^nt) where they fit, else
// the count of checkpoint slots of state_bytes each, the most that fit beside the three fields the
// adjoint steps read (u^{n+1}, u^n, u^{n-1}), at most nt. Throws Error(out_of_memory) when not
// even one slot fits.
int64_t checkpoint_slots(int64_t nt, int64_t field_bytes, int64_t state_bytes, int64_t budget,
                         int64_t available);
// Boundary saving's share of the same policy (physics/reversal.hpp): throws Error(out_of_memory)
// where its strips and working fields, `bytes` in all, exceed the budget (0: none) or what is
// available.
void check_strips(int64_t bytes, int64_t budget, int64_t available);
// The most slots checkpoint_slots gives: Schedule recurses once a slot of its first descent, so this
// bounds its stack (a few hundred kilobytes); beyond it, more slots save little (with 4096 slots,
// 8 million steps are reversed running each at most twice).
inline constexpr int64_t kMaxSlots = 4096;

// The forward steps Schedule(nt, slots).run() runs again beyond its sweep's nt, known before it
// runs (a progress report's total): the fewest that reverse nt steps, forward_steps, less the
// sweep's own steps up to the last state it saves, which the schedule's first descent counts in
// the minimum (tests/core/test_revolve.cpp checks it against run()).
inline int64_t steps_again(int64_t nt, int slots) {
  int64_t at = 0, free = slots - 1;
  while (free > 0 && nt - at > 1) {  // the sweep's saves, as Schedule::run places them
    at += split(nt - at, free + 1);
    --free;
  }
  return forward_steps(nt, slots) - at;
}

// The steps a backward pass's two sweeps take in all, each one poll_stop (core/stop.hpp): the
// forward sweep's nt, the adjoint's nt, and with `slots` checkpoint slots (0: every field kept, or
// boundary saving) the steps run again.
inline int64_t sweeps_steps(int64_t nt, int64_t slots) {
  return 2 * nt + (slots > 0 ? steps_again(nt, int(slots)) : 0);
}

// The schedule over a backend B that has:
//   save(slot), load(slot)  the forward state to and from a slot;
//   advance(n)              forward step n (S_n to S_{n+1});
//   end_sweep()             after the first sweep's nt steps: u^nt and u^{nt-1} as the adjoint's
//                           first two fields;
//   prev_from_slot(slot)    u^{n-1} from the slot holding S_n;
//   prev_from_state()       the same from the forward state, which is at S_n;
//   adjoint(n)              the adjoint of step n, then u^n and u^{n-1} become the next one's
//                           u^{n+1} and u^n.
// One sweep of nt steps saves the states the schedule's first descent keeps, then the adjoint
// steps nt - 1 .. 0 run in order. Returns the forward steps run again (beyond the sweep's nt).
template <class B>
class Schedule {
 public:
  Schedule(B& backend, int64_t nt, int slots) : b_(backend), nt_(nt), slots_(slots) {}

  int64_t run() {
    // The sweep: S_0 in slot 0, then each state the first descent would save.
    int64_t at = 0, free = slots_ - 1;
    int slot = 0;
    b_.save(0);
    int64_t next_save = free > 0 && nt_ > 1 ? split(nt_, free + 1) : -1;
    for (int64_t n = 0; n < nt_; ++n) {
      b_.advance(n);
      if (n + 1 == next_save) {
        b_.save(++slot);
        at = n + 1;
        --free;
        next_save = free > 0 && nt_ - at > 1 ? at + split(nt_ - at, free + 1) : -1;
      }
    }
    b_.end_sweep();
    reverse(0, nt_, 0, slots_ - 1, true);
    return again_;
  }

 private:
  B& b_;
  int64_t nt_;
  int slots_;
  int64_t again_ = 0;

  void advance(int64_t from, int64_t to) {
    for (int64_t n = from; n < to; ++n) b_.advance(n);
    again_ += to - from;
  }

  // The adjoint steps b - 1 .. a, with S_a in `slot` and `free` slots above it unused. `first`: the
  // sweep has saved this descent's states already.
  void reverse(int64_t a, int64_t b, int slot, int64_t free, bool first) {
    if (b - a == 1) {
      b_.prev_from_slot(slot);
      b_.adjoint(a);
      return;
    }
    if (free == 0) {
      for (int64_t n = b - 1; n > a; --n) {
        b_.load(slot);
        advance(a, n);
        b_.prev_from_state();
        b_.adjoint(n);
      }
      b_.prev_from_slot(slot);
      b_.adjoint(a);
      return;
    }
    const int64_t m = a + split(b - a, free + 1);
    if (!first) {
      b_.load(slot);
      advance(a, m);
      b_.save(slot + 1);
    }
    reverse(m, b, slot + 1, free - 1, first);
    reverse(a, m, slot, free, false);
  }
};

}  // namespace fdstencil::revolve
