// Events on the real API server: what the recorder writes is accepted, repeats fold into one Event's count,
// and an Event that has gone from the server is started afresh.
#include <map>
#include <string>

#include <gtest/gtest.h>

#include "kube/event_recorder.h"
#include "kube_test_fixture.h"

namespace ipu::testing {
namespace {

using kube::EventType;
using kube::Json;
using kube::ResourceRef;

class EventRecorderIntegrationTest : public KubeClientTest {
 protected:
  void SetUp() override {
    KubeClientTest::SetUp();
    auto created =
        client().create(ResourceRef::configMaps(), ns(),
                        Json{{"apiVersion", "v1"}, {"kind", "ConfigMap"}, {"metadata", {{"name", "bert"}}}});
    ASSERT_TRUE(created.ok()) << created.error().toString();
    object_ = *created;
  }

  // The Events about the object, by reason.
  std::map<std::string, Json> eventsByReason() {
    auto events = client().list(ResourceRef::events(), ns(),
                                kube::ListOptions{.fieldSelector = "involvedObject.name=bert"});
    EXPECT_TRUE(events.ok()) << events.error().toString();
    std::map<std::string, Json> byReason;
    if (!events.ok()) return byReason;
    for (const Json& event : (*events)["items"]) {
      const std::string reason = event.value("reason", "");
      EXPECT_FALSE(byReason.contains(reason)) << "two Events for " << reason;
      byReason[reason] = event;
    }
    return byReason;
  }

  Json object_;
};

TEST_F(EventRecorderIntegrationTest, RepeatsAreCountedOnOneEventAndOtherWordsMakeAnother) {
  kube::KubeEventRecorder recorder(client(), kube::EventRecorderOptions{.instance = "operator-test-0"});
  const kube::ObjectReference reference = kube::referenceTo(object_);
  recorder.record(reference, EventType::kWarning, "QuotaExceeded", "needs 16 IPUs, 8 left");
  recorder.record(reference, EventType::kWarning, "QuotaExceeded", "needs 16 IPUs, 8 left");
  recorder.record(reference, EventType::kNormal, "Admitted", "admitted with 16 IPUs");

  auto events = eventsByReason();
  ASSERT_EQ(events.size(), 2u);
  const Json& quota = events["QuotaExceeded"];
  EXPECT_EQ(quota["count"], 2);
  EXPECT_EQ(quota["type"], "Warning");
  EXPECT_EQ(quota["message"], "needs 16 IPUs, 8 left");
  EXPECT_EQ(quota["involvedObject"]["kind"], "ConfigMap");
  EXPECT_EQ(quota["involvedObject"]["uid"], object_["metadata"]["uid"]);
  EXPECT_EQ(quota["source"]["component"], "ipu-operator");
  EXPECT_EQ(quota["reportingComponent"], "ipu-operator");
  EXPECT_EQ(quota["reportingInstance"], "operator-test-0");
  EXPECT_FALSE(quota["lastTimestamp"].get<std::string>().empty());
  const Json& admitted = events["Admitted"];
  EXPECT_EQ(admitted["count"], 1);
  EXPECT_EQ(admitted["type"], "Normal");
  EXPECT_NE(admitted["metadata"]["name"], quota["metadata"]["name"]);

  // As users see them.
  auto listed = kubectl({"get", "events", "--field-selector", "reason=QuotaExceeded", "-o", "json"});
  ASSERT_TRUE(listed.ok()) << listed.describe();
  Json items = Json::parse(listed.out)["items"];
  ASSERT_EQ(items.size(), 1u);
  EXPECT_EQ(items[0]["count"], 2);
}

TEST_F(EventRecorderIntegrationTest, AnEventGoneFromTheServerIsStartedAgain) {
  kube::KubeEventRecorder recorder(client());
  const kube::ObjectReference reference = kube::referenceTo(object_);
  recorder.record(reference, EventType::kNormal, "Admitted", "admitted");
  auto first = eventsByReason();
  ASSERT_EQ(first.size(), 1u);
  const std::string name = first["Admitted"]["metadata"]["name"];
  // What the API server's TTL does after an hour.
  auto removed = client().remove(ResourceRef::events(), ns(), name);
  ASSERT_TRUE(removed.ok()) << removed.error().toString();

  recorder.record(reference, EventType::kNormal, "Admitted", "admitted");
  auto second = eventsByReason();
  ASSERT_EQ(second.size(), 1u);
  EXPECT_NE(second["Admitted"]["metadata"]["name"], name);
  EXPECT_EQ(second["Admitted"]["count"], 1);
}

}  // namespace
}  // namespace ipu::testing
