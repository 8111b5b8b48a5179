#include "kube/event_recorder.h"

#include <regex>
#include <thread>

#include <gtest/gtest.h>

#include "fake_clock.h"
#include "fake_transport.h"

namespace ipu::kube {
namespace {

using namespace std::chrono_literals;
using testing::FakeClock;
using testing::FakeTransport;

const std::string kEventsPath = "/api/v1/namespaces/ml/events";

const Json kJob = {
    {"apiVersion", "graphcore.ai/v1alpha1"},
    {"kind", "IPUJob"},
    {"metadata", {{"name", "bert"}, {"namespace", "ml"}, {"uid", "uid-1"}, {"resourceVersion", "42"}}}};

// The API server's reply to a create: the Event under the name the test wants to patch later.
std::string createdEvent(const std::string& name, const std::string& ns = "ml") {
  return Json{{"kind", "Event"}, {"metadata", {{"name", name}, {"namespace", ns}}}, {"count", 1}}.dump();
}

std::string statusBody(int code, const std::string& reason) {
  return Json{
      {"kind", "Status"}, {"status", "Failure"}, {"code", code}, {"reason", reason}, {"message", reason}}
      .dump();
}

class EventRecorderTest : public ::testing::Test {
 protected:
  void TearDown() override {
    EXPECT_EQ(transport_->unexpected(), std::vector<std::string>{});
    EXPECT_EQ(transport_->remaining(), 0u) << "the recorder skipped scripted requests";
  }

  KubeEventRecorder recorder(EventRecorderOptions options = {}) {
    options.instance = options.instance.empty() ? "operator-0" : options.instance;
    return KubeEventRecorder(client_, options, clock_);
  }

  Json sentBody(size_t i) const {
    auto played = transport_->played();
    EXPECT_LT(i, played.size());
    return i < played.size() ? Json::parse(played[i].seen.body) : Json();
  }

