#include "ctrl/batch_window.h"

#include <gtest/gtest.h>

namespace ipu::ctrl {
namespace {

using namespace std::chrono_literals;

TEST(BatchWindowTest, AKeysFirstChangeGoesAtOnceAndTheNextOnesWaitForItsWindowToEnd) {
  BatchWindow window(1s);
  const Clock::TimePoint start{};
  EXPECT_EQ(window.holdFor("ns/job", start), Clock::Duration::zero());
  EXPECT_EQ(window.holdFor("ns/job", start + 100ms), 900ms);
  EXPECT_EQ(window.holdFor("ns/job", start + 999ms), 1ms);
  // Another key has a window of its own.
  EXPECT_EQ(window.holdFor("ns/other", start + 500ms), Clock::Duration::zero());
  // Once the window has ended, the next change goes at once again and opens the next window.
  EXPECT_EQ(window.holdFor("ns/job", start + 1s), Clock::Duration::zero());
  EXPECT_EQ(window.holdFor("ns/job", start + 1500ms), 500ms);
}

TEST(BatchWindowTest, EndedWindowsAreDroppedSoMemoryFollowsTheKeysChangingNow) {
  BatchWindow window(1s);
  const Clock::TimePoint start{};
  for (int i = 0; i < 1000; ++i) window.holdFor("ns/job-" + std::to_string(i), start);
  EXPECT_EQ(window.openWindows(), 1000u);
  // Two seconds later every one of those windows has ended: the map is pruned when it has doubled since it
  // last was, so the next new keys drop them.
  for (int i = 0; i < 100; ++i) window.holdFor("ns/later-" + std::to_string(i), start + 2s);
  EXPECT_EQ(window.openWindows(), 100u) << "ended windows kept";
  EXPECT_EQ(window.holdFor("ns/job-0", start + 2s), Clock::Duration::zero());
}

}  // namespace
}  // namespace ipu::ctrl
