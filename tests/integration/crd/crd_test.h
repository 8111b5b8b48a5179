// What the CRD tests share: the CRDs installed once, and a check that kubectl refuses a manifest with a
// message a user can act on.
#pragma once

#include <string>

#include <gtest/gtest.h>

#include "test_cluster.h"

namespace ipu::testing {

class CrdTest : public ClusterTest {
 protected:
  void SetUp() override {
    ClusterTest::SetUp();
    ASSERT_EQ(TestCluster::get().installCrdsOnce(), "") << "the CRDs could not be installed";
  }

  void expectRejected(const std::string& manifest, const std::string& message) {
    auto created = kubectl({"create", "-f", "-"}, RunOptions{.input = manifest});
    EXPECT_FALSE(created.ok()) << "accepted:\n" << manifest;
    EXPECT_NE(created.err.find(message), std::string::npos)
        << "expected '" << message << "' in: " << created.err;
  }
};

}  // namespace ipu::testing
