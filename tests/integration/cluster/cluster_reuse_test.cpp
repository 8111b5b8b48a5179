// tools/cluster.sh refuses to start a second cluster over a running one, and leaves the running one alone.
#include <gtest/gtest.h>

#include "test_cluster.h"

namespace ipu::testing {
namespace {

TEST(ClusterReuseTest, SecondUpInTheSameDirectoryIsRefused) {
  const auto& cluster = TestCluster::get();
  auto second =
      run({IPU_SOURCE_DIR "/tools/cluster.sh", "up", "--dir", cluster.dir(), "--bin-dir", cluster.binDir()});
  EXPECT_EQ(second.exitCode, 1) << second.describe();
  EXPECT_NE(second.err.find("a cluster already runs in"), std::string::npos) << second.err;

  auto status = run({IPU_SOURCE_DIR "/tools/cluster.sh", "status", "--dir", cluster.dir()});
  EXPECT_TRUE(status.ok()) << status.describe();
  EXPECT_TRUE(cluster.kubectl({"get", "--raw", "/readyz"}).ok()) << "the running cluster was disturbed";
}

}  // namespace
}  // namespace ipu::testing
