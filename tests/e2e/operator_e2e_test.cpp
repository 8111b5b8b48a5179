// ipu-operator with real containers: an IPUJob's worker runs on the real node (kubelet + containerd + runc),
// sees the partition the operator made for it, and `kubectl logs <job>-worker-0` shows what it printed; a
// failing worker restarts the job by its restartPolicy with the exit code from the real process. The operator
// injects ipu-runtime: single workers run under `exec` (termination message in the job's status), and jobs
// whose instances span several pods start every rank with real OpenMPI through the runtime's launch.
#include <sstream>
#include <string>
#include <vector>

#include <gmock/gmock.h>

#include "operator_on_real_node.h"

namespace ipu::testing {
namespace {

// A busybox worker running `script` with sh -c.
std::string jobOnRealNode(const std::string& name, const std::string& script,
                          const std::string& specLines = "") {
  return jobRunning(name, Json::array({"sh", "-c", script}), specLines);
}

// Each rank's allreduce of rank+1 and what poprun would have told it.
const char* kAllreduce =
    "import os; from mpi4py import MPI; c = MPI.COMM_WORLD; "
    "print('rank %d of %d sum %d offset %s total %s partition %s' % (c.Get_rank(), c.Get_size(), "
    "c.allreduce(c.Get_rank() + 1), os.environ['POPDIST_REPLICA_INDEX_OFFSET'], "
    "os.environ['POPDIST_NUM_TOTAL_REPLICAS'], os.environ['IPUOF_VIPU_API_PARTITION_ID']))";

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

