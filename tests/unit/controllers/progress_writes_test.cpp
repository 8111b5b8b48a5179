#include "ipujob/progress_writes.h"

#include <gtest/gtest.h>

#include "fake_clock.h"

namespace ipu::controllers {
namespace {

using namespace std::chrono_literals;

TEST(ProgressWritesTest, ProgressWaitsThePeriodFromWhenItWasFirstFoundUnwritten) {
  testing::FakeClock clock;
  ProgressWrites writes(clock, 1s);
  EXPECT_EQ(writes.holdFor("ml/a"), 1s);
  clock.advance(300ms);
  EXPECT_EQ(writes.holdFor("ml/a"), 700ms) << "a later pass does not start the wait again";
  EXPECT_EQ(writes.holdFor("ml/b"), 1s) << "each job waits on its own";
  clock.advance(700ms);
  EXPECT_EQ(writes.holdFor("ml/a"), Clock::Duration::zero());
}

TEST(ProgressWritesTest, AWriteEndsTheWaitAndTheNextProgressWaitsAgain) {
  testing::FakeClock clock;
  ProgressWrites writes(clock, 1s);
  EXPECT_EQ(writes.holdFor("ml/a"), 1s);
  clock.advance(200ms);
  writes.written("ml/a");  // a phase change, written at once
  clock.advance(200ms);
  EXPECT_EQ(writes.holdFor("ml/a"), 1s);
}

TEST(ProgressWritesTest, AZeroPeriodHoldsNothing) {
  testing::FakeClock clock;
  ProgressWrites writes(clock, Clock::Duration::zero());
  EXPECT_EQ(writes.holdFor("ml/a"), Clock::Duration::zero());
}

TEST(ProgressWritesTest, MemoryIsBoundedAndAForgottenWaitStartsAgain) {
  testing::FakeClock clock;
  ProgressWrites writes(clock, 1s, /*jobsRemembered=*/2);
  writes.holdFor("ml/a");
  writes.holdFor("ml/b");
  clock.advance(500ms);
  writes.holdFor("ml/c");  // "ml/a" makes room
  EXPECT_EQ(writes.holdFor("ml/b"), 500ms);
  EXPECT_EQ(writes.holdFor("ml/a"), 1s) << "forgotten: it waits at most one period more";
}

}  // namespace
}  // namespace ipu::controllers
