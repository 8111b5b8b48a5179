// The REST client against the real API server: CRUD, optimistic concurrency, patches, server-side apply,
// the status subresource, selectors and pagination, deletion preconditions, all on a CRD.
#include <set>

#include <gtest/gtest.h>

#include "kube/base64.h"
#include "kube_test_fixture.h"

namespace ipu::testing {
namespace {

using namespace std::chrono_literals;
using kube::Json;
using kube::ResourceRef;

const ResourceRef kWidgets{"test.ipu-operator.dev", "v1", "widgets", true};

// A small CRD with a status subresource, installed once for the whole test binary.
void installWidgetCrd(kube::RestClient& client) {
  static bool installed = false;
  if (installed) return;
  Json schema = {{"type", "object"},
                 {"properties",
                  {{"spec",
                    {{"type", "object"},
                     {"properties",
                      {{"size", {{"type", "integer"}, {"minimum", 1}}}, {"colour", {{"type", "string"}}}}}}},
                   {"status", {{"type", "object"}, {"properties", {{"phase", {{"type", "string"}}}}}}}}}};
  Json crd = {
      {"apiVersion", "apiextensions.k8s.io/v1"},
      {"kind", "CustomResourceDefinition"},
      {"metadata", {{"name", "widgets.test.ipu-operator.dev"}}},
      {"spec",
       {{"group", "test.ipu-operator.dev"},
        {"scope", "Namespaced"},
        {"names",
         {{"plural", "widgets"}, {"singular", "widget"}, {"kind", "Widget"}, {"listKind", "WidgetList"}}},
        {"versions",
         {{{"name", "v1"},
           {"served", true},
           {"storage", true},
           {"subresources", {{"status", Json::object()}}},
           {"schema", {{"openAPIV3Schema", schema}}}}}}}}};
  auto applied = client.apply(ResourceRef::customResourceDefinitions(), "", crd, "ipu-operator-tests");
  ASSERT_TRUE(applied.ok()) << applied.error().toString();
  ASSERT_TRUE(eventually(
      [&] {
        auto got = client.get(ResourceRef::customResourceDefinitions(), "", "widgets.test.ipu-operator.dev");
        if (!got.ok()) return false;
        for (const auto& condition : (*got)["status"].value("conditions", Json::array())) {
          if (condition["type"] == "Established" && condition["status"] == "True") return true;
        }
        return false;
      },
      30s));
  // Established can precede the discovery of the new resource by a moment.
  ASSERT_TRUE(eventually([&] { return client.list(kWidgets, "default").ok(); }, 30s));
  installed = true;
}

Json widget(const std::string& name, int size, Json labels = Json::object()) {
  return {{"apiVersion", "test.ipu-operator.dev/v1"},
          {"kind", "Widget"},
          {"metadata", {{"name", name}, {"labels", labels}}},
          {"spec", {{"size", size}}}};
}

class RestClientIntegrationTest : public KubeClientTest {
 protected:
  void SetUp() override {
    KubeClientTest::SetUp();
    installWidgetCrd(client());
  }
};

TEST_F(RestClientIntegrationTest, CreateGetUpdateWithOptimisticConcurrency) {
  auto created = client().create(kWidgets, ns(), widget("w", 4));
  ASSERT_TRUE(created.ok()) << created.error().toString();
  EXPECT_FALSE((*created)["metadata"]["uid"].get<std::string>().empty());

  auto again = client().create(kWidgets, ns(), widget("w", 4));
  EXPECT_EQ(again.error().code, ErrorCode::kAlreadyExists);

  Json fresh = *client().get(kWidgets, ns(), "w");
  Json stale = fresh;
  fresh["spec"]["size"] = 8;
  auto updated = client().update(kWidgets, ns(), fresh);
  ASSERT_TRUE(updated.ok()) << updated.error().toString();
  EXPECT_EQ((*updated)["spec"]["size"], 8);

  stale["spec"]["size"] = 2;
  auto conflict = client().update(kWidgets, ns(), stale);
  ASSERT_FALSE(conflict.ok());
  EXPECT_EQ(conflict.error().code, ErrorCode::kConflict) << conflict.error().toString();
  EXPECT_EQ(conflict.error().httpStatus, 409);
}

TEST_F(RestClientIntegrationTest, InvalidObjectsAreRejectedWithFieldCauses) {
  auto invalid = client().create(kWidgets, ns(), widget("tiny", 0));
  ASSERT_FALSE(invalid.ok());
  EXPECT_EQ(invalid.error().code, ErrorCode::kInvalidArgument);
  ASSERT_FALSE(invalid.error().causes.empty()) << invalid.error().toString();
  EXPECT_EQ(invalid.error().causes[0].field, "spec.size");
  EXPECT_EQ(client().get(kWidgets, ns(), "missing").error().code, ErrorCode::kNotFound);
}

TEST_F(RestClientIntegrationTest, MergePatchJsonPatchWithTestGuardAndStatus) {
  ASSERT_TRUE(client().create(kWidgets, ns(), widget("w", 4)).ok());
  auto merged =
      client().patch(kWidgets, ns(), "w", kube::PatchType::kMerge, {{"spec", {{"colour", "blue"}}}});
  ASSERT_TRUE(merged.ok()) << merged.error().toString();
  EXPECT_EQ((*merged)["spec"]["colour"], "blue");
  EXPECT_EQ((*merged)["spec"]["size"], 4);

  std::string uid = (*merged)["metadata"]["uid"];
  Json guarded = Json::array({{{"op", "test"}, {"path", "/metadata/uid"}, {"value", uid}},
                              {{"op", "replace"}, {"path", "/spec/size"}, {"value", 16}}});
  auto patched = client().patch(kWidgets, ns(), "w", kube::PatchType::kJson, guarded);
  ASSERT_TRUE(patched.ok()) << patched.error().toString();
  EXPECT_EQ((*patched)["spec"]["size"], 16);
  guarded[0]["value"] = "another-uid";
  auto refused = client().patch(kWidgets, ns(), "w", kube::PatchType::kJson, guarded);
  EXPECT_FALSE(refused.ok()) << "a failed test op must refuse the whole patch";

  // Status goes through its subresource only; the main resource ignores it.
  auto status = client().patch(kWidgets, ns(), "w", kube::PatchType::kMerge,
                               {{"status", {{"phase", "Ready"}}}}, "status");
  ASSERT_TRUE(status.ok()) << status.error().toString();
  EXPECT_EQ((*status)["status"]["phase"], "Ready");
  auto ignored =
      client().patch(kWidgets, ns(), "w", kube::PatchType::kMerge, {{"status", {{"phase", "Broken"}}}});
  ASSERT_TRUE(ignored.ok());
  EXPECT_EQ((*ignored)["status"]["phase"], "Ready");
  Json withStatus = *ignored;
  withStatus["status"]["phase"] = "Done";
  auto updatedStatus = client().updateStatus(kWidgets, ns(), withStatus);
  ASSERT_TRUE(updatedStatus.ok()) << updatedStatus.error().toString();
  EXPECT_EQ((*updatedStatus)["status"]["phase"], "Done");
}

TEST_F(RestClientIntegrationTest, ServerSideApplyCreatesMergesAndTracksOwnership) {
  auto created = client().apply(kWidgets, ns(), widget("w", 4), "controller-a");
  ASSERT_TRUE(created.ok()) << created.error().toString();
  Json colourOnly = {{"apiVersion", "test.ipu-operator.dev/v1"},
                     {"kind", "Widget"},
                     {"metadata", {{"name", "w"}}},
                     {"spec", {{"colour", "red"}}}};
  auto merged = client().apply(kWidgets, ns(), colourOnly, "controller-b");
  ASSERT_TRUE(merged.ok()) << merged.error().toString();
  EXPECT_EQ((*merged)["spec"]["size"], 4);
  EXPECT_EQ((*merged)["spec"]["colour"], "red");
  std::set<std::string> managers;
  for (const auto& entry : (*merged)["metadata"]["managedFields"]) managers.insert(entry["manager"]);
  EXPECT_TRUE(managers.count("controller-a") && managers.count("controller-b"));

  // Without force, taking a field another manager owns is a conflict.
  Json resize = widget("w", 8);
  auto conflict = client().apply(kWidgets, ns(), resize, "controller-b", false);
  EXPECT_EQ(conflict.error().code, ErrorCode::kConflict) << conflict.error().toString();
  auto forced = client().apply(kWidgets, ns(), resize, "controller-b", true);
  ASSERT_TRUE(forced.ok());
  EXPECT_EQ((*forced)["spec"]["size"], 8);
}

TEST_F(RestClientIntegrationTest, ListWithSelectorsAndPages) {
  for (int i = 0; i < 7; ++i) {
    ASSERT_TRUE(client()
                    .create(kWidgets, ns(),
                            widget("w" + std::to_string(i), i + 1, {{"parity", i % 2 == 0 ? "even" : "odd"}}))
                    .ok());
  }
  auto page = client().list(kWidgets, ns(), kube::ListOptions{.limit = 3});
  ASSERT_TRUE(page.ok());
  EXPECT_EQ((*page)["items"].size(), 3u);
  EXPECT_FALSE((*page)["metadata"].value("continue", "").empty());

  auto all = client().listAll(kWidgets, ns(), kube::ListOptions{.limit = 3});
  ASSERT_TRUE(all.ok());
  EXPECT_EQ((*all)["items"].size(), 7u);
  EXPECT_FALSE((*all)["metadata"]["resourceVersion"].get<std::string>().empty());

  auto even = client().listAll(kWidgets, ns(), kube::ListOptions{.labelSelector = "parity=even", .limit = 2});
  ASSERT_TRUE(even.ok());
  EXPECT_EQ((*even)["items"].size(), 4u);
  auto named = client().listAll(kWidgets, ns(), kube::ListOptions{.fieldSelector = "metadata.name=w3"});
  ASSERT_TRUE(named.ok());
  ASSERT_EQ((*named)["items"].size(), 1u);
  EXPECT_EQ((*named)["items"][0]["metadata"]["name"], "w3");
}

TEST_F(RestClientIntegrationTest, DeleteWithPreconditionsAndPropagation) {
  auto created = client().create(kWidgets, ns(), widget("w", 4));
  ASSERT_TRUE(created.ok());
  auto wrongUid = client().remove(kWidgets, ns(), "w", kube::DeleteOptions{.preconditionUid = "not-the-uid"});
  EXPECT_EQ(wrongUid.error().code, ErrorCode::kConflict) << wrongUid.error().toString();
  auto deleted = client().remove(
      kWidgets, ns(), "w",
      kube::DeleteOptions{.propagationPolicy = "Foreground",
                          .preconditionUid = (*created)["metadata"]["uid"].get<std::string>()});
  ASSERT_TRUE(deleted.ok()) << deleted.error().toString();
  EXPECT_TRUE(eventually(
      [&] {
        auto got = client().get(kWidgets, ns(), "w");
        return !got.ok() && got.error().code == ErrorCode::kNotFound;
      },
      30s));
  auto again = client().remove(kWidgets, ns(), "w");
  ASSERT_FALSE(again.ok());
  EXPECT_EQ(again.error().code, ErrorCode::kNotFound);
}

TEST_F(RestClientIntegrationTest, CoreResourcesAndForbiddenAccess) {
  Json secret = {{"apiVersion", "v1"},
                 {"kind", "Secret"},
                 {"metadata", {{"name", "s"}}},
                 {"data", {{"key", kube::base64Encode("value")}}}};
  ASSERT_TRUE(client().create(ResourceRef::secrets(), ns(), secret).ok());

  // A service account with no rights is refused with 403, through a bearer token.
  ASSERT_TRUE(kubectl({"create", "serviceaccount", "nobody"}).ok());
  auto token = kubectl({"create", "token", "nobody"});
  ASSERT_TRUE(token.ok()) << token.describe();
  kube::ClusterConfig asNobody = config_;
  asNobody.clientCertPem.clear();
  asNobody.clientKeyPem.clear();
  asNobody.bearerToken = token.out.substr(0, token.out.find_last_not_of('\n') + 1);
  auto transport = kube::CppRestTransport::create(asNobody);
  ASSERT_TRUE(transport.ok());
  kube::RestClient nobody(std::move(*transport), asNobody);
  auto forbidden = nobody.get(ResourceRef::secrets(), ns(), "s");
  EXPECT_EQ(forbidden.error().code, ErrorCode::kPermissionDenied) << forbidden.error().toString();

  asNobody.bearerToken = "not-a-token";
  auto badTransport = kube::CppRestTransport::create(asNobody);
  ASSERT_TRUE(badTransport.ok());
  kube::RestClient stranger(std::move(*badTransport), asNobody);
  EXPECT_EQ(stranger.get(ResourceRef::secrets(), ns(), "s").error().code, ErrorCode::kUnauthenticated);
}

TEST_F(RestClientIntegrationTest, ServerIdentityIsVerified) {
  // The cluster's CA replaced by a stranger's: the TLS handshake must fail, never fall back to trusting.
  auto otherCa = run({"openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1",
                      "-nodes", "-keyout", "/dev/null", "-subj", "/CN=stranger", "-days", "1"});
  ASSERT_TRUE(otherCa.ok()) << otherCa.describe();
  kube::ClusterConfig wrongCa = config_;
  wrongCa.caPem = otherCa.out;
  auto transport = kube::CppRestTransport::create(wrongCa);
  ASSERT_TRUE(transport.ok()) << transport.error().toString();
  kube::RestClient client(std::move(*transport), wrongCa);
  auto refused = client.get(ResourceRef::namespaces(), "", ns());
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().code, ErrorCode::kUnavailable) << refused.error().toString();

  kube::ClusterConfig badKey = config_;
  badKey.clientKeyPem = "-----BEGIN PRIVATE KEY-----\nnot a key\n-----END PRIVATE KEY-----\n";
  auto rejected = kube::CppRestTransport::create(badKey);
  ASSERT_FALSE(rejected.ok());
  EXPECT_NE(rejected.error().message.find("client key"), std::string::npos) << rejected.error().message;
}

}  // namespace
}  // namespace ipu::testing
