#pragma once

#include <memory>

#include "kube/cpprest_transport.h"
#include "kube/rest_client.h"
#include "test_cluster.h"

namespace ipu::testing {

// A ClusterTest with the project's own client connected to the test cluster, as the operator connects.
class KubeClientTest : public ClusterTest {
 protected:
  void SetUp() override {
    ClusterTest::SetUp();
    auto config = kube::loadKubeconfig(cluster().kubeconfig());
    ASSERT_TRUE(config.ok()) << config.error().toString();
    config_ = *config;
    auto transport = kube::CppRestTransport::create(config_);
    ASSERT_TRUE(transport.ok()) << transport.error().toString();
    transport_ = std::move(*transport);
    client_ = std::make_unique<kube::RestClient>(transport_, config_,
                                                 kube::ClientOptions{.qps = 500, .burst = 500});
  }

  kube::RestClient& client() { return *client_; }

  kube::ClusterConfig config_;
  std::shared_ptr<kube::Transport> transport_;
  std::unique_ptr<kube::RestClient> client_;
};

}  // namespace ipu::testing
