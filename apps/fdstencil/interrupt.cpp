// The interrupt handlers (interrupt.hpp). A handler may only touch lock-free
// atomics and call async-signal-safe functions: it records the signal, says
// once on stderr (write(2)) what happens next, and on a second signal re-raises
// it with the default action.
#include "interrupt.hpp"

#include <unistd.h>

#include <atomic>
#include <csignal>
#include <cstring>

namespace fdstencil::cli {

namespace {

std::atomic<int> g_signal{0};
static_assert(std::atomic<int>::is_always_lock_free, "a signal handler may only use lock-free atomics");

struct sigaction g_old_int, g_old_term;
const char* g_what_next = "";  // set before the handlers are installed, with its length
size_t g_what_next_length = 0;

void on_signal(int sig) {
  int none = 0;
  if (!g_signal.compare_exchange_strong(none, sig)) {
    std::signal(sig, SIG_DFL);  // the second: the user means it
    std::raise(sig);
    return;
  }
  constexpr const char kHead[] = "\nfdstencil: interrupted: ", kTail[] = " (again to abort)\n";
  [[maybe_unused]] ssize_t w = ::write(STDERR_FILENO, kHead, sizeof kHead - 1);
  w = ::write(STDERR_FILENO, g_what_next, g_what_next_length);
  w = ::write(STDERR_FILENO, kTail, sizeof kTail - 1);
}

}  // namespace

InterruptGuard::InterruptGuard(const char* what_next) {
  g_what_next = what_next ? what_next : "stopping at the next time step and writing a checkpoint";
  g_what_next_length = std::strlen(g_what_next);
  g_signal.store(0);
  struct sigaction sa;
  std::memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESTART;  // reads and writes in flight continue rather than
                             // fail with EINTR
  sigaction(SIGINT, &sa, &g_old_int);
  sigaction(SIGTERM, &sa, &g_old_term);
}

InterruptGuard::~InterruptGuard() {
  sigaction(SIGINT, &g_old_int, nullptr);
  sigaction(SIGTERM, &g_old_term, nullptr);
}

bool InterruptGuard::requested() { return g_signal.load(std::memory_order_relaxed) != 0; }
int InterruptGuard::signal() { return g_signal.load(); }
const char* InterruptGuard::name() {
  const int s = g_signal.load();
  return s == SIGINT ? "SIGINT" : s == SIGTERM ? "SIGTERM" : "a signal";
}

}  // namespace fdstencil::cli
