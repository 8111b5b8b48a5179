#include "ctrl/work_queue.h"

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <ostream>
#include <random>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include <gtest/gtest.h>

#include "eventually.h"
#include "fake_clock.h"

namespace ipu::ctrl {

// For gtest's messages; found by argument-dependent lookup, so it cannot be in the anonymous namespace.
void PrintTo(const WorkQueue::Depth& d, std::ostream* os) {
  *os << "{queued " << d.queued << ", processing " << d.processing << ", delayed " << d.delayed << "}";
}

namespace {

using namespace std::chrono_literals;
using testing::FakeClock;
using Depth = WorkQueue::Depth;

// Lets other threads get somewhere; see eventually.h.
bool eventually(const std::function<bool()>& condition) {
  return testing::eventually(condition, 30s, 1ms);
}

// get() on its own thread, for the tests where it has to block.
class AsyncGet {
 public:
  explicit AsyncGet(WorkQueue& queue)
      : queue_(queue), thread_([this] {
          result_ = queue_.get();
          finished_ = true;
        }) {}
  AsyncGet(const AsyncGet&) = delete;
  AsyncGet& operator=(const AsyncGet&) = delete;
  // If a test fails early, unblock the thread so the test ends instead of hanging.
  ~AsyncGet() {
    if (!thread_.joinable()) return;
    queue_.shutDown();
    thread_.join();
  }

  bool finished() const { return finished_; }

  // What get() returned, once it has.
  std::optional<std::string> result() {
    if (!eventually([this] { return finished(); })) {
      ADD_FAILURE() << "get() never returned";
      queue_.shutDown();
    }
    thread_.join();
    return result_;
  }

