// ipu-runtime delivered as an image volume (--runtime-delivery image-volume) on the real node, whose
// containerd (2.x) mounts images as volumes: worker pods have no init container, and everything the runtime
// does from its read-only mount works as it does when copied in: a launch across two pods with real OpenMPI,
// a user's own mpirun reading the launch's hostfile and starting its daemons through the runtime's remote
// start, and `kubectl ipu cp` running the runtime's `files` in a worker container.
#include <string>
#include <vector>

#include <gmock/gmock.h>

#include "kubectl_ipu_plugin.h"
#include "operator_on_real_node.h"

namespace ipu::testing {
namespace {

using ::testing::HasSubstr;

class ImageVolumeDeliveryTest : public OperatorOnRealNodeTest {
 protected:
  std::string runtimeDelivery() const override { return "image-volume"; }

  // The worker pod as the operator made it: no init container, the runtime image as a volume, mounted
  // read-only where the worker container's command runs it from.
  void expectDeliveredByImageVolume(const std::string& pod) {
    const Json spec = getJson("pod", pod)["spec"];
    EXPECT_FALSE(spec.contains("initContainers")) << spec.dump();
    Json image;
    for (const Json& volume : spec["volumes"])
      if (volume.value("name", "") == "ipu-runtime-image") image = volume["image"];
    EXPECT_EQ(image.value("reference", ""), TestCluster::get().value("IPU_CLUSTER_IMAGE_IPU_RUNTIME"))
        << spec.dump();
    EXPECT_EQ(spec["containers"][0]["command"][0], "/opt/ipu-runtime-image/ipu-runtime");
  }
};

TEST_F(ImageVolumeDeliveryTest, TwoWorkerPodsRunARealAllreduceFromTheMountedRuntimeImage) {
  const std::string job = createJob(jobRunning("mounted", Json::array({"python3", "-c", kRankSumAllreduce}),
                                               R"({"workersPerJobInstance": "2"})", debianMpi()));
  ASSERT_TRUE(reachesPhase(job, "Succeeded", 180s)) << jobStatus(job).dump();
  expectDeliveredByImageVolume(job + "-worker-0");
  expectDeliveredByImageVolume(job + "-worker-1");
  EXPECT_EQ(rankLines(job + "-worker-0", 0), std::vector<std::string>{"rank 0 of 2 sum 3"});
  EXPECT_EQ(rankLines(job + "-worker-0", 1), std::vector<std::string>{"rank 1 of 2 sum 3"});
  EXPECT_THAT(kubectl({"logs", job + "-worker-1", "-c", "train"}).out,
              HasSubstr("ipu-runtime agent: running for "));
}

TEST_F(ImageVolumeDeliveryTest, AUsersOwnMpirunReadsTheHostfileAndStartsItsDaemonsThroughTheRuntime) {
  const std::string job = createJob(jobRunning(
      "own-mpirun", Json::array({"mpirun", "--tag-output", "-np", "2", "python3", "-c", kRankSumAllreduce}),
      R"({"workersPerJobInstance": "2"})", debianMpi()));
  ASSERT_TRUE(reachesPhase(job, "Succeeded", 240s)) << jobStatus(job).dump();
  expectDeliveredByImageVolume(job + "-worker-0");
  EXPECT_EQ(rankLines(job + "-worker-0", 0), std::vector<std::string>{"rank 0 of 2 sum 3"});
  EXPECT_EQ(rankLines(job + "-worker-0", 1), std::vector<std::string>{"rank 1 of 2 sum 3"});
}

TEST_F(ImageVolumeDeliveryTest, KubectlIpuCpRunsTheMountedRuntimeInTheWorker) {
  const std::string image = TestCluster::get().value("IPU_CLUSTER_IMAGE_BUSYBOX_NOTAR");
  ASSERT_FALSE(image.empty()) << "the e2e cluster has no busybox-notar image";
  const std::string script =
      "mkdir -p /work && seq 1 30000 > /work/execution.txt && sha256sum /work/execution.txt && exec sleep "
      "3600";
  ASSERT_EQ(createJob(jobRunning("copied", Json::array({"sh", "-c", script}), "", image)), "copied");
  ASSERT_TRUE(reachesPhase("copied", "Running", 120s)) << jobStatus("copied").dump();
  std::string digest;
  ASSERT_TRUE(eventually(
      [&] {
        const auto logs = kubectl({"logs", "copied-worker-0", "-c", "train"});
        digest = logs.ok() ? logs.out.substr(0, logs.out.find(' ')) : "";
        return digest.size() == 64;
      },
      60s));
  expectDeliveredByImageVolume("copied-worker-0");
  const std::string destination = directory_ + "/copied";
  const auto copied = kubectlIpu({"cp", "-n", ns(), "copied:/work", destination});
  ASSERT_TRUE(copied.ok()) << copied.describe();
  const auto here = run({"sha256sum", destination + "/execution.txt"});
  ASSERT_TRUE(here.ok()) << here.describe();
  EXPECT_EQ(here.out.substr(0, here.out.find(' ')), digest);
}

}  // namespace
}  // namespace ipu::testing
