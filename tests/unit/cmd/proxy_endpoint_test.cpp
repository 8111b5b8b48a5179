#include "cmd/proxy_endpoint.h"

#include <gtest/gtest.h>

#include "fake_clock.h"
#include "fake_transport.h"

namespace ipu::cmd {
namespace {

using Json = nlohmann::json;
using testing::FakeTransport;

const std::string kSlice =
    "/apis/discovery.k8s.io/v1/namespaces/ipu-system/endpointslices/ipu-operator-vipu-proxy";
const ProxyEndpoint kEndpoint{"ipu-system", "ipu-operator-vipu-proxy", "10.244.1.7", 8090};

// The slice as the chart makes it: no endpoint yet.
std::string chartSlice(const std::string& resourceVersion) {
  return Json{{"apiVersion", "discovery.k8s.io/v1"},
              {"kind", "EndpointSlice"},
              {"metadata",
               {{"name", "ipu-operator-vipu-proxy"},
                {"namespace", "ipu-system"},
                {"resourceVersion", resourceVersion},
                {"labels", {{"kubernetes.io/service-name", "ipu-operator-vipu-proxy"}}}}},
              {"addressType", "IPv4"},
              {"endpoints", Json::array()},
              {"ports", Json::array({{{"name", "vipu"}, {"port", 8090}, {"protocol", "TCP"}}})}}
      .dump();
}

TEST(ProxyEndpointTest, TheLeaderIsTheSlicesOnlyEndpointAndTheRestOfTheSliceStays) {
  const Json slice = withLeaderEndpoint(Json::parse(chartSlice("7")), {"ns", "s", "10.0.0.9", 18090});
  ASSERT_EQ(slice["endpoints"].size(), 1u);
  EXPECT_EQ(slice["endpoints"][0]["addresses"], Json::array({"10.0.0.9"}));
  EXPECT_EQ(slice["endpoints"][0]["conditions"]["ready"], true);
  EXPECT_EQ(slice["ports"][0]["port"], 18090) << "the proxy's own port";
  EXPECT_EQ(slice["metadata"]["resourceVersion"], "7") << "the update is conditional on what was read";
  EXPECT_EQ(slice["metadata"]["labels"]["kubernetes.io/service-name"], "ipu-operator-vipu-proxy");
  EXPECT_EQ(withLeaderEndpoint(slice, {"ns", "s", "10.0.0.10", 18090})["endpoints"].size(), 1u)
      << "a new leader replaces the old one";
}

TEST(ProxyEndpointTest, TheHttpFaceIsTheSlicesSecondPort) {
  const Json slice = withLeaderEndpoint(Json::parse(chartSlice("7")), {"ns", "s", "10.0.0.9", 18090, 18091});
  ASSERT_EQ(slice["ports"].size(), 2u);
  EXPECT_EQ(slice["ports"][1], (Json{{"name", "http"}, {"port", 18091}, {"protocol", "TCP"}}));
  EXPECT_EQ(withLeaderEndpoint(slice, {"ns", "s", "10.0.0.9", 18090})["ports"].size(), 1u)
      << "a leader without one takes it away";
}

TEST(ProxyEndpointTest, PublishingRereadsAfterAConflictAndWaitsForASliceThatIsMissing) {
  auto transport = std::make_shared<FakeTransport>();
  transport->expect("GET", kSlice, 404, R"({"kind":"Status","reason":"NotFound","code":404})")
      .expect("GET", kSlice, 200, chartSlice("1"))
      .expect("PUT", kSlice, 409, R"({"kind":"Status","reason":"Conflict","code":409})")
      .expect("GET", kSlice, 200, chartSlice("2"))
      .expect("PUT", kSlice, 200, chartSlice("3"));
  kube::RestClient client(transport, kube::ClusterConfig{});
  publishProxyEndpoint(client, kEndpoint, {}, std::chrono::milliseconds(1));
  EXPECT_TRUE(transport->unexpected().empty()) << ::testing::PrintToString(transport->unexpected());
  EXPECT_EQ(transport->remaining(), 0u);
  const auto played = transport->played();
  ASSERT_EQ(played.size(), 5u);
  const Json written = Json::parse(played.back().seen.body);
  EXPECT_EQ(written["metadata"]["resourceVersion"], "2") << "written over what was read last";
  EXPECT_EQ(written["endpoints"][0]["addresses"], Json::array({"10.244.1.7"}));
}

TEST(ProxyEndpointTest, AStoppedTermPublishesNothingMore) {
  auto transport = std::make_shared<FakeTransport>();
  transport->expect("GET", kSlice, 403, R"({"kind":"Status","reason":"Forbidden","code":403})");
  kube::RestClient client(transport, kube::ClusterConfig{});
  std::stop_source stop;
  stop.request_stop();
  publishProxyEndpoint(client, kEndpoint, stop.get_token(), std::chrono::hours(1));
  EXPECT_LE(transport->played().size(), 1u);
}

}  // namespace
}  // namespace ipu::cmd
