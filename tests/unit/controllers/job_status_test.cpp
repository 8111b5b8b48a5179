#include "ipujob/job_status.h"

#include <gtest/gtest.h>

namespace ipu::controllers {
namespace {

TEST(SetConditionTest, AddsAMissingConditionWithTheTimeOfTheChange) {
  const Json conditions = setCondition(nullptr, {"Ready", true, "Running", "all pods run", 3}, "T1");
  ASSERT_EQ(conditions.size(), 1u);
  EXPECT_EQ(conditions[0]["type"], "Ready");
  EXPECT_EQ(conditions[0]["status"], "True");
  EXPECT_EQ(conditions[0]["reason"], "Running");
  EXPECT_EQ(conditions[0]["message"], "all pods run");
  EXPECT_EQ(conditions[0]["observedGeneration"], 3);
  EXPECT_EQ(conditions[0]["lastTransitionTime"], "T1");
}

TEST(SetConditionTest, KeepsTheTransitionTimeWhileTheStatusStaysTheSame) {
  const Json first = setCondition(Json::array(), {"Ready", false, "PodsStarting", "0 of 1", 1}, "T1");
  const Json same = setCondition(first, {"Ready", false, "PodsStarting", "still 0 of 1", 2}, "T2");
  EXPECT_EQ(same[0]["lastTransitionTime"], "T1");
  EXPECT_EQ(same[0]["message"], "still 0 of 1");
  EXPECT_EQ(same[0]["observedGeneration"], 2);
  const Json flipped = setCondition(same, {"Ready", true, "Running", "1 of 1", 2}, "T3");
  EXPECT_EQ(flipped[0]["lastTransitionTime"], "T3");
}

TEST(SetConditionTest, LeavesOtherConditionsAlone) {
  Json conditions = setCondition(nullptr, {"Admitted", true, "Admitted", "ok", 1}, "T1");
  conditions = setCondition(conditions, {"Ready", true, "Running", "ok", 1}, "T2");
  ASSERT_EQ(conditions.size(), 2u);
  EXPECT_EQ(conditions[0]["type"], "Admitted");
  EXPECT_EQ(conditions[0]["lastTransitionTime"], "T1");
}

TEST(ConditionsForPhaseTest, ARepeatedPhaseGivesTheSameConditions) {
  const Json first = conditionsForPhase(nullptr, kPhaseRunning, "Running", "ok", 1, "T1");
  EXPECT_EQ(conditionsForPhase(first, kPhaseRunning, "Running", "ok", 1, "T2"), first);
}

TEST(ConditionsForPhaseTest, TerminalPhasesAddTheirOwnCondition) {
  const Json succeeded = conditionsForPhase(nullptr, kPhaseSucceeded, "Succeeded", "done", 1, "T1");
  ASSERT_EQ(succeeded.size(), 3u);
  EXPECT_EQ(succeeded[2]["type"], "Succeeded");
  EXPECT_EQ(succeeded[2]["status"], "True");
  const Json queued = conditionsForPhase(nullptr, kPhaseQueued, "InsufficientCapacity", "wait", 1, "T1");
  ASSERT_EQ(queued.size(), 2u);
  EXPECT_EQ(queued[0]["type"], "Admitted");
  EXPECT_EQ(queued[0]["status"], "False");
  EXPECT_EQ(queued[0]["reason"], "InsufficientCapacity");
}

TEST(IsTerminalPhaseTest, OnlySucceededAndFailedAreFinal) {
  EXPECT_TRUE(isTerminalPhase(kPhaseSucceeded));
  EXPECT_TRUE(isTerminalPhase(kPhaseFailed));
  EXPECT_FALSE(isTerminalPhase(kPhaseRunning));
  EXPECT_FALSE(isTerminalPhase(""));
}

}  // namespace
}  // namespace ipu::controllers
