#pragma once

// IPUJobs on the real node through an operator that injects ipu-runtime: shared by the e2e tests and the
// launch benchmark.
#include <string>
#include <vector>

#include "free_port.h"
#include "mpi_output.h"
#include "operator_fixture.h"

namespace ipu::testing {

// An IPUJob whose workers run `command` in `image` on the real node: the template selects the node and
// tolerates its taint, as a user targets their IPU hosts. `specLines`: JSON merged into the spec.
inline std::string jobRunning(
    const std::string& name, const Json& command, const std::string& specLines = "",
    const std::string& image = TestCluster::get().value("IPU_CLUSTER_IMAGE_BUSYBOX")) {
  const Json container = {
      {"name", "train"}, {"image", image}, {"imagePullPolicy", "Never"}, {"command", command}};
  const Json podSpec = {
      {"nodeSelector", {{"ipu-operator.dev/real-node", "true"}}},
      {"tolerations",
       Json::array(
           {{{"key", "ipu-operator.dev/real-node"}, {"operator", "Exists"}, {"effect", "NoSchedule"}}})},
      {"terminationGracePeriodSeconds", 1},
      {"containers", Json::array({container})}};
  Json job = {
      {"apiVersion", "graphcore.ai/v1alpha1"},
      {"kind", "IPUJob"},
      {"metadata", {{"name", name}}},
      {"spec",
       {{"jobInstances", 1}, {"ipusPerJobInstance", "4"}, {"workers", {{"template", {{"spec", podSpec}}}}}}}};
  if (!specLines.empty()) job["spec"].update(Json::parse(specLines));
  return job.dump();
}

// The partition ids in what `vipu-ctl --json list` printed (among whatever else the log holds).
inline std::vector<std::string> partitionIdsListed(const std::string& log) {
  std::vector<std::string> ids;
  const std::string key = "\"id\": \"";
  for (auto at = log.find(key); at != std::string::npos; at = log.find(key, at + 1)) {
    const auto start = at + key.size();
    ids.push_back(log.substr(start, log.find('"', start) - start));
  }
  return ids;
}

// An mpi4py allreduce of each rank's index + 1: every rank prints "rank R of N sum S".
inline constexpr const char* kRankSumAllreduce =
    "from mpi4py import MPI; c = MPI.COMM_WORLD; "
    "print('rank %d of %d sum %d' % (c.Get_rank(), c.Get_size(), c.allreduce(c.Get_rank() + 1)))";

// The debian-mpi image the real node imported (python3, OpenMPI, mpi4py).
inline std::string debianMpi() {
  return TestCluster::get().value("IPU_CLUSTER_IMAGE_DEBIAN_MPI");
}

// The operator, injecting the runtime image the real node has imported, with its V-IPU proxy on the node's
// address, where the node's pods reach it as they reach a Service of a real cluster: every worker pod's
// IPUOF_VIPU_API_HOST/PORT.
class OperatorOnRealNodeTest : public OperatorTest {
 protected:
  bool startsOperatorInSetUp() const override { return false; }
  void SetUp() override {
    OperatorTest::SetUp();
    if (HasFatalFailure()) return;
    proxyHost_ = TestCluster::get().value("IPU_CLUSTER_REAL_NODE_IP");
    proxyPort_ = freePortOn(proxyHost_);
    startOperatorOnRealNode();
  }

  void startOperatorOnRealNode() {
    std::vector<std::string> args = {"--runtime-image",
                                     TestCluster::get().value("IPU_CLUSTER_IMAGE_IPU_RUNTIME"),
                                     "--runtime-image-pull-policy",
                                     "Never",
                                     "--runtime-delivery",
                                     runtimeDelivery(),
                                     "--vipu-proxy-bind-address",
                                     proxyHost_ + ":" + std::to_string(proxyPort_)};
    if (servesPartitionStatus()) {
      if (proxyHttpPort_ == 0) proxyHttpPort_ = freePortOn(proxyHost_);
      args.insert(args.end(), {"--vipu-proxy-http-port", std::to_string(proxyHttpPort_)});
    }
    startOperator(args);
  }

  // --runtime-delivery: the operator's default unless a test asks for the other.
  virtual std::string runtimeDelivery() const { return "init-container"; }
  // --vipu-proxy-http-port (pods made while their partitions activate): off, the default, unless a test
  // asks for it.
  virtual bool servesPartitionStatus() const { return false; }

  std::string proxyHost_;
  int proxyPort_ = 0;
  int proxyHttpPort_ = 0;

  // The lines of `pod`'s log that mpirun tagged as rank `rank`'s (tags removed).
  std::vector<std::string> rankLines(const std::string& pod, int rank) {
    const auto logs = kubectl({"logs", pod, "-c", "train"});
    EXPECT_TRUE(logs.ok()) << logs.describe();
    return linesByRank(logs.out)[rank];
  }
};

}  // namespace ipu::testing
