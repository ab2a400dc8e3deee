// Binomial checkpointing's counts: revolve.hpp has the formulas and their source.
#include "core/revolve.hpp"

#include <algorithm>
#include <string>

#include "fdstencil/error.hpp"

namespace fdstencil::revolve {

namespace {

// C(s + r, s), saturated far above any count of steps (int64 holds the largest a schedule meets).
int64_t beta(int64_t s, int64_t r) {
  if (r < 0) return 0;
  constexpr int64_t kLarge = int64_t(1) << 60;
  int64_t b = 1;
  for (int64_t i = 1; i <= r; ++i) {
    if (b >= kLarge / (s + i)) return kLarge;
    b = b * (s + i) / i;  // C(s + i, i) = C(s + i - 1, i - 1) (s + i) / i, exact at each step
  }
  return b;
}

// The repetition count: the least r with C(s + r, s) >= steps.
int64_t repetitions(int64_t steps, int64_t slots) {
  int64_t r = 1;
  while (beta(slots, r) < steps) ++r;
  return r;
}

// Memory in MiB, or KiB below 10 MiB, where MiB would round small sizes together.
std::string memory_text(int64_t b) {
  return b < (int64_t(10) << 20) ? std::to_string((b + 1023) >> 10) + " KiB"
                                 : std::to_string((b + (1 << 20) - 1) >> 20) + " MiB";
}

}  // namespace

int64_t forward_steps(int64_t steps, int64_t slots) {
  if (steps <= 1) return 0;
  if (slots <= 1) return steps * (steps - 1) / 2;
  const int64_t r = repetitions(steps, slots);
  return r * steps - beta(slots + 1, r - 1);
}

int64_t split(int64_t steps, int64_t slots) {
  const int64_t r = repetitions(steps, slots);
  return std::clamp<int64_t>(std::min(beta(slots, r - 1), steps - beta(slots - 1, r - 1)), 1, steps - 1);
}

int64_t checkpoint_slots(int64_t nt, int64_t field_bytes, int64_t state_bytes, int64_t budget,
                         int64_t available) {
  const int64_t limit = budget > 0 ? std::min(budget, available) : available;
  if (double(nt + 1) * double(field_bytes) <= double(limit)) return 0;
  const int64_t slots =
      std::min({nt, kMaxSlots, (limit - 3 * field_bytes) / std::max<int64_t>(state_bytes, 1)});
  if (slots >= 1) return slots;
  std::string what = budget > 0 && budget <= available ? "a memory budget of " + memory_text(budget)
                                                       : memory_text(std::max<int64_t>(limit, 0)) + " free";
  what += " holds not even one checkpoint of the forward state (";
  what += memory_text(state_bytes);
  what += ") beside the three fields the adjoint reads (";
  what += memory_text(3 * field_bytes);
  what += "): a larger budget or a smaller model";
  throw Error(ErrorKind::out_of_memory, what);
}

void check_strips(int64_t bytes, int64_t budget, int64_t available) {
  if (budget > 0 && bytes > budget)
    throw Error(ErrorKind::out_of_memory,
                "a memory budget of " + memory_text(budget) +
                    " does not hold the boundary strips and the fields they rebuild (" + memory_text(bytes) +
                    "): a larger budget");
  if (bytes > available)
    throw Error(ErrorKind::out_of_memory, "the boundary strips and the fields they rebuild (" +
                                              memory_text(bytes) + ") do not fit in the " +
                                              memory_text(std::max<int64_t>(available, 0)) + " free");
}

}  // namespace fdstencil::revolve
