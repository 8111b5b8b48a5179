// An informer keeps a true picture across an API server restart: nothing lost, nothing seen twice.
// Runs alone (RUN_SERIAL): restarting the shared API server would disturb other tests.
#include <algorithm>
#include <map>
#include <mutex>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "kube/informer.h"
#include "kube_test_fixture.h"

namespace ipu::testing {
namespace {

using namespace std::chrono_literals;
using kube::Json;
using kube::ResourceRef;

TEST_F(KubeClientTest, InformerSurvivesAnApiServerRestart) {
  std::mutex mutex;
  std::map<std::string, int> adds, deletes;
  auto nameOf = [](const kube::ObjectPtr& o) { return (*o)["metadata"]["name"].get<std::string>(); };
  kube::Informer informer(client(), ResourceRef::configMaps(), ns(),
                          kube::WatcherConfig{.backoffMin = 200ms, .backoffMax = 2s});
  informer.addHandlers({[&](const kube::ObjectPtr& o) {
                          std::lock_guard l(mutex);
                          ++adds[nameOf(o)];
                        },
                        {},
                        [&](const kube::ObjectPtr& o) {
                          std::lock_guard l(mutex);
                          ++deletes[nameOf(o)];
                        }});
  informer.start();
  ASSERT_TRUE(informer.waitForSync(30s));

  auto create = [&](int i) {
    Json cm = {
        {"apiVersion", "v1"}, {"kind", "ConfigMap"}, {"metadata", {{"name", "c" + std::to_string(i)}}}};
    auto created = client().create(ResourceRef::configMaps(), ns(), cm);
    ASSERT_TRUE(created.ok()) << created.error().toString();
  };
  for (int i = 0; i < 10; ++i) create(i);
  ASSERT_TRUE(eventually([&] { return informer.store().size() >= 10; }, 30s));

  cluster().controlComponent("restart", "kube-apiserver");

  for (int i = 10; i < 20; ++i) create(i);
  ASSERT_TRUE(client().remove(ResourceRef::configMaps(), ns(), "c3").ok());

  auto truth = [&] {
    std::map<std::string, std::string> out;
    auto list = client().listAll(ResourceRef::configMaps(), ns());
    for (const auto& item : (*list)["items"])
      out[item["metadata"]["name"]] = item["metadata"]["resourceVersion"];
    return out;
  };
  auto mirror = [&] {
    std::map<std::string, std::string> out;
    for (const auto& o : informer.store().list())
      out[(*o)["metadata"]["name"]] = (*o)["metadata"]["resourceVersion"];
    return out;
  };
  ASSERT_TRUE(eventually([&] { return mirror() == truth(); }, 60s))
      << "the cache never caught up with the server";
  std::lock_guard lock(mutex);
  for (int i = 0; i < 20; ++i)
    EXPECT_EQ(adds["c" + std::to_string(i)], 1)
        << "c" << i << " added " << adds["c" + std::to_string(i)] << " times";
  EXPECT_EQ(deletes["c3"], 1);
  EXPECT_GT(informer.errorCount(), 0u) << "the restart should have been noticed";
}

// While the API server is down, etcd moves on (a write, a deletion) and its history is compacted past the
// watcher's version: re-watching gets 410 Gone, and the watcher must relist, dropping what was deleted.
TEST_F(KubeClientTest, WatcherRelistsWhenItsVersionWasCompactedAway) {
  auto podTemplate = [](const std::string& name) {
    return Json{{"apiVersion", "v1"},
                {"kind", "PodTemplate"},
                {"metadata", {{"name", name}}},
                {"template", {{"spec", {{"containers", {{{"name", "c"}, {"image", "busybox"}}}}}}}}};
  };
  for (int i = 0; i < 3; ++i) {
    ASSERT_TRUE(
        client().create(ResourceRef::podTemplates(), ns(), podTemplate("t" + std::to_string(i))).ok());
  }
  kube::Watcher watcher(client(), ResourceRef::podTemplates(), ns(),
                        kube::WatcherConfig{.backoffMin = 200ms, .backoffMax = 2s});
  kube::Store store;
  std::mutex mutex;
  std::vector<ErrorCode> errors;
  int relists = 0;
  std::jthread thread([&](std::stop_token stop) {
    watcher.run(
        stop,
        [&](kube::WatcherEvent&& event) {
          if (event.kind == kube::WatcherEvent::Kind::kInit) {
            std::lock_guard l(mutex);
            ++relists;
          }
          store.apply(std::move(event));
        },
        [&](const Error& error) {
          std::lock_guard l(mutex);
          errors.push_back(error.code);
        });
  });
  ASSERT_TRUE(eventually([&] { return store.hasSynced() && store.size() == 3; }, 30s));

  cluster().controlComponent("stop", "kube-apiserver");
  // t1 disappears behind the watcher's back, the revision moves on, history is compacted.
  auto deleted = cluster().etcdctl({"del", "/registry/podtemplates/" + ns() + "/t1"});
  ASSERT_TRUE(deleted.ok() && deleted.out == "1\n") << deleted.describe();
  ASSERT_TRUE(cluster().etcdctl({"put", "/ipu-operator-tests/revision-bump", "x"}).ok());
  cluster().compactEtcd();
  cluster().controlComponent("start", "kube-apiserver");

  auto after = client().create(ResourceRef::podTemplates(), ns(), podTemplate("after"));
  ASSERT_TRUE(after.ok()) << after.error().toString();
  ASSERT_TRUE(eventually([&] { return store.get(ns(), "after") != nullptr; }, 60s));
  EXPECT_EQ(store.size(), 3u);
  EXPECT_EQ(store.get(ns(), "t1"), nullptr) << "a ghost survived the relist";
  std::lock_guard lock(mutex);
  EXPECT_NE(std::find(errors.begin(), errors.end(), ErrorCode::kGone), errors.end()) << "no 410 was seen";
  EXPECT_EQ(relists, 2) << "one initial list and one relist after the 410";
}

}  // namespace
}  // namespace ipu::testing
