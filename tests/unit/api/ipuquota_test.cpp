#include "api/ipuquota.h"

#include <gtest/gtest.h>

#include "yaml_json.h"

namespace ipu::api {
namespace {

using testing::yamlToJson;

// The spec is JSON text: numbers beyond 64 bits reach the parser as the API server would pass them.
Json quotaObject(const std::string& specJson) {
  Json object = yamlToJson(
      "apiVersion: graphcore.ai/v1alpha1\nkind: IPUQuota\n"
      "metadata: {namespace: team-a, name: gold, uid: u1, generation: 3}\n");
  object["spec"] = Json::parse(specJson);
  return object;
}

TEST(IpuQuotaTest, EveryFieldIsRead) {
  auto quota = parseIpuQuota(quotaObject(R"({"maxIPUs": 64, "maxJobs": 4, "maxPriority": -5})"));
  ASSERT_TRUE(quota.ok()) << quota.error().toString();
  EXPECT_EQ(quota->identity.ns, "team-a");
  EXPECT_EQ(quota->identity.name, "gold");
  EXPECT_EQ(quota->generation, 3);
  EXPECT_EQ(quota->spec, (IpuQuotaSpec{64, 4, -5}));
}

TEST(IpuQuotaTest, OptionalFieldsStayAbsentAndZeroIsALimit) {
  auto quota = parseIpuQuota(quotaObject(R"({"maxIPUs": 0})"));
  ASSERT_TRUE(quota.ok()) << quota.error().toString();
  EXPECT_EQ(quota->spec, (IpuQuotaSpec{0, std::nullopt, std::nullopt}));
  auto nulls = parseIpuQuotaSpec(yamlToJson("{maxIPUs: 8, maxJobs: null, maxPriority: null}"));
  ASSERT_TRUE(nulls.ok());
  EXPECT_FALSE(nulls->maxJobs.has_value());
}

TEST(IpuQuotaTest, MalformedSpecsGiveMessagesNamingTheField) {
  struct Case {
    std::string json;
    std::string message;
  };
  for (const auto& c : std::vector<Case>{
           {R"({})", "spec.maxIPUs: is required"},
           {R"({"maxIPUs": null})", "spec.maxIPUs: is required"},
           {R"({"maxIPUs": -1})", "spec.maxIPUs: must be a whole number from 0 to 2147483647, not -1"},
           {R"({"maxIPUs": 2147483648})",
            "spec.maxIPUs: must be a whole number from 0 to 2147483647, not 2147483648"},
           {R"({"maxIPUs": 18446744073709551615})",
            "spec.maxIPUs: must be a whole number from 0 to 2147483647, not 18446744073709551615"},
           {R"({"maxIPUs": -9223372036854775809})", "spec.maxIPUs: must be a whole number"},
           {R"({"maxIPUs": 1e30})", "spec.maxIPUs: must be a whole number"},
           {R"({"maxIPUs": 1.5})", "spec.maxIPUs: must be a whole number from 0 to 2147483647, not 1.5"},
           {R"({"maxIPUs": "16"})",
            "spec.maxIPUs: must be a whole number from 0 to 2147483647, written without quotes, not \"16\""},
           {R"({"maxIPUs": true})", "spec.maxIPUs: must be a whole number from 0 to 2147483647, not true"},
           {R"({"maxIPUs": [16]})", "spec.maxIPUs: must be a whole number"},
           {R"({"maxIPUs": 16, "maxJobs": -2})",
            "spec.maxJobs: must be a whole number from 0 to 2147483647, not -2"},
           {R"({"maxIPUs": 16, "maxJobs": {"n": 1}})", "spec.maxJobs: must be a whole number"},
           {R"({"maxIPUs": 16, "maxPriority": 2147483648})",
            "spec.maxPriority: must be a whole number from -2147483648 to 2147483647, not 2147483648"},
           {R"({"maxIPUs": 16, "maxPriority": -2147483649})",
            "spec.maxPriority: must be a whole number from -2147483648"},
           {R"({"maxIPUs": 16, "maxPriority": "high"})", "spec.maxPriority: must be a whole number"},
           {R"(["maxIPUs", 16])", "spec: the IPUQuota has no spec"},
       }) {
    auto parsed = parseIpuQuota(quotaObject(c.json));
    ASSERT_FALSE(parsed.ok()) << c.json;
    EXPECT_EQ(parsed.error().code, ErrorCode::kInvalidArgument) << c.json;
    EXPECT_NE(parsed.error().message.find(c.message), std::string::npos)
        << c.json << " -> " << parsed.error().message;
    ASSERT_FALSE(parsed.error().causes.empty()) << c.json;
  }
}

TEST(IpuQuotaTest, TheLedgerIsReadFromStatus) {
  Json object = quotaObject(R"({"maxIPUs": 64})");
  object["metadata"]["resourceVersion"] = "42";
  object["status"] = Json::parse(R"({"usedIPUs": 8, "admissions": {"bert": {"uid": "u-b", "ipus": 8}}})");
  auto quota = parseIpuQuota(object);
  ASSERT_TRUE(quota.ok()) << quota.error().toString();
  EXPECT_EQ(quota->resourceVersion, "42");
  ASSERT_EQ(quota->admissions.size(), 1u);
  EXPECT_EQ(quota->admissions.at("bert"), (LedgerEntry{"u-b", 8}));
  EXPECT_TRUE(parseLedger(Json::parse(R"({"admissions": null})"))->empty());
}

TEST(IpuQuotaTest, AMalformedLedgerIsAnErrorNamingTheEntry) {
  for (const char* ledger :
       {R"({"admissions": []})", R"({"admissions": {"j": {"uid": "u"}}})",
        R"({"admissions": {"j": {"uid": 7, "ipus": 1}}})",
        R"({"admissions": {"j": {"uid": "u", "ipus": -1}}})",
        R"({"admissions": {"j": {"uid": "u", "ipus": 1.5}}})", R"({"admissions": {"j": "u"}})"}) {
    Json object = quotaObject(R"({"maxIPUs": 64})");
    object["status"] = Json::parse(ledger);
    auto quota = parseIpuQuota(object);
    ASSERT_FALSE(quota.ok()) << ledger;
    EXPECT_EQ(quota.error().code, ErrorCode::kInvalidArgument);
    EXPECT_EQ(quota.error().message.rfind("status.admissions", 0), 0u) << quota.error().message;
  }
}

TEST(IpuQuotaTest, NotAnIpuQuotaOrNoSpec) {
  EXPECT_FALSE(parseIpuQuota(Json::array()).ok());
  EXPECT_FALSE(parseIpuQuota(yamlToJson("{kind: IPUJob, spec: {maxIPUs: 1}}")).ok());
  auto noSpec = parseIpuQuota(yamlToJson("{kind: IPUQuota, metadata: {name: q}}"));
  ASSERT_FALSE(noSpec.ok());
  EXPECT_NE(noSpec.error().message.find("needs at least maxIPUs"), std::string::npos)
      << noSpec.error().message;
}

TEST(IpuQuotaTest, StatusJsonShowsEveryCount) {
  const Json json = toJson(IpuQuotaStatus{16, 8, 32, 3, 5, 7});
  EXPECT_EQ(json,
            yamlToJson("{usedIPUs: 16, reservedIPUs: 8, pendingIPUs: 32, admittedJobs: 3, waitingJobs: 5, "
                       "observedGeneration: 7}"));
  EXPECT_FALSE(toJson(IpuQuotaStatus{}).contains("observedGeneration"));
  EXPECT_EQ(toJson(IpuQuotaStatus{}).at("usedIPUs"), 0);
}

TEST(IpuQuotaTest, StatusCountsReadBackAndAbsentOrMistypedOnesAreZero) {
  const IpuQuotaStatus status{16, 8, 32, 3, 5, 7};
  EXPECT_EQ(parseIpuQuotaStatus(toJson(status)), status);
  EXPECT_EQ(parseIpuQuotaStatus(Json()), IpuQuotaStatus{});
  const IpuQuotaStatus mistyped = parseIpuQuotaStatus(Json{{"usedIPUs", "16"}, {"admittedJobs", 2}});
  EXPECT_EQ(mistyped.usedIpus, 0);
  EXPECT_EQ(mistyped.admittedJobs, 2);
  EXPECT_FALSE(mistyped.observedGeneration);
}

}  // namespace
}  // namespace ipu::api
