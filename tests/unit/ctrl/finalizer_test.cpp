// The finalizer helper over a scripted API server: the exact patches it sends, that adding the finalizer ends
// the pass (no write with the stale object), that cleanup runs before the finalizer goes and keeps it when it
// fails.
#include "ctrl/finalizer.h"

#include <gtest/gtest.h>

#include "fake_transport.h"
#include "skipping_clock.h"

namespace ipu::ctrl {
namespace {

using testing::FakeTransport;

const kube::ResourceRef kJobs{"graphcore.ai", "v1alpha1", "ipujobs", true};
const char* kPath = "/apis/graphcore.ai/v1alpha1/namespaces/ml/ipujobs/bert";

Json job(Json finalizers = nullptr, bool deleting = false) {
  Json object = {{"metadata", {{"namespace", "ml"}, {"name", "bert"}, {"resourceVersion", "7"}}}};
  if (!finalizers.is_null()) object["metadata"]["finalizers"] = std::move(finalizers);
  if (deleting) object["metadata"]["deletionTimestamp"] = "2026-11-23T10:00:00Z";
  return object;
}

class FinalizerTest : public ::testing::Test {
 protected:
  void TearDown() override {
    EXPECT_EQ(transport_->unexpected(), std::vector<std::string>{});
    EXPECT_EQ(transport_->remaining(), 0u) << "scripted requests were not sent";
  }

  Result<Action> run(const Json& object) {
    return finalizer_.run(
        object,
        [this](const Json&) -> Result<Action> {
          ++applied_;
          return Action::requeue(std::chrono::seconds(5));
        },
        [this](const Json&) -> Result<std::optional<Action>> {
          ++cleaned_;
          if (cleanupFails_) return makeError(ErrorCode::kUnavailable, "V-IPU is down");
          return cleanupWaits_;
        });
  }
  Json sentPatch(std::size_t index) const { return Json::parse(transport_->played().at(index).seen.body); }

