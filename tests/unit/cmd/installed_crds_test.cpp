#include "cmd/installed_crds.h"

#include <gtest/gtest.h>

#include "fake_clock.h"
#include "fake_transport.h"

namespace ipu::cmd {
namespace {

using testing::FakeTransport;

class InstalledCrdsTest : public ::testing::Test {
 protected:
  kube::RestClient client() {
    return kube::RestClient(transport_, kube::ClusterConfig{}, kube::ClientOptions{}, clock_);
  }

  std::shared_ptr<FakeTransport> transport_ = std::make_shared<FakeTransport>();
  testing::FakeClock clock_;
};

constexpr const char* kEmptyList = R"({"kind":"List","metadata":{"resourceVersion":"1"},"items":[]})";
constexpr const char* kNotFound =
    R"({"kind":"Status","apiVersion":"v1","status":"Failure","reason":"NotFound","code":404,"message":"the server could not find the requested resource"})";

TEST_F(InstalledCrdsTest, BothServedIsFine) {
  transport_->expect("GET", "/apis/graphcore.ai/v1alpha1/ipujobs?limit=1", 200, kEmptyList)
      .expect("GET", "/apis/graphcore.ai/v1alpha1/ipuquotas?limit=1", 200, kEmptyList);
  auto c = client();
  EXPECT_TRUE(requireInstalledCrds(c).ok());
}

TEST_F(InstalledCrdsTest, AMissingQuotaCrdIsSaidAtOnceWithTheFix) {
  transport_->expect("GET", "/apis/graphcore.ai/v1alpha1/ipujobs?limit=1", 200, kEmptyList)
      .expect("GET", "/apis/graphcore.ai/v1alpha1/ipuquotas?limit=1", 404, kNotFound);
  auto c = client();
  const Status status = requireInstalledCrds(c);
  ASSERT_FALSE(status.ok());
  EXPECT_EQ(
      status.error().message,
      "the IPUQuota CRD is not installed (the API server does not serve ipuquotas.graphcore.ai/v1alpha1): "
      "install the CRDs with `kubectl apply -f crds/` (or the Helm chart) first");
}

TEST_F(InstalledCrdsTest, OtherErrorsAreLeftToTheCaches) {
  transport_
      ->expect("GET", "/apis/graphcore.ai/v1alpha1/ipujobs?limit=1", 403,
               R"({"kind":"Status","status":"Failure","reason":"Forbidden","code":403,"message":"no"})")
      .expect("GET", "/apis/graphcore.ai/v1alpha1/ipuquotas?limit=1", 200, kEmptyList);
  auto c = client();
  EXPECT_TRUE(requireInstalledCrds(c).ok());
}

}  // namespace
}  // namespace ipu::cmd
