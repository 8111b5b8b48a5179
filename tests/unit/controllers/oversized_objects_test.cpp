#include "ipujob/oversized_objects.h"

#include <gtest/gtest.h>

namespace ipu::controllers {
namespace {

using Json = nlohmann::json;

struct RecordedEvent {
  kube::ObjectReference object;
  std::string reason, message;
};

class Recorder final : public kube::EventRecorder {
 public:
  void record(const kube::ObjectReference& object, kube::EventType type, std::string_view reason,
              std::string_view message) override {
    EXPECT_EQ(type, kube::EventType::kWarning);
    events.push_back({object, std::string(reason), std::string(message)});
  }
  std::vector<RecordedEvent> events;
};

Json podOwnedBy(const Json& references) {
  return {{"apiVersion", "v1"},
          {"kind", "Pod"},
          {"metadata", {{"name", "train-worker-0"}, {"namespace", "team"}, {"ownerReferences", references}}}};
}

// The job is told when one of its objects is too large to read: itself, or its worker pod (by the pod's
// controller reference, in the pod's namespace). Nobody else's object reaches a job.
TEST(OversizedObjectsTest, TheJobItselfOrThePodsControllingJobIsTold) {
  Recorder recorder;
  const Json job = {{"apiVersion", "graphcore.ai/v1alpha1"},
                    {"kind", "IPUJob"},
                    {"metadata", {{"name", "train"}, {"namespace", "team"}, {"uid", "j1"}}}};
  reportOversized(recorder, job, 5'000'000);
  const Json ownerRef = {{"apiVersion", "graphcore.ai/v1alpha1"},
                         {"kind", "IPUJob"},
                         {"name", "train"},
                         {"uid", "j1"},
                         {"controller", true}};
  reportOversized(recorder, podOwnedBy(Json::array({{{"kind", "ReplicaSet"}, {"name", "x"}}, ownerRef})),
                  4'500'000);
  ASSERT_EQ(recorder.events.size(), 2u);
  for (const auto& event : recorder.events) {
    EXPECT_EQ(event.object.kind, "IPUJob");
    EXPECT_EQ(event.object.ns, "team");
    EXPECT_EQ(event.object.name, "train");
    EXPECT_EQ(event.object.uid, "j1");
    EXPECT_EQ(event.reason, "ObjectTooLarge");
  }
  EXPECT_EQ(
      recorder.events[0].message.rfind("IPUJob train is 5000000 bytes, more than the operator reads", 0), 0u)
      << recorder.events[0].message;
  EXPECT_EQ(recorder.events[1].message.rfind("Pod train-worker-0 is 4500000 bytes", 0), 0u)
      << recorder.events[1].message;

  // A pod controlled by something else, one whose IPUJob reference is not its controller, one whose
  // prefix stopped before its owner references, a ConfigMap: logged by the informer only.
  Json notController = ownerRef;
  notController["controller"] = false;
  Json otherController = ownerRef;
  otherController["kind"] = "Deployment";
  otherController["apiVersion"] = "apps/v1";
  for (const Json& identity :
       {podOwnedBy(Json::array({notController})), podOwnedBy(Json::array({otherController})),
        Json{{"kind", "Pod"}, {"metadata", {{"name", "p"}, {"namespace", "team"}}}},
        Json{{"apiVersion", "v1"}, {"kind", "ConfigMap"}, {"metadata", {{"name", "c"}}}}}) {
    EXPECT_FALSE(jobOfOversized(identity).has_value()) << identity.dump();
  }
  EXPECT_EQ(recorder.events.size(), 2u);
}

}  // namespace
}  // namespace ipu::controllers
