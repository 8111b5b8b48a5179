#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "kube/rest_client.h"
#include "subprocess.h"

// A local cluster of its own for one measurement (tools/cluster.sh up --audit-all): every contender starts
// on an empty cluster, so no run pays for what the previous one left behind (garbage collection, a long
// watch cache, kwok's pod churn). Destroyed (tools/cluster.sh down) with the object.
namespace ipu::bench {

class BenchCluster {
 public:
  // Throws with the script's output when the cluster does not come up.
  // `ipuPods`: the IPU-POD names the nodes are spread over (tools/cluster.sh --ipu-pods).
  BenchCluster(std::string dir, int nodes, const std::vector<std::string>& ipuPods = {"pod64"});
  ~BenchCluster();
  BenchCluster(const BenchCluster&) = delete;
  BenchCluster& operator=(const BenchCluster&) = delete;

  const std::string& kubeconfig() const { return kubeconfig_; }
  const std::string& auditLog() const { return auditLog_; }
  // The pid of one of the cluster's own processes ("kube-apiserver", "etcd"); 0 when it is not running.
  int componentPid(const std::string& name) const;
  // A binary built by tools/build-tools.sh (kubectl, mpi-operator) or a file linked next to them.
  std::string tool(const std::string& name) const { return binDir_ + "/" + name; }
  // kubectl against this cluster: tryKubectl returns what it did, kubectl throws when it failed.
  testing::RunResult tryKubectl(const std::vector<std::string>& args) const;
  std::string kubectl(const std::vector<std::string>& args) const;
  // A client of the operator's own HTTP stack for this cluster's kubeconfig; throws when it cannot be made.
  std::unique_ptr<kube::RestClient> client(const kube::ClientOptions& options) const;
  // Applies the CRD manifest (server-side: the MPIJob CRD is too large for a client-side apply) and waits
  // until the API server serves `crd` ("mpijobs.kubeflow.org"); throws after a minute.
  void installCrd(const std::string& manifest, const std::string& crd) const;

 private:
  std::string dir_, kubeconfig_, auditLog_, binDir_;
};

}  // namespace ipu::bench
