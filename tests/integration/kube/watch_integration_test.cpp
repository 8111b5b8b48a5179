// Watches and informers against the real API server, including an API server restart in the middle.
#include <map>
#include <mutex>
#include <set>

#include <gtest/gtest.h>

#include "ctrl/controller.h"
#include "fake_clock.h"
#include "kube/informer.h"
#include "kube_test_fixture.h"

namespace ipu::testing {
namespace {

using namespace std::chrono_literals;
using kube::Json;
using kube::ResourceRef;

Json configMap(const std::string& name, const std::string& value) {
  return {
      {"apiVersion", "v1"}, {"kind", "ConfigMap"}, {"metadata", {{"name", name}}}, {"data", {{"v", value}}}};
}

// Counts what an informer's handlers saw, per object name.
struct Seen {
  std::mutex mutex;
  std::map<std::string, int> adds, updates, deletes;

  kube::EventHandlers handlers() {
    auto name = [](const kube::ObjectPtr& o) { return (*o)["metadata"]["name"].get<std::string>(); };
    return {[this, name](const kube::ObjectPtr& o) {
              std::lock_guard l(mutex);
              ++adds[name(o)];
            },
            [this, name](const kube::ObjectPtr&, const kube::ObjectPtr& o) {
              std::lock_guard l(mutex);
              ++updates[name(o)];
            },
            [this, name](const kube::ObjectPtr& o) {
              std::lock_guard l(mutex);
              ++deletes[name(o)];
            }};
  }
};

class WatchIntegrationTest : public KubeClientTest {
 protected:
  // name -> resourceVersion, from a fresh list and from the informer's store.
  std::map<std::string, std::string> listed() {
    auto list = client().listAll(ResourceRef::configMaps(), ns());
    EXPECT_TRUE(list.ok());
    std::map<std::string, std::string> out;
    for (const auto& item : (*list)["items"]) {
      if (item["metadata"]["name"] != "kube-root-ca.crt")
        out[item["metadata"]["name"]] = item["metadata"]["resourceVersion"];
    }
    return out;
  }
  static std::map<std::string, std::string> cached(const kube::Store& store) {
    std::map<std::string, std::string> out;
    for (const auto& object : store.list()) {
      std::string name = (*object)["metadata"]["name"];
      if (name != "kube-root-ca.crt") out[name] = (*object)["metadata"]["resourceVersion"];
    }
    return out;
  }
  void changeConfigMap(const std::string& name) {
    auto patched = client().patch(ResourceRef::configMaps(), ns(), name, kube::PatchType::kMerge,
                                  {{"data", {{"v", "2"}}}});
    ASSERT_TRUE(patched.ok()) << patched.error().toString();
  }

