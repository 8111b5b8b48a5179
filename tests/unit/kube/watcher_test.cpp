#include "kube/watcher.h"

#include <map>

#include <gtest/gtest.h>

#include "eventually.h"
#include "fake_transport.h"
#include "kube/store.h"
#include "skipping_clock.h"

namespace ipu::kube {
namespace {

using testing::FakeTransport;
using testing::SkippingClock;
using Kind = WatcherEvent::Kind;

std::string watchPath(const std::string& rv) {
  return "/api/v1/namespaces/ml/pods?watch=1&resourceVersion=" + rv +
         "&allowWatchBookmarks=true&timeoutSeconds=290";
}
std::string event(const std::string& type, const std::string& name, const std::string& rv) {
  return Json{{"type", type},
              {"object", {{"metadata", {{"name", name}, {"namespace", "ml"}, {"resourceVersion", rv}}}}}}
             .dump() +
         "\n";
}

class WatcherTest : public ::testing::Test {
 protected:
  void TearDown() override { EXPECT_EQ(transport_->unexpected(), std::vector<std::string>{}); }

  // Steps the watcher n times, recording what it emits as "Kind:name".
  void steps(Watcher& watcher, int n, std::vector<Status>* results = nullptr) {
    for (int i = 0; i < n; ++i) {
      Status result = watcher.step({}, [&](WatcherEvent&& e) {
        std::string name = e.object.is_object() ? e.object["metadata"].value("name", "") : "";
        emitted_.push_back(kindName(e.kind) + (name.empty() ? "" : ":" + name));
        store_.apply(std::move(e));
      });
      if (results) results->push_back(result);
    }
  }
  static std::string kindName(Kind kind) {
    switch (kind) {
      case Kind::kInit:
        return "Init";
      case Kind::kInitApply:
        return "InitApply";
      case Kind::kInitDone:
        return "InitDone";
      case Kind::kApply:
        return "Apply";
      case Kind::kDelete:
        return "Delete";
      case Kind::kOversized:
        return "Oversized";
    }
    return "?";
  }

