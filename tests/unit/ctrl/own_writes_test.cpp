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
  writes.wrote("ml/bert", "7");
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
  writes.wrote("ml/bert", "7");
  clock.advance(2min);
  EXPECT_FALSE(writes.behind("ml/bert", "7")) << "a cache a minute behind is beyond this: the pass runs";
  // Objects written and never passed again (deleted) are dropped as the map grows.
  for (int i = 0; i < 100; ++i) writes.wrote("ml/gone-" + std::to_string(i), "1");
  clock.advance(2min);
  for (int i = 0; i < 100; ++i) writes.wrote("ml/new-" + std::to_string(i), "1");
  EXPECT_EQ(writes.tracked(), 100u);
}

TEST(OwnWritesTest, AWriteWithoutAReadVersionIsNotRecorded) {
  ipu::testing::FakeClock clock;
  OwnWrites writes(clock);
  writes.wrote("ml/bert", "");
  EXPECT_FALSE(writes.behind("ml/bert", ""));
}

}  // namespace
}  // namespace ipu::ctrl
