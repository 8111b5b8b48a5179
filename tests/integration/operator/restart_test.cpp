// restartPolicy: whole-job restarts on reset partitions, bounded by backOffLimit, visible in status and
// Events.
#include "operator_fixture.h"

namespace ipu::testing {
namespace {

using RestartTest = OperatorTest;

TEST_F(RestartTest, OnFailureRestartsOnResetPartitionsUntilTheBackOffLimit) {
  const std::string job =
      createJob(manifestExitingWith(3, "  restartPolicy: {type: OnFailure, backOffLimit: 2}\n", "1s"));
  ASSERT_FALSE(job.empty());
  ASSERT_TRUE(reachesPhase(job, "Failed", 180s));
  const Json status = jobStatus(job);
  EXPECT_EQ(status.value("restartCount", 0), 2) << status.dump();
  EXPECT_NE(status.value("lastMessage", "").find("exit code 3 after 2 restart(s) (backOffLimit 2)"),
            std::string::npos)
      << status.dump();
  EXPECT_EQ(countIf(status["conditions"],
                    [](const Json& c) {
                      return c.value("type", "") == "Failed" &&
                             c.value("reason", "") == "BackoffLimitExceeded";
                    }),
            1)
      << status.dump();

  // One pod per name, of the last attempt; the partition was reset before each new attempt, then released.
  const Json pods = podsOf(job);
  ASSERT_EQ(pods.size(), 1u) << pods.dump();
  EXPECT_EQ(pods[0]["metadata"]["labels"].value("graphcore.ai/attempt", ""), "2");
  const auto reasons = eventReasons(job);
  std::string all;
  for (const auto& reason : reasons) all += reason + " ";
  EXPECT_EQ(std::count(reasons.begin(), reasons.end(), "PartitionReset"), 2) << all;
  EXPECT_NE(std::find(reasons.begin(), reasons.end(), "Restarting"), reasons.end());
  EXPECT_TRUE(eventually([&] { return partitions().empty(); }, 30s));
  EXPECT_EQ(countIf(status["partitions"], [](const Json& p) { return p.value("state", "") == "Released"; }),
            1)
      << "status: " << jobStatus(job).dump();
  EXPECT_NE(sim_->log().find("ResetPartition"), std::string::npos) << "vipu-sim never saw a reset";
}

TEST_F(RestartTest, ExitCodePolicyRestartsOnlyOnTheCodesItLists) {
  const std::string listed = createJob(manifestExitingWith(
      3, "  restartPolicy: {type: ExitCode, exitCodes: \"3-5\", backOffLimit: 1}\n", "1s"));
  const std::string unlisted = createJob(
      manifestExitingWith(3, "  restartPolicy: {type: ExitCode, exitCodes: \"1\", backOffLimit: 1}\n", "1s"));
  ASSERT_TRUE(reachesPhase(listed, "Failed", 180s));
  ASSERT_TRUE(reachesPhase(unlisted, "Failed", 180s));
  EXPECT_EQ(jobStatus(listed).value("restartCount", 0), 1) << jobStatus(listed).dump();
  EXPECT_EQ(jobStatus(unlisted).value("restartCount", 0), 0) << jobStatus(unlisted).dump();
  EXPECT_NE(jobStatus(unlisted).value("lastMessage", "").find("not in restartPolicy.exitCodes"),
            std::string::npos)
      << jobStatus(unlisted).dump();
}

TEST_F(RestartTest, AlwaysRunsACompletedJobAgainThenSucceeds) {
  const std::string job =
      createJob(manifestExitingWith(0, "  restartPolicy: {type: Always, backOffLimit: 1}\n", "1s"));
  ASSERT_TRUE(reachesPhase(job, "Succeeded", 180s));
  EXPECT_EQ(jobStatus(job).value("restartCount", 0), 1) << jobStatus(job).dump();
  EXPECT_EQ(jobStatus(job).value("launcherStatus", ""), "Completed");
}

TEST_F(RestartTest, APartitionRemovedWhileActiveLosesTheAttemptByThePolicy) {
  const std::string restarts =
      createJob(manifestExitingWith(0, "  restartPolicy: {type: OnFailure, backOffLimit: 1}\n", "8s"));
  const std::string never = createJob(manifestExitingWith(0, "", "8s"));
  ASSERT_TRUE(reachesPhase(restarts, "Running", 60s));
  ASSERT_TRUE(reachesPhase(never, "Running", 60s));
  for (const auto& job : {restarts, never}) {
    const std::string id = jobStatus(job)["partitions"][0].value("id", "");
    ASSERT_TRUE(vipu_->removePartition(id, /*force=*/true).ok()) << id;  // behind the operator's back
  }

  // Never: the job fails with the reason, and its pod is stopped.
  ASSERT_TRUE(reachesPhase(never, "Failed", 60s));
  EXPECT_NE(jobStatus(never).value("lastMessage", "").find("was Active and has disappeared"),
            std::string::npos)
      << jobStatus(never).dump();
  const auto neverReasons = eventReasons(never);
  EXPECT_NE(std::find(neverReasons.begin(), neverReasons.end(), "PartitionLost"), neverReasons.end());

  // OnFailure: a new attempt on a partition created again (pods start only on an Active one), which then
  // succeeds.
  ASSERT_TRUE(reachesPhase(restarts, "Succeeded", 120s));
  const Json status = jobStatus(restarts);
  EXPECT_EQ(status.value("restartCount", 0), 1) << status.dump();
  const auto reasons = eventReasons(restarts);
  EXPECT_NE(std::find(reasons.begin(), reasons.end(), "PartitionLost"), reasons.end());
  const Json pods = podsOf(restarts);
  ASSERT_EQ(pods.size(), 1u) << pods.dump();
  EXPECT_EQ(pods[0]["metadata"]["labels"].value("graphcore.ai/attempt", ""), "1");
  EXPECT_TRUE(eventually([&] { return partitions().empty(); }, 30s));
}

}  // namespace
}  // namespace ipu::testing