  void createConfigMaps(int from, int to) {
    for (int i = from; i < to; ++i) {
      auto created =
          client().create(ResourceRef::configMaps(), ns(), configMap("c" + std::to_string(i), "1"));
      ASSERT_TRUE(created.ok()) << created.error().toString();
    }
  }
};

Json podTemplate(const std::string& name) {
  return {{"apiVersion", "v1"},
          {"kind", "PodTemplate"},
          {"metadata", {{"name", name}}},
          {"template", {{"spec", {{"containers", {{{"name", "c"}, {"image", "busybox"}}}}}}}}};
}

TEST_F(WatchIntegrationTest, WatchFromACompactedVersionIsGone) {
  auto first = client().create(ResourceRef::podTemplates(), ns(), podTemplate("a"));
  ASSERT_TRUE(first.ok()) << first.error().toString();
  std::string old = (*first)["metadata"]["resourceVersion"];
  ASSERT_TRUE(client().create(ResourceRef::podTemplates(), ns(), podTemplate("b")).ok());
  // One more write, so that the compaction reaches past b: the watch must start where history is gone.
  ASSERT_TRUE(client().create(ResourceRef::configMaps(), ns(), Json{{"metadata", {{"name", "bump"}}}}).ok());
  cluster().compactEtcd();
  auto ended = client().watch(ResourceRef::podTemplates(), ns(), kube::WatchOptions{.resourceVersion = old},
                              [](kube::WatchEvent&&) { return true; });
  ASSERT_FALSE(ended.ok());
  EXPECT_EQ(ended.error().code, ErrorCode::kGone) << ended.error().toString();
}

TEST_F(WatchIntegrationTest, InformerMirrorsChangesAndBookmarksKeepItCheap) {
  kube::Informer informer(client(), ResourceRef::configMaps(), ns(), kube::WatcherConfig{.pageSize = 2});
  Seen seen;
  informer.addHandlers(seen.handlers());
  createConfigMaps(0, 5);
  informer.start();
  ASSERT_TRUE(informer.waitForSync(30s));
  createConfigMaps(5, 8);
  changeConfigMap("c1");
  ASSERT_TRUE(client().remove(ResourceRef::configMaps(), ns(), "c2").ok());
  ASSERT_TRUE(eventually([&] { return cached(informer.store()) == listed(); }, 30s));
  std::lock_guard lock(seen.mutex);
  for (int i = 0; i < 8; ++i) EXPECT_EQ(seen.adds["c" + std::to_string(i)], 1) << "c" << i;
  EXPECT_EQ(seen.updates["c1"], 1);
  EXPECT_EQ(seen.deletes["c2"], 1);
  EXPECT_EQ(informer.errorCount(), 0u);
}

// A controller's changes of children within a batch queue their owner once: the first change sets when, the
// ones after it join that reconcile (as Kubernetes' Job controller batches pod events); a change the
// batching passes at once (here a deletion) is never held. The queue runs on a fake clock, so nothing held
// is due until the test says the batch is over.
TEST_F(WatchIntegrationTest, ChildChangesWithinABatchQueueTheirOwnerOnceAndADeletionAtOnce) {
  struct Untouched final : ctrl::Reconciler {
    Result<ctrl::Action> reconcile(const kube::ObjectPtr&) override { return ctrl::Action::awaitChange(); }
  } reconciler;
  kube::Store owners;
  owners.apply({kube::WatcherEvent::Kind::kInit, nullptr});
  owners.apply(
      {kube::WatcherEvent::Kind::kInitApply, {{"metadata", {{"namespace", ns()}, {"name", "owner"}}}}});
  owners.apply({kube::WatcherEvent::Kind::kInitDone, nullptr});
  FakeClock clock;
  ctrl::Controller controller("batched", owners, reconciler, {.workers = 1, .observer = {}}, clock);
  kube::Informer informer(client(), ResourceRef::configMaps(), ns());
  const std::string owner = ns() + "/owner";
  controller.watch(
      informer,
      [&](const kube::ObjectPtr&, const kube::ObjectPtr&) { return std::vector<std::string>{owner}; },
      {.window = 2s, .passesAtOnce = [](const kube::ObjectPtr&, const kube::ObjectPtr& current) {
         return current == nullptr;
       }});
  informer.start();
  ASSERT_TRUE(informer.waitForSync(30s));
  createConfigMaps(0, 5);
  changeConfigMap("c1");
  ASSERT_TRUE(eventually([&] { return cached(informer.store()) == listed(); }, 30s));
  auto& queue = controller.queue();
  EXPECT_EQ(queue.depth(), (ctrl::WorkQueue::Depth{.queued = 0, .processing = 0, .delayed = 1}))
      << "six changes, one owner, one reconcile waiting";
  clock.advance(2s);
  EXPECT_EQ(queue.len(), 1u);
  ASSERT_EQ(queue.get(), owner);
  queue.done(owner);
  // A change is held, a deletion is not.
  changeConfigMap("c3");
  EXPECT_TRUE(eventually([&] { return queue.depth().delayed == 1u; }, 30s));
  EXPECT_EQ(queue.len(), 0u);
  ASSERT_TRUE(client().remove(ResourceRef::configMaps(), ns(), "c4").ok());
  EXPECT_TRUE(eventually([&] { return queue.len() == 1u; }, 30s)) << "the deletion passes at once";
}

// What the operator reads from the API server is bounded, however large the objects tenants write: with
// caps of 64 KiB a body and 16 KiB a watch line, eight ConfigMaps of 12 KiB are listed by pages halved
// until they fit (every object arrives, whole), and an update that makes one 40 KiB reaches the informer
// as too large to hold, named, while the store keeps the version before it and the watch goes on.
TEST_F(WatchIntegrationTest, PagesAndEventsLargerThanTheClientHoldsAreBoundedNotLost) {
  kube::TransportOptions small;
  small.maxBodyBytes = 64 * 1024;
  small.maxLineBytes = 16 * 1024;
  auto transport = kube::CppRestTransport::create(config_, small);
  ASSERT_TRUE(transport.ok()) << transport.error().toString();
  kube::RestClient capped(std::shared_ptr<kube::Transport>(std::move(*transport)), config_,
                          kube::ClientOptions{.qps = 500, .burst = 500});
  for (int i = 0; i < 8; ++i) {
    ASSERT_TRUE(client()
                    .create(ResourceRef::configMaps(), ns(),
                            configMap("big" + std::to_string(i), std::string(12 * 1024, 'a' + i)))
                    .ok());
  }
  // A page of all eight is ~100 KiB: too large at once.
  auto whole = capped.list(ResourceRef::configMaps(), ns(), kube::ListOptions{.limit = 500});
  ASSERT_FALSE(whole.ok());
  EXPECT_EQ(whole.error().reason, kube::kBodyTooLarge) << whole.error().toString();

  kube::Informer informer(capped, ResourceRef::configMaps(), ns());
  std::mutex mutex;
  std::vector<std::pair<Json, std::size_t>> oversized;
  informer.addHandlers({.onOversized = [&](const Json& identity, std::size_t bytes) {
    std::lock_guard lock(mutex);
    oversized.emplace_back(identity, bytes);
  }});
  informer.start();
  ASSERT_TRUE(informer.waitForSync(30s));
  EXPECT_EQ(cached(informer.store()), listed());
  EXPECT_EQ((*informer.store().get(ns(), "big3"))["data"]["v"], std::string(12 * 1024, 'd'));
  EXPECT_EQ(informer.errorCount(), 0u);

  const std::string before = (*informer.store().get(ns(), "big3"))["metadata"]["resourceVersion"];
  ASSERT_TRUE(client()
                  .patch(ResourceRef::configMaps(), ns(), "big3", kube::PatchType::kMerge,
                         {{"data", {{"v", std::string(40 * 1024, 'x')}}}})
                  .ok());
  ASSERT_TRUE(client().create(ResourceRef::configMaps(), ns(), configMap("after", "1")).ok());
  ASSERT_TRUE(eventually([&] { return informer.store().get(ns(), "after") != nullptr; }, 30s));
  std::lock_guard lock(mutex);
  ASSERT_EQ(oversized.size(), 1u);
  EXPECT_EQ(oversized[0].first["metadata"]["name"], "big3");
  EXPECT_EQ(oversized[0].first["metadata"]["namespace"], ns());
  EXPECT_EQ(oversized[0].first["kind"], "ConfigMap");
  EXPECT_GT(oversized[0].second, 40u * 1024);
  EXPECT_EQ((*informer.store().get(ns(), "big3"))["metadata"]["resourceVersion"], before);
}

// A tenant's IPUJob may nest its free-form fields (the template's metadata) as deep as the API server decodes
// JSON, 10,000 levels in all: a packed cache (kube/packed_json.h) holds it whole and gives it back.
TEST_F(WatchIntegrationTest, APackedCacheHoldsAJobNestedAsDeepAsTheApiServerAccepts) {
  ASSERT_EQ(TestCluster::get().installCrdsOnce(), "") << "the CRDs could not be installed";
  constexpr int kDepth = 9990;  // with the 5 levels above the field and the API server's limit of 10,000
  Json deep = "bottom";
  for (int level = 0; level < kDepth; ++level) deep = Json{{"a", std::move(deep)}};
  Json job = {{"apiVersion", "graphcore.ai/v1alpha1"},
              {"kind", "IPUJob"},
              {"metadata", {{"name", "deep"}}},
              {"spec",
               {{"ipusPerJobInstance", "1"},
                {"workers",
                 {{"template",
                   {{"metadata", {{"deep", std::move(deep)}}},
                    {"spec", {{"containers", {{{"name", "c"}, {"image", "busybox"}}}}}}}}}}}}};
  const ResourceRef ipuJobs{"graphcore.ai", "v1alpha1", "ipujobs", true};
  auto created = client().create(ipuJobs, ns(), job);
  ASSERT_TRUE(created.ok()) << created.error().toString();

  kube::Informer informer(client(), ipuJobs, ns());
  informer.setStoreLayout(kube::StoreLayout::kPacked);
  informer.start();
  ASSERT_TRUE(informer.waitForSync(30s));
  const auto cachedJob = informer.store().get(ns() + "/deep");
  ASSERT_TRUE(cachedJob);
  const Json* at = &cachedJob->at("spec").at("workers").at("template").at("metadata").at("deep");
  int levels = 0;
  while (at->is_object()) {
    ASSERT_TRUE(at->contains("a")) << "at level " << levels;
    at = &at->at("a");
    ++levels;
  }
  EXPECT_EQ(levels, kDepth);
  EXPECT_EQ(*at, "bottom");
  EXPECT_EQ(informer.errorCount(), 0u);
}

}  // namespace
}  // namespace ipu::testing
