#include "vipu_proxy/partition_status_endpoint.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

namespace ipu::controllers {
namespace {

using nlohmann::json;

metrics::HttpRequest get(const std::string& path) {
  return {.method = "GET", .path = path, .query = "", .authorization = "", .remoteAddress = "10.0.0.7"};
}

// What the lookup was asked, and what it answers.
struct Lookup {
  Result<virmgrpc::PartitionReadyState> answer = virmgrpc::PS_ACTIVE;
  std::string address;
  std::string id;
  int calls = 0;
  PartitionStatusLookup function() {
    return [this](const std::string& from, const std::string& partition) {
      ++calls;
      address = from;
      id = partition;
      return answer;
    };
  }
};

TEST(PartitionStatusEndpointTest, ThePartitionsStateIsAskedForTheCallerAndAnsweredAsJson) {
  Lookup lookup;
  const metrics::HttpReply reply =
      partitionStatusReply(get("/v1/partitions/ipuop_ml_j_0"), lookup.function());
  EXPECT_EQ(reply.status, 200);
  EXPECT_EQ(reply.contentType, "application/json");
  EXPECT_EQ(json::parse(reply.body), (json{{"partition", "ipuop_ml_j_0"}, {"readyState", "PS_ACTIVE"}}));
  EXPECT_EQ(lookup.address, "10.0.0.7") << "the caller is known by its address, as over gRPC";
  EXPECT_EQ(lookup.id, "ipuop_ml_j_0");
  lookup.answer = virmgrpc::PS_PENDING;
  EXPECT_EQ(json::parse(partitionStatusReply(get("/v1/partitions/p"), lookup.function()).body)["readyState"],
            "PS_PENDING");
}

TEST(PartitionStatusEndpointTest, RefusalsAndErrorsKeepTheirMeaning) {
  const auto statusFor = [](ErrorCode code) {
    Lookup lookup;
    lookup.answer = makeError(code, "why");
    const metrics::HttpReply reply = partitionStatusReply(get("/v1/partitions/p"), lookup.function());
    EXPECT_EQ(json::parse(reply.body)["message"], "why");
    return reply.status;
  };
  EXPECT_EQ(statusFor(ErrorCode::kPermissionDenied), 403);
  EXPECT_EQ(statusFor(ErrorCode::kNotFound), 404);
  EXPECT_EQ(statusFor(ErrorCode::kUnavailable), 503);
  EXPECT_EQ(statusFor(ErrorCode::kInternal), 502);
}

TEST(PartitionStatusEndpointTest, OnlyGetOfOnePartitionIsServed) {
  Lookup lookup;
  for (const char* path :
       {"/", "/v1/partitions/", "/v1/partitions", "/v1/partitions/a/b", "/metrics", "/v2/partitions/p"}) {
    EXPECT_EQ(partitionStatusReply(get(path), lookup.function()).status, 404) << path;
  }
  metrics::HttpRequest post = get("/v1/partitions/p");
  post.method = "DELETE";
  const metrics::HttpReply refused = partitionStatusReply(post, lookup.function());
  EXPECT_EQ(refused.status, 405);
  ASSERT_EQ(refused.headers.size(), 1u);
  EXPECT_EQ(refused.headers[0], (std::pair<std::string, std::string>{"Allow", "GET"}));
  EXPECT_EQ(lookup.calls, 0) << "nothing is asked of V-IPU for a request not served";
}

}  // namespace
}  // namespace ipu::controllers
