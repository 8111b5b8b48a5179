#include "rbac_rules.h"

#include <sstream>

#include <gtest/gtest.h>

namespace ipu::testing {
namespace {

using Json = nlohmann::json;

std::vector<Json> chartObjects() {
  return {
      Json::parse(R"({"kind":"ClusterRole","metadata":{"name":"op"},"rules":[
        {"apiGroups":[""],"resources":["pods"],"verbs":["get","list","watch","create"]},
        {"apiGroups":["graphcore.ai"],"resources":["ipujobs/status"],"verbs":["patch"]},
        {"nonResourceURLs":["/metrics*"],"verbs":["get"]}]})"),
      Json::parse(R"({"kind":"ClusterRoleBinding","metadata":{"name":"op"},
        "roleRef":{"kind":"ClusterRole","name":"op"},
        "subjects":[{"kind":"ServiceAccount","name":"ipu-operator","namespace":"ipu-system"}]})"),
      Json::parse(R"({"kind":"Role","metadata":{"name":"lease","namespace":"ipu-system"},"rules":[
        {"apiGroups":["coordination.k8s.io"],"resources":["leases"],"verbs":["get","update"],"resourceNames":["ipu-operator"]},
        {"apiGroups":["coordination.k8s.io"],"resources":["leases"],"verbs":["create"]}]})"),
      Json::parse(R"({"kind":"RoleBinding","metadata":{"name":"lease","namespace":"ipu-system"},
        "roleRef":{"kind":"Role","name":"lease"},"subjects":[{"kind":"ServiceAccount","name":"ipu-operator"}]})"),
      // Bound to another account: grants nothing to ours.
      Json::parse(R"({"kind":"ClusterRole","metadata":{"name":"wide"},"rules":[
        {"apiGroups":["*"],"resources":["*"],"verbs":["*"]}]})"),
      Json::parse(
          R"({"kind":"ClusterRoleBinding","metadata":{"name":"wide"},"roleRef":{"kind":"ClusterRole","name":"wide"},
        "subjects":[{"kind":"ServiceAccount","name":"someone-else","namespace":"ipu-system"}]})"),
  };
}

AuditedRequest request(std::string verb, std::string group, std::string resource, std::string subresource,
                       std::string ns, std::string name = "") {
  return {std::move(verb),
          std::move(group),
          std::move(resource),
          std::move(subresource),
          std::move(ns),
          std::move(name),
          "",
          200};
}

TEST(RbacRulesTest, AllowsWhatTheBoundRolesGrantAndNothingElse) {
  const auto grants = grantsOf(chartObjects(), "ipu-system", "ipu-operator");
  ASSERT_EQ(grants.size(), 5u);
  EXPECT_TRUE(allows(grants, request("create", "", "pods", "", "team-a")));
  EXPECT_TRUE(allows(grants, request("watch", "", "pods", "", "")));
  EXPECT_FALSE(allows(grants, request("delete", "", "pods", "", "team-a", "x"))) << "verb not granted";
  EXPECT_FALSE(allows(grants, request("patch", "", "pods", "status", "team-a", "x")))
      << "subresource not granted";
  EXPECT_TRUE(allows(grants, request("patch", "graphcore.ai", "ipujobs", "status", "team-a", "j")));
  EXPECT_FALSE(allows(grants, request("patch", "graphcore.ai", "ipujobs", "", "team-a", "j")))
      << "status access is not access to the object";
  EXPECT_FALSE(allows(grants, request("list", "", "secrets", "", ""))) << "another account's wildcard";
}

TEST(RbacRulesTest, RoleGrantsHoldInTheirNamespaceAndForTheirNamesOnly) {
  const auto grants = grantsOf(chartObjects(), "ipu-system", "ipu-operator");
  EXPECT_TRUE(
      allows(grants, request("update", "coordination.k8s.io", "leases", "", "ipu-system", "ipu-operator")));
  EXPECT_FALSE(allows(grants, request("update", "coordination.k8s.io", "leases", "", "ipu-system", "other")));
  EXPECT_FALSE(
      allows(grants, request("update", "coordination.k8s.io", "leases", "", "team-a", "ipu-operator")));
  // A create names no object yet: only the rule without resourceNames allows it.
  EXPECT_TRUE(allows(grants, request("create", "coordination.k8s.io", "leases", "", "ipu-system")));
  EXPECT_FALSE(allows(grants, request("create", "coordination.k8s.io", "leases", "", "team-a")));
}

TEST(RbacRulesTest, NonResourceRequestsMatchUrlsWithWildcardSuffix) {
  const auto grants = grantsOf(chartObjects(), "ipu-system", "ipu-operator");
  AuditedRequest metrics = request("get", "", "", "", "");
  metrics.uri = "/metrics/slis";
  EXPECT_TRUE(allows(grants, metrics));
  metrics.uri = "/version";
  EXPECT_FALSE(allows(grants, metrics));
}

TEST(RbacRulesTest, ReadsTheUsersCompletedRequestsFromTheAuditLog) {
  std::istringstream log(
      R"({"stage":"ResponseComplete","requestReceivedTimestamp":"2026-11-24T07:21:00.790123Z","verb":"get","requestURI":"/api/v1/namespaces/a/pods/p?timeout=5s","user":{"username":"me"},"objectRef":{"resource":"pods","namespace":"a","name":"p","apiVersion":"v1"},"responseStatus":{"code":200}})"
      "\n"
      R"({"stage":"ResponseStarted","verb":"watch","requestURI":"/api/v1/pods?watch=1","user":{"username":"me"},"objectRef":{"resource":"pods"}})"
      "\n"
      R"({"stage":"ResponseComplete","verb":"get","requestURI":"/version","user":{"username":"someone"},"responseStatus":{"code":200}})"
      "\n"
      R"({"stage":"ResponseComplete","verb":"get","requestURI":"/apis?x=1","user":{"username":"me"},"responseStatus":{"code":403}})"
      "\n");
  const auto requests = auditedRequestsOf(log, "me");
  ASSERT_EQ(requests.size(), 2u);
  EXPECT_EQ(requests[0].describe(), "get pods p in a (200)");
  EXPECT_EQ(requests[0].received, "2026-11-24T07:21:00.790123Z");
  EXPECT_EQ(requests[1].describe(), "get /apis (403)");
}

TEST(RbacRulesTest, AMalformedAuditLineIsAnErrorNamingTheLine) {
  std::istringstream log("{\"stage\":\"ResponseComplete\"}\nnot json\n");
  try {
    auditedRequestsOf(log, "me");
    FAIL() << "no error";
  } catch (const std::runtime_error& error) {
    EXPECT_STREQ(error.what(), "audit log line 2 is not a JSON object");
  }
}

}  // namespace
}  // namespace ipu::testing
