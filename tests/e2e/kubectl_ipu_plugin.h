#pragma once

// The kubectl-ipu plugin run as a user runs it, for the e2e tests whose target names its binary
// (IPU_KUBECTL_IPU_BINARY).
#include <chrono>
#include <string>
#include <vector>

#include "subprocess.h"
#include "test_cluster.h"

namespace ipu::testing {

// `kubectl-ipu ARGS...` against the test cluster, with the cluster's kubectl.
inline RunResult kubectlIpu(const std::vector<std::string>& args) {
  const TestCluster& cluster = TestCluster::get();
  std::vector<std::string> argv{IPU_KUBECTL_IPU_BINARY};
  argv.insert(argv.end(), args.begin(), args.end());
  return run(argv, RunOptions{.timeout = std::chrono::seconds(120),
                              .extraEnv = {"KUBECONFIG=" + cluster.kubeconfig(),
                                           "KUBECTL=" + cluster.binDir() + "/kubectl"}});
}

}  // namespace ipu::testing
