#include "ctrl/own_writes.h"

#include <gtest/gtest.h>

#include "fake_clock.h"

namespace ipu::ctrl {
namespace {

using namespace std::chrono_literals;

TEST(OwnWritesTest, ACacheStillAtTheReplacedVersionIsBehindUntilANewerOneIsSeen) {
  ipu::testing::FakeClock clock;
  OwnWrites writes(clock);
  EXPECT_FALSE(writes.behind("ml/bert", "7")) << "nothing written";
  writes.wrote("ml/bert", "7", "8");
  EXPECT_TRUE(writes.behind("ml/bert", "7"));
  EXPECT_TRUE(writes.behind("ml/bert", "7")) << "still behind until the write's event comes";
  EXPECT_FALSE(writes.behind("ml/other", "7"));
  EXPECT_FALSE(writes.behind("ml/bert", "8"));
  EXPECT_EQ(writes.tracked(), 0u);
  EXPECT_FALSE(writes.behind("ml/bert", "7"));
}

TEST(OwnWritesTest, AnOldEntryNoLongerHoldsPassesBackAndIsDropped) {
  ipu::testing::FakeClock clock;
  OwnWrites writes(clock, 1min);
  writes.wrote("ml/bert", "7", "8");
  clock.advance(2min);
  EXPECT_FALSE(writes.behind("ml/bert", "7")) << "a cache a minute behind is beyond this: the pass runs";
  // Objects written and never passed again (deleted) are dropped as the map grows.
  for (int i = 0; i < 100; ++i) writes.wrote("ml/gone-" + std::to_string(i), "1", "2");
  clock.advance(2min);
  for (int i = 0; i < 100; ++i) writes.wrote("ml/new-" + std::to_string(i), "1", "2");
  EXPECT_EQ(writes.tracked(), 100u);
}

TEST(OwnWritesTest, AWriteWithoutAReadVersionIsNotRecorded) {
  ipu::testing::FakeClock clock;
  OwnWrites writes(clock);
  writes.wrote("ml/bert", "", "8");
  EXPECT_FALSE(writes.behind("ml/bert", ""));
}

// A patch that changes nothing (the object already as patched) leaves the version it read, and no event
// follows it: passes on that version must run, not wait for an event that never comes.
TEST(OwnWritesTest, AWriteThatChangedNothingIsNotWaitedFor) {
  ipu::testing::FakeClock clock;
  OwnWrites writes(clock);
  writes.wrote("ml/bert", "7", "8");
  writes.wrote("ml/bert", "8", "8");
  EXPECT_FALSE(writes.behind("ml/bert", "8"));
  EXPECT_EQ(writes.tracked(), 0u);
  writes.wrote("ml/bert", "8", "");
  EXPECT_FALSE(writes.behind("ml/bert", "8")) << "an answer without a version says nothing";
}

}  // namespace
}  // namespace ipu::ctrl
