#include "ipujob/activation_polls.h"

#include <gtest/gtest.h>

namespace ipu::controllers {
namespace {

using namespace std::chrono_literals;

TEST(ActivationPollsTest, LooksSoonAfterTheFirstFindingThenWaitsHalfTheTimeSinceUpToTheLongest) {
  ActivationPolls polls(500ms);
  const Clock::TimePoint start{};
  EXPECT_EQ(polls.next("ml/bert", start), 50ms);
  EXPECT_EQ(polls.next("ml/bert", start + 50ms), 50ms);
  EXPECT_EQ(polls.next("ml/bert", start + 200ms), 100ms);
  EXPECT_EQ(polls.next("ml/bert", start + 600ms), 300ms);
  EXPECT_EQ(polls.next("ml/bert", start + 5s), 500ms) << "never longer than the longest";
  // Another job's partitions have their own start.
  EXPECT_EQ(polls.next("ml/gpt", start + 5s), 50ms);
}

TEST(ActivationPollsTest, ASettledJobStartsOverWhenItsPartitionsActivateAgain) {
  ActivationPolls polls(500ms);
  const Clock::TimePoint start{};
  polls.next("ml/bert", start);
  EXPECT_EQ(polls.next("ml/bert", start + 2s), 500ms);
  polls.settled("ml/bert");  // active: its pods started
  EXPECT_EQ(polls.tracked(), 0u);
  // Restarted on a partition created again: activating again, looked at soon again.
  EXPECT_EQ(polls.next("ml/bert", start + 60s), 50ms);
}

TEST(ActivationPollsTest, JobsThatNeverCameBackAreDroppedLongAfter) {
  ActivationPolls polls(500ms);
  const Clock::TimePoint start{};
  for (int i = 0; i < 100; ++i) polls.next("ml/gone-" + std::to_string(i), start);
  // Deleted while activating: their passes never come. Long after, new jobs' looks drop them.
  for (int i = 0; i < 100; ++i) polls.next("ml/new-" + std::to_string(i), start + 10min);
  EXPECT_EQ(polls.tracked(), 100u);
}

}  // namespace
}  // namespace ipu::controllers
