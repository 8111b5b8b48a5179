// ipu-operator end to end: kubectl create of a user's IPUJob -> partition on vipu-sim -> worker pod ->
// Running -> delete -> partition released, pod collected; exit codes; start-up cleanup; a killed leader.
#include "operator_fixture.h"

namespace ipu::testing {
namespace {

TEST_F(OperatorTest, UsersFourIpuJobGetsAPartitionAndARunningWorkerAndReleasesItOnDelete) {
  const std::string job = createJob(readFile(kFourIpuManifest));
  ASSERT_FALSE(job.empty());

  std::string id;
  ASSERT_TRUE(eventually(
      [&] {
        const Json partitions = jobStatus(job).value("partitions", Json::array());
        if (partitions.size() != 1) return false;
        id = partitions[0].value("id", "");
        return !id.empty();
      },
      60s))
      << "status: " << jobStatus(job).dump();

  ASSERT_TRUE(eventually(
      [&] {
        auto current = partition(id);
        return current && current->readyState == vipu::ReadyState::kActive && current->size() == 4;
      },
      60s))
      << "partition " << id << " never became PS_ACTIVE with 4 IPUs";

  const std::string podName = job + "-worker-0";
  ASSERT_TRUE(eventually([&] { return getJson("pod", podName).is_object(); }, 60s)) << "no pod " << podName;
  const auto listed = kubectl({"get", "pods", "-l", "graphcore.ai/ipujob=" + job, "-o", "json"});
  ASSERT_TRUE(listed.ok()) << listed.describe();
  EXPECT_EQ(Json::parse(listed.out)["items"].size(), 1u);

  const Json pod = getJson("pod", podName);
  EXPECT_EQ(pod["spec"].value("hostIPC", false), true);
  const Json& container = pod["spec"]["containers"][0];
  EXPECT_EQ(countIf(container.value("volumeMounts", Json::array()),
                    [](const Json& mount) { return mount.value("mountPath", "") == "/dev/shm"; }),
            1);
  EXPECT_EQ(countIf(container["securityContext"]["capabilities"]["add"],
                    [](const Json& capability) { return capability == "IPC_LOCK"; }),
            1);
  EXPECT_EQ(countIf(container.value("env", Json::array()),
                    [&](const Json& env) {
                      return env.value("name", "") == "IPUOF_VIPU_API_PARTITION_ID" &&
                             env.value("value", "") == id;
                    }),
            1);

  EXPECT_TRUE(eventually([&] { return jobStatus(job).value("phase", "") == "Running"; }, 90s))
      << "status: " << jobStatus(job).dump();
  EXPECT_EQ(jobStatus(job).value("launcherStatus", ""), "Running");

  auto deleted = kubectl({"delete", "ipujob", job, "--wait=false"});
  ASSERT_TRUE(deleted.ok()) << deleted.describe();
  EXPECT_TRUE(eventually([&] { return !partition(id).has_value(); }, 60s))
      << "partition " << id << " not released";
  EXPECT_TRUE(eventually([&] { return getJson("ipujob", job).is_null(); }, 60s))
      << "job kept by its finalizer";
  EXPECT_TRUE(eventually([&] { return getJson("pod", podName).is_null(); }, 90s))
      << "pod not garbage-collected";
}

TEST_F(OperatorTest, WorkerExitingZeroCompletesTheJobAndReleasesItsPartition) {
  const std::string manifest = manifestExitingWith(0);
  ASSERT_FALSE(manifest.empty());
  const std::string job = createJob(manifest);
  ASSERT_FALSE(job.empty());

  ASSERT_TRUE(eventually([&] { return jobStatus(job).value("phase", "") == "Succeeded"; }, 90s))
      << "status: " << jobStatus(job).dump();
  const Json status = jobStatus(job);
  EXPECT_EQ(status.value("launcherStatus", ""), "Completed");
  EXPECT_EQ(status.value("lastMessage", ""), "All instances done");
  EXPECT_TRUE(status.contains("completionTime"));
  ASSERT_EQ(status.value("partitions", Json::array()).size(), 1u);
  const std::string id = status["partitions"][0].value("id", "");
  EXPECT_TRUE(eventually([&] { return !partition(id).has_value(); }, 30s)) << "partition " << id << " kept";
  EXPECT_EQ(countIf(status.value("conditions", Json::array()),
                    [](const Json& condition) {
                      return condition.value("type", "") == "Succeeded" &&
                             condition.value("status", "") == "True";
                    }),
            1);
}

TEST_F(OperatorTest, WorkerExitingNonZeroFailsTheJobWithItsExitCode) {
  const std::string job = createJob(manifestExitingWith(3));
  ASSERT_FALSE(job.empty());

  ASSERT_TRUE(eventually([&] { return jobStatus(job).value("phase", "") == "Failed"; }, 90s))
      << "status: " << jobStatus(job).dump();
  const Json status = jobStatus(job);
  EXPECT_EQ(status.value("launcherStatus", ""), "Failed");
  EXPECT_NE(status.value("lastMessage", "").find("exit code 3"), std::string::npos) << status.dump();
  const std::string id = status["partitions"][0].value("id", "");
  EXPECT_TRUE(eventually([&] { return !partition(id).has_value(); }, 30s)) << "partition " << id << " kept";
}

TEST_F(OperatorTest, StartUpRemovesPartitionsNoJobHolds) {
  // What a killed operator can leave: a partition with an operator-derived id whose job is gone. Stop the
  // operator once it leads (before that it may not have installed its signal handling yet).
  ASSERT_TRUE(eventually(
      [&] {
        const Json lease = getJson("lease", "ipu-operator");
        return lease.is_object() && !lease["spec"].value("holderIdentity", "").empty();
      },
      30s));
  ASSERT_EQ(operator_->stop(), 0);
  // As the operator derives it with its default prefix, this cluster's (kept within the 63-character limit).
  const std::string orphan = defaultPartitionId("gone");
  vipu::PartitionRequest request;
  request.id = orphan;
  request.size = 2;
  auto created = vipu_->createPartition(request);
  ASSERT_TRUE(created.ok()) << created.error().message;
  vipu::PartitionRequest foreign;
  foreign.id = "someone-elses";
  foreign.size = 1;
  ASSERT_TRUE(vipu_->createPartition(foreign).ok());
  // Another Kubernetes cluster sharing this V-IPU controller, with its own --partition-id-prefix.
  vipu::PartitionRequest otherCluster;
  otherCluster.id = "lab_" + vipu::derivePartitionId(ns(), "gone", 0, vipu::kMaxPartitionIdLength - 4);
  otherCluster.size = 1;
  ASSERT_TRUE(vipu_->createPartition(otherCluster).ok());
  // Another cluster still on a version whose default prefix was the shared "k8s".
  vipu::PartitionRequest legacy;
  legacy.id = controllers::partitionIdFor("k8s", ns(), "gone", 0);
  legacy.size = 1;
  ASSERT_TRUE(vipu_->createPartition(legacy).ok());

  startOperator();
  EXPECT_TRUE(eventually([&] { return !partition(orphan).has_value(); }, 60s))
      << "orphan " << orphan << " kept";
  EXPECT_TRUE(partition("someone-elses").has_value()) << "a partition the operator did not name was removed";
  EXPECT_TRUE(partition(otherCluster.id).has_value()) << "another installation's partition was removed";
  EXPECT_TRUE(partition(legacy.id).has_value())
      << "a partition under the former shared default prefix was swept: it may be another cluster's";
}

TEST_F(OperatorTest, AKilledOperatorsSuccessorConvergesWithoutDuplicates) {
  const std::string job = createJob(readFile(kFourIpuManifest));
  ASSERT_FALSE(job.empty());
  ASSERT_TRUE(eventually([&] { return jobStatus(job).value("phase", "") == "Running"; }, 90s))
      << "status: " << jobStatus(job).dump();
  const std::string id = jobStatus(job)["partitions"][0].value("id", "");

  // SIGKILL: no lease release, no cleanup. The successor waits out the lease, then must find everything in
  // place.
  ::kill(operator_->pid(), SIGKILL);
  EXPECT_EQ(operator_->stop(), 128 + SIGKILL);
  startOperator();
  ASSERT_TRUE(eventually(
      [&] {
        const Json lease = getJson("lease", "ipu-operator");
        return lease.is_object() && lease["spec"].value("leaseTransitions", 0) >= 1;
      },
      60s))
      << "the successor never took the lease";
  // The successor has run its start-up cleanup and reconciled the job (its debug log says so), so whatever
  // it would duplicate or remove is done by now.
  ASSERT_TRUE(eventually(
      [&] {
        return operator_->stderrText().find("\"msg\":\"reconciled\",\"controller\":\"ipujob\",\"key\":\"" +
                                            ns() + "/" + job + "\"") != std::string::npos;
      },
      60s))
      << "the successor never reconciled the job";

  auto partitions = vipu_->listPartitions("");
  ASSERT_TRUE(partitions.ok());
  EXPECT_EQ(partitions->size(), 1u);
  EXPECT_TRUE(partition(id).has_value()) << "the start-up cleanup removed a partition its job holds";
  const auto listed = kubectl({"get", "pods", "-l", "graphcore.ai/ipujob=" + job, "-o", "json"});
  ASSERT_TRUE(listed.ok()) << listed.describe();
  EXPECT_EQ(Json::parse(listed.out)["items"].size(), 1u);
  EXPECT_EQ(jobStatus(job).value("phase", ""), "Running");
}

// With ipu-runtime injected, both users' manifests still run unchanged on the simulated nodes: their command
// is wrapped word for word, and nothing of the runtime stands between them and Running.
class OperatorWithRuntimeTest : public OperatorTest {
 protected:
  bool startsOperatorInSetUp() const override { return false; }
  void SetUp() override {
    OperatorTest::SetUp();
    if (HasFatalFailure()) return;
    startOperator({"--runtime-image", "registry.example/ipu-runtime:test"});
  }
};

TEST_F(OperatorWithRuntimeTest, UsersManifestsRunUnchangedWithTheirCommandWrapped) {
  for (const char* manifest : {kFourIpuManifest, kSixtyFourIpuManifest}) {
    const std::string job = createJob(readFile(manifest));
    ASSERT_TRUE(reachesPhase(job, "Running", 90s)) << manifest;
    const Json pod = getJson("pod", job + "-worker-0");
    const Json& container = pod["spec"]["containers"][0];
    ASSERT_EQ(container["command"][0], "/opt/ipu-runtime/ipu-runtime") << container.dump();
    EXPECT_EQ(container["command"][1], "exec");
    EXPECT_EQ(container["command"][3], "/bin/bash") << "the user's own command follows '--'";
    EXPECT_FALSE(container.contains("args"));
    EXPECT_EQ(pod["spec"]["initContainers"][0]["image"], "registry.example/ipu-runtime:test");
    const auto secrets = kubectl({"get", "secrets", "-o", "name"});
    EXPECT_EQ(secrets.out.find("-ipu-runtime"), std::string::npos)
        << "one worker per instance needs no Secret";
    kubectl({"delete", "ipujob", job, "--wait=true", "--timeout", "60s"});
  }
}

}  // namespace
}  // namespace ipu::testing
