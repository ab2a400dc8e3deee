// cli::DevicePool and cli::InOrder (apps/fdstencil/device_pool.hpp) without a GPU: workers of
// device -1 (none chosen) are threads like a GPU's, so the several-worker path, its error order,
// its interruption and the in-order use of results are checked here in CI.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "device_pool.hpp"
#include "fdstencil/error.hpp"

namespace fdstencil::cli {
namespace {

using namespace std::chrono_literals;

const auto kNever = [] { return false; };

TEST(DevicePool, EveryItemRunsOnceOnOneOfTheWorkers) {
  constexpr size_t kItems = 40;
  DevicePool pool(kItems, kNever, 10ms);
  std::vector<std::atomic<int>> runs(kItems);
  std::vector<std::thread::id> ran_on(kItems);
  const auto worker = [&](int device) {
    EXPECT_EQ(device, -1);
    return [&](size_t i) {
      ++runs[i];
      ran_on[i] = std::this_thread::get_id();
      std::this_thread::sleep_for(std::chrono::microseconds(100 * (i % 3)));
    };
  };
  ASSERT_TRUE(pool.run({-1, -1, -1}, worker));
  for (size_t i = 0; i < kItems; ++i) {
    EXPECT_EQ(runs[i], 1) << i;
    EXPECT_NE(ran_on[i], std::this_thread::get_id()) << "several devices: worker threads, not the caller";
    EXPECT_EQ(pool.device(i), -1);
  }
  // One device: the calling thread is the worker.
  const std::thread::id me = std::this_thread::get_id();
  DevicePool here(3, kNever, 10ms);
  ASSERT_TRUE(
      here.run({-1}, [&](int) { return [&](size_t) { EXPECT_EQ(std::this_thread::get_id(), me); }; }));
  EXPECT_THROW(DevicePool(1, kNever, 10ms).run({}, worker), Error);
}

// Item 5 fails first; item 2, already running, fails after it: the error raised is item 2's, the
// first in the items' order, and the items not yet taken never start.
TEST(DevicePool, TheFirstFailingItemInOrderIsRaisedAndTheRestStop) {
  constexpr size_t kItems = 30;
  DevicePool pool(kItems, kNever, 10ms);
  std::atomic<bool> five_failed{false};
  std::atomic<int> started{0};
  const auto worker = [&](int) {
    return [&](size_t i) {
      ++started;
      if (i > 5) std::this_thread::sleep_for(5ms);  // the later items outlast item 5's failure
      if (i == 5) {
        five_failed = true;
        throw std::runtime_error("item 5");
      }
      if (i == 2) {
        while (!pool.stop_requested()) std::this_thread::sleep_for(1ms);
        throw std::runtime_error("item 2");
      }
      while (i < 5 && !five_failed) std::this_thread::sleep_for(1ms);  // items 0-4 outlast item 5
    };
  };
  try {
    pool.run({-1, -1, -1, -1, -1, -1, -1}, worker);
    FAIL() << "no error raised";
  } catch (const std::runtime_error& e) {
    EXPECT_STREQ(e.what(), "item 2");
  }
  EXPECT_LT(started, int(kItems)) << "every item started despite the failure";
}

// The caller's interruption, asked while the workers run, stops them at their next check.
TEST(DevicePool, AnInterruptionStopsEveryWorker) {
  std::atomic<int> running{0};  // the interruption comes once both workers hold an item
  DevicePool pool(
      4, [&] { return running >= 2; }, 5ms);
  std::atomic<int> stopped{0};
  const auto worker = [&](int) {
    return [&](size_t) {
      ++running;
      const auto give_up = std::chrono::steady_clock::now() + 10s;
      while (!pool.stop_requested() && std::chrono::steady_clock::now() < give_up)
        std::this_thread::sleep_for(1ms);
      if (pool.stop_requested()) ++stopped;
    };
  };
  EXPECT_FALSE(pool.run({-1, -1}, worker));
  EXPECT_EQ(stopped, 2) << "each worker's running item saw the stop; none started another";
  // One device: stop_requested asks the caller's poll itself.
  std::atomic<int> asked{0};
  DevicePool here(
      2, [&] { return ++asked >= 2; }, 1ms);
  EXPECT_FALSE(here.run({-1}, [&](int) {
    return [&](size_t) {
      while (!here.stop_requested()) std::this_thread::sleep_for(1ms);
    };
  }));
}

// Results put out of order are used in order, each once, and no worker runs further ahead of the
// oldest unused item than allowed.
TEST(InOrder, ResultsAreUsedInTheItemsOrderAndWorkersWaitTheirTurn) {
  constexpr size_t kItems = 24, kAhead = 3;
  InOrder<size_t> in_order(kAhead);
  std::vector<size_t> used;
  std::mutex m;
  size_t oldest_unused = 0, widest = 0;
  DevicePool pool(kItems, kNever, 10ms);
  const auto worker = [&](int) {
    return [&](size_t k) {
      ASSERT_TRUE(in_order.wait_turn(k, kNever));
      {
        const std::lock_guard<std::mutex> lock(m);
        widest = std::max(widest, k - oldest_unused);
      }
      std::this_thread::sleep_for(std::chrono::microseconds(k % 4 == 0 ? 3000 : 100));  // ends out of order
      in_order.put(k, k * 10, [&](size_t i, size_t& r) {
        EXPECT_EQ(r, i * 10);
        used.push_back(i);
        const std::lock_guard<std::mutex> lock(m);
        oldest_unused = i + 1;
      });
    };
  };
  ASSERT_TRUE(pool.run({-1, -1, -1, -1}, worker));
  ASSERT_EQ(used.size(), kItems);
  for (size_t i = 0; i < kItems; ++i) EXPECT_EQ(used[i], i);
  EXPECT_LT(widest, kAhead);
}

// A use that throws uses no later result (none twice, none out of turn), and wait_turn then says
// stop; a stop asked while waiting ends the wait.
TEST(InOrder, AFailedUseStopsEveryLaterOne) {
  InOrder<int> in_order(4);
  std::vector<size_t> used;
  const auto use = [&](size_t i, int&) {
    if (i == 1) throw std::runtime_error("disk full");
    used.push_back(i);
  };
  in_order.put(2, 2, use);  // waits for 0 and 1
  in_order.put(0, 0, use);
  EXPECT_THROW(in_order.put(1, 1, use), std::runtime_error);
  in_order.put(3, 3, use);
  EXPECT_EQ(used, std::vector<size_t>({0}));
  EXPECT_FALSE(in_order.wait_turn(4, kNever));
  InOrder<int> waiting(1);
  EXPECT_FALSE(waiting.wait_turn(5, [] { return true; }));
}

}  // namespace
}  // namespace fdstencil::cli