 private:
  WorkQueue& queue_;
  std::optional<std::string> result_;
  std::atomic<bool> finished_ = false;
  std::thread thread_;  // last: starts once the members it uses exist
};

class WorkQueueTest : public ::testing::Test {
 protected:
  FakeClock clock_;
  WorkQueue queue_{clock_};
  const Clock::TimePoint t0_ = clock_.now();
};

TEST_F(WorkQueueTest, HandsOutKeysInOrderOfArrival) {
  queue_.add("ns/a");
  queue_.add("ns/b");
  queue_.add("ns/c");
  EXPECT_EQ(queue_.len(), 3u);
  EXPECT_EQ(queue_.get(), "ns/a");
  EXPECT_EQ(queue_.get(), "ns/b");
  EXPECT_EQ(queue_.depth(), (Depth{.queued = 1, .processing = 2, .delayed = 0}));
  queue_.done("ns/a");
  queue_.done("ns/b");
  EXPECT_EQ(queue_.get(), "ns/c");
  queue_.done("ns/c");
  EXPECT_EQ(queue_.depth(), Depth{});
}

TEST_F(WorkQueueTest, RepeatedAddsMergeIntoOne) {
  queue_.add("ns/a");
  queue_.add("ns/b");
  queue_.add("ns/a");
  queue_.add("ns/a");
  EXPECT_EQ(queue_.len(), 2u);
  EXPECT_EQ(queue_.get(), "ns/a");
  EXPECT_EQ(queue_.get(), "ns/b");
  EXPECT_EQ(queue_.len(), 0u);
}

TEST_F(WorkQueueTest, KeyAddedWhileProcessingRunsAgainOnceAfterDone) {
  queue_.add("ns/a");
  ASSERT_EQ(queue_.get(), "ns/a");

  queue_.add("ns/a");
  queue_.add("ns/a");
  EXPECT_EQ(queue_.len(), 0u) << "not handed out while its first run is in progress";

  AsyncGet second(queue_);  // a second worker must wait, not take ns/a
  ASSERT_TRUE(clock_.waitForWaiters(1));
  EXPECT_FALSE(second.finished());

  queue_.done("ns/a");
  EXPECT_EQ(second.result(), "ns/a");
  EXPECT_EQ(queue_.depth(), (Depth{.queued = 0, .processing = 1, .delayed = 0}));
  queue_.done("ns/a");
  EXPECT_EQ(queue_.depth(), Depth{}) << "the two adds made one re-run";
}

TEST_F(WorkQueueTest, DoneForAKeyNotHandedOutIsIgnored) {
  queue_.add("ns/a");
  queue_.done("ns/a");
  queue_.done("ns/b");
  EXPECT_EQ(queue_.depth(), (Depth{.queued = 1, .processing = 0, .delayed = 0}));
}

TEST_F(WorkQueueTest, AddAfterHoldsTheKeyUntilItsTime) {
  queue_.addAfter("ns/a", 10s);
  EXPECT_EQ(queue_.depth(), (Depth{.queued = 0, .processing = 0, .delayed = 1}));

  clock_.advance(10s - 1ns);
  EXPECT_EQ(queue_.len(), 0u);
  clock_.advance(1ns);
  EXPECT_EQ(queue_.depth(), (Depth{.queued = 1, .processing = 0, .delayed = 0}));
  EXPECT_EQ(queue_.get(), "ns/a");
}

TEST_F(WorkQueueTest, DelayedKeyKeepsTheEarliestTimeAndComesOnce) {
  queue_.addAfter("ns/a", 10s);
  queue_.addAfter("ns/a", 5s);
  queue_.addAfter("ns/a", 20s);
  EXPECT_EQ(queue_.depth().delayed, 1u);

  clock_.advance(5s);
  EXPECT_EQ(queue_.len(), 1u);
  ASSERT_EQ(queue_.get(), "ns/a");
  queue_.done("ns/a");

  clock_.advance(1h);
  EXPECT_EQ(queue_.depth(), Depth{}) << "the later requests were merged, not kept";
}

TEST_F(WorkQueueTest, DelayedKeysComeOutInTimeOrder) {
  queue_.addAfter("ns/c", 3s);
  queue_.addAfter("ns/a", 1s);
  queue_.addAfter("ns/b", 2s);
  clock_.advance(3s);
  EXPECT_EQ(queue_.len(), 3u);
  EXPECT_EQ(queue_.get(), "ns/a");
  EXPECT_EQ(queue_.get(), "ns/b");
  EXPECT_EQ(queue_.get(), "ns/c");
}

TEST_F(WorkQueueTest, NoDelayMeansAddNow) {
  queue_.addAfter("ns/a", 0s);
  queue_.addAfter("ns/b", -1s);
  EXPECT_EQ(queue_.depth(), (Depth{.queued = 2, .processing = 0, .delayed = 0}));
}

TEST_F(WorkQueueTest, DueKeyMergesWithTheSameKeyQueuedOrProcessing) {
  queue_.add("ns/a");
  queue_.addAfter("ns/a", 1s);
  clock_.advance(1s);
  EXPECT_EQ(queue_.len(), 1u);

  ASSERT_EQ(queue_.get(), "ns/a");
  queue_.addAfter("ns/a", 1s);
  clock_.advance(1s);
  EXPECT_EQ(queue_.depth(), (Depth{.queued = 0, .processing = 1, .delayed = 0}));
  queue_.done("ns/a");
  EXPECT_EQ(queue_.len(), 1u) << "due while processing: one re-run after done";
}

TEST_F(WorkQueueTest, GetBlocksUntilAKeyIsAdded) {
  AsyncGet worker(queue_);
  ASSERT_TRUE(clock_.waitForWaiters(1));
  EXPECT_EQ(clock_.nextDeadline(), std::nullopt) << "nothing delayed: no deadline to wait for";
  queue_.add("ns/a");
  EXPECT_EQ(worker.result(), "ns/a");
}

TEST_F(WorkQueueTest, GetSleepsExactlyUntilTheNextDelayedKeyIsDue) {
  queue_.addAfter("ns/a", 10s);
  AsyncGet worker(queue_);
  ASSERT_TRUE(clock_.waitForWaiters(1));
  EXPECT_EQ(clock_.nextDeadline(), t0_ + 10s);

  clock_.advance(10s - 1ns);
  ASSERT_TRUE(clock_.waitForWaiters(1));
  EXPECT_FALSE(worker.finished());

  clock_.advance(1ns);
  EXPECT_EQ(worker.result(), "ns/a");
}

TEST_F(WorkQueueTest, EarlierDelayedKeyShortensABlockedGetWait) {
  queue_.addAfter("ns/late", 10s);
  AsyncGet worker(queue_);
  ASSERT_TRUE(clock_.waitForWaiters(1));
  EXPECT_EQ(clock_.nextDeadline(), t0_ + 10s);

  queue_.addAfter("ns/soon", 1s);
  ASSERT_TRUE(eventually([&] { return clock_.nextDeadline() == t0_ + 1s; }));
  clock_.advance(1s);
  EXPECT_EQ(worker.result(), "ns/soon");
}

TEST_F(WorkQueueTest, KeysDueTogetherGoToSeveralBlockedWorkers) {
  std::vector<std::unique_ptr<AsyncGet>> workers;
  for (int i = 0; i < 3; ++i) workers.push_back(std::make_unique<AsyncGet>(queue_));
  ASSERT_TRUE(clock_.waitForWaiters(3));

  queue_.addAfter("ns/a", 1s);
  queue_.addAfter("ns/b", 1s);
  queue_.addAfter("ns/c", 1s);
  clock_.advance(1s);

  std::vector<std::string> got;
  for (auto& worker : workers) {
    auto key = worker->result();
    ASSERT_TRUE(key.has_value());
    got.push_back(*key);
  }
  std::sort(got.begin(), got.end());
  EXPECT_EQ(got, (std::vector<std::string>{"ns/a", "ns/b", "ns/c"}));
}

TEST_F(WorkQueueTest, ShutDownReleasesEveryBlockedGetAndRefusesNewWork) {
  std::vector<std::unique_ptr<AsyncGet>> workers;
  for (int i = 0; i < 4; ++i) workers.push_back(std::make_unique<AsyncGet>(queue_));
  ASSERT_TRUE(clock_.waitForWaiters(4));

  queue_.shutDown();
  for (auto& worker : workers) EXPECT_EQ(worker->result(), std::nullopt);

  EXPECT_TRUE(queue_.shuttingDown());
  queue_.add("ns/a");
  queue_.addAfter("ns/b", 1s);
  queue_.addRateLimited("ns/c");
  EXPECT_EQ(queue_.depth(), Depth{});
  EXPECT_EQ(queue_.get(), std::nullopt);
}

TEST_F(WorkQueueTest, ShutDownDropsWaitingKeysButLetsInFlightOnesFinish) {
  queue_.add("ns/a");
  queue_.add("ns/b");
  ASSERT_EQ(queue_.get(), "ns/a");
  queue_.add("ns/a");  // dirty: would re-run after done
  queue_.addAfter("ns/c", 1s);

  queue_.shutDown();
  EXPECT_EQ(queue_.get(), std::nullopt);
  EXPECT_EQ(queue_.depth(), (Depth{.queued = 0, .processing = 1, .delayed = 0}));
  queue_.done("ns/a");
  clock_.advance(1s);
  EXPECT_EQ(queue_.depth(), Depth{});
}

TEST_F(WorkQueueTest, ShutDownWithDrainWaitsForEveryKeyInFlight) {
  queue_.add("ns/a");
  queue_.add("ns/b");
  ASSERT_EQ(queue_.get(), "ns/a");
  ASSERT_EQ(queue_.get(), "ns/b");

  std::atomic<bool> drained = false;
  std::thread stopper([&] {
    queue_.shutDownWithDrain();
    drained = true;
  });
  ASSERT_TRUE(eventually([&] { return queue_.shuttingDown(); }));
  EXPECT_EQ(queue_.get(), std::nullopt) << "no new work while draining";

  // Give the stopper a real moment to (wrongly) return; the assertion can only fail on a bug.
  std::this_thread::sleep_for(20ms);
  EXPECT_FALSE(drained);
  queue_.done("ns/a");
  std::this_thread::sleep_for(20ms);
  EXPECT_FALSE(drained);

  queue_.done("ns/b");
  stopper.join();
  EXPECT_TRUE(drained);
}

TEST_F(WorkQueueTest, ShutDownWithDrainWithNothingInFlightReturnsAtOnce) {
  queue_.add("ns/a");
  queue_.shutDownWithDrain();
  EXPECT_TRUE(queue_.shuttingDown());
  EXPECT_EQ(queue_.get(), std::nullopt);
}

TEST(WorkQueueRateLimitTest, AddRateLimitedWaitsAsTheLimiterSaysUntilForgotten) {
  FakeClock clock;
  WorkQueue queue(clock, std::make_unique<ItemExponentialFailureRateLimiter>(1s, 10s));

  queue.addRateLimited("ns/a");
  EXPECT_EQ(queue.numRequeues("ns/a"), 1);
  clock.advance(1s - 1ns);
  EXPECT_EQ(queue.len(), 0u);
  clock.advance(1ns);
  ASSERT_EQ(queue.get(), "ns/a");
  queue.done("ns/a");

  queue.addRateLimited("ns/a");  // failed again: twice as long
  EXPECT_EQ(queue.numRequeues("ns/a"), 2);
  clock.advance(2s - 1ns);
  EXPECT_EQ(queue.len(), 0u);
  clock.advance(1ns);
  ASSERT_EQ(queue.get(), "ns/a");
  queue.done("ns/a");

  queue.forget("ns/a");  // succeeded: back to the first delay
  EXPECT_EQ(queue.numRequeues("ns/a"), 0);
  queue.addRateLimited("ns/a");
  clock.advance(1s);
  EXPECT_EQ(queue.len(), 1u);
}

TEST(WorkQueueRateLimitTest, DefaultLimiterIsTheControllerOne) {
  FakeClock clock;
  WorkQueue queue(clock);
  queue.addRateLimited("ns/a");
  clock.advance(5ms - 1ns);
  EXPECT_EQ(queue.len(), 0u);
  clock.advance(1ns);
  EXPECT_EQ(queue.len(), 1u);
}

TEST(WorkQueueRealClockTest, DelayedKeyArrivesOnTheRealClock) {
  WorkQueue queue;
  queue.addAfter("ns/a", 1ms);
  EXPECT_EQ(queue.get(), "ns/a");  // blocks for about a millisecond of real time
}

// Many workers, producers and keys. Checks the two promises a controller relies on: a key is never
// processed by two workers at once, and every add is followed by a run that started after it.
class WorkQueueStressTest : public ::testing::Test {
 protected:
  static constexpr int kKeys = 32;
  static constexpr int kWorkers = 8;
  static constexpr int kProducers = 4;
  static constexpr int kAddsPerProducer = 3000;