  FakeClock clock_;
  std::shared_ptr<FakeTransport> transport_ = std::make_shared<FakeTransport>();
  RestClient client_{transport_, ClusterConfig{}, ClientOptions{.maxRetries = 0}, clock_};
};

TEST_F(EventRecorderTest, CreatesAnEventAboutTheObject) {
  transport_->expect("POST", kEventsPath, 201, createdEvent("bert.1"));
  recorder().record(referenceTo(kJob), EventType::kNormal, "PartitionCreated",
                    "partition p-1 of 16 IPUs created");

  Json event = sentBody(0);
  EXPECT_EQ(event["apiVersion"], "v1");
  EXPECT_EQ(event["kind"], "Event");
  EXPECT_EQ(event["metadata"]["namespace"], "ml");
  const std::string name = event["metadata"]["name"];
  EXPECT_TRUE(std::regex_match(name, std::regex(R"(bert\.[0-9a-f]{16})"))) << name;
  EXPECT_EQ(event["involvedObject"], (Json{{"apiVersion", "graphcore.ai/v1alpha1"},
                                           {"kind", "IPUJob"},
                                           {"namespace", "ml"},
                                           {"name", "bert"},
                                           {"uid", "uid-1"},
                                           {"resourceVersion", "42"}}));
  EXPECT_EQ(event["type"], "Normal");
  EXPECT_EQ(event["reason"], "PartitionCreated");
  EXPECT_EQ(event["message"], "partition p-1 of 16 IPUs created");
  EXPECT_EQ(event["source"], (Json{{"component", "ipu-operator"}}));
  EXPECT_EQ(event["reportingComponent"], "ipu-operator");
  EXPECT_EQ(event["reportingInstance"], "operator-0");
  EXPECT_EQ(event["firstTimestamp"], "2024-01-01T00:00:00Z");
  EXPECT_EQ(event["lastTimestamp"], "2024-01-01T00:00:00Z");
  EXPECT_EQ(event["count"], 1);
}

TEST_F(EventRecorderTest, RepeatsBumpTheCountWithAMergePatch) {
  transport_->expect("POST", kEventsPath, 201, createdEvent("bert.1"))
      .expect("PATCH", kEventsPath + "/bert.1", 200, "{}")
      .expect("PATCH", kEventsPath + "/bert.1", 200, "{}");
  auto events = recorder();
  events.record(referenceTo(kJob), EventType::kWarning, "QuotaExceeded", "needs 16 IPUs, 8 left");
  clock_.advance(30s);
  events.record(referenceTo(kJob), EventType::kWarning, "QuotaExceeded", "needs 16 IPUs, 8 left");
  clock_.advance(9min);  // the window counts from the last repeat
  events.record(referenceTo(kJob), EventType::kWarning, "QuotaExceeded", "needs 16 IPUs, 8 left");

  auto played = transport_->played();
  ASSERT_EQ(played.size(), 3u);
  EXPECT_EQ(played[1].seen.headers.at("Content-Type"), "application/merge-patch+json");
  EXPECT_EQ(sentBody(1), (Json{{"count", 2}, {"lastTimestamp", "2024-01-01T00:00:30Z"}}));
  EXPECT_EQ(sentBody(2), (Json{{"count", 3}, {"lastTimestamp", "2024-01-01T00:09:30Z"}}));
}

TEST_F(EventRecorderTest, ADifferentMessageReasonOrTypeIsANewEvent) {
  transport_->expect("POST", kEventsPath, 201, createdEvent("bert.1"))
      .expect("POST", kEventsPath, 201, createdEvent("bert.2"))
      .expect("POST", kEventsPath, 201, createdEvent("bert.3"))
      .expect("POST", kEventsPath, 201, createdEvent("bert.4"))
      .expect("PATCH", kEventsPath + "/bert.2", 200, "{}");
  auto events = recorder();
  events.record(referenceTo(kJob), EventType::kWarning, "QuotaExceeded", "needs 16 IPUs, 8 left");
  events.record(referenceTo(kJob), EventType::kWarning, "QuotaExceeded", "needs 16 IPUs, 4 left");
  events.record(referenceTo(kJob), EventType::kWarning, "InsufficientCapacity", "needs 16 IPUs, 4 left");
  events.record(referenceTo(kJob), EventType::kNormal, "InsufficientCapacity", "needs 16 IPUs, 4 left");
  events.record(referenceTo(kJob), EventType::kWarning, "QuotaExceeded", "needs 16 IPUs, 4 left");
  EXPECT_NE(sentBody(0)["metadata"]["name"], sentBody(1)["metadata"]["name"]);
  EXPECT_EQ(sentBody(4)["count"], 2);
}

TEST_F(EventRecorderTest, TheSameWordsAboutAnotherObjectAreAnotherEvent) {
  Json other = kJob;
  other["metadata"]["name"] = "gpt";
  other["metadata"]["uid"] = "uid-2";
  transport_->expect("POST", kEventsPath, 201, createdEvent("bert.1"))
      .expect("POST", kEventsPath, 201, createdEvent("gpt.1"));
  auto events = recorder();
  events.record(referenceTo(kJob), EventType::kNormal, "Admitted", "admitted");
  events.record(referenceTo(other), EventType::kNormal, "Admitted", "admitted");
  EXPECT_EQ(sentBody(1)["involvedObject"]["name"], "gpt");
}

TEST_F(EventRecorderTest, ARepeatAfterTheWindowIsANewEvent) {
  transport_->expect("POST", kEventsPath, 201, createdEvent("bert.1"))
      .expect("POST", kEventsPath, 201, createdEvent("bert.2"));
  auto events = recorder();
  events.record(referenceTo(kJob), EventType::kNormal, "Admitted", "admitted");
  clock_.advance(10min);
  events.record(referenceTo(kJob), EventType::kNormal, "Admitted", "admitted");
  EXPECT_EQ(sentBody(1)["count"], 1);
  EXPECT_EQ(sentBody(1)["firstTimestamp"], "2024-01-01T00:10:00Z");
}

TEST_F(EventRecorderTest, AnEventThatExpiredOnTheServerIsCreatedAgain) {
  transport_->expect("POST", kEventsPath, 201, createdEvent("bert.1"))
      .expect("PATCH", kEventsPath + "/bert.1", 404, statusBody(404, "NotFound"))
      .expect("POST", kEventsPath, 201, createdEvent("bert.2"))
      .expect("PATCH", kEventsPath + "/bert.2", 200, "{}");
  auto events = recorder();
  for (int i = 0; i < 3; ++i) events.record(referenceTo(kJob), EventType::kNormal, "Admitted", "admitted");
  EXPECT_EQ(sentBody(2)["count"], 1);
  EXPECT_EQ(sentBody(3)["count"], 2);
}

TEST_F(EventRecorderTest, ApiFailuresAreLoggedAndNeverThrown) {
  transport_->expect("POST", kEventsPath, 500, statusBody(500, "InternalError"))
      .expectFailure("POST", kEventsPath, makeError(ErrorCode::kUnavailable, "connection refused"))
      .expect("POST", kEventsPath, 403, statusBody(403, "Forbidden"))
      .expect("POST", kEventsPath, 201, createdEvent("bert.1"))
      .expect("PATCH", kEventsPath + "/bert.1", 500, statusBody(500, "InternalError"))
      .expect("PATCH", kEventsPath + "/bert.1", 200, "{}");
  auto events = recorder();
  // Nothing was created by the first three, so each next one tries to create again.
  for (int i = 0; i < 4; ++i) {
    EXPECT_NO_THROW(events.record(referenceTo(kJob), EventType::kNormal, "Admitted", "admitted"));
  }
  EXPECT_NO_THROW(events.record(referenceTo(kJob), EventType::kNormal, "Admitted", "admitted"));
  events.record(referenceTo(kJob), EventType::kNormal, "Admitted", "admitted");
  EXPECT_EQ(sentBody(5)["count"], 2) << "a failed bump is not counted";
}

TEST_F(EventRecorderTest, ClusterScopedObjectsReportInTheDefaultNamespace) {
  transport_->expect("POST", "/api/v1/namespaces/default/events", 201, createdEvent("pod64.1", "default"));
  const Json quota = {{"apiVersion", "graphcore.ai/v1alpha1"},
                      {"kind", "IPUQuota"},
                      {"metadata", {{"name", "pod64"}, {"uid", "uid-q"}}}};
  recorder().record(referenceTo(quota), EventType::kNormal, "QuotaUpdated", "limit 64 IPUs");
  EXPECT_FALSE(sentBody(0)["involvedObject"].contains("namespace"));
}

TEST_F(EventRecorderTest, APerObjectRateLimitStopsFloods) {
  transport_->expect("POST", kEventsPath, 201, createdEvent("bert.1"))
      .expect("POST", kEventsPath, 201, createdEvent("bert.2"))
      .expect("POST", kEventsPath, 201, createdEvent("bert.3"))
      .expect("POST", kEventsPath, 201, createdEvent("gpt.1"))
      .expect("POST", kEventsPath, 201, createdEvent("bert.4"));
  auto events = recorder(EventRecorderOptions{.perObjectBurst = 3, .perObjectRefillInterval = 300s});
  for (int i = 0; i < 5; ++i) {
    events.record(referenceTo(kJob), EventType::kNormal, "Step", "step " + std::to_string(i));
  }
  Json other = kJob;
  other["metadata"]["name"] = "gpt";
  other["metadata"]["uid"] = "uid-2";
  events.record(referenceTo(other), EventType::kNormal, "Step", "another object has its own budget");
  clock_.advance(299s);
  events.record(referenceTo(kJob), EventType::kNormal, "Step", "still limited");
  clock_.advance(2s);
  events.record(referenceTo(kJob), EventType::kNormal, "Step", "one more after the refill");
  EXPECT_EQ(sentBody(4)["message"], "one more after the refill");
}

TEST_F(EventRecorderTest, ConcurrentRepeatsAreCountedInOrder) {
  constexpr int kThreads = 8;
  transport_->expect("POST", kEventsPath, 201, createdEvent("bert.1"));
  for (int i = 1; i < kThreads; ++i) transport_->expect("PATCH", kEventsPath + "/bert.1", 200, "{}");
  auto events = recorder();
  {
    std::vector<std::jthread> threads;
    for (int i = 0; i < kThreads; ++i) {
      threads.emplace_back(
          [&] { events.record(referenceTo(kJob), EventType::kNormal, "Admitted", "admitted"); });
    }
  }
  for (int i = 1; i < kThreads; ++i) EXPECT_EQ(sentBody(static_cast<size_t>(i))["count"], i + 1);
}

TEST_F(EventRecorderTest, LongNamesAndMessagesAreCutToWhatTheServerAccepts) {
  transport_->expect("POST", kEventsPath, 201, createdEvent("x.1"))
      .expect("POST", kEventsPath, 201, createdEvent("x.2"));
  Json job = kJob;
  job["metadata"]["name"] = std::string(235, 'a') + "-" + std::string(17, 'b');  // 253 characters
  std::string message = "x";
  for (int i = 0; i < 1000; ++i) message += "\xC3\xA9";  // 1024 bytes would end inside a character
  auto events = recorder();
  events.record(referenceTo(job), EventType::kNormal, "Long", message);
  events.record(referenceTo(kJob), EventType::kNormal, "BadBytes", "bad \xFF\xFE bytes");

  Json event = sentBody(0);
  const std::string name = event["metadata"]["name"];
  EXPECT_LE(name.size(), 253u);
  EXPECT_TRUE(std::regex_match(name, std::regex(R"(a+\.[0-9a-f]{16})")))
      << "cut at the dash, which cannot end a label: " << name;
  const std::string sent = event["message"];
  EXPECT_EQ(sent, message.substr(0, 1023));
  EXPECT_EQ(sentBody(1)["message"], "bad \xEF\xBF\xBD\xEF\xBF\xBD bytes") << "invalid UTF-8 becomes U+FFFD";
}

TEST_F(EventRecorderTest, AnObjectWithoutANameIsNotReported) {
  EXPECT_NO_THROW(recorder().record(ObjectReference{}, EventType::kWarning, "Oops", "no name"));
}

TEST(ObjectReferenceTest, ReferenceToReadsTheObjectsCoordinates) {
  ObjectReference reference = referenceTo(kJob);
  EXPECT_EQ(reference.apiVersion, "graphcore.ai/v1alpha1");
  EXPECT_EQ(reference.kind, "IPUJob");
  EXPECT_EQ(reference.ns, "ml");
  EXPECT_EQ(reference.name, "bert");
  EXPECT_EQ(reference.uid, "uid-1");
  EXPECT_EQ(reference.resourceVersion, "42");
  EXPECT_EQ(referenceTo(Json("not an object")).name, "");
  EXPECT_EQ(referenceTo(Json{{"kind", "Pod"}}).kind, "Pod");
}

}  // namespace
}  // namespace ipu::kube
