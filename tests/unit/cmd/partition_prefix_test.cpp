#include "cmd/partition_prefix.h"

#include <gtest/gtest.h>

#include "fake_clock.h"
#include "fake_transport.h"

namespace ipu::cmd {
namespace {

using testing::FakeTransport;

const std::string kKubeSystem = "/api/v1/namespaces/kube-system";

class PartitionPrefixTest : public ::testing::Test {
 protected:
  kube::RestClient client() {
    return kube::RestClient(transport_, kube::ClusterConfig{}, kube::ClientOptions{}, clock_);
  }

  std::shared_ptr<FakeTransport> transport_ = std::make_shared<FakeTransport>();
  testing::FakeClock clock_;
};

TEST(PrefixForClusterUidTest, TakesTheFirstEightHexDigitsInLowerCase) {
  EXPECT_EQ(prefixForClusterUid("3F2a9c1e-77b0-4c3d-9e1f-0a1b2c3d4e5f"), "k8s-3f2a9c1e");
  EXPECT_EQ(prefixForClusterUid("12-34-56-78-9a"), "k8s-12345678") << "dashes are not digits";
  EXPECT_EQ(prefixForClusterUid("xyz"), "k8s-") << "nothing to take: the caller refuses it";
}

TEST_F(PartitionPrefixTest, AnExplicitPrefixIsUsedAsGivenWithNoLegacyOneAndNoRequest) {
  auto c = client();
  auto prefixes = resolvePartitionPrefixes("lab-1", c, {});
  ASSERT_TRUE(prefixes.ok());
  EXPECT_EQ(prefixes->current, "lab-1");
  EXPECT_EQ(prefixes->legacy, "");
}

TEST_F(PartitionPrefixTest, TheDefaultComesFromTheKubeSystemNamespacesUidAndKeepsTheOldDefaultAsLegacy) {
  transport_->expect("GET", kKubeSystem, 200,
                     R"({"metadata":{"name":"kube-system","uid":"0a1b2c3d-aaaa-bbbb-cccc-000000000000"}})");
  auto c = client();
  auto prefixes = resolvePartitionPrefixes("", c, {});
  ASSERT_TRUE(prefixes.ok()) << prefixes.error().message;
  EXPECT_EQ(prefixes->current, "k8s-0a1b2c3d");
  EXPECT_EQ(prefixes->legacy, "k8s");
}

TEST_F(PartitionPrefixTest, ARefusalOrAUselessUidSaysHowToFixIt) {
  transport_->expect(
      "GET", kKubeSystem, 403,
      R"({"kind":"Status","status":"Failure","reason":"Forbidden","code":403,"message":"forbidden"})");
  auto c = client();
  auto refused = resolvePartitionPrefixes("", c, {});
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.error().message.find("grant get on namespaces/kube-system"), std::string::npos)
      << refused.error().message;
  EXPECT_NE(refused.error().message.find("--partition-id-prefix"), std::string::npos);

  transport_->expect("GET", kKubeSystem, 200, R"({"metadata":{"name":"kube-system","uid":"not-hex"}})");
  auto useless = resolvePartitionPrefixes("", c, {});
  ASSERT_FALSE(useless.ok());
  EXPECT_NE(useless.error().message.find("no usable uid"), std::string::npos) << useless.error().message;
}

TEST_F(PartitionPrefixTest, AnUnreachableApiServerIsAskedAgainUntilItAnswers) {
  transport_->expect("GET", kKubeSystem, 503, R"({"kind":"Status","code":503,"message":"unavailable"})")
      .expect("GET", kKubeSystem, 200, R"({"metadata":{"uid":"ffffffff-0000"}})");
  kube::ClientOptions noRetries;
  noRetries.maxRetries = 0;  // the client's own retries would wait on the fake clock
  kube::RestClient c(transport_, kube::ClusterConfig{}, noRetries, clock_);
  auto prefixes = resolvePartitionPrefixes("", c, {}, std::chrono::milliseconds(1));
  ASSERT_TRUE(prefixes.ok()) << prefixes.error().message;
  EXPECT_EQ(prefixes->current, "k8s-ffffffff");
}

}  // namespace
}  // namespace ipu::cmd
