#include "common/clock.h"

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <stop_token>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "eventually.h"
#include "fake_clock.h"

namespace ipu {
namespace {

using namespace std::chrono_literals;
using testing::FakeClock;

// Lets other threads get somewhere; see eventually.h.
bool eventually(const std::function<bool()>& condition) {
  return testing::eventually(condition, 30s, 1ms);
}

TEST(DeadlineAfterTest, AddsClampsNegativeAndSaturates) {
  const Clock::TimePoint start(10s);
  EXPECT_EQ(deadlineAfter(start, 5s), start + 5s);
  EXPECT_EQ(deadlineAfter(start, -5s), start);
  EXPECT_EQ(deadlineAfter(start, Clock::Duration::max()), Clock::TimePoint::max());
  EXPECT_EQ(deadlineAfter(Clock::TimePoint::max() - 1ns, 2ns), Clock::TimePoint::max());
}

TEST(SteadyClockTest, RealIsOneSteadyClock) {
  Clock& real = Clock::real();
  EXPECT_EQ(&real, &Clock::real());
  EXPECT_NE(dynamic_cast<SteadyClock*>(&real), nullptr);
  const auto first = real.now();
  EXPECT_LE(first, real.now());
}

TEST(SteadyClockTest, SleepsThatNeedNoTimeReturnTrue) {
  EXPECT_TRUE(Clock::real().sleepFor(0ns));
  EXPECT_TRUE(Clock::real().sleepFor(-1s));
  EXPECT_TRUE(Clock::real().sleepUntil(Clock::real().now() - 1s));
}

TEST(SteadyClockTest, StoppedSleepReturnsFalse) {
  std::stop_source stop;
  stop.request_stop();
  EXPECT_FALSE(Clock::real().sleepFor(1h, stop.get_token()));

  std::atomic<std::optional<bool>> slept;
  std::jthread sleeper([&](std::stop_token token) { slept = Clock::real().sleepFor(1h, token); });
  sleeper.request_stop();  // before or during the sleep: either way it ends early
  sleeper.join();
  EXPECT_EQ(slept.load(), std::optional<bool>(false));
}

TEST(SteadyClockTest, WaitUntilReturnsWhenNotified) {
  std::mutex mutex;
  std::condition_variable_any cv;
  bool waiting = false;
  bool ready = false;
  std::thread waiter([&] {
    std::unique_lock lock(mutex);
    waiting = true;
    while (!ready) Clock::real().waitUntil(lock, cv, Clock::TimePoint::max(), {});
  });
  ASSERT_TRUE(eventually([&] {
    std::lock_guard lock(mutex);
    return waiting;
  }));
  {
    std::lock_guard lock(mutex);
    ready = true;
  }
  cv.notify_all();
  waiter.join();
}

TEST(SteadyClockTest, WaitUntilReturnsAtTheDeadline) {
  std::mutex mutex;
  std::condition_variable_any cv;
  std::unique_lock lock(mutex);
  const auto deadline = Clock::real().now() + 1ms;
  while (Clock::real().now() < deadline) Clock::real().waitUntil(lock, cv, deadline, {});
  EXPECT_TRUE(lock.owns_lock());
}

TEST(FakeClockTest, StartsAtFixedTimesAndMovesOnlyWhenTold) {
  FakeClock clock;
  EXPECT_EQ(clock.now(), FakeClock::kDefaultStart);
  EXPECT_EQ(clock.wallNow(), FakeClock::kDefaultWallStart);
  EXPECT_EQ(clock.now(), FakeClock::kDefaultStart);

  clock.advance(1500ms);
  EXPECT_EQ(clock.now(), FakeClock::kDefaultStart + 1500ms);
  EXPECT_EQ(clock.wallNow(), FakeClock::kDefaultWallStart + 1500ms);

  clock.set(FakeClock::kDefaultStart + 10s);
  EXPECT_EQ(clock.now(), FakeClock::kDefaultStart + 10s);
  EXPECT_EQ(clock.wallNow(), FakeClock::kDefaultWallStart + 10s);
}

TEST(FakeClockTest, MonotonicTimeNeverGoesBack) {
  FakeClock clock;
  EXPECT_THROW(clock.advance(-1ns), std::invalid_argument);
  EXPECT_THROW(clock.set(clock.now() - 1ns), std::invalid_argument);
  EXPECT_EQ(clock.now(), FakeClock::kDefaultStart);
}

TEST(FakeClockTest, WallTimeCanJumpAlone) {
  FakeClock clock;
  const Clock::WallTime earlier = FakeClock::kDefaultWallStart - 1h;
  clock.setWall(earlier);
  EXPECT_EQ(clock.wallNow(), earlier);
  EXPECT_EQ(clock.now(), FakeClock::kDefaultStart);
  clock.advance(1s);
  EXPECT_EQ(clock.wallNow(), earlier + 1s);
}

TEST(FakeClockTest, SleepsThatNeedNoTimeDoNotBlock) {
  FakeClock clock;
  EXPECT_TRUE(clock.sleepFor(0ns));
  EXPECT_TRUE(clock.sleepUntil(clock.now()));
  EXPECT_EQ(clock.waiters(), 0u);
}

TEST(FakeClockTest, SleepEndsExactlyWhenTimeReachesItsDeadline) {
  FakeClock clock;
  std::atomic<bool> finished = false;
  std::thread sleeper([&] {
    EXPECT_TRUE(clock.sleepFor(10s));
    finished = true;
  });
  ASSERT_TRUE(clock.waitForWaiters(1));
  EXPECT_EQ(clock.nextDeadline(), FakeClock::kDefaultStart + 10s);

  clock.advance(10s - 1ns);
  EXPECT_FALSE(finished);
  ASSERT_TRUE(clock.waitForWaiters(1));  // still (or again, after a spurious wake-up) asleep

  clock.advance(1ns);
  sleeper.join();
  EXPECT_TRUE(finished);
  EXPECT_EQ(clock.waiters(), 0u);
  EXPECT_EQ(clock.nextDeadline(), std::nullopt);
}

TEST(FakeClockTest, SetWakesSleepersLikeAdvance) {
  FakeClock clock;
  std::thread sleeper([&] { EXPECT_TRUE(clock.sleepFor(1h)); });
  ASSERT_TRUE(clock.waitForWaiters(1));
  clock.set(FakeClock::kDefaultStart + 2h);
  sleeper.join();
}

TEST(FakeClockTest, SleepersWakeInDeadlineOrder) {
  FakeClock clock;
  std::atomic<int> woken = 0;
  std::vector<std::thread> sleepers;
  for (auto d : {3s, 1s, 2s}) {
    sleepers.emplace_back([&clock, &woken, d] {
      EXPECT_TRUE(clock.sleepFor(d));
      EXPECT_GE(clock.now(), FakeClock::kDefaultStart + d);
      ++woken;
    });
  }
  ASSERT_TRUE(clock.waitForWaiters(3));
  EXPECT_EQ(clock.nextDeadline(), FakeClock::kDefaultStart + 1s);

  clock.advance(1s);
  ASSERT_TRUE(eventually([&] { return woken == 1; }));
  EXPECT_EQ(clock.nextDeadline(), FakeClock::kDefaultStart + 2s);

  clock.advance(1s);
  ASSERT_TRUE(eventually([&] { return woken == 2; }));
  EXPECT_EQ(clock.nextDeadline(), FakeClock::kDefaultStart + 3s);

  clock.advance(1s);
  for (auto& sleeper : sleepers) sleeper.join();
  EXPECT_EQ(woken, 3);
}

TEST(FakeClockTest, StopEndsASleepWithoutMovingTime) {
  FakeClock clock;
  std::atomic<std::optional<bool>> slept;
  std::jthread sleeper([&](std::stop_token stop) { slept = clock.sleepFor(1h, stop); });
  ASSERT_TRUE(clock.waitForWaiters(1));
  sleeper.request_stop();
  sleeper.join();
  EXPECT_EQ(slept.load(), std::optional<bool>(false));
  EXPECT_EQ(clock.now(), FakeClock::kDefaultStart);
  EXPECT_EQ(clock.waiters(), 0u);
}

TEST(FakeClockTest, WaitUntilAlsoReturnsWhenNotified) {
  FakeClock clock;
  std::mutex mutex;
  std::condition_variable_any cv;
  bool ready = false;
  std::thread waiter([&] {
    std::unique_lock lock(mutex);
    while (!ready) clock.waitUntil(lock, cv, Clock::TimePoint::max(), {});
  });
  ASSERT_TRUE(clock.waitForWaiters(1));
  EXPECT_EQ(clock.nextDeadline(), std::nullopt);  // "no deadline" is not a deadline
  {
    std::lock_guard lock(mutex);
    ready = true;
  }
  cv.notify_all();
  waiter.join();
  EXPECT_EQ(clock.now(), FakeClock::kDefaultStart);
}

TEST(FakeClockTest, WaitUntilPastDeadlineReturnsAtOnce) {
  FakeClock clock;
  std::mutex mutex;
  std::condition_variable_any cv;
  std::unique_lock lock(mutex);
  clock.waitUntil(lock, cv, clock.now(), {});
  EXPECT_TRUE(lock.owns_lock());
  EXPECT_EQ(clock.waiters(), 0u);
}

// The handshake behind every deterministic timing test: once waitForWaiters() has seen a thread block,
// an advance() must wake it. Repeated many times to catch a lost wake-up, which shows as a round that
// never completes.
TEST(FakeClockTest, AdvanceNeverMissesABlockedSleeper) {
  FakeClock clock;
  constexpr int kRounds = 2000;
  std::atomic<int> completed = 0;
  std::thread sleeper([&] {
    for (int i = 1; i <= kRounds; ++i) {
      EXPECT_TRUE(clock.sleepUntil(FakeClock::kDefaultStart + i * 1ms));
      ++completed;
    }
  });
  const auto giveUp = std::chrono::steady_clock::now() + 60s;
  int missedRound = 0;
  for (int i = 1; i <= kRounds && missedRound == 0; ++i) {
    if (!clock.waitForWaiters(1)) missedRound = i;
    clock.advance(1ms);
    while (missedRound == 0 && completed < i) {
      if (std::chrono::steady_clock::now() > giveUp) missedRound = i;
      std::this_thread::yield();
    }
  }
  if (missedRound != 0) clock.set(FakeClock::kDefaultStart + kRounds * 1ms);  // release it, to join
  sleeper.join();
  EXPECT_EQ(missedRound, 0) << "the sleeper missed the advance of this round";
  EXPECT_EQ(clock.now(), FakeClock::kDefaultStart + kRounds * 1ms);
}

}  // namespace
}  // namespace ipu
