// Pods scheduled by the real scheduler onto simulated IPU host nodes (kwok) go through the whole
// lifecycle, driven by the ipu-operator.dev/simulate-exit-code annotation.
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "test_cluster.h"

namespace ipu::testing {
namespace {

using namespace std::chrono_literals;
using Json = nlohmann::json;

// A pod that only IPU host nodes accept; exitCode empty = runs until deleted.
std::string podManifest(const std::string& name, const std::string& exitCode) {
  Json pod = {
      {"apiVersion", "v1"},
      {"kind", "Pod"},
      {"metadata", {{"name", name}, {"annotations", Json::object()}}},
      {"spec",
       {{"nodeSelector", {{"ipu.graphcore.ai/host", "true"}}},
        {"restartPolicy", "Never"},
        {"containers", {{{"name", "main"}, {"image", "busybox"}, {"command", {"sh", "-c", "exit 0"}}}}}}}};
  if (!exitCode.empty()) {
    pod["metadata"]["annotations"]["ipu-operator.dev/simulate-exit-code"] = exitCode;
    pod["metadata"]["annotations"]["ipu-operator.dev/simulate-run-duration"] = "1500ms";
  }
  return pod.dump();
}

class PodLifecycleTest : public ClusterTest {
 protected:
  // Watches the pod and returns the phases it went through until a terminal one (or the timeout).
  std::vector<std::string> phasesUntilDone(BackgroundProcess& watch) {
    std::vector<std::string> phases;
    while (auto line = watch.readLine(60s)) {
      auto pod = Json::parse(*line).at("object");
      std::string phase = pod["status"].value("phase", "");
      if (phase.empty() || (!phases.empty() && phases.back() == phase)) continue;
      phases.push_back(phase);
      if (phase == "Succeeded" || phase == "Failed") break;
    }
    return phases;
  }

  BackgroundProcess watchPod(const std::string& name) {
    return BackgroundProcess(cluster().kubectlCommand(
        {"get", "--raw",
         "/api/v1/namespaces/" + ns() + "/pods?watch=1&fieldSelector=metadata.name%3D" + name}));
  }

  void expectScheduledOntoIpuHost(const Json& pod) {
    std::string node = pod["spec"].value("nodeName", "");
    EXPECT_EQ(node.rfind("ipu-host-", 0), 0u) << "scheduled onto '" << node << "'";
    bool scheduled = false;
    for (const auto& condition : pod["status"]["conditions"]) {
      if (condition["type"] == "PodScheduled" && condition["status"] == "True") scheduled = true;
    }
    EXPECT_TRUE(scheduled) << pod["status"].dump();
  }
};

TEST_F(PodLifecycleTest, RunsThenSucceedsWithExitCodeZero) {
  auto watch = watchPod("trainer");
  auto started = std::chrono::steady_clock::now();
  create(podManifest("trainer", "0"));
  auto phases = phasesUntilDone(watch);
  EXPECT_EQ(phases, (std::vector<std::string>{"Pending", "Running", "Succeeded"}));
  EXPECT_GE(std::chrono::steady_clock::now() - started, 1500ms) << "simulate-run-duration was not honoured";

  Json pod = getJson("pod", "trainer");
  expectScheduledOntoIpuHost(pod);
  const Json& terminated = pod["status"]["containerStatuses"][0]["state"]["terminated"];
  EXPECT_EQ(terminated["exitCode"], 0);
  EXPECT_EQ(terminated["reason"], "Completed");
}

TEST_F(PodLifecycleTest, FailsWithTheRequestedExitCode) {
  auto watch = watchPod("crasher");
  create(podManifest("crasher", "3"));
  auto phases = phasesUntilDone(watch);
  EXPECT_EQ(phases, (std::vector<std::string>{"Pending", "Running", "Failed"}));

  Json pod = getJson("pod", "crasher");
  expectScheduledOntoIpuHost(pod);
  const Json& terminated = pod["status"]["containerStatuses"][0]["state"]["terminated"];
  EXPECT_EQ(terminated["exitCode"], 3);
  EXPECT_EQ(terminated["reason"], "Error");
}

TEST_F(PodLifecycleTest, KeepsRunningUntilDeletedAndServesLogs) {
  create(podManifest("server", ""));
  ASSERT_TRUE(eventually(
      [&] {
        Json pod = getJson("pod", "server");
        return !pod.is_null() && pod["status"].value("phase", "") == "Running";
      },
      60s));
  std::this_thread::sleep_for(1s);
  EXPECT_EQ(getJson("pod", "server")["status"]["phase"], "Running");

  // kubectl logs goes API server -> kwok's kubelet endpoint; kwok's nodes run no program, and say so.
  auto logs = kubectl({"logs", "server"});
  ASSERT_TRUE(logs.ok()) << logs.describe();
  EXPECT_NE(logs.out.find("simulated IPU host node"), std::string::npos) << logs.out;

  auto deleted = kubectl({"delete", "pod", "server", "--wait=true", "--timeout=60s"});
  ASSERT_TRUE(deleted.ok()) << deleted.describe();
  EXPECT_TRUE(getJson("pod", "server").is_null());
}

TEST_F(PodLifecycleTest, PodsSpreadOverIpuHostsByTheScheduler) {
  // Each pod asks for most of a node's CPU, so the real scheduler must use different nodes.
  std::vector<std::string> names{"a", "b", "c"};
  for (const auto& name : names) {
    Json pod = Json::parse(podManifest(name, ""));
    pod["spec"]["containers"][0]["resources"] = {{"requests", {{"cpu", "60"}}}};
    create(pod.dump());
  }
  std::set<std::string> nodes;
  ASSERT_TRUE(eventually(
      [&] {
        nodes.clear();
        for (const auto& name : names) {
          Json pod = getJson("pod", name);
          if (pod.is_null() || pod["status"].value("phase", "") != "Running") return false;
          nodes.insert(pod["spec"]["nodeName"].get<std::string>());
        }
        return true;
      },
      60s));
  EXPECT_EQ(nodes.size(), names.size());
}

}  // namespace
}  // namespace ipu::testing
