// The controller's retry switch (success, requeueAfter, backoff, terminal errors that wait for a change, the
// reconciler's own error policy), keys of deleted objects, and the owner mapping by controller
// ownerReference.
#include "ctrl/controller.h"

#include <gtest/gtest.h>

#include "fake_clock.h"

namespace ipu::ctrl {
namespace {

using namespace std::chrono_literals;

Json object(const std::string& name) {
  return {{"metadata", {{"namespace", "ml"}, {"name", name}, {"uid", "uid-" + name}}}};
}

// Plays back one result per reconcile and records what it was given.
class ScriptedReconciler final : public Reconciler {
 public:
  Result<Action> reconcile(const kube::ObjectPtr& object) override {
    seen.push_back(kube::objectKey(*object));
    return next;
  }
  Retry onError(const kube::ObjectPtr& object, const Error& error) override {
    errors.push_back(error.toString());
    return policy ? *policy : Reconciler::onError(object, error);
  }

  Result<Action> next = Action::awaitChange();
  std::optional<Retry> policy;
  std::vector<std::string> seen;
  std::vector<std::string> errors;
};

class ControllerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    store_.apply({kube::WatcherEvent::Kind::kInit, nullptr});
    store_.apply({kube::WatcherEvent::Kind::kInitApply, object("bert")});
    store_.apply({kube::WatcherEvent::Kind::kInitDone, nullptr});
  }

  ipu::testing::FakeClock clock_;
  kube::Store store_;
  ScriptedReconciler reconciler_;
  Controller controller_{"test", store_, reconciler_, {.workers = 1, .observer = {}}, clock_};
};

TEST_F(ControllerTest, SuccessForgetsTheBackoff) {
  reconciler_.next = makeError(ErrorCode::kUnavailable, "down");
  controller_.process("ml/bert");
  EXPECT_EQ(controller_.queue().numRequeues("ml/bert"), 1);
  reconciler_.next = Action::awaitChange();
  controller_.process("ml/bert");
  EXPECT_EQ(controller_.queue().numRequeues("ml/bert"), 0);
}

TEST_F(ControllerTest, RequeueAfterComesBackAfterThatTime) {
  reconciler_.next = Action::requeue(30s);
  controller_.process("ml/bert");
  EXPECT_EQ(controller_.queue().depth(), (WorkQueue::Depth{.queued = 0, .processing = 0, .delayed = 1}));
  clock_.advance(30s);
  EXPECT_EQ(controller_.queue().len(), 1u);
}

TEST_F(ControllerTest, TransientErrorsBackOff) {
  reconciler_.next = makeError(ErrorCode::kUnavailable, "connection refused");
  controller_.process("ml/bert");
  controller_.process("ml/bert");
  EXPECT_EQ(controller_.queue().numRequeues("ml/bert"), 2);
  EXPECT_EQ(controller_.queue().depth().delayed, 1u);
}

TEST_F(ControllerTest, TerminalErrorsWaitForAChangeInsteadOfBackingOffForever) {
  reconciler_.next = makeError(ErrorCode::kInvalidArgument, "Pod \"x\" is invalid: spec.hostname");
  controller_.process("ml/bert");
  EXPECT_EQ(reconciler_.errors,
            std::vector<std::string>{"InvalidArgument: Pod \"x\" is invalid: spec.hostname"});
  EXPECT_EQ(controller_.queue().numRequeues("ml/bert"), 0);
  EXPECT_EQ(controller_.queue().depth(), WorkQueue::Depth{});
  clock_.advance(std::chrono::hours(1));
  EXPECT_EQ(controller_.queue().len(), 0u) << "nothing retries a terminal error";
}

TEST_F(ControllerTest, TheReconcilersErrorPolicyDecides) {
  reconciler_.next = makeError(ErrorCode::kUnavailable, "down");
  reconciler_.policy = Retry::kAfterChange;
  controller_.process("ml/bert");
  EXPECT_EQ(controller_.queue().depth(), WorkQueue::Depth{});
}

TEST_F(ControllerTest, KeysOfDeletedObjectsAreDropped) {
  controller_.process("ml/gone");
  EXPECT_TRUE(reconciler_.seen.empty());
  controller_.process("ml/bert");
  EXPECT_EQ(reconciler_.seen, std::vector<std::string>{"ml/bert"});
}

TEST_F(ControllerTest, TheObserverSeesEveryReconcile) {
  std::vector<bool> results;
  Controller observed("observed", store_, reconciler_,
                      {.workers = 1, .observer = [&](bool ok, double) { results.push_back(ok); }}, clock_);
  observed.process("ml/bert");
  reconciler_.next = makeError(ErrorCode::kUnavailable, "down");
  observed.process("ml/bert");
  EXPECT_EQ(results, (std::vector<bool>{true, false}));
}

Json pod(Json ownerReferences) {
  return {
      {"metadata",
       {{"namespace", "ml"}, {"name", "bert-worker-0"}, {"ownerReferences", std::move(ownerReferences)}}}};
}

const OwnerKind kIpuJob{"graphcore.ai", "IPUJob"};

TEST(ControllerOwnerKey, TheControllerOwnerOfTheKindNamesTheKey) {
  const Json owned = pod(Json::parse(R"([
    {"apiVersion": "v1", "kind": "ConfigMap", "name": "other", "uid": "u1"},
    {"apiVersion": "graphcore.ai/v1alpha1", "kind": "IPUJob", "name": "bert", "uid": "u2", "controller": true}])"));
  EXPECT_EQ(controllerOwnerKey(owned, kIpuJob), "ml/bert");
}

TEST(ControllerOwnerKey, LabelsAndNonControllerOwnersDoNotCount) {
  Json labelled = pod(Json::parse(
      R"([{"apiVersion": "graphcore.ai/v1alpha1", "kind": "IPUJob", "name": "bert", "uid": "u", "controller": false}])"));
  labelled["metadata"]["labels"] = {{"graphcore.ai/ipujob", "bert"}};
  EXPECT_EQ(controllerOwnerKey(labelled, kIpuJob), std::nullopt);
  EXPECT_EQ(controllerOwnerKey(object("lonely"), kIpuJob), std::nullopt);
}

TEST(ControllerOwnerKey, AnotherKindOrGroupIsNotOurs) {
  EXPECT_EQ(controllerOwnerKey(pod(Json::parse(R"([{"apiVersion": "batch/v1", "kind": "Job", "name": "bert",
                                                    "uid": "u", "controller": true}])")),
                               kIpuJob),
            std::nullopt);
  EXPECT_EQ(
      controllerOwnerKey(pod(Json::parse(R"([{"apiVersion": "other.io/v1", "kind": "IPUJob", "name": "bert",
                                                    "uid": "u", "controller": true}])")),
                         kIpuJob),
      std::nullopt);
}

TEST(ControllerOwnerKey, MalformedReferencesAreIgnored) {
  EXPECT_EQ(controllerOwnerKey(pod("not a list"), kIpuJob), std::nullopt);
  EXPECT_EQ(controllerOwnerKey(pod(Json::array({42, nullptr})), kIpuJob), std::nullopt);
  EXPECT_EQ(controllerOwnerKey(pod(Json::parse(R"([{"apiVersion": "graphcore.ai/v1alpha1", "kind": "IPUJob",
                                                    "controller": true}])")),
                               kIpuJob),
            std::nullopt);
  EXPECT_EQ(controllerOwnerKey(Json("text"), kIpuJob), std::nullopt);
}

}  // namespace
}  // namespace ipu::ctrl
