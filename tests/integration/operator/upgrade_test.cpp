// An upgrade with jobs running: the operator as the previous release built it
// (tools/build-previous-operator.sh, from this repository's history) admits and starts jobs, then stops; the
// current operator adopts them as they are, with nothing re-created, and finishes them: a job that completes,
// and a running job deleted by its user. Their partitions carry the former shared default prefix "k8s"; this
// version's default is the cluster's own, and it still acts on theirs.
#include <filesystem>

#include "operator_fixture.h"

namespace ipu::testing {
namespace {

class UpgradeTest : public OperatorTest {
 protected:
  bool startsOperatorInSetUp() const override { return false; }

  std::string podUid(const std::string& job) {
    const Json pods = podsOf(job);
    return pods.size() == 1 ? pods[0]["metadata"].value("uid", "") : "";
  }
};

TEST_F(UpgradeTest, JobsStartedByThePreviousVersionFinishUnderThisOne) {
  const std::string previous = IPU_PREVIOUS_OPERATOR_DIR "/build/operator/ipu-operator";
  if (const std::string unavailable = readFile(IPU_PREVIOUS_OPERATOR_DIR "/unavailable");
      !unavailable.empty()) {
    GTEST_SKIP() << "no previous operator to upgrade from: " << unavailable;
  }
  ASSERT_TRUE(std::filesystem::exists(previous))
      << previous
      << " was not built: see the upgrade.previous-operator test (tools/build-previous-operator.sh)";
  operatorBinary_ = previous;
  startOperator();
  const std::string finishing = createJob(manifestExitingWith(0, "", "25s"));
  const std::string running = createJob(manifestWith(kFourIpuManifest, ""));
  ASSERT_TRUE(reachesPhase(finishing, "Running"));
  ASSERT_TRUE(reachesPhase(running, "Running"));
  const std::string finishingPod = podUid(finishing);
  const std::string runningPod = podUid(running);
  const std::string finishingPartition = jobStatus(finishing)["partitions"][0].value("id", "");
  ASSERT_FALSE(finishingPod.empty());
  ASSERT_FALSE(runningPod.empty());
  ASSERT_TRUE(partition(finishingPartition).has_value());
  // The previous version's default prefix: the shared "k8s_" before the per-cluster default, "k8s-<uid>_"
  // after.
  ASSERT_TRUE(finishingPartition.starts_with("k8s")) << finishingPartition;

  operatorBinary_ = IPU_OPERATOR_BINARY;
  startOperator();  // stops the previous version (SIGTERM) and starts this one

  ASSERT_TRUE(reachesPhase(finishing, "Succeeded", 90s));
  EXPECT_EQ(podUid(finishing), finishingPod) << "the worker was re-created instead of adopted";
  EXPECT_TRUE(eventually([&] { return !partition(finishingPartition).has_value(); }, 30s))
      << "the finished job's partition was not released";
  EXPECT_EQ(jobStatus(finishing)["partitions"][0].value("state", ""), "Released");

  EXPECT_EQ(phaseOf(running), "Running");
  EXPECT_EQ(podUid(running), runningPod);
  EXPECT_EQ(partitions().size(), 1u) << "one partition, the running job's: nothing duplicated";
  ASSERT_TRUE(kubectl({"delete", "ipujob", running, "--timeout", "60s"}).ok());
  EXPECT_TRUE(eventually([&] { return partitions().empty(); }, 30s));

  // New jobs get this cluster's own prefix (derived from its kube-system namespace's uid).
  const std::string next = createJob(manifestExitingWith(0, "", "1s"));
  ASSERT_TRUE(reachesPhase(next, "Succeeded", 90s));
  const std::string ours = defaultPartitionId("x");
  EXPECT_EQ(jobStatus(next)["partitions"][0].value("id", "").substr(0, ours.find('_') + 1),
            ours.substr(0, ours.find('_') + 1));
  const std::string log = operator_->stderrText();  // this version's
  EXPECT_EQ(log.find("\"level\":\"error\""), std::string::npos) << log;
}

}  // namespace
}  // namespace ipu::testing
