#include "ctrl/rate_limiter.h"

#include <chrono>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "fake_clock.h"

namespace ipu::ctrl {
namespace {

using namespace std::chrono_literals;
using testing::FakeClock;

TEST(ItemExponentialFailureRateLimiterTest, DoublesFromFiveMillisecondsToTheCap) {
  ItemExponentialFailureRateLimiter limiter;
  Clock::Duration expected = 5ms;
  for (int i = 0; i < 18; ++i) {  // 5 ms · 2^17 = 655.36 s, the last step under 1000 s
    ASSERT_EQ(limiter.when("ns/a"), expected) << "requeue " << i;
    expected *= 2;
  }
  EXPECT_EQ(limiter.when("ns/a"), 1000s);
  EXPECT_EQ(limiter.when("ns/a"), 1000s);
  EXPECT_EQ(limiter.numRequeues("ns/a"), 20);
}

TEST(ItemExponentialFailureRateLimiterTest, LongStreaksStayAtTheCap) {
  ItemExponentialFailureRateLimiter limiter(1ms, 4ms);
  EXPECT_EQ(limiter.when("ns/a"), 1ms);
  EXPECT_EQ(limiter.when("ns/a"), 2ms);
  EXPECT_EQ(limiter.when("ns/a"), 4ms);
  for (int i = 0; i < 5000; ++i) ASSERT_EQ(limiter.when("ns/a"), 4ms);  // 2^5000 overflows any integer
}

TEST(ItemExponentialFailureRateLimiterTest, KeysBackOffIndependentlyAndForgetResets) {
  ItemExponentialFailureRateLimiter limiter;
  EXPECT_EQ(limiter.numRequeues("ns/a"), 0);
  limiter.when("ns/a");
  limiter.when("ns/a");
  EXPECT_EQ(limiter.when("ns/b"), 5ms);
  EXPECT_EQ(limiter.numRequeues("ns/a"), 2);
  EXPECT_EQ(limiter.numRequeues("ns/b"), 1);

  limiter.forget("ns/a");
  EXPECT_EQ(limiter.numRequeues("ns/a"), 0);
  EXPECT_EQ(limiter.when("ns/a"), 5ms);
  EXPECT_EQ(limiter.when("ns/b"), 10ms);
}

TEST(BucketRateLimiterTest, TenPerSecondAfterABurstOfHundredAcrossAllKeys) {
  FakeClock clock;
  BucketRateLimiter limiter(clock);
  for (int i = 0; i < 100; ++i) ASSERT_EQ(limiter.when("ns/key-" + std::to_string(i)), 0ns);
  EXPECT_EQ(limiter.when("ns/other"), 100ms);
  EXPECT_EQ(limiter.when("ns/another"), 200ms);
  clock.advance(200ms);
  EXPECT_EQ(limiter.when("ns/other"), 100ms);

  EXPECT_EQ(limiter.numRequeues("ns/other"), 0);
  limiter.forget("ns/other");  // no per-key state to forget
  EXPECT_EQ(limiter.when("ns/other"), 200ms);
}

TEST(MaxOfRateLimiterTest, TakesTheLongestWaitAndForgetsEverywhere) {
  std::vector<RateLimiterPtr> parts;
  parts.push_back(std::make_unique<ItemExponentialFailureRateLimiter>(1ms, 1s));
  parts.push_back(std::make_unique<ItemExponentialFailureRateLimiter>(3ms, 5ms));
  MaxOfRateLimiter limiter(std::move(parts));

  EXPECT_EQ(limiter.when("ns/a"), 3ms);  // max(1, 3)
  EXPECT_EQ(limiter.when("ns/a"), 5ms);  // max(2, 5 capped from 6)
  EXPECT_EQ(limiter.when("ns/a"), 5ms);  // max(4, 5)
  EXPECT_EQ(limiter.when("ns/a"), 8ms);  // max(8, 5)
  EXPECT_EQ(limiter.numRequeues("ns/a"), 4);

  limiter.forget("ns/a");
  EXPECT_EQ(limiter.numRequeues("ns/a"), 0);
  EXPECT_EQ(limiter.when("ns/a"), 3ms);
}

TEST(DefaultControllerRateLimiterTest, PerKeyBackoffUnlessTheOverallBucketIsEmpty) {
  FakeClock clock;
  RateLimiterPtr limiter = makeDefaultControllerRateLimiter(clock);

  // One failing key: its own backoff dominates; the bucket has plenty.
  EXPECT_EQ(limiter->when("ns/a"), 5ms);
  EXPECT_EQ(limiter->when("ns/a"), 10ms);
  EXPECT_EQ(limiter->numRequeues("ns/a"), 2);
  limiter->forget("ns/a");
  EXPECT_EQ(limiter->numRequeues("ns/a"), 0);

  // Many keys failing at once: after the burst of 100 (2 used above), the bucket spaces them 100 ms apart.
  for (int i = 0; i < 98; ++i) ASSERT_EQ(limiter->when("ns/key-" + std::to_string(i)), 5ms);
  EXPECT_EQ(limiter->when("ns/x"), 100ms);
  EXPECT_EQ(limiter->when("ns/y"), 200ms);
}

}  // namespace
}  // namespace ipu::ctrl