  void SetUp() override {
    for (int i = 0; i < kKeys; ++i) {
      names_.push_back("ns/job-" + std::to_string(i));
      indexOf_.emplace(names_.back(), i);
    }
  }

  void startWorkers(WorkQueue& queue, bool forgetAfterRun) {
    for (int w = 0; w < kWorkers; ++w) {
      workers_.emplace_back([this, &queue, forgetAfterRun] {
        while (auto key = queue.get()) {
          const int i = indexOf_.at(*key);
          if (inFlight_[i].fetch_add(1) != 0) ++overlaps_;
          lastStarted_[i] = sequence_.load();
          // Sometimes re-add the key mid-run, as a handler whose object changed again would.
          if (runs_.fetch_add(1) % 7 == 0) queue.add(*key);
          std::this_thread::yield();
          inFlight_[i].fetch_sub(1);
          if (forgetAfterRun) queue.forget(*key);
          queue.done(*key);
        }
      });
    }
  }

  // Numbers the add and records it as the key's latest before making it.
  const std::string& noteAdd(std::mt19937& random) {
    const int i = static_cast<int>(random() % kKeys);
    const std::uint64_t seq = ++sequence_;
    std::uint64_t previous = lastAdded_[i].load();
    while (previous < seq && !lastAdded_[i].compare_exchange_weak(previous, seq)) {
    }
    return names_[i];
  }

