#pragma once

// What the e2e tests on the real node share: pods that only the real node takes, waiting for a pod's phase,
// its logs, and reading "key: value" lines out of them.
#include <algorithm>
#include <chrono>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "test_cluster.h"

namespace ipu::testing {

inline std::vector<std::string> lines(const std::string& text) {
  std::vector<std::string> result;
  std::istringstream stream(text);
  for (std::string line; std::getline(stream, line);) result.push_back(line);
  return result;
}

// The first line that starts with the prefix, without it; empty if none does.
inline std::string after(const std::vector<std::string>& output, const std::string& prefix) {
  for (const auto& line : output) {
    if (line.rfind(prefix, 0) == 0) return line.substr(prefix.size());
  }
  return "";
}

// A headless Service selecting pods labelled app=`app`, published before they are ready (peers resolve each
// other while starting), with one named port.
inline std::string headlessService(const std::string& name, const std::string& app,
                                   const std::string& portName, int port) {
  return nlohmann::json{{"apiVersion", "v1"},
                        {"kind", "Service"},
                        {"metadata", {{"name", name}}},
                        {"spec",
                         {{"clusterIP", "None"},
                          {"publishNotReadyAddresses", true},
                          {"selector", {{"app", app}}},
                          {"ports", {{{"name", portName}, {"port", port}}}}}}}
      .dump();
}

class RealNodeTest : public ClusterTest {
 protected:
  using Json = nlohmann::json;

  // A pod that only the real node takes: it selects the node's label and tolerates its taint.
  Json podOnRealNode(const std::string& name, const std::string& script) const {
    return {{"apiVersion", "v1"},
            {"kind", "Pod"},
            {"metadata", {{"name", name}}},
            {"spec",
             {{"nodeSelector", {{"ipu-operator.dev/real-node", "true"}}},
              {"tolerations",
               {{{"key", "ipu-operator.dev/real-node"}, {"operator", "Exists"}, {"effect", "NoSchedule"}}}},
              {"restartPolicy", "Never"},
              // `sh` as PID 1 ignores SIGTERM: do not wait 30 s for it when the namespace goes.
              {"terminationGracePeriodSeconds", 1},
              {"containers",
               {{{"name", "main"},
                 {"image", TestCluster::get().value("IPU_CLUSTER_IMAGE_BUSYBOX")},
                 {"imagePullPolicy", "Never"},
                 {"command", {"sh", "-c", script}}}}}}}};
  }

  // Waits for the pod to reach one of the phases; returns the pod (null on timeout).
  Json waitForPhase(const std::string& name, const std::vector<std::string>& phases,
                    std::chrono::milliseconds timeout = std::chrono::seconds(60)) const {
    Json pod;
    bool reached = eventually(
        [&] {
          pod = getJson("pod", name);
          if (pod.is_null()) return false;
          std::string phase = pod["status"].value("phase", "");
          return std::find(phases.begin(), phases.end(), phase) != phases.end();
        },
        timeout, std::chrono::milliseconds(100));
    return reached ? pod : Json(nullptr);
  }

  // The output of the pod's container (its first one when `container` is empty).
  std::string logs(const std::string& name, const std::string& container = "") const {
    std::vector<std::string> args{"logs", name};
    if (!container.empty()) args.insert(args.end(), {"-c", container});
    auto result = kubectl(args);
    EXPECT_TRUE(result.ok()) << result.describe();
    return result.out;
  }
};

}  // namespace ipu::testing
