#include <map>
#include <optional>
#include <sstream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "vipu-ctl/ctl_command.h"
#include "vipu-sim/simulated_pod.h"

namespace ipu::vipu::ctl {
namespace {

// vipu-ctl against an in-memory SimulatedPod: the commands, their output and their exit codes.
class VipuCtlTest : public ::testing::Test {
 protected:
  VipuCtlTest() {
    sim::SimBehaviour behaviour;
    behaviour.activationDelay = std::chrono::milliseconds(0);
    pod_ = *sim::SimulatedPod::open(*Topology::forPod("pod128", "lab"), {}, behaviour, nullptr, std::nullopt);
  }

  int run(std::vector<std::string> args) {
    out_.str("");
    err_.str("");
    const ApiFactory connect = [this](const ClientOptions& options) -> Result<std::shared_ptr<VipuApi>> {
      lastOptions_ = options;
      return std::shared_ptr<VipuApi>(pod_, pod_.get());
    };
    return runCtl(args, connect, out_, err_);
  }

  std::shared_ptr<sim::SimulatedPod> pod_;
  std::ostringstream out_;
  std::ostringstream err_;
  ClientOptions lastOptions_;
};

TEST_F(VipuCtlTest, CreatesListsAndRemovesPartitions) {
  ASSERT_EQ(run({"create", "a", "--size", "16"}), 0) << err_.str();
  EXPECT_EQ(out_.str(), "created partition a\n");
  ASSERT_EQ(run({"create", "b", "--size=4", "--ipus", "1:4-7", "--cluster-id", "lab", "--wait-ms", "1000"}),
            0)
      << err_.str();
  EXPECT_EQ(out_.str(), "created partition b (PS_ACTIVE)\n");
  ASSERT_EQ(run({"list"}), 0);
  EXPECT_NE(out_.str().find("a   16    PS_ACTIVE  lab      default     ILD 0 IPUs 0-15"), std::string::npos)
      << out_.str();
  EXPECT_NE(out_.str().find("ILD 1 IPUs 4-7"), std::string::npos);
  ASSERT_EQ(run({"--json", "list"}), 0);
  const auto json = nlohmann::json::parse(out_.str());
  ASSERT_EQ(json.size(), 2u);
  EXPECT_EQ(json[1]["id"], "b");
  EXPECT_EQ(json[1]["ipus"][0]["topology_id"], 4);
  ASSERT_EQ(run({"remove", "a"}), 0);
  ASSERT_EQ(run({"list"}), 0);
  EXPECT_EQ(out_.str().find("a   16"), std::string::npos);
}

TEST_F(VipuCtlTest, PlanChoosesExplicitIpusWithTheBestFitPlanner) {
  ASSERT_EQ(run({"create", "first", "--size", "1", "--ipus", "0:0", "--cluster-id", "lab"}), 0) << err_.str();
  ASSERT_EQ(run({"create", "planned", "--size", "4", "--plan"}), 0) << err_.str();
  const Partition planned = pod_->listPartitions("")->back();
  EXPECT_EQ(planned.id, "planned");
  EXPECT_EQ(planned.spec.ipus.front().topologyId, 4u);  // buddy of 0-3, not a fresh ILD
  ASSERT_EQ(run({"topology"}), 0) << err_.str();
  EXPECT_NE(out_.str().find("ILD 0 #... #### .... ...."), std::string::npos) << out_.str();
  EXPECT_NE(out_.str().find("free IPUs: 123 of 128"), std::string::npos) << out_.str();
}

TEST_F(VipuCtlTest, StatusWaitResetIpuofAndAttributes) {
  ASSERT_EQ(run({"create", "p", "--size", "8", "--num-gcds", "2", "--routing", "swnc"}), 0) << err_.str();
  ASSERT_EQ(run({"status", "p"}), 0);
  EXPECT_EQ(out_.str(), "p: PS_ACTIVE (POS_IDLE)\n");
  ASSERT_EQ(run({"--json", "status", "p"}), 0);
  EXPECT_EQ(nlohmann::json::parse(out_.str())["operation_state"], "POS_IDLE");
  ASSERT_EQ(run({"wait", "p", "--timeout-ms", "1000"}), 0);
  ASSERT_EQ(run({"reset", "p", "--wait-ms", "2000"}), 0) << err_.str();
  ASSERT_EQ(run({"ipuof", "p", "--gcd", "1"}), 0) << err_.str();
  EXPECT_NE(out_.str().find("GCD 1:"), std::string::npos) << out_.str();
  ASSERT_EQ(run({"--json", "ipuof", "p"}), 0);
  EXPECT_EQ(nlohmann::json::parse(out_.str())["gcd_configs"].size(), 2u);
  ASSERT_EQ(run({"attributes", "ag-1-00"}), 0);
  EXPECT_NE(out_.str().find("64: cluster_id=lab ild_id=1"), std::string::npos) << out_.str();
}

TEST_F(VipuCtlTest, ControllerErrorsExitOneWithTheMessage) {
  EXPECT_EQ(run({"create", "x", "--size", "3"}), 1);
  EXPECT_NE(err_.str().find("InvalidArgument"), std::string::npos) << err_.str();
  EXPECT_NE(err_.str().find("power of two"), std::string::npos);
  EXPECT_EQ(run({"status", "missing"}), 1);
  EXPECT_NE(err_.str().find("NotFound"), std::string::npos);
  EXPECT_EQ(run({"create", "huge", "--size", "256", "--plan"}), 1);
  EXPECT_NE(err_.str().find("can never fit"), std::string::npos) << err_.str();
}

TEST_F(VipuCtlTest, BadUsageExitsTwo) {
  EXPECT_EQ(run({}), 2);
  EXPECT_NE(err_.str().find("Commands:"), std::string::npos);
  EXPECT_EQ(run({"frobnicate"}), 2);
  EXPECT_NE(err_.str().find("unknown command 'frobnicate'"), std::string::npos);
  EXPECT_EQ(run({"--bogus", "list"}), 2);
  EXPECT_EQ(run({"create", "x"}), 2);
  EXPECT_NE(err_.str().find("--size"), std::string::npos);
  EXPECT_EQ(run({"create", "--size", "4"}), 2);
  EXPECT_EQ(run({"create", "x", "--size", "4", "--plan", "--ipus", "0:0-3"}), 2);
  EXPECT_EQ(run({"create", "x", "--size", "4", "--ipus", "zero"}), 2);
  EXPECT_EQ(run({"create", "x", "--size", "4", "--routing", "fast"}), 2);
  EXPECT_EQ(run({"status"}), 2);
  EXPECT_EQ(run({"--timeout-ms", "0", "list"}), 2);
  EXPECT_EQ(run({"--help"}), 0);
  EXPECT_NE(out_.str().find("--endpoint HOST:PORT"), std::string::npos);
  EXPECT_EQ(run({"create", "--help"}), 0);
  EXPECT_NE(out_.str().find("--plan"), std::string::npos);
}

TEST_F(VipuCtlTest, GlobalFlagsReachTheClient) {
  ASSERT_EQ(run({"--endpoint", "vipu:9000", "--timeout-ms", "1500", "--attempts", "2", "--ca", "ca.pem",
                 "--server-name", "vipu.local", "list"}),
            0);
  EXPECT_EQ(lastOptions_.endpoint, "vipu:9000");
  EXPECT_EQ(lastOptions_.callTimeout.count(), 1500);
  EXPECT_EQ(lastOptions_.retry.maxAttempts, 2);
  ASSERT_TRUE(lastOptions_.tls);
  EXPECT_EQ(lastOptions_.tls->caCertFile, "ca.pem");
  EXPECT_EQ(lastOptions_.tls->serverNameOverride, "vipu.local");
}

TEST(VipuCtlIpuListTest, ParsesRangesAndRejectsGarbage) {
  auto ipus = parseIpuList("0:4-7");
  ASSERT_TRUE(ipus);
  ASSERT_EQ(ipus->size(), 4u);
  EXPECT_EQ((*ipus)[3], (PartitionIpu{0, 0, 7, 3}));
  auto listed = parseIpuList("1:0,1:1");
  ASSERT_TRUE(listed);
  EXPECT_EQ(listed->size(), 2u);
  for (const char* bad : {"", "0", "0:", ":1", "0:7-4", "a:1", "0:1-", "0:1,", "0:0-99999"}) {
    EXPECT_FALSE(parseIpuList(bad)) << bad;
  }
}

TEST(VipuCtlDefaultEndpointTest, InAWorkerPodItIsTheVipuThePodsPoplarIsGiven) {
  const auto environment = [](std::map<std::string, std::string> values) {
    return [values](const std::string& name) -> std::optional<std::string> {
      const auto found = values.find(name);
      return found == values.end() ? std::nullopt : std::optional<std::string>(found->second);
    };
  };
  EXPECT_EQ(defaultEndpoint(environment({})), "127.0.0.1:8090");
  EXPECT_EQ(defaultEndpoint(environment(
                {{"IPUOF_VIPU_API_HOST", "proxy.ipu-system.svc"}, {"IPUOF_VIPU_API_PORT", "8091"}})),
            "proxy.ipu-system.svc:8091");
  EXPECT_EQ(defaultEndpoint(environment({{"IPUOF_VIPU_API_HOST", "10.0.0.5"}})), "10.0.0.5:8090");
  EXPECT_EQ(defaultEndpoint(environment({{"IPUOF_VIPU_API_HOST", ""}})), "127.0.0.1:8090");
}

}  // namespace
}  // namespace ipu::vipu::ctl