  void waitUntilIdleThenStop(
      WorkQueue& queue, const std::function<void()>& nudge = [] {}) {
    EXPECT_TRUE(eventually([&] {
      nudge();
      return queue.depth() == Depth{};
    }));
    queue.shutDown();
    for (auto& worker : workers_) worker.join();
  }

  void expectPromisesKept() {
    EXPECT_EQ(overlaps_, 0) << "a key was processed by two workers at once";
    for (int i = 0; i < kKeys; ++i) {
      EXPECT_GE(lastStarted_[i].load(), lastAdded_[i].load()) << names_[i] << ": an add was never run";
    }
    EXPECT_GT(runs_, 0);
  }

  std::vector<std::string> names_;
  std::unordered_map<std::string, int> indexOf_;
  std::array<std::atomic<int>, kKeys> inFlight_{};
  std::array<std::atomic<std::uint64_t>, kKeys> lastAdded_{};
  std::array<std::atomic<std::uint64_t>, kKeys> lastStarted_{};
  std::atomic<std::uint64_t> sequence_ = 0;
  std::atomic<int> overlaps_ = 0;
  std::atomic<long> runs_ = 0;
  std::vector<std::thread> workers_;
};

TEST_F(WorkQueueStressTest, ImmediateAdds) {
  FakeClock clock;
  WorkQueue queue(clock);
  startWorkers(queue, /*forgetAfterRun=*/false);

  std::vector<std::thread> producers;
  for (int p = 0; p < kProducers; ++p) {
    producers.emplace_back([this, &queue, p] {
      std::mt19937 random(p);
      for (int n = 0; n < kAddsPerProducer; ++n) {
        queue.add(noteAdd(random));
        std::this_thread::yield();  // let workers interleave instead of finding every add merged
      }
    });
  }
  for (auto& producer : producers) producer.join();

  waitUntilIdleThenStop(queue);
  expectPromisesKept();
}

TEST_F(WorkQueueStressTest, DelayedAndRateLimitedAddsWhileTimeMoves) {
  FakeClock clock;
  WorkQueue queue(clock, std::make_unique<ItemExponentialFailureRateLimiter>(1ms, 50ms));
  startWorkers(queue, /*forgetAfterRun=*/true);

  std::atomic<bool> producing = true;
  std::thread ticker([&] {
    while (producing) {
      clock.advance(1ms);
      std::this_thread::yield();
    }
  });
  std::vector<std::thread> producers;
  for (int p = 0; p < kProducers; ++p) {
    producers.emplace_back([this, &queue, p] {
      std::mt19937 random(100 + p);
      for (int n = 0; n < kAddsPerProducer; ++n) {
        const std::string& key = noteAdd(random);
        switch (random() % 3) {
          case 0:
            queue.add(key);
            break;
          case 1:
            queue.addAfter(key, std::chrono::milliseconds(random() % 20));
            break;
          default:
            queue.addRateLimited(key);
            break;
        }
        std::this_thread::yield();
      }
    });
  }
  for (auto& producer : producers) producer.join();
  producing = false;
  ticker.join();

  waitUntilIdleThenStop(queue, [&] { clock.advance(1s); });
  expectPromisesKept();
}

}  // namespace
}  // namespace ipu::ctrl
