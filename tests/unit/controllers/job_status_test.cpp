#include "ipujob/job_status.h"

#include <gtest/gtest.h>

namespace ipu::controllers {
namespace {

api::IpuJobStatus inPhase(const std::string& phase, const std::string& reason, const std::string& now,
                          api::IpuJobStatus status = {}) {
  setPhase(status, {phase, reason, "message of " + reason}, 1, now);
  return status;
}

TEST(SetPhaseTest, ARepeatedPhaseGivesTheSameStatus) {
  const auto first = inPhase(kPhaseRunning, "Running", "T1");
  EXPECT_EQ(inPhase(kPhaseRunning, "Running", "T2", first), first);
}

TEST(SetPhaseTest, GraphcoreWordsAndTheMessageGoWithThePhase) {
  const auto status = inPhase(kPhaseSucceeded, "Succeeded", "T1");
  EXPECT_EQ(status.phase, "Succeeded");
  EXPECT_EQ(status.launcherStatus, "Completed");
  EXPECT_EQ(status.lastMessage, "message of Succeeded");
  EXPECT_EQ(status.observedGeneration, 1);
  EXPECT_EQ(inPhase(kPhaseQueued, "WaitingInQueue", "T1").launcherStatus, "Pending");
}

TEST(SetPhaseTest, TerminalPhasesAddTheirOwnCondition) {
  const auto succeeded = inPhase(kPhaseSucceeded, "Succeeded", "T1");
  ASSERT_EQ(succeeded.conditions.size(), 3u);
  EXPECT_EQ(succeeded.conditions[2].type, "Succeeded");
  EXPECT_TRUE(succeeded.conditions[2].isTrue());
  const auto queued = inPhase(kPhaseQueued, "InsufficientCapacity", "T1");
  ASSERT_EQ(queued.conditions.size(), 2u);
  EXPECT_EQ(queued.conditions[0].type, "Admitted");
  EXPECT_FALSE(queued.conditions[0].isTrue());
  EXPECT_EQ(queued.conditions[0].reason, "InsufficientCapacity");
}

TEST(SetPhaseTest, ConditionsKeepTheirTransitionTimeUntilTheyFlip) {
  auto status = inPhase(kPhaseCreating, "Admitted", "T1");
  status = inPhase(kPhaseRunning, "Running", "T2", status);
  EXPECT_EQ(status.condition("Admitted")->lastTransitionTime, "T1");
  EXPECT_EQ(status.condition("Ready")->lastTransitionTime, "T2");
}

TEST(SetPhaseTest, OnlyAWaitingJobKeepsAQueuePosition) {
  api::IpuJobStatus status;
  status.queuePosition = 3;
  EXPECT_EQ(inPhase(kPhaseCreating, "Admitted", "T1", status).queuePosition, std::nullopt);
}

TEST(IsTerminalPhaseTest, OnlySucceededAndFailedAreFinal) {
  EXPECT_TRUE(isTerminalPhase(kPhaseSucceeded));
  EXPECT_TRUE(isTerminalPhase(kPhaseFailed));
  EXPECT_FALSE(isTerminalPhase(kPhaseRunning));
  EXPECT_FALSE(isTerminalPhase(""));
}

TEST(ShapeDriftTest, ComparesTheSpecWithTheRecordedShapeOrThePartitions) {
  api::IpuJobSpec spec;
  spec.jobInstances = 2;
  spec.ipusPerJobInstance = 4;
  spec.workersPerJobInstance = 2;
  api::IpuJobStatus status;
  EXPECT_EQ(shapeDrift(status, spec), std::nullopt) << "nothing held: nothing to compare";
  status.partitions = {{"p0", 0, 4, "pod64", "", "Active"}, {"p1", 1, 4, "pod64", "", "Active"}};
  EXPECT_EQ(shapeDrift(status, spec), std::nullopt);
  status.admittedShape = api::AdmittedShape{2, 4, 2};
  EXPECT_EQ(shapeDrift(status, spec), std::nullopt);
  spec.jobInstances = 1;
  spec.ipusPerJobInstance = 8;
  spec.workersPerJobInstance = 1;
  EXPECT_EQ(shapeDrift(status, spec),
            "jobInstances 2 -> 1, ipusPerJobInstance 4 -> 8, workersPerJobInstance 2 -> 1");
  status.admittedShape.reset();  // an older status: the partitions tell instances and size
  EXPECT_EQ(shapeDrift(status, spec), "jobInstances 2 -> 1, ipusPerJobInstance 4 -> 8");
  for (auto& partition : status.partitions) partition.state = "Released";
  EXPECT_EQ(shapeDrift(status, spec), std::nullopt);
}

}  // namespace
}  // namespace ipu::controllers
