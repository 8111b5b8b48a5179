// The real controller-manager's garbage collector removes what an owner owned.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "test_cluster.h"

namespace ipu::testing {
namespace {

using namespace std::chrono_literals;
using Json = nlohmann::json;

class GarbageCollectionTest : public ClusterTest {
 protected:
  // Creates a pod owned by the given object (controller reference, as an operator sets it).
  void createOwnedPod(const std::string& name, const Json& owner) {
    Json pod = {{"apiVersion", "v1"},
                {"kind", "Pod"},
                {"metadata",
                 {{"name", name},
                  {"ownerReferences",
                   {{{"apiVersion", owner["apiVersion"]},
                     {"kind", owner["kind"]},
                     {"name", owner["metadata"]["name"]},
                     {"uid", owner["metadata"]["uid"]},
                     {"controller", true},
                     {"blockOwnerDeletion", true}}}}}},
                {"spec",
                 {{"nodeSelector", {{"ipu.graphcore.ai/host", "true"}}},
                  {"containers", {{{"name", "main"}, {"image", "busybox"}}}}}}};
    create(pod.dump());
  }
};

TEST_F(GarbageCollectionTest, DeletingTheOwnerDeletesItsPod) {
  create(R"({"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"owner"}})");
  Json owner = getJson("configmap", "owner");
  ASSERT_FALSE(owner.is_null());
  createOwnedPod("owned", owner);
  create(R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"bystander"},
             "spec":{"nodeSelector":{"ipu.graphcore.ai/host":"true"},"containers":[{"name":"main","image":"busybox"}]}})");
  ASSERT_TRUE(
      eventually([&] { return getJson("pod", "owned")["status"].value("phase", "") == "Running"; }, 60s));

  auto deleted = kubectl({"delete", "configmap", "owner"});
  ASSERT_TRUE(deleted.ok()) << deleted.describe();
  EXPECT_TRUE(eventually([&] { return getJson("pod", "owned").is_null(); }, 60s))
      << "the owned pod outlived its owner";
  EXPECT_FALSE(getJson("pod", "bystander").is_null()) << "the garbage collector took a pod nobody owned";
}

TEST_F(GarbageCollectionTest, ForegroundDeletionWaitsForTheOwnedPod) {
  create(R"({"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"owner"}})");
  createOwnedPod("owned", getJson("configmap", "owner"));

  auto deleted =
      kubectl({"delete", "configmap", "owner", "--cascade=foreground", "--wait=true", "--timeout=60s"});
  ASSERT_TRUE(deleted.ok()) << deleted.describe();
  // With foreground propagation the owner is gone only after its dependents are.
  EXPECT_TRUE(getJson("pod", "owned").is_null());
  EXPECT_TRUE(getJson("configmap", "owner").is_null());
}

}  // namespace
}  // namespace ipu::testing
