// Worker pods made while their partition activates (--vipu-proxy-http-port), on the real node: the simulated
// V-IPU takes 8 s to activate a partition, far longer than the kubelet takes to start a pod, so the workers
// run before their partition is active. Their runtime asks the operator's proxy over HTTP, from the pod's own
// address, until the partition is active, and only then starts the command: a launch across two pods with
// real OpenMPI.
#include <string>
#include <vector>

#include <gmock/gmock.h>

#include "operator_on_real_node.h"

namespace ipu::testing {
namespace {

using ::testing::HasSubstr;

class PodsWhilePartitionActivatesTest : public OperatorOnRealNodeTest {
 protected:
  std::vector<std::string> vipuSimArgs() const override { return {"--activation-delay-ms", "8000"}; }
  bool servesPartitionStatus() const override { return true; }
};

TEST_F(PodsWhilePartitionActivatesTest, TheCommandStartsOnceThePartitionIsActiveNotBefore) {
  const std::string job = createJob(jobRunning("early", Json::array({"python3", "-c", kRankSumAllreduce}),
                                               R"({"workersPerJobInstance": "2"})", debianMpi()));
  // The pods run while V-IPU activates: the job says what it waits for, and is not Running.
  ASSERT_TRUE(eventually(
      [&] {
        const Json status = jobStatus(job);
        return status.value("lastMessage", "").find("Waiting for V-IPU to activate") != std::string::npos;
      },
      60s))
      << jobStatus(job).dump();
  EXPECT_NE(jobStatus(job).value("phase", ""), "Running");
  ASSERT_TRUE(reachesPhase(job, "Succeeded", 180s)) << jobStatus(job).dump();

  const std::string log = kubectl({"logs", job + "-worker-0", "-c", "train"}).out;
  const std::string partition = jobStatus(job)["partitions"][0].value("id", "");
  ASSERT_FALSE(partition.empty()) << jobStatus(job).dump();
  // The proxy answered the pod, known by its own address, about its own partition: pending, then active.
  const auto pending = log.find("waiting for V-IPU partition " + partition + " to be active (PS_PENDING)");
  const auto active = log.find("V-IPU partition " + partition + " is active after ");
  const auto ranks = log.find("rank 0 of 2 sum 3");
  ASSERT_NE(pending, std::string::npos) << log;
  ASSERT_NE(active, std::string::npos) << log;
  ASSERT_NE(ranks, std::string::npos) << log;
  EXPECT_LT(pending, active);
  EXPECT_LT(active, ranks) << "a rank ran before the partition was active";
  EXPECT_EQ(rankLines(job + "-worker-0", 1), std::vector<std::string>{"rank 1 of 2 sum 3"});
  EXPECT_THAT(kubectl({"logs", job + "-worker-1", "-c", "train"}).out,
              HasSubstr("ipu-runtime agent: running for "));
}

}  // namespace
}  // namespace ipu::testing
