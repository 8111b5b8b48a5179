#include "ipujob/restart_policy.h"

#include <gtest/gtest.h>

namespace ipu::controllers {
namespace {

using State = WorkerOutcome::State;
using Kind = WorkerVerdict::Kind;

api::IpuJobSpec specWith(api::RestartType type, int backOffLimit = 3,
                         std::vector<api::ExitCodeRange> codes = {}) {
  api::IpuJobSpec spec;
  spec.restartType = type;
  spec.backOffLimit = backOffLimit;
  spec.restartExitCodes = std::move(codes);
  return spec;
}

const std::vector<WorkerOutcome> kRunning = {{"j-worker-0", State::kActive, 0, {}},
                                             {"j-worker-1", State::kSucceeded, 0, {}}};
const std::vector<WorkerOutcome> kAllDone = {{"j-worker-0", State::kSucceeded, 0, {}},
                                             {"j-worker-1", State::kSucceeded, 0, {}}};
const std::vector<WorkerOutcome> kExit3 = {{"j-worker-0", State::kActive, 0, {}},
                                           {"j-worker-1", State::kFailed, 3, {}}};
const std::vector<WorkerOutcome> kLost = {{"j-worker-0", State::kLost, 0, "the pod was deleted"}};

TEST(RestartPolicyTest, RunningWorkersContinueAndAllDoneSucceeds) {
  for (auto type : {api::RestartType::kNever, api::RestartType::kOnFailure, api::RestartType::kExitCode}) {
    EXPECT_EQ(judgeWorkers(specWith(type), 0, kRunning).kind, Kind::kContinue);
    const auto done = judgeWorkers(specWith(type), 0, kAllDone);
    EXPECT_EQ(done.kind, Kind::kSucceed);
    EXPECT_EQ(done.message, "All instances done");
  }
  EXPECT_EQ(judgeWorkers(specWith(api::RestartType::kNever), 0, {}).kind, Kind::kContinue);
}

TEST(RestartPolicyTest, NeverFailsOnTheFirstFailureWithItsExitCode) {
  const auto verdict = judgeWorkers(specWith(api::RestartType::kNever), 0, kExit3);
  EXPECT_EQ(verdict.kind, Kind::kFail);
  EXPECT_EQ(verdict.reason, "WorkerFailed");
  EXPECT_EQ(verdict.message, "Worker pod j-worker-1 failed with exit code 3");
}

TEST(RestartPolicyTest, OnFailureRestartsUpToTheBackOffLimitThenFails) {
  const auto spec = specWith(api::RestartType::kOnFailure, 2);
  auto verdict = judgeWorkers(spec, 0, kExit3);
  EXPECT_EQ(verdict.kind, Kind::kRestart);
  EXPECT_NE(verdict.message.find("restart 1 of 2"), std::string::npos) << verdict.message;
  EXPECT_EQ(judgeWorkers(spec, 1, kExit3).kind, Kind::kRestart);
  verdict = judgeWorkers(spec, 2, kExit3);
  EXPECT_EQ(verdict.kind, Kind::kFail);
  EXPECT_EQ(verdict.reason, "BackoffLimitExceeded");
  EXPECT_NE(verdict.message.find("exit code 3 after 2 restart(s) (backOffLimit 2)"), std::string::npos)
      << verdict.message;
  EXPECT_EQ(judgeWorkers(specWith(api::RestartType::kOnFailure, 0), 0, kExit3).kind, Kind::kFail);
}

TEST(RestartPolicyTest, ExitCodeRestartsOnlyOnListedCodesAndLostWorkers) {
  const auto spec = specWith(api::RestartType::kExitCode, 3, {{1, 1}, {3, 5}});
  EXPECT_EQ(judgeWorkers(spec, 0, kExit3).kind, Kind::kRestart);
  const std::vector<WorkerOutcome> exit2 = {{"j-worker-0", State::kFailed, 2, {}}};
  const auto verdict = judgeWorkers(spec, 0, exit2);
  EXPECT_EQ(verdict.kind, Kind::kFail);
  EXPECT_NE(verdict.message.find("not in restartPolicy.exitCodes"), std::string::npos) << verdict.message;
  EXPECT_EQ(judgeWorkers(spec, 0, kLost).kind, Kind::kRestart);
}

TEST(RestartPolicyTest, AlwaysRunsACompletedJobAgainUntilTheLimit) {
  const auto spec = specWith(api::RestartType::kAlways, 1);
  const auto again = judgeWorkers(spec, 0, kAllDone);
  EXPECT_EQ(again.kind, Kind::kRestart);
  EXPECT_EQ(again.reason, "Completed");
  EXPECT_EQ(judgeWorkers(spec, 1, kAllDone).kind, Kind::kSucceed);
  EXPECT_EQ(judgeWorkers(spec, 0, kExit3).kind, Kind::kRestart);
}

TEST(RestartPolicyTest, LostAndEvictedWorkersAreExplained) {
  auto verdict = judgeWorkers(specWith(api::RestartType::kNever), 0, kLost);
  EXPECT_EQ(verdict.reason, "WorkerLost");
  EXPECT_EQ(verdict.message, "Worker pod j-worker-0 was lost (the pod was deleted)");
  verdict = judgeWorkers(specWith(api::RestartType::kNever), 0,
                         {{"j-worker-0", State::kFailed, 0, "Evicted: The node was low on memory."}});
  EXPECT_EQ(verdict.message, "Worker pod j-worker-0 failed (Evicted: The node was low on memory.)");
}

TEST(RestartPolicyTest, ALostAttemptRestartsUnderEveryPolicyButNeverUpToTheLimit) {
  const std::string what = "V-IPU partition p was Active and has disappeared from pod64";
  for (auto type : {api::RestartType::kOnFailure, api::RestartType::kExitCode, api::RestartType::kAlways}) {
    const auto again = judgeLostAttempt(specWith(type, 2, {{9, 9}}), 1, "PartitionLost", what);
    EXPECT_EQ(again.kind, Kind::kRestart);
    EXPECT_EQ(again.reason, "PartitionLost");
    EXPECT_EQ(again.message, what + "; restarting the job (restart 2 of 2)");
    const auto over = judgeLostAttempt(specWith(type, 2), 2, "PartitionLost", what);
    EXPECT_EQ(over.kind, Kind::kFail);
    EXPECT_EQ(over.reason, "BackoffLimitExceeded");
    EXPECT_EQ(over.message, what + " after 2 restart(s) (backOffLimit 2)");
  }
  const auto never = judgeLostAttempt(specWith(api::RestartType::kNever), 0, "PartitionLost", what);
  EXPECT_EQ(never.kind, Kind::kFail);
  EXPECT_EQ(never.reason, "PartitionLost");
  EXPECT_EQ(never.message, what);
}

TEST(RestartPolicyTest, TheFirstFailedWorkerInOrderDecides) {
  const auto spec = specWith(api::RestartType::kExitCode, 3, {{3, 3}});
  const std::vector<WorkerOutcome> both = {{"j-worker-0", State::kFailed, 9, {}},
                                           {"j-worker-1", State::kFailed, 3, {}}};
  EXPECT_EQ(judgeWorkers(spec, 0, both).kind, Kind::kFail);
}

}  // namespace
}  // namespace ipu::controllers
