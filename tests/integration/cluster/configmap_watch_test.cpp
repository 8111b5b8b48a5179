// CRUD on a ConfigMap through the real API server, observed by a watch stream.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "test_cluster.h"

namespace ipu::testing {
namespace {

using namespace std::chrono_literals;
using Json = nlohmann::json;

class ConfigMapWatchTest : public ClusterTest {
 protected:
  // Reads watch events until one for `name` of type `type` arrives; returns its object.
  Json awaitEvent(BackgroundProcess& watch, const std::string& type, const std::string& name) {
    while (auto line = watch.readLine(30s)) {
      auto event = Json::parse(*line);
      if (event.at("type") == type && event.at("object").at("metadata").at("name") == name) {
        return event.at("object");
      }
    }
    ADD_FAILURE() << "no " << type << " event for " << name << "; watch stderr: " << watch.stderrText();
    return nullptr;
  }
};

TEST_F(ConfigMapWatchTest, CreateGetUpdateDeleteAreWatched) {
  BackgroundProcess watch(
      cluster().kubectlCommand({"get", "--raw", "/api/v1/namespaces/" + ns() + "/configmaps?watch=1"}));

  create(R"({"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"settings"},"data":{"size":"4"}})");
  Json added = awaitEvent(watch, "ADDED", "settings");
  EXPECT_EQ(added["data"]["size"], "4");

  Json got = getJson("configmap", "settings");
  ASSERT_FALSE(got.is_null());
  EXPECT_EQ(got["data"]["size"], "4");
  EXPECT_EQ(got["metadata"]["uid"], added["metadata"]["uid"]);

  auto patched =
      kubectl({"patch", "configmap", "settings", "--type=merge", "-p", R"({"data":{"size":"16"}})"});
  ASSERT_TRUE(patched.ok()) << patched.describe();
  Json modified = awaitEvent(watch, "MODIFIED", "settings");
  EXPECT_EQ(modified["data"]["size"], "16");
  EXPECT_NE(modified["metadata"]["resourceVersion"], added["metadata"]["resourceVersion"]);

  auto deleted = kubectl({"delete", "configmap", "settings"});
  ASSERT_TRUE(deleted.ok()) << deleted.describe();
  awaitEvent(watch, "DELETED", "settings");
  EXPECT_TRUE(getJson("configmap", "settings").is_null());
}

TEST_F(ConfigMapWatchTest, DuplicateCreateIsRejected) {
  const std::string manifest = R"({"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"once"}})";
  create(manifest);
  auto again = kubectl({"create", "-f", "-"}, RunOptions{.input = manifest});
  EXPECT_FALSE(again.ok());
  EXPECT_NE(again.err.find("AlreadyExists"), std::string::npos) << again.err;
}

}  // namespace
}  // namespace ipu::testing