  const auto logs = kubectl({"logs", job + "-worker-0", "-c", "train"});
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
  // The program's output and the runtime's line saying how it ended (on stderr). The container runtime reads
  // stdout and stderr through separate pipes, so the two lines may reach the log in either order; the
  // duration is the real one (0.0 s on a quiet node, more under load).
  std::istringstream log(kubectl({"logs", job + "-worker-0", "-c", "train"}).out);
  std::vector<std::string> lines;
  for (std::string line; std::getline(log, line);) lines.push_back(line);
  EXPECT_THAT(lines,
              ::testing::UnorderedElementsAre(
                  "attempt", ::testing::MatchesRegex("ipu-runtime exec: instance 0 \\(flaky-worker-0\\): sh "
                                                     "-c 'echo attempt; exit 3' exited with code 3 after "
                                                     "[0-9]+\\.[0-9] s")));
  // The runtime's termination message names the instance and the command.
  EXPECT_NE(status.value("lastMessage", "")
                .find(": instance 0 (flaky-worker-0): sh -c 'echo attempt; exit 3' "
                      "exited with code 3 after "),
            std::string::npos)
      << status.dump();
  EXPECT_TRUE(eventually([&] { return partitions().empty(); }, 30s));
}

TEST_F(OperatorOnRealNodeTest, TwoWorkerPodsOfOneInstanceRunARealAllreduce) {
  const std::string job = createJob(jobRunning("allreduce", Json::array({"python3", "-c", kAllreduce}),
                                               R"({"workersPerJobInstance": "2"})", debianMpi()));
  ASSERT_TRUE(reachesPhase(job, "Succeeded", 180s));
  const std::string partition = jobStatus(job)["partitions"][0].value("id", "");
  EXPECT_EQ(rankLines(job + "-worker-0", 0),
            std::vector<std::string>{"rank 0 of 2 sum 3 offset 0 total 2 partition " + partition});
  EXPECT_EQ(rankLines(job + "-worker-0", 1),
            std::vector<std::string>{"rank 1 of 2 sum 3 offset 1 total 2 partition " + partition});
  const auto peerLog = kubectl({"logs", job + "-worker-1", "-c", "train"});
  EXPECT_NE(peerLog.out.find("ipu-runtime agent: running for "), std::string::npos) << peerLog.out;
  EXPECT_NE(peerLog.out.find("instance 0 (allreduce-worker-0): mpirun succeeded after "), std::string::npos)
      << peerLog.out;
  // OpenMPI kept to the pod's interface that routes to its peer (its only one besides lo, on this node).
  const auto launchLog = kubectl({"logs", job + "-worker-0", "-c", "train"});
  EXPECT_NE(launchLog.out.find("MPI over eth0, which routes to the peers (OMPI_MCA_btl_tcp_if_include, "
                               "OMPI_MCA_oob_tcp_if_include"),
            std::string::npos)
      << launchLog.out;
  // No fabric device in these pods: OpenMPI's cm layer left out, Debian's own exclusion of ucx kept.
  EXPECT_NE(launchLog.out.find("OpenMPI without its cm messaging layer (OMPI_MCA_pml=^ucx,cm)"),
            std::string::npos)
      << launchLog.out;
}

// A name with a leading digit and dots, too long for a hostname or a Service: the pods keep the names users
// type, and the peers still find each other through the derived hostnames and Service in real DNS.
TEST_F(OperatorOnRealNodeTest, WorkersOfAJobWithALongDottedNameStillFindEachOther) {
  const std::string name = "7.team.bert-large.pretraining.phase-one.sequence-length-128.run-42";
  ASSERT_GT(name.size(), 63u);
  const std::string job = createJob(jobRunning(name, Json::array({"python3", "-c", kAllreduce}),
                                               R"({"workersPerJobInstance": "2"})", debianMpi()));
  ASSERT_EQ(job, name);
  ASSERT_TRUE(reachesPhase(job, "Succeeded", 180s));
  const std::string partition = jobStatus(job)["partitions"][0].value("id", "");
  EXPECT_EQ(rankLines(job + "-worker-0", 1),
            std::vector<std::string>{"rank 1 of 2 sum 3 offset 1 total 2 partition " + partition});
}

// A user's init container that fails: its exit code is what the ExitCode policy reads, and its message
// reaches lastMessage, naming it.
TEST_F(OperatorOnRealNodeTest, AFailingInitContainersExitCodeDrivesTheExitCodePolicy) {
  Json job = Json::parse(
      jobRunning("initfails", Json::array({"sh", "-c", "echo never runs"}),
                 R"({"restartPolicy": {"type": "ExitCode", "exitCodes": "3", "backOffLimit": 1}})"));
  job["spec"]["workers"]["template"]["spec"]["initContainers"] = Json::array(
      {{{"name", "fetch-data"},
        {"image", TestCluster::get().value("IPU_CLUSTER_IMAGE_BUSYBOX")},
        {"imagePullPolicy", "Never"},
        {"command", Json::array({"sh", "-c", "echo no dataset > /dev/termination-log; exit 3"})}}});
  const std::string name = createJob(job.dump());
  ASSERT_TRUE(reachesPhase(name, "Failed", 180s));
  const Json status = jobStatus(name);
  EXPECT_EQ(status.value("restartCount", 0), 1) << status.dump();
  const std::string message = status.value("lastMessage", "");
  EXPECT_NE(message.find("failed with exit code 3 after 1 restart(s)"), std::string::npos) << message;
  EXPECT_NE(message.find("init container fetch-data: no dataset"), std::string::npos) << message;
  EXPECT_TRUE(eventually([&] { return partitions().empty(); }, 30s));
}

TEST_F(OperatorOnRealNodeTest, EachInstanceRunsTheUsersLauncherOnItsOwnPartition) {
  const std::string launcher = R"({"jobInstances": 2, "workersPerJobInstance": "2", "launcher": {"command":
      ["mpirun", "--tag-output", "-np", "2", "python3", "-c", ")" +
                               std::string(kAllreduce) + R"("]}})";
  const std::string job = createJob(jobRunning("launcher", Json::array({"true"}), launcher, debianMpi()));
  ASSERT_TRUE(reachesPhase(job, "Succeeded", 240s));
  const Json status = jobStatus(job);
  ASSERT_EQ(status["partitions"].size(), 2u) << status.dump();
  for (int instance = 0; instance < 2; ++instance) {
    const std::string partition = status["partitions"][instance].value("id", "");
    const std::string first = job + "-worker-" + std::to_string(2 * instance);
    EXPECT_EQ(rankLines(first, 0),
              std::vector<std::string>{"rank 0 of 2 sum 3 offset 0 total 2 partition " + partition})
        << first;
    EXPECT_EQ(rankLines(first, 1),
              std::vector<std::string>{"rank 1 of 2 sum 3 offset 1 total 2 partition " + partition})
        << first;
  }
  EXPECT_NE(status["partitions"][0].value("id", ""), status["partitions"][1].value("id", ""));
}

TEST_F(OperatorOnRealNodeTest, ARankExitingWithThreeFailsTheJobByItsRestartPolicy) {
  const std::string job = createJob(jobRunning(
      "rank-fails",
      Json::array({"sh", "-c", "echo rank $OMPI_COMM_WORLD_RANK; [ $OMPI_COMM_WORLD_RANK != 1 ] || exit 3"}),
      R"({"workersPerJobInstance": "2", "restartPolicy": {"type": "ExitCode", "exitCodes": "1", "backOffLimit": 2}})",
      debianMpi()));
  ASSERT_TRUE(reachesPhase(job, "Failed", 180s));
  const Json status = jobStatus(job);
  EXPECT_EQ(status.value("restartCount", 0), 0) << "3 is not in exitCodes: no restart. " << status.dump();
  const std::string message = status.value("lastMessage", "");
  // Whichever worker of the instance the operator sees fail first, the message is the launch's.
  EXPECT_NE(message.find("failed with exit code 3, which is not in restartPolicy.exitCodes: instance 0 "
                         "(rank-fails-worker-0): mpirun exited with code 3"),
            std::string::npos)
      << status.dump();
  EXPECT_TRUE(eventually([&] { return partitions().empty(); }, 30s));
}

}  // namespace
}  // namespace ipu::testing
