// ipu-operator with real containers: an IPUJob's worker runs on the real node (kubelet + containerd + runc),
// sees the partition the operator made for it, and `kubectl logs <job>-worker-0` shows what it printed; a
// failing worker restarts the job by its restartPolicy with the exit code from the real process.
#include "operator_fixture.h"

namespace ipu::testing {
namespace {

// An IPUJob whose single worker runs `script` in busybox on the real node: the template selects the node and
// tolerates its taint, as a user targets their IPU hosts.
std::string jobOnRealNode(const std::string& name, const std::string& script,
                          const std::string& specLines = "") {
  const Json container = {{"name", "train"},
                          {"image", TestCluster::get().value("IPU_CLUSTER_IMAGE_BUSYBOX")},
                          {"imagePullPolicy", "Never"},
                          {"command", {"sh", "-c", script}}};
  const Json podSpec = {
      {"nodeSelector", {{"ipu-operator.dev/real-node", "true"}}},
      {"tolerations",
       Json::array(
           {{{"key", "ipu-operator.dev/real-node"}, {"operator", "Exists"}, {"effect", "NoSchedule"}}})},
      {"terminationGracePeriodSeconds", 1},
      {"containers", Json::array({container})}};
  Json job = {
      {"apiVersion", "graphcore.ai/v1alpha1"},
      {"kind", "IPUJob"},
      {"metadata", {{"name", name}}},
      {"spec",
       {{"jobInstances", 1}, {"ipusPerJobInstance", "4"}, {"workers", {{"template", {{"spec", podSpec}}}}}}}};
  if (!specLines.empty()) job["spec"].update(Json::parse(specLines));
  return job.dump();
}

class OperatorOnRealNodeTest : public OperatorTest {};

TEST_F(OperatorOnRealNodeTest, WorkerSeesItsPartitionAndKubectlLogsShowsItsOutput) {
  const std::string job = createJob(jobOnRealNode("hello",
                                                  "echo \"partition=$IPUOF_VIPU_API_PARTITION_ID\"; echo "
                                                  "\"ipus-per-replica=$POPDIST_NUM_IPUS_PER_REPLICA\"; "
                                                  "grep -c ' /dev/shm tmpfs ' /proc/mounts"));
  ASSERT_EQ(job, "hello");
  ASSERT_TRUE(reachesPhase(job, "Succeeded", 120s));
  const Json status = jobStatus(job);
  const std::string partition = status["partitions"][0].value("id", "");
  EXPECT_EQ(status.value("lastMessage", ""), "All instances done");

  const auto logs = kubectl({"logs", job + "-worker-0"});
  ASSERT_TRUE(logs.ok()) << logs.describe();
  EXPECT_EQ(logs.out, "partition=" + partition + "\nipus-per-replica=4\n1\n");
  EXPECT_EQ(getJson("pod", job + "-worker-0")["spec"].value("nodeName", ""),
            TestCluster::get().value("IPU_CLUSTER_REAL_NODE"));
  EXPECT_TRUE(eventually([&] { return partitions().empty(); }, 30s)) << "partition not released";
}

TEST_F(OperatorOnRealNodeTest, ARealFailureRestartsTheJobThenFailsItWithTheExitCode) {
  const std::string job = createJob(jobOnRealNode(
      "flaky", "echo attempt; exit 3", R"({"restartPolicy": {"type": "OnFailure", "backOffLimit": 1}})"));
  ASSERT_TRUE(reachesPhase(job, "Failed", 180s));
  const Json status = jobStatus(job);
  EXPECT_EQ(status.value("restartCount", 0), 1) << status.dump();
  EXPECT_NE(status.value("lastMessage", "").find("failed with exit code 3 after 1 restart(s)"),
            std::string::npos)
      << status.dump();
  const Json pods = podsOf(job);
  ASSERT_EQ(pods.size(), 1u) << pods.dump();
  EXPECT_EQ(pods[0]["metadata"]["labels"].value("graphcore.ai/attempt", ""), "1");
  EXPECT_EQ(kubectl({"logs", job + "-worker-0"}).out, "attempt\n");
  EXPECT_TRUE(eventually([&] { return partitions().empty(); }, 30s));
}

}  // namespace
}  // namespace ipu::testing