  std::shared_ptr<FakeTransport> transport_ = std::make_shared<FakeTransport>();
  ipu::testing::SkippingClock clock_;
  kube::RestClient client_{transport_, kube::ClusterConfig{}, kube::ClientOptions{}, clock_};
  OwnWrites ownWrites_{clock_};
  Finalizer finalizer_{client_, kJobs, "graphcore.ai/ipujob-cleanup", &ownWrites_};
  int applied_ = 0;
  int cleaned_ = 0;
  bool cleanupFails_ = false;
  std::optional<Action> cleanupWaits_;  // set: the cleanup is not done yet, and ends the pass with it
};

TEST_F(FinalizerTest, AddingTheFinalizerEndsThePassWithoutApplying) {
  transport_->expect("PATCH", kPath, 200, job(Json::array({"graphcore.ai/ipujob-cleanup"})).dump());
  auto action = run(job());
  ASSERT_TRUE(action.ok()) << action.error().toString();
  EXPECT_EQ(*action, Action::awaitChange());
  EXPECT_EQ(applied_, 0) << "apply must wait for the patched object's own event";
  EXPECT_EQ(transport_->played()[0].seen.headers.at("Content-Type"), "application/json-patch+json");
  EXPECT_EQ(sentPatch(0), Json::parse(R"([
    {"op": "test", "path": "/metadata/resourceVersion", "value": "7"},
    {"op": "add", "path": "/metadata/finalizers", "value": ["graphcore.ai/ipujob-cleanup"]}])"));
}

TEST_F(FinalizerTest, AddingBesideAnotherFinalizerTestsTheListItRead) {
  transport_->expect("PATCH", kPath, 200, "{}");
  ASSERT_TRUE(run(job(Json::array({"other.io/keep"}))).ok());
  EXPECT_EQ(sentPatch(0), Json::parse(R"([
    {"op": "test", "path": "/metadata/finalizers", "value": ["other.io/keep"]},
    {"op": "add", "path": "/metadata/finalizers/-", "value": "graphcore.ai/ipujob-cleanup"}])"));
}

TEST_F(FinalizerTest, WithTheFinalizerSetItApplies) {
  auto action = run(job(Json::array({"graphcore.ai/ipujob-cleanup"})));
  ASSERT_TRUE(action.ok());
  EXPECT_EQ(*action, Action::requeue(std::chrono::seconds(5)));
  EXPECT_EQ(applied_, 1);
  EXPECT_EQ(cleaned_, 0);
}

TEST_F(FinalizerTest, DeletionCleansUpThenRemovesOnlyItsOwnFinalizer) {
  transport_->expect("PATCH", kPath, 200, "{}");
  auto action = run(job(Json::array({"other.io/keep", "graphcore.ai/ipujob-cleanup"}), true));
  ASSERT_TRUE(action.ok()) << action.error().toString();
  EXPECT_EQ(cleaned_, 1);
  EXPECT_EQ(applied_, 0);
  EXPECT_EQ(sentPatch(0), Json::parse(R"([
    {"op": "test", "path": "/metadata/finalizers", "value": ["other.io/keep", "graphcore.ai/ipujob-cleanup"]},
    {"op": "replace", "path": "/metadata/finalizers", "value": ["other.io/keep"]}])"));
}

TEST_F(FinalizerTest, AFailedCleanupKeepsTheFinalizer) {
  cleanupFails_ = true;
  auto action = run(job(Json::array({"graphcore.ai/ipujob-cleanup"}), true));
  ASSERT_FALSE(action.ok());
  EXPECT_EQ(action.error().code, ErrorCode::kUnavailable);
  EXPECT_EQ(transport_->played().size(), 0u) << "no patch may remove the finalizer";
}

TEST_F(FinalizerTest, ACleanupThatWaitsKeepsTheFinalizerAndEndsThePassAsItSays) {
  cleanupWaits_ = Action::requeue(std::chrono::milliseconds(500));
  auto action = run(job(Json::array({"graphcore.ai/ipujob-cleanup"}), /*deleting=*/true));
  ASSERT_TRUE(action.ok());
  EXPECT_EQ(*action, Action::requeue(std::chrono::milliseconds(500)));
  EXPECT_EQ(cleaned_, 1);
  EXPECT_TRUE(transport_->played().empty()) << "the finalizer stays while the cleanup waits";
}

TEST_F(FinalizerTest, AnObjectAlreadyGoneCountsAsCleanedUp) {
  transport_->expect(
      "PATCH", kPath, 404,
      R"({"kind":"Status","code":404,"reason":"NotFound","message":"ipujobs \"bert\" not found"})");
  EXPECT_TRUE(run(job(Json::array({"graphcore.ai/ipujob-cleanup"}), true)).ok());
}

TEST_F(FinalizerTest, DeletionWithoutOurFinalizerDoesNothing) {
  auto action = run(job(Json::array({"other.io/keep"}), true));
  ASSERT_TRUE(action.ok());
  EXPECT_EQ(cleaned_, 0);
  EXPECT_EQ(applied_, 0);
}

// The API server answers a failed `test` with 422, as for an invalid object: here it can only mean that the
// object changed since it was read, a conflict retried after reading again, not an error retrying cannot fix.
TEST_F(FinalizerTest, AConcurrentEditOfTheFinalizersIsAConflictNotAnOverwrite) {
  transport_->expect(
      "PATCH", kPath, 422,
      R"({"kind":"Status","code":422,"reason":"Invalid","message":"the test operation failed"})");
  auto action = run(job());
  ASSERT_FALSE(action.ok());
  EXPECT_EQ(action.error().code, ErrorCode::kConflict);
  EXPECT_EQ(action.error().retryClass(), RetryClass::kConflict);
  EXPECT_EQ(applied_, 0);
  EXPECT_FALSE(ownWrites_.behind("ml/bert", "7")) << "nothing was written";
}

// Read-your-writes: the version a finalizer patch replaced is recorded, so that a pass on a cache still
// holding it can wait for the patch's own event.
TEST_F(FinalizerTest, AddingTheFinalizerRecordsTheVersionItReplaced) {
  Json written = job(Json::array({"graphcore.ai/ipujob-cleanup"}));
  written["metadata"]["resourceVersion"] = "8";
  transport_->expect("PATCH", kPath, 200, written.dump());
  ASSERT_TRUE(run(job()).ok());
  EXPECT_TRUE(ownWrites_.behind("ml/bert", "7"));
  EXPECT_FALSE(ownWrites_.behind("ml/bert", "8")) << "a newer version is the write's, or later";
  EXPECT_FALSE(ownWrites_.behind("ml/bert", "7")) << "seen newer: the entry ended";
}

}  // namespace
}  // namespace ipu::ctrl
