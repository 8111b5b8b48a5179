// Errors that retrying cannot fix end the job, give back what can be given back and stop: a job whose
// partitions are on a V-IPU controller the operator no longer knows, and a deadline that passes while a
// partition never activates.
#include "operator_fixture.h"

namespace ipu::testing {
namespace {

class TerminalErrorTest : public OperatorTest {
 protected:
  bool startsOperatorInSetUp() const override { return false; }

  std::string failureReason(const std::string& job) {
    for (const Json& condition : jobStatus(job).value("conditions", Json::array())) {
      if (condition.value("type", "") == "Failed") return condition.value("reason", "");
    }
    return "";
  }
};

TEST_F(TerminalErrorTest, AJobOnAControllerNoLongerConfiguredFailsLetsGoAndCanBeDeleted) {
  startOperator();
  const std::string job = createJob(readFile(kFourIpuManifest));  // runs until deleted
  ASSERT_TRUE(reachesPhase(job, "Running"));
  const std::string id = jobStatus(job)["partitions"][0].value("id", "");

  // The admin renames the controller in the operator's flags: nothing can reach the job's partition now.
  EXPECT_EQ(operator_->stop(), 0);
  startOperator({"--vipu-controller", "renamed=" + sim_->endpoint()});
  ASSERT_TRUE(reachesPhase(job, "Failed", 60s));
  const Json status = jobStatus(job);
  EXPECT_NE(status.value("lastMessage", "")
                .find("there is no V-IPU controller named 'pod64' (configured: renamed)"),
            std::string::npos)
      << status.dump();
  EXPECT_EQ(failureReason(job), "VipuControllerUnknown");
  EXPECT_TRUE(
      eventually([&] { return jobStatus(job)["partitions"][0].value("state", "") == "Abandoned"; }, 30s))
      << jobStatus(job).dump();
  EXPECT_TRUE(eventually(
      [&] {
        const auto reasons = eventReasons(job);
        return std::find(reasons.begin(), reasons.end(), "PartitionAbandoned") != reasons.end();
      },
      30s));
  // Nobody could remove it, and nobody pretended to.
  EXPECT_TRUE(partition(id).has_value());
  // Deleting the job is not held up by a partition nobody can release.
  auto deleted = kubectl({"delete", "ipujob", job, "--timeout", "30s"});
  EXPECT_TRUE(deleted.ok()) << deleted.describe();

  // Configured again, the controller's orphan sweep removes what the job abandoned.
  EXPECT_EQ(operator_->stop(), 0);
  startOperator();
  EXPECT_TRUE(eventually([&] { return !partition(id).has_value(); }, 30s))
      << "the abandoned partition was never swept";
}

TEST_F(TerminalErrorTest, ActiveDeadlineFiresWhileAPartitionNeverActivates) {
  std::unique_ptr<vipu::testing::SimProcess> stuckSim;
  std::unique_ptr<vipu::VipuClient> stuck;
  startVipuSim("pod16", {"--activation-delay-ms", "3600000"}, stuckSim, stuck);
  ASSERT_FALSE(HasFatalFailure());
  startOperator({"--vipu-controller", "stuck=" + stuckSim->endpoint()});
  const std::string job = createJob(manifestWith(kFourIpuManifest, "", "  activeDeadlineSeconds: 5\n"));
  ASSERT_TRUE(reachesPhase(job, "Failed", 60s)) << jobStatus(job).dump();
  EXPECT_EQ(failureReason(job), "DeadlineExceeded");
  EXPECT_TRUE(eventually(
      [&] {
        auto listed = stuck->listPartitions("");
        return listed && listed->empty();
      },
      30s))
      << "the never-active partition was kept";
  EXPECT_TRUE(podsOf(job).empty());
}

// Worker pods no node can take never start: after --pod-start-timeout-seconds the attempt ends with the
// scheduler's own words and the job (restartPolicy Never) fails, giving its IPUs back.
TEST_F(TerminalErrorTest, PodsThatCannotStartEndTheJobAfterTheStartTimeout) {
  startOperator({"--pod-start-timeout-seconds", "3"});
  std::string manifest = readFile(kFourIpuManifest);
  const std::string anchor = "      spec:\n        containers:\n";
  const auto at = manifest.find(anchor);
  ASSERT_NE(at, std::string::npos);
  manifest.insert(at + std::string("      spec:\n").size(), "        nodeSelector: {disktype: none-such}\n");
  const std::string job = createJob(manifest);
  ASSERT_TRUE(reachesPhase(job, "Failed", 90s));
  const std::string message = jobStatus(job).value("lastMessage", "");
  EXPECT_NE(message.find("could not start within 3 s: Unschedulable: "), std::string::npos) << message;
  EXPECT_EQ(failureReason(job), "WorkerFailed");
  EXPECT_TRUE(eventually([&] { return partitions().empty(); }, 30s)) << "the job kept its partition";
}

// A node that stops answering never confirms the deletion of its pods (the taint manager deletes them after
// their tolerationSeconds; kwok plays the dead kubelet for pods annotated simulate-unresponsive-node): after
// --pod-deletion-timeout-seconds the worker is lost, the partition is reset, the pod force-deleted, and the
// job restarts by its policy.
TEST_F(TerminalErrorTest, APodWhoseNodeStopsAnsweringIsLostAndForceDeletedAfterAReset) {
  startOperator({"--pod-deletion-timeout-seconds", "3"});
  const std::string job = createJob(manifestWith(kFourIpuManifest,
                                                 "ipu-operator.dev/simulate-unresponsive-node: \"true\", "
                                                 "ipu-operator.dev/simulate-exit-code: \"0\", "
                                                 "ipu-operator.dev/simulate-run-duration: \"8s\"",
                                                 "  restartPolicy: {type: OnFailure, backOffLimit: 1}\n"));
  ASSERT_TRUE(reachesPhase(job, "Running", 60s));
  const std::string pod = job + "-worker-0";
  ASSERT_TRUE(kubectl({"delete", "pod", pod, "--grace-period=1", "--wait=false"}).ok());
  ASSERT_TRUE(eventually(
      [&] { return !podsOf(job).empty() && podsOf(job)[0]["metadata"].contains("deletionTimestamp"); }, 10s));

  ASSERT_TRUE(reachesPhase(job, "Succeeded", 90s));
  EXPECT_EQ(jobStatus(job).value("restartCount", 0), 1) << jobStatus(job).dump();
  const auto listed =
      kubectl({"get", "events", "--field-selector", "involvedObject.name=" + job, "-o", "json"});
  ASSERT_TRUE(listed.ok()) << listed.describe();
  std::string lostMessage;
  bool forced = false;
  bool reset = false;
  const Json events = Json::parse(listed.out);
  for (const Json& event : events["items"]) {
    const std::string reason = event.value("reason", "");
    if (reason == "Restarting") lostMessage = event.value("message", "");
    forced = forced || reason == "WorkerPodForceDeleted";
    reset = reset || reason == "PartitionReset";
  }
  EXPECT_NE(lostMessage.find("was lost (still terminating 3 s after its deletion deadline: its node is not "
                             "answering)"),
            std::string::npos)
      << lostMessage;
  EXPECT_TRUE(forced);
  EXPECT_TRUE(reset);
  EXPECT_TRUE(eventually([&] { return partitions().empty(); }, 30s));
  // The new attempt's pod carries the annotation too: nothing but a forced deletion removes it.
  kubectl({"delete", "pods", "--all", "--force", "--grace-period=0"});
}

}  // namespace
}  // namespace ipu::testing
