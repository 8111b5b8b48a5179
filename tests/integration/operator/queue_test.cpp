// Admission by capacity and queue order: a job waits, with its reason and position, until its whole gang
// fits; higher priority goes first.
#include "operator_fixture.h"

namespace ipu::testing {
namespace {

using QueueTest = OperatorTest;

TEST_F(QueueTest, SixtyFourIpuJobWaitsForTheFourIpuJobThenRuns) {
  // The 4-IPU job runs for a while and ends; the 64-IPU manifest is the user's, unchanged.
  const std::string small = createJob(manifestExitingWith(0, "", "8s"));
  ASSERT_TRUE(reachesPhase(small, "Running"));
  const std::string big = createJob(readFile(kSixtyFourIpuManifest));
  ASSERT_FALSE(big.empty());

  ASSERT_TRUE(reachesPhase(big, "Queued", 30s));
  Json status = jobStatus(big);
  EXPECT_EQ(status.value("queuePosition", 0), 1) << status.dump();
  EXPECT_NE(status.value("lastMessage", "").find("Waiting for capacity (position 1 in the queue)"),
            std::string::npos)
      << status.dump();
  EXPECT_EQ(countIf(status["conditions"],
                    [](const Json& c) {
                      return c.value("type", "") == "Admitted" && c.value("status", "") == "False" &&
                             c.value("reason", "") == "InsufficientCapacity";
                    }),
            1)
      << status.dump();
  const auto printed = kubectl({"get", "ipujob", big});
  EXPECT_NE(printed.out.find("Waiting for capacity"), std::string::npos) << printed.out;

  ASSERT_TRUE(reachesPhase(small, "Succeeded"));
  ASSERT_TRUE(reachesPhase(big, "Running"));
  status = jobStatus(big);
  EXPECT_FALSE(status.contains("queuePosition")) << status.dump();
  ASSERT_EQ(status["partitions"].size(), 1u);
  EXPECT_EQ(status["partitions"][0].value("size", 0), 64);
  EXPECT_EQ(status.value("selector", ""), "graphcore.ai/ipujob=" + big);

  // The user already asked for hostIPC, IPC_LOCK and /dev/shm: each is there exactly once.
  const Json pod = getJson("pod", big + "-worker-0");
  ASSERT_TRUE(pod.is_object());
  const Json& container = pod["spec"]["containers"][0];
  EXPECT_EQ(countIf(container["securityContext"]["capabilities"]["add"],
                    [](const Json& c) { return c == "IPC_LOCK"; }),
            1);
  EXPECT_EQ(countIf(container["volumeMounts"],
                    [](const Json& m) { return m.value("mountPath", "") == "/dev/shm"; }),
            1);
  EXPECT_EQ(countIf(pod["spec"]["volumes"], [](const Json& v) { return v.value("name", "") == "devshm"; }),
            1);
  EXPECT_EQ(pod["spec"]["nodeSelector"].value("ipu.graphcore.ai/vipu-controller", ""), "pod64");
}

TEST_F(QueueTest, HigherPriorityJobsAreFirstInLine) {
  const std::string big = createJob(readFile(kSixtyFourIpuManifest));
  ASSERT_TRUE(reachesPhase(big, "Running"));
  const std::string normal = createJob(manifestWith(kFourIpuManifest, "", "  priority: 0\n"));
  ASSERT_TRUE(reachesPhase(normal, "Queued", 30s));
  const std::string urgent = createJob(manifestWith(kFourIpuManifest, "", "  priority: 10\n"));
  ASSERT_TRUE(reachesPhase(urgent, "Queued", 30s));

  EXPECT_TRUE(eventually([&] { return jobStatus(urgent).value("queuePosition", 0) == 1; }, 30s))
      << jobStatus(urgent).dump();
  EXPECT_TRUE(eventually([&] { return jobStatus(normal).value("queuePosition", 0) == 2; }, 30s))
      << "the older, lower-priority job moves back: " << jobStatus(normal).dump();

  ASSERT_TRUE(kubectl({"delete", "ipujob", big, "--wait=false"}).ok());
  EXPECT_TRUE(reachesPhase(urgent, "Running"));
  EXPECT_TRUE(reachesPhase(normal, "Running"));
}

}  // namespace
}  // namespace ipu::testing