  std::shared_ptr<FakeTransport> transport_ = std::make_shared<FakeTransport>();
  SkippingClock clock_;
  RestClient client_{transport_, ClusterConfig{}, ClientOptions{}, clock_};
  std::vector<std::string> emitted_;
  Store store_;
};

TEST_F(WatcherTest, ListsInPagesThenWatchesFromTheListVersion) {
  transport_
      ->expect(
          "GET", "/api/v1/namespaces/ml/pods?limit=2", 200,
          R"({"kind":"PodList","apiVersion":"v1","metadata":{"continue":"c1"},"items":[{"metadata":{"name":"a","namespace":"ml"}},{"metadata":{"name":"b","namespace":"ml"}}]})")
      .expect(
          "GET", "/api/v1/namespaces/ml/pods?limit=2&continue=c1", 200,
          R"({"kind":"PodList","apiVersion":"v1","metadata":{"resourceVersion":"50"},"items":[{"metadata":{"name":"c","namespace":"ml"}}]})")
      .expectStream(watchPath("50"),
                    {event("MODIFIED", "a", "51"), event("DELETED", "b", "52"), event("BOOKMARK", "", "60")})
      .expectStream(watchPath("60"), {event("ADDED", "d", "61")});
  Watcher watcher(client_, ResourceRef::pods(), "ml", WatcherConfig{.pageSize = 2}, clock_);
  EXPECT_EQ(watcher.state(), Watcher::State::kEmpty);
  steps(watcher, 3);
  EXPECT_EQ(emitted_,
            (std::vector<std::string>{"Init", "InitApply:a", "InitApply:b", "InitApply:c", "InitDone"}));
  EXPECT_EQ(watcher.state(), Watcher::State::kWatching);
  EXPECT_EQ(watcher.resourceVersion(), "50");
  EXPECT_EQ((*store_.get("ml", "a"))["kind"], "Pod") << "list items get the kind a watch event would carry";

  steps(watcher, 2);  // the first watch ends cleanly (server timeout): re-watch from the bookmark's version
  EXPECT_EQ(watcher.resourceVersion(), "61");
  EXPECT_EQ(store_.size(), 3u);  // a, c, d
  EXPECT_EQ(store_.get("ml", "b"), nullptr);
  EXPECT_EQ(transport_->remaining(), 0u);
}

// The next page is asked for once a page has arrived, before this one is delivered: the sink, holding the
// first page's first item, sees the second page's request played.
TEST_F(WatcherTest, TheNextPageIsAskedForWhileThisOneIsDelivered) {
  transport_
      ->expect("GET", "/api/v1/namespaces/ml/pods?limit=1", 200,
               R"({"metadata":{"continue":"c1"},"items":[{"metadata":{"name":"a","namespace":"ml"}}]})")
      .expect("GET", "/api/v1/namespaces/ml/pods?limit=1&continue=c1", 200,
              R"({"metadata":{"resourceVersion":"7"},"items":[{"metadata":{"name":"b","namespace":"ml"}}]})");
  Watcher watcher(client_, ResourceRef::pods(), "ml", WatcherConfig{.pageSize = 1}, clock_);
  bool secondAskedFirst = false;
  for (int i = 0; i < 3; ++i) {
    ASSERT_TRUE(watcher.step({}, [&](WatcherEvent&& e) {
      if (e.kind == Kind::kInitApply && e.object["metadata"]["name"] == "a") {
        secondAskedFirst = testing::eventually([&] { return transport_->played().size() == 2; },
                                               std::chrono::seconds(10), std::chrono::milliseconds(1));
      }
      store_.apply(std::move(e));
    }));
  }
  EXPECT_TRUE(secondAskedFirst) << "the second page was asked for only after the first was delivered";
  EXPECT_EQ(watcher.state(), Watcher::State::kWatching);
  EXPECT_EQ(store_.size(), 2u);
}

// A page read ahead for a list that then starts that page over (the page before it was not JSON) is dropped:
// the pages are read again in order and each object is delivered once.
TEST_F(WatcherTest, APageReadAheadThatIsNoLongerWantedIsDropped) {
  const std::string second =
      R"({"metadata":{"resourceVersion":"7"},"items":[{"metadata":{"name":"b","namespace":"ml"}}]})";
  transport_
      ->expect("GET", "/api/v1/namespaces/ml/pods?limit=1", 200,
               R"({"metadata":{"continue":"c1"},"items":[{"metadata":})")
      .expect("GET", "/api/v1/namespaces/ml/pods?limit=1&continue=c1", 200, second)
      .expect("GET", "/api/v1/namespaces/ml/pods?limit=1", 200,
              R"({"metadata":{"continue":"c2"},"items":[{"metadata":{"name":"a","namespace":"ml"}}]})")
      .expect("GET", "/api/v1/namespaces/ml/pods?limit=1&continue=c2", 200, second);
  Watcher watcher(client_, ResourceRef::pods(), "ml", WatcherConfig{.pageSize = 1}, clock_);
  std::vector<Status> results;
  steps(watcher, 4, &results);
  EXPECT_FALSE(results[1].ok()) << "the first page is not JSON";
  EXPECT_EQ(emitted_, (std::vector<std::string>{"Init", "InitApply:a", "InitApply:b", "InitDone"}));
  EXPECT_EQ(transport_->remaining(), 0u);
}

TEST_F(WatcherTest, GoneRelistsAndTheStoreDropsWhatDisappearedMeanwhile) {
  transport_
      ->expect(
          "GET", "/api/v1/namespaces/ml/pods?limit=500", 200,
          R"({"kind":"PodList","metadata":{"resourceVersion":"5"},"items":[{"metadata":{"name":"a","namespace":"ml","resourceVersion":"4"}},{"metadata":{"name":"b","namespace":"ml","resourceVersion":"5"}}]})")
      .expectStream(watchPath("5"),
                    {R"({"type":"ERROR","object":{"kind":"Status","code":410,"reason":"Expired"}})"
                     "\n"})
      .expect(
          "GET", "/api/v1/namespaces/ml/pods?limit=500", 200,
          R"({"kind":"PodList","metadata":{"resourceVersion":"90"},"items":[{"metadata":{"name":"b","namespace":"ml","resourceVersion":"80"}}]})");
  Watcher watcher(client_, ResourceRef::pods(), "ml", WatcherConfig{}, clock_);
  std::vector<Status> results;
  steps(watcher, 5, &results);
  ASSERT_FALSE(results[2].ok());
  EXPECT_EQ(results[2].error().code, ErrorCode::kGone);
  EXPECT_EQ(watcher.state(), Watcher::State::kWatching);
  EXPECT_EQ(watcher.resourceVersion(), "90");
  EXPECT_EQ(store_.size(), 1u);
  EXPECT_EQ(store_.get("ml", "a"), nullptr) << "a ghost survived the relist";
}

// A resourceVersion that is not a string (no API server sends one) used to throw out of the watch; the event
// is delivered and the version the watcher holds stays. Caught by the watch_stream fuzz target (tests/fuzz).
TEST_F(WatcherTest, AResourceVersionThatIsNotAStringIsIgnored) {
  transport_
      ->expect("GET", "/api/v1/namespaces/ml/pods?limit=500", 200,
               R"({"metadata":{"resourceVersion":"5"},"items":[]})")
      .expectStream(
          watchPath("5"),
          {R"({"type":"ADDED","object":{"metadata":{"name":"a","namespace":"ml","resourceVersion":6}}})"
           "\n"});
  Watcher watcher(client_, ResourceRef::pods(), "ml", WatcherConfig{}, clock_);
  std::vector<Status> results;
  steps(watcher, 3, &results);
  ASSERT_TRUE(results[2].ok()) << results[2].error().toString();
  EXPECT_EQ(emitted_.back(), "Apply:a");
  EXPECT_EQ(watcher.resourceVersion(), "5");
}

TEST_F(WatcherTest, OtherFailuresKeepTheStateAndRunBacksOff) {
  transport_
      ->expect("GET", "/api/v1/namespaces/ml/pods?limit=500", 200,
               R"({"metadata":{"resourceVersion":"5"},"items":[]})")
      .expectStream(watchPath("5"), {event("ADDED", "a", "6"), R"({"type":"ADDED","object":{"metad)"})
      .expectFailure("GET", watchPath("6"), makeError(ErrorCode::kUnavailable, "connection refused"))
      .expectStream(watchPath("6"), {event("ADDED", "b", "7")});
  Watcher watcher(client_, ResourceRef::pods(), "ml", WatcherConfig{}, clock_);
  std::stop_source stop;
  std::vector<std::string> errors;
  int applied = 0;
  watcher.run(
      stop.get_token(),
      [&](WatcherEvent&& e) {
        if (e.kind == Kind::kApply && ++applied == 2) stop.request_stop();
      },
      [&](const Error& error) { errors.push_back(error.toString()); });
  ASSERT_EQ(errors.size(), 2u);
  EXPECT_NE(errors[0].find("cut in the middle of a line"), std::string::npos);
  EXPECT_NE(errors[1].find("connection refused"), std::string::npos);
  EXPECT_EQ(clock_.sleeps(), (std::vector<std::chrono::milliseconds>{std::chrono::milliseconds(800),
                                                                     std::chrono::milliseconds(1600)}));
  EXPECT_EQ(watcher.resourceVersion(), "7");
}

// A page larger than the transport holds is asked again at half the size with the same continue token,
// down to one object; the next list starts at the configured size again.
TEST_F(WatcherTest, APageTooLargeToHoldIsAskedAgainSmaller) {
  Error tooLarge = makeError(ErrorCode::kResourceExhausted, "the response is larger than 1024 bytes");
  tooLarge.reason = kBodyTooLarge;
  transport_->expectFailure("GET", "/api/v1/namespaces/ml/pods?limit=4", tooLarge)
      .expectFailure("GET", "/api/v1/namespaces/ml/pods?limit=2", tooLarge)
      .expect("GET", "/api/v1/namespaces/ml/pods?limit=1", 200,
              R"({"metadata":{"continue":"c1"},"items":[{"metadata":{"name":"big","namespace":"ml"}}]})")
      .expect("GET", "/api/v1/namespaces/ml/pods?limit=1&continue=c1", 200,
              R"({"metadata":{"resourceVersion":"9"},"items":[{"metadata":{"name":"b","namespace":"ml"}}]})")
      .expectStream(watchPath("9"),
                    {R"({"type":"ERROR","object":{"kind":"Status","code":410,"reason":"Expired"}})"
                     "\n"})
      .expectFailure("GET", "/api/v1/namespaces/ml/pods?limit=4", tooLarge)
      .expectFailure("GET", "/api/v1/namespaces/ml/pods?limit=2", tooLarge)
      .expectFailure("GET", "/api/v1/namespaces/ml/pods?limit=1", tooLarge);
  Watcher watcher(client_, ResourceRef::pods(), "ml", WatcherConfig{.pageSize = 4}, clock_);
  std::vector<Status> results;
  steps(watcher, 10, &results);
  for (int i = 0; i < 9; ++i) EXPECT_EQ(results[i].ok(), i != 5) << i;  // 5: the watch's 410
  EXPECT_EQ(emitted_, (std::vector<std::string>{"Init", "InitApply:big", "InitApply:b", "InitDone", "Init"}));
  // One object larger than the transport holds: an error, retried (with backoff) at one a page.
  ASSERT_FALSE(results[9].ok());
  EXPECT_EQ(results[9].error().reason, kBodyTooLarge);
  EXPECT_EQ(transport_->remaining(), 0u);
  EXPECT_EQ(store_.size(), 2u) << "the relist that failed left the store as it was";
}

// A watch event longer than the transport holds reaches the sink as kOversized with the object's identity;
// the store keeps what it had, the version moves past it, and the watch goes on.
TEST_F(WatcherTest, AnEventTooLargeToHoldIsReportedAndSkipped) {
  transport_->maxLineBytes = 200;
  const std::string big =
      Json{{"type", "MODIFIED"},
           {"object",
            {{"kind", "Pod"},
             {"metadata", {{"name", "a"}, {"namespace", "ml"}, {"uid", "u-a"}, {"resourceVersion", "7"}}},
             {"spec", {{"padding", std::string(1000, 'x')}}}}}}
          .dump() +
      "\n";
  transport_
      ->expect("GET", "/api/v1/namespaces/ml/pods?limit=500", 200,
               R"({"metadata":{"resourceVersion":"5"},"items":[{"metadata":{"name":"a","namespace":"ml",)"
               R"("resourceVersion":"5"}}]})")
      .expectStream(watchPath("5"), {big.substr(0, 300), big.substr(300), event("ADDED", "b", "8")});
  Watcher watcher(client_, ResourceRef::pods(), "ml", WatcherConfig{}, clock_);
  std::vector<WatcherEvent> oversized;
  for (int i = 0; i < 3; ++i) {
    ASSERT_TRUE(watcher.step({}, [&](WatcherEvent&& e) {
      if (e.kind == Kind::kOversized) oversized.push_back(e);
      store_.apply(std::move(e));
    }));
  }
  ASSERT_EQ(oversized.size(), 1u);
  EXPECT_EQ(oversized[0].bytes, big.size() - 1);
  EXPECT_EQ(oversized[0].object["metadata"]["uid"], "u-a");
  EXPECT_EQ(oversized[0].object["kind"], "Pod");
  EXPECT_EQ((*store_.get("ml", "a"))["metadata"]["resourceVersion"], "5") << "the cache kept its version";
  EXPECT_NE(store_.get("ml", "b"), nullptr) << "the watch went on after it";
  EXPECT_EQ(watcher.resourceVersion(), "8");
}

// Every behaviour of the store holds in both layouts.
class StoreTest : public ::testing::TestWithParam<StoreLayout> {};
INSTANTIATE_TEST_SUITE_P(Layouts, StoreTest, ::testing::Values(StoreLayout::kParsed, StoreLayout::kPacked),
                         [](const auto& layout) {
                           return layout.param == StoreLayout::kParsed ? "Parsed" : "Packed";
                         });

TEST_P(StoreTest, IndexesByNamespaceAndOwner) {
  Store store(GetParam());
  store.apply({Kind::kInit, {}});
  store.apply(
      {Kind::kInitApply,
       Json::parse(R"({"metadata":{"name":"w0","namespace":"ml","ownerReferences":[{"uid":"job-1"}]}})")});
  store.apply(
      {Kind::kInitApply,
       Json::parse(R"({"metadata":{"name":"w1","namespace":"ml","ownerReferences":[{"uid":"job-1"}]}})")});
  store.apply({Kind::kInitApply, Json::parse(R"({"metadata":{"name":"x","namespace":"other"}})")});
  EXPECT_FALSE(store.hasSynced()) << "a list is not visible before it is complete";
  EXPECT_EQ(store.size(), 0u);
  auto changes = store.apply({Kind::kInitDone, {}});
  EXPECT_TRUE(store.hasSynced());
  EXPECT_EQ(changes.size(), 3u);
  EXPECT_EQ(store.listNamespace("ml").size(), 2u);
  EXPECT_EQ(store.listOwnedBy("job-1").size(), 2u);

  // Re-owning and deleting keep the indexes right.
  store.apply(
      {Kind::kApply,
       Json::parse(R"({"metadata":{"name":"w1","namespace":"ml","ownerReferences":[{"uid":"job-2"}]}})")});
  EXPECT_EQ(store.listOwnedBy("job-1").size(), 1u);
  EXPECT_EQ(store.listOwnedBy("job-2").size(), 1u);
  auto deleted = store.apply({Kind::kDelete, Json::parse(R"({"metadata":{"name":"w0","namespace":"ml"}})")});
  ASSERT_EQ(deleted.size(), 1u);
  EXPECT_EQ(deleted[0].type, StoreChange::Type::kDeleted);
  EXPECT_EQ((*deleted[0].current)["metadata"]["ownerReferences"][0]["uid"], "job-1")
      << "the last known state";
  EXPECT_TRUE(store.listOwnedBy("job-1").empty());
  EXPECT_EQ(objectKey(Json::parse(R"({"metadata":{"name":"n1"}})")), "n1");
}

TEST_P(StoreTest, ReadersKeepTheirSnapshotWhileTheWriterMovesOn) {
  Store store(GetParam());
  store.apply(
      {Kind::kApply, Json::parse(R"({"metadata":{"name":"a","namespace":"ml","resourceVersion":"1"}})")});
  ObjectPtr held = store.get("ml", "a");
  store.apply(
      {Kind::kApply, Json::parse(R"({"metadata":{"name":"a","namespace":"ml","resourceVersion":"2"}})")});
  EXPECT_EQ((*held)["metadata"]["resourceVersion"], "1");
  EXPECT_EQ((*store.get("ml", "a"))["metadata"]["resourceVersion"], "2");
}

TEST_P(StoreTest, ARelistReportsWhatChangedDisappearedOrCameByResourceVersion) {
  Store store(GetParam());
  const auto object = [](const std::string& name, const std::string& version) {
    return Json{{"metadata", {{"name", name}, {"namespace", "ml"}, {"resourceVersion", version}}}};
  };
  store.apply({Kind::kInit, {}});
  store.apply({Kind::kInitApply, object("kept", "1")});
  store.apply({Kind::kInitApply, object("changed", "2")});
  store.apply({Kind::kInitApply, object("gone", "3")});
  store.apply({Kind::kInitDone, {}});

  store.apply({Kind::kInit, {}});
  store.apply({Kind::kInitApply, object("kept", "1")});
  store.apply({Kind::kInitApply, object("changed", "5")});
  store.apply({Kind::kInitApply, object("new", "6")});
  std::map<std::string, std::string> seen;
  for (const auto& change : store.apply({Kind::kInitDone, {}})) {
    const std::string name = (*change.current)["metadata"]["name"];
    seen[name] = change.type == StoreChange::Type::kAdded ? "added"
                 : change.type == StoreChange::Type::kUpdated
                     ? "updated from " + (*change.old)["metadata"]["resourceVersion"].get<std::string>()
                     : "deleted";
  }
  EXPECT_EQ(seen, (std::map<std::string, std::string>{
                      {"changed", "updated from 2"}, {"gone", "deleted"}, {"new", "added"}}));
  EXPECT_EQ(store.size(), 3u);
}

TEST_P(StoreTest, SummariesAreTakenOnceAsObjectsArriveAndFollowEveryChange) {
  Store store(GetParam());
  int taken = 0;
  store.setSummary<std::string>([&taken](const Json& object) {
    ++taken;
    return object["metadata"]["name"].get<std::string>() + "@" +
           object["metadata"]["resourceVersion"].get<std::string>();
  });
  const auto object = [](const std::string& ns, const std::string& name, const std::string& rv) {
    return Json{{"metadata", {{"namespace", ns}, {"name", name}, {"resourceVersion", rv}}}};
  };
  const auto texts = [](const std::vector<std::shared_ptr<const std::string>>& summaries) {
    std::vector<std::string> out;
    for (const auto& summary : summaries) out.push_back(*summary);
    return out;
  };
  store.apply({Kind::kInit, {}});
  store.apply({Kind::kInitApply, object("ml", "b", "1")});
  store.apply({Kind::kInitApply, object("ml", "a", "1")});
  store.apply({Kind::kInitApply, object("other", "c", "1")});
  store.apply({Kind::kInitDone, {}});
  EXPECT_EQ(texts(store.summaries<std::string>()), (std::vector<std::string>{"a@1", "b@1", "c@1"}))
      << "in key order";
  EXPECT_EQ(texts(store.summariesInNamespace<std::string>("ml")), (std::vector<std::string>{"a@1", "b@1"}));
  EXPECT_TRUE(store.summariesInNamespace<std::string>("nobody").empty());
  ASSERT_TRUE(store.summary<std::string>("other/c"));
  EXPECT_EQ(*store.summary<std::string>("other/c"), "c@1");
  EXPECT_FALSE(store.summary<std::string>("ml/missing"));
  EXPECT_EQ(store.summary<std::string>("ml/a"), store.summary<std::string>("ml/a")) << "one shared summary";
  EXPECT_EQ(taken, 3) << "taken as the objects came in, never by a read";

  store.apply({Kind::kApply, object("ml", "a", "2")});
  store.apply({Kind::kDelete, object("ml", "b", "1")});
  EXPECT_EQ(texts(store.summaries<std::string>()), (std::vector<std::string>{"a@2", "c@1"}));
  EXPECT_EQ(texts(store.summariesInNamespace<std::string>("ml")), (std::vector<std::string>{"a@2"}));
  EXPECT_EQ(taken, 4);

  store.apply({Kind::kInit, {}});  // a relist that finds only d
  store.apply({Kind::kInitApply, object("ml", "d", "5")});
  store.apply({Kind::kInitDone, {}});
  EXPECT_EQ(texts(store.summaries<std::string>()), (std::vector<std::string>{"d@5"}));
  EXPECT_EQ(texts(store.summariesInNamespace<std::string>("ml")), (std::vector<std::string>{"d@5"}));
  EXPECT_TRUE(store.summariesInNamespace<std::string>("other").empty());
}

TEST(StoreSummaryTest, ASummaryTypeTheStoreDoesNotKeepIsAProgrammingError) {
  Store plain;
  EXPECT_THROW(plain.summaries<std::string>(), std::logic_error);
  Store store;
  store.setSummary<std::string>([](const Json&) { return std::string("s"); });
  EXPECT_THROW(store.summaries<int>(), std::logic_error);
  EXPECT_THROW(store.summary<int>("ml/a"), std::logic_error);
  EXPECT_THROW(store.setSummary<int>([](const Json&) { return 1; }), std::logic_error);
  store.apply({Kind::kApply, Json::parse(R"({"metadata":{"name":"a","namespace":"ml"}})")});
  store.setSummary<std::string>([](const Json&) { return std::string("other"); });
  EXPECT_EQ(*store.summary<std::string>("ml/a"), "s") << "what the store holds keeps the summary it has";
}

TEST(PackedStoreTest, AnObjectReadsBackEqualInEveryJsonType) {
  const Json original = Json::parse(R"({"metadata":{"name":"p","namespace":"ml","resourceVersion":"7",
      "labels":{"graphcore.ai/job-name":"résumé-ü"}},"status":{"phase":"Running","restartCount":0,
      "exitCode":-9,"big":18446744073709551615,"ratio":0.25,"ready":true,"message":null,
      "containerStatuses":[{"name":"w","state":{"running":{}}},[],{}]}})");
  Store store(StoreLayout::kPacked);
  const auto changes = store.apply({Kind::kApply, original});
  ASSERT_EQ(changes.size(), 1u);
  EXPECT_EQ(*changes[0].current, original);
  EXPECT_EQ(*store.get("ml", "p"), original);
  EXPECT_EQ(store.list().at(0)->dump(), original.dump()) << "numbers keep their kind, strings their bytes";
}

TEST(StoreLayoutTest, ChangesOnlyWhileTheStoreIsEmpty) {
  Store store;
  store.apply({Kind::kApply, Json::parse(R"({"metadata":{"name":"a","namespace":"ml"}})")});
  store.setLayout(StoreLayout::kPacked);
  const ObjectPtr first = store.get("ml", "a");
  EXPECT_EQ(first, store.get("ml", "a")) << "still parsed: every read shares the one object";
}

}  // namespace
}  // namespace ipu::kube
