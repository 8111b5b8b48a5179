// Which waiting jobs a change of one IPUJob (WaitingJobs) or IPUQuota wakes: all of them when IPUs were taken
// or given back or a job left the queue; none for changes that move no capacity (a running job's pod counts).
#include "ipujob/ipujob_controller.h"

#include <gtest/gtest.h>

#include "ipujob/waiting_jobs.h"
#include "job_store.h"

namespace ipu::controllers {
namespace {

Json job(const std::string& name, Json status = Json::object()) {
  return {{"metadata", {{"namespace", "ml"}, {"name", name}, {"uid", "uid-" + name}}},
          {"spec", {{"ipusPerJobInstance", "4"}}},
          {"status", std::move(status)}};
}

Json holding(const std::string& id, const std::string& state = "Active") {
  return {{"phase", "Running"}, {"partitions", Json::array({{{"id", id}, {"size", 4}, {"state", state}}})}};
}

kube::ObjectPtr ptr(Json object) {
  return std::make_shared<const Json>(std::move(object));
}

class WakeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    // The informer's first list: each job cached and added.
    store_.apply({kube::WatcherEvent::Kind::kInit, nullptr});
    for (Json added :
         {job("waiting-a", {{"phase", "Queued"}}), job("waiting-b"), job("running", holding("p0"))}) {
      store_.apply({kube::WatcherEvent::Kind::kInitApply, added});
      waiting_.wakeFor(nullptr, ptr(std::move(added)));
    }
    store_.apply({kube::WatcherEvent::Kind::kInitDone, nullptr});
  }
  std::vector<std::string> wakeFor(const kube::ObjectPtr& old, const kube::ObjectPtr& current) {
    return waiting_.wakeFor(old, current);
  }
  testing::JobStore store_;
  WaitingJobs waiting_;
};

const std::vector<std::string> kBothWaiting = {"ml/waiting-a", "ml/waiting-b"};

TEST_F(WakeTest, ReleasedPartitionsWakeEveryWaitingJob) {
  EXPECT_EQ(wakeFor(ptr(job("running", holding("p0"))), ptr(job("running", holding("p0", "Released")))),
            kBothWaiting);
}

TEST_F(WakeTest, ADeletedJobThatHeldIpusWakesThem) {
  EXPECT_EQ(wakeFor(ptr(job("gone", holding("p1"))), nullptr), kBothWaiting);
}

TEST_F(WakeTest, AnAdmissionMovesTheOthersUp) {
  EXPECT_EQ(
      wakeFor(ptr(job("waiting-a", {{"phase", "Queued"}})), ptr(job("waiting-a", holding("p2", "Planned")))),
      std::vector<std::string>{"ml/waiting-b"});
}

TEST_F(WakeTest, AWaitingJobLeavingTheQueueMovesTheOthersUp) {
  EXPECT_EQ(wakeFor(ptr(job("waiting-a", {{"phase", "Queued"}})), nullptr),
            std::vector<std::string>{"ml/waiting-b"});
}

TEST_F(WakeTest, AJobThatLeftTheQueueIsNotWokenAgainAndANewWaitingOneIs) {
  wakeFor(ptr(job("waiting-a", {{"phase", "Queued"}})), ptr(job("waiting-a", holding("p2", "Planned"))));
  wakeFor(nullptr, ptr(job("waiting-c")));
  EXPECT_EQ(wakeFor(ptr(job("running", holding("p0"))), nullptr),
            (std::vector<std::string>{"ml/waiting-b", "ml/waiting-c"}));
}

TEST_F(WakeTest, ChangesThatMoveNoCapacityWakeNobody) {
  Json before = holding("p0");
  Json after = holding("p0");
  after["currentReplicas"] = 1;
  EXPECT_TRUE(wakeFor(ptr(job("running", before)), ptr(job("running", after))).empty());
  EXPECT_TRUE(wakeFor(nullptr, ptr(job("new"))).empty());
}

Json quota(const std::string& ns, int generation, int usedIpus = 0) {
  return {{"metadata", {{"namespace", ns}, {"name", "gold"}, {"generation", generation}}},
          {"spec", {{"maxIPUs", 8}}},
          {"status", {{"usedIPUs", usedIpus}}}};
}

TEST_F(WakeTest, AQuotaCreatedDeletedOrEditedWakesItsNamespacesWaitingJobs) {
  EXPECT_EQ(waitingJobsToWakeForQuota(store_, nullptr, ptr(quota("ml", 1))), kBothWaiting);
  EXPECT_EQ(waitingJobsToWakeForQuota(store_, ptr(quota("ml", 1)), nullptr), kBothWaiting);
  EXPECT_EQ(waitingJobsToWakeForQuota(store_, ptr(quota("ml", 1)), ptr(quota("ml", 2))), kBothWaiting);
  EXPECT_TRUE(waitingJobsToWakeForQuota(store_, nullptr, ptr(quota("other", 1))).empty());
  // Its count writes and new claims change nothing admission reads ...
  EXPECT_TRUE(waitingJobsToWakeForQuota(store_, ptr(quota("ml", 2)), ptr(quota("ml", 2, 8))).empty());
  Json claimed = quota("ml", 2);
  claimed["status"]["admissions"] = {{"job", {{"uid", "u"}, {"ipus", 4}}}};
  EXPECT_TRUE(waitingJobsToWakeForQuota(store_, ptr(quota("ml", 2)), ptr(claimed)).empty());
  // ... but a claim given back is room the waiting jobs may take.
  EXPECT_EQ(waitingJobsToWakeForQuota(store_, ptr(claimed), ptr(quota("ml", 2))), kBothWaiting);
}

// A worker pod's end or removal reaches its job at once; its other changes wait in the batch.
TEST(WorkerPodBatchingTest, APodThatEndsOrGoesPassesAtOnceItsOtherChangesAreBatched) {
  const auto pod = [](const std::string& phase) {
    return ptr(
        {{"metadata", {{"namespace", "ml"}, {"name", "bert-worker-0"}}}, {"status", {{"phase", phase}}}});
  };
  EXPECT_FALSE(workerEndedOrGone(nullptr, pod("Pending")));
  EXPECT_FALSE(workerEndedOrGone(pod("Pending"), pod("Running")));
  EXPECT_TRUE(workerEndedOrGone(pod("Running"), pod("Succeeded")));
  EXPECT_TRUE(workerEndedOrGone(pod("Running"), pod("Failed")));
  EXPECT_FALSE(workerEndedOrGone(pod("Succeeded"), pod("Succeeded"))) << "an ended pod's later changes";
  EXPECT_TRUE(workerEndedOrGone(pod("Running"), nullptr));
}

}  // namespace
}  // namespace ipu::controllers
