#include "common/token_bucket.h"

#include <atomic>
#include <chrono>
#include <optional>
#include <stdexcept>
#include <stop_token>
#include <thread>

#include <gtest/gtest.h>

#include "fake_clock.h"

namespace ipu {
namespace {

using namespace std::chrono_literals;
using testing::FakeClock;

TEST(TokenBucketTest, RejectsRatesThatCannotWork) {
  FakeClock clock;
  EXPECT_THROW(TokenBucket(0, 1, clock), std::invalid_argument);
  EXPECT_THROW(TokenBucket(-1, 1, clock), std::invalid_argument);
  EXPECT_THROW(TokenBucket(1, 0, clock), std::invalid_argument);
}

TEST(TokenBucketTest, BurstIsFreeThenWaitsQueueUpAtTheRate) {
  FakeClock clock;
  TokenBucket bucket(10, 100, clock);
  for (int i = 0; i < 100; ++i) ASSERT_EQ(bucket.reserve(), 0ns) << "reservation " << i;
  EXPECT_EQ(bucket.reserve(), 100ms);
  EXPECT_EQ(bucket.reserve(), 200ms);
  EXPECT_EQ(bucket.reserve(), 300ms);

  // 100 ms refills one token, which pays off the oldest debt; the next caller still queues behind two.
  clock.advance(100ms);
  EXPECT_EQ(bucket.reserve(), 300ms);
}

TEST(TokenBucketTest, RefillsNoFurtherThanTheBurst) {
  FakeClock clock;
  TokenBucket bucket(10, 5, clock);
  for (int i = 0; i < 5; ++i) ASSERT_EQ(bucket.reserve(), 0ns);
  clock.advance(1h);
  for (int i = 0; i < 5; ++i) ASSERT_EQ(bucket.reserve(), 0ns);
  EXPECT_EQ(bucket.reserve(), 100ms);
}

TEST(TokenBucketTest, FractionalWaitsRoundUp) {
  FakeClock clock;
  TokenBucket bucket(3, 1, clock);
  EXPECT_EQ(bucket.reserve(), 0ns);
  EXPECT_EQ(bucket.reserve(), 333333334ns);  // 1/3 s, never a nanosecond early
}

TEST(TokenBucketTest, TryAcquireTakesOnlyWhatIsThere) {
  FakeClock clock;
  TokenBucket bucket(2, 2, clock);
  EXPECT_TRUE(bucket.tryAcquire());
  EXPECT_TRUE(bucket.tryAcquire());
  EXPECT_FALSE(bucket.tryAcquire());
  clock.advance(499ms);
  EXPECT_FALSE(bucket.tryAcquire());
  clock.advance(1ms);
  EXPECT_TRUE(bucket.tryAcquire());
  EXPECT_FALSE(bucket.tryAcquire());
}

TEST(TokenBucketTest, WaitSleepsOnTheClockUntilTheTokenExists) {
  FakeClock clock;
  TokenBucket bucket(1, 1, clock);
  EXPECT_TRUE(bucket.wait());  // the burst: no sleep

  std::atomic<std::optional<bool>> waited;
  std::thread caller([&] { waited = bucket.wait(); });
  ASSERT_TRUE(clock.waitForWaiters(1));
  EXPECT_EQ(clock.nextDeadline(), FakeClock::kDefaultStart + 1s);
  clock.advance(1s);
  caller.join();
  EXPECT_EQ(waited.load(), std::optional<bool>(true));
}

TEST(TokenBucketTest, StoppedWaitReturnsFalse) {
  FakeClock clock;
  TokenBucket bucket(1, 1, clock);

  std::stop_source stopped;
  stopped.request_stop();
  EXPECT_FALSE(bucket.wait(stopped.get_token()));
  EXPECT_TRUE(bucket.tryAcquire()) << "a wait stopped before it began takes no token";

  std::atomic<std::optional<bool>> waited;
  std::jthread caller([&](std::stop_token stop) { waited = bucket.wait(stop); });
  ASSERT_TRUE(clock.waitForWaiters(1));
  caller.request_stop();
  caller.join();
  EXPECT_EQ(waited.load(), std::optional<bool>(false));
}

}  // namespace
}  // namespace ipu
