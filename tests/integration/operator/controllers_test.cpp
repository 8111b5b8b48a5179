// Several V-IPU controllers (one per IPU-POD): a job goes to one that fits, or to the one its template pins,
// and its pods run on that POD's nodes.
#include "operator_fixture.h"

namespace ipu::testing {
namespace {

class ControllersTest : public OperatorTest {
 protected:
  bool startsOperatorInSetUp() const override { return false; }

  void SetUp() override {
    OperatorTest::SetUp();
    if (HasFatalFailure()) return;
    startVipuSim("pod16", pod16Args(), sim16_, vipu16_);
    if (HasFatalFailure()) return;
    // One host of the test cluster joins the POD16.
    ASSERT_TRUE(
        kubectl({"label", "node", kNode, "ipu.graphcore.ai/vipu-controller=pod16", "--overwrite"}).ok());
    startOperator({"--vipu-controller", "pod64=" + sim_->endpoint(), "--vipu-controller",
                   "pod16=" + sim16_->endpoint()});
  }

  void TearDown() override {
    kubectl({"label", "node", kNode, "ipu.graphcore.ai/vipu-controller=pod64", "--overwrite"});
    OperatorTest::TearDown();
    if (sim16_) sim16_->stop();
  }

  // vipu-sim's arguments for the POD16 (faults).
  virtual std::vector<std::string> pod16Args() const { return {}; }

  // The user's 4-IPU manifest, pinned to `controller`'s nodes.
  static std::string pinnedTo(const std::string& controller) {
    std::string manifest = readFile(kFourIpuManifest);
    const std::string anchor = "    template:\n      spec:\n";
    const auto at = manifest.find(anchor);
    if (at == std::string::npos) return "";
    manifest.insert(at + anchor.size(),
                    "        nodeSelector: {ipu.graphcore.ai/vipu-controller: " + controller + "}\n");
    return manifest;
  }

  static constexpr const char* kNode = "ipu-host-3";
  std::unique_ptr<vipu::testing::SimProcess> sim16_;
  std::unique_ptr<vipu::VipuClient> vipu16_;
};

TEST_F(ControllersTest, JobsGoWhereTheyFitOrWhereTheyArePinned) {
  const std::string big = createJob(readFile(kSixtyFourIpuManifest));
  ASSERT_TRUE(reachesPhase(big, "Running"));
  EXPECT_EQ(jobStatus(big)["partitions"][0].value("controller", ""), "pod64");

  // Pinned to the POD64 although it is full: waits there rather than going to the POD16.
  const std::string waiting = createJob(pinnedTo("pod64"));
  ASSERT_TRUE(reachesPhase(waiting, "Queued", 30s));

  // Unpinned, 16 IPUs: only the POD16 has room; its pod lands on the POD16's node.
  std::string manifest = readFile(kFourIpuManifest);
  const auto size = manifest.find("ipusPerJobInstance: \"4\"");
  ASSERT_NE(size, std::string::npos);
  const std::string sixteen = createJob(manifest.replace(size, 23, "ipusPerJobInstance: \"16\""));
  ASSERT_TRUE(reachesPhase(sixteen, "Running"));
  const Json status = jobStatus(sixteen);
  EXPECT_EQ(status["partitions"][0].value("controller", ""), "pod16") << status.dump();
  auto on16 = vipu16_->listPartitions("");
  ASSERT_TRUE(on16.ok());
  ASSERT_EQ(on16->size(), 1u);
  EXPECT_EQ((*on16)[0].size(), 16u);
  const Json pod = getJson("pod", sixteen + "-worker-0");
  EXPECT_EQ(pod["spec"]["nodeSelector"].value("ipu.graphcore.ai/vipu-controller", ""), "pod16");
  EXPECT_EQ(pod["spec"].value("nodeName", ""), kNode);
  const Json env = pod["spec"]["containers"][0]["env"];
  EXPECT_EQ(countIf(env,
                    [&](const Json& e) {
                      return e.value("name", "") == "IPUOF_VIPU_API_PORT" &&
                             e.value("value", "") ==
                                 sim16_->endpoint().substr(sim16_->endpoint().rfind(':') + 1);
                    }),
            1)
      << env.dump();
  EXPECT_EQ(phaseOf(waiting), "Queued");
}

// One slow V-IPU controller (every call takes 3 s) must not stall admission on the other: the jobs for the
// fast one are all admitted while the slow one's first job still is (several calls, so at least 9 s).
class SlowControllerTest : public ControllersTest {
 protected:
  std::vector<std::string> pod16Args() const override { return {"--latency-ms", "3000"}; }
};

TEST_F(SlowControllerTest, JobsOnAFastControllerAreAdmittedWhileASlowOneIsStillAnswering) {
  // Admitted means a partition made and active: what V-IPU decides (the nodes' room for the pods does not).
  const auto active = [&](const std::string& job) {
    return jobStatus(job).value("partitions", Json::array()).size() == 1 &&
           jobStatus(job)["partitions"][0].value("state", "") == "Active";
  };
  ASSERT_TRUE(eventually(
      [&] { return operator_->stderrText().find("controller started") != std::string::npos; }, 60s));
  std::vector<std::string> slow;
  for (int i = 0; i < 2; ++i) slow.push_back(createJob(pinnedTo("pod16")));
  std::vector<std::string> fast;
  for (int i = 0; i < 8; ++i) fast.push_back(createJob(pinnedTo("pod64")));
  for (const auto& job : fast) {
    EXPECT_TRUE(eventually([&] { return active(job); }, 60s)) << job << ": " << jobStatus(job).dump();
  }
  int slowActive = 0;
  for (const auto& job : slow) slowActive += active(job) ? 1 : 0;
  EXPECT_EQ(slowActive, 0)
      << "every job of the fast controller should be admitted before any of the slow one";
  for (const auto& job : slow) {
    EXPECT_TRUE(eventually([&] { return active(job); }, 180s)) << job << ": " << jobStatus(job).dump();
  }
}

}  // namespace
}  // namespace ipu::testing
