#pragma once

#include <chrono>
#include <functional>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "eventually.h"
#include "subprocess.h"

namespace ipu::testing {

// The local cluster the integration tests run against. The CTest fixture starts it with tools/cluster.sh
// and passes its directory in IPU_TEST_CLUSTER_DIR; <dir>/cluster.env says where the API server and the
// binaries are.
class TestCluster {
 public:
  static const TestCluster& get();
  // Another cluster of tools/cluster.sh, by its directory (a test of two clusters).
  static TestCluster at(const std::string& dir);

  const std::string& dir() const { return dir_; }
  const std::string& kubeconfig() const { return kubeconfig_; }
  const std::string& binDir() const { return binDir_; }
  // A value from <dir>/cluster.env (IPU_CLUSTER_REAL_NODE, IPU_CLUSTER_IMAGE_BUSYBOX, …); throws when it has
  // none.
  std::string value(const std::string& name) const;
  // Compacts etcd's history up to its current revision: watches from older resourceVersions then get
  // 410 Gone (for resources the API server does not cache, such as podtemplates in this cluster).
  void compactEtcd() const;
  // Installs (or updates) the CRDs in crds/ (IPUJob, IPUQuota) and waits until they are served. Idempotent.
  void installCrds() const;
  // installCrds() once per process: "" when the CRDs are served, else why not. For a fixture's SetUp, not
  // SetUpTestSuite: a suite set-up that fails only marks its tests skipped, which a run counts as no failure.
  const std::string& installCrdsOnce() const;
  // etcdctl against this cluster's etcd.
  RunResult etcdctl(const std::vector<std::string>& args) const;
  // tools/cluster.sh <command> <component> for this cluster (stop, start, restart); fails the caller on
  // error.
  void controlComponent(const std::string& command, const std::string& component) const;
  // kubectl with this cluster's kubeconfig.
  RunResult kubectl(const std::vector<std::string>& args, const RunOptions& options = {}) const;
  std::vector<std::string> kubectlCommand(const std::vector<std::string>& args) const;

 private:
  std::string dir_, kubeconfig_, binDir_, etcd_;
};

// A test that gets a fresh namespace of its own, deleted afterwards.
class ClusterTest : public ::testing::Test {
 protected:
  void SetUp() override;
  void TearDown() override;

  const TestCluster& cluster() const { return TestCluster::get(); }
  const std::string& ns() const { return namespace_; }
  // kubectl in the test's namespace.
  RunResult kubectl(const std::vector<std::string>& args, const RunOptions& options = {}) const;
  // Creates the object (JSON or YAML) in the test's namespace; fails the test if kubectl does.
  void create(const std::string& manifest) const;
  // The object as JSON, or null when it does not exist.
  nlohmann::json getJson(const std::string& resource, const std::string& name) const;

 private:
  std::string namespace_;
};

}  // namespace ipu::testing
