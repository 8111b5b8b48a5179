#include "kubectl-ipu/fit_report.h"

#include <numeric>

#include <gtest/gtest.h>

#include "admission/published_queue.h"
#include "common/time_format.h"

namespace ipu::kubectl_ipu {
namespace {

using controllers::AdmissionRequest;
using controllers::Occupant;
using controllers::PlanInputs;
using Verdict = FitOutcome::Verdict;
using std::chrono::hours;
using std::chrono::seconds;

const Clock::WallTime kNow = *parseTime("2026-11-28T10:00:00Z");

std::vector<std::uint32_t> ipus(std::uint32_t first, std::uint32_t count) {
  std::vector<std::uint32_t> ids(count);
  std::iota(ids.begin(), ids.end(), first);
  return ids;
}

// The operator's side: a POD64 with what holds it and what waits, published as the IPUQueue's status with
// namespaces anonymised, and read back as the plugin reads it.
class FitReportTest : public ::testing::Test {
 protected:
  PlanInputs operatorInputs() const {
    PlanInputs inputs;
    inputs.controllers.push_back(
        {"pod64", std::make_shared<vipu::PartitionPlanner>(*vipu::Topology::forPod("pod64", "c")),
         occupants_});
    inputs.queue = queue_;
    inputs.quotas = quotas_;
    return inputs;
  }
  PlanInputs published() const {
    const auto status =
        controllers::queueStatusOf(operatorInputs(), [](const std::string& ns) { return "id-" + ns; });
    auto inputs = controllers::planInputsFromQueueStatus(status);
    EXPECT_TRUE(inputs) << inputs.error().toString();
    return *inputs;
  }
  static AdmissionRequest queued(std::string ns, std::string name, std::string uid, std::uint32_t size,
                                 std::optional<std::int64_t> deadline) {
    AdmissionRequest request;
    request.key = ns + "/" + name;
    request.ns = std::move(ns);
    request.uid = std::move(uid);
    request.creationTimestamp = "2026-11-28T09:00:00Z";
    request.ipusPerInstance = size;
    request.activeDeadlineSeconds = deadline;
    return request;
  }
  static Json quota(const std::string& ns, const std::string& name, int maxIpus) {
    return {{"apiVersion", "graphcore.ai/v1alpha1"},
            {"kind", "IPUQuota"},
            {"metadata", {{"namespace", ns}, {"name", name}}},
            {"spec", {{"maxIPUs", maxIpus}}}};
  }

  std::vector<Occupant> occupants_;
  std::vector<AdmissionRequest> queue_;
  std::optional<controllers::QuotaRules> quotas_ = controllers::QuotaRules{};
};

TEST_F(FitReportTest, AJobThatFitsStartsNowOnTheControllerThatPlacesIt) {
  occupants_.push_back({ipus(0, 32), "other", "uid-o", kNow + hours(1), std::nullopt});
  const auto outcomes =
      fitOf(published(), {"team", {}, std::vector<Json>{}}, {fitRequestOf(16, 2, "team")}, kNow);
  ASSERT_EQ(outcomes.size(), 1u);
  EXPECT_EQ(outcomes[0].verdict, Verdict::kNow);
  EXPECT_EQ(outcomes[0].controller, "pod64");
  ASSERT_TRUE(outcomes[0].estimate);
  EXPECT_EQ(estimateText(*outcomes[0].estimate, kNow), "now");
}

TEST_F(FitReportTest, AJobThatWaitsGetsItsPositionBehindTheQueueAndWhenItStarts) {
  // All 64 IPUs held for an hour; two jobs already wait (one of 64 IPUs for 30 min): ours is third.
  occupants_.push_back({ipus(0, 64), "other", "uid-o", kNow + hours(1), std::nullopt});
  queue_.push_back(queued("other", "a", "uid-a", 64, 1800));
  queue_.push_back(queued("other", "b", "uid-b", 32, 600));
  const auto outcomes =
      fitOf(published(), {"team", {}, std::vector<Json>{}}, {fitRequestOf(32, 1, "team")}, kNow);
  EXPECT_EQ(outcomes[0].verdict, Verdict::kQueued);
  EXPECT_EQ(outcomes[0].position, 3);
  EXPECT_EQ(outcomes[0].reason, "InsufficientCapacity");
  ASSERT_TRUE(outcomes[0].estimate);
  ASSERT_EQ(outcomes[0].estimate->kind, controllers::StartEstimate::Kind::kStartsBy);
  // The holder ends in 1 h, then the 64-IPU job runs 30 min; b and ours then share the POD.
  EXPECT_EQ(outcomes[0].estimate->startsBy, kNow + hours(1) + seconds(1800) + seconds(30));
}

TEST_F(FitReportTest, JobsOfAFileQueueInFileOrder) {
  occupants_.push_back({ipus(0, 64), "other", "uid-o", kNow + hours(1), std::nullopt});
  const Json job = {
      {"apiVersion", "graphcore.ai/v1alpha1"},
      {"kind", "IPUJob"},
      {"metadata", {{"name", "x"}}},
      {"spec",
       {{"jobInstances", 1},
        {"ipusPerJobInstance", "16"},
        {"workers", {{"template", {{"spec", {{"containers", {{{"name", "w"}, {"image", "i"}}}}}}}}}}}}};
  Json second = job;
  second["metadata"]["name"] = "y";
  const auto outcomes =
      fitOf(published(), {"team", {}, std::vector<Json>{}}, fitRequestsOf({job, second}, "team"), kNow);
  ASSERT_EQ(outcomes.size(), 2u);
  EXPECT_EQ(outcomes[0].label, "x");
  EXPECT_EQ(outcomes[0].position, 1);
  EXPECT_EQ(outcomes[1].label, "y");
  EXPECT_EQ(outcomes[1].position, 2);
}

TEST_F(FitReportTest, AJobLargerThanThePodCanNeverRun) {
  const auto outcomes =
      fitOf(published(), {"team", {}, std::vector<Json>{}}, {fitRequestOf(128, 1, "team")}, kNow);
  EXPECT_EQ(outcomes[0].verdict, Verdict::kNever);
  EXPECT_EQ(outcomes[0].reason, "Unschedulable");
  EXPECT_FALSE(outcomes[0].estimate);
}

TEST_F(FitReportTest, AJobLargerThanItsNamespacesQuotaCanNeverRunAndTheQuotaIsNamed) {
  const auto outcomes = fitOf(published(), {"team", {}, std::vector<Json>{quota("team", "small", 16)}},
                              {fitRequestOf(32, 1, "team")}, kNow);
  EXPECT_EQ(outcomes[0].verdict, Verdict::kNever);
  EXPECT_EQ(outcomes[0].reason, "QuotaExceeded");
  EXPECT_NE(outcomes[0].message.find("small"), std::string::npos) << outcomes[0].message;
}

TEST_F(FitReportTest, TheNamespaceIsFoundByItsJobsAndItsUseCounts) {
  // The namespace already holds 16 of its 16 IPUs (published anonymised): another 16 waits for its own job.
  occupants_.push_back({ipus(0, 16), "team", "uid-mine", kNow + hours(2), std::nullopt});
  quotas_->quotas["team"].maxIpus = 16;
  quotas_->usage["team"] = {16, 0, 1};
  const auto outcomes = fitOf(published(), {"team", {"uid-mine"}, std::vector<Json>{quota("team", "q", 16)}},
                              {fitRequestOf(16, 1, "team")}, kNow);
  EXPECT_EQ(outcomes[0].verdict, Verdict::kQueued);
  EXPECT_EQ(outcomes[0].reason, "QuotaExceeded");
  ASSERT_TRUE(outcomes[0].estimate);
  EXPECT_EQ(outcomes[0].estimate->startsBy, kNow + hours(2) + seconds(15));
}

TEST_F(FitReportTest, AnUnknownStartSaysWhyWithoutNamingAnyone) {
  occupants_.push_back({ipus(0, 64), "other", "uid-o", std::nullopt, std::nullopt});
  const auto outcomes = fitOf(published(), {"team", {}, std::nullopt}, {fitRequestOf(64, 1, "team")}, kNow);
  EXPECT_EQ(outcomes[0].verdict, Verdict::kQueued);
  ASSERT_TRUE(outcomes[0].estimate);
  EXPECT_EQ(outcomes[0].estimate->kind, controllers::StartEstimate::Kind::kUnknown);
  const std::string text = renderFit(outcomes, 200, kNow);
  EXPECT_NE(text.find("declares no activeDeadlineSeconds"), std::string::npos) << text;
  EXPECT_NE(toJson(outcomes).dump().find("declares no activeDeadlineSeconds"), std::string::npos);
  EXPECT_EQ(text.find("other"), std::string::npos) << text;
}

TEST_F(FitReportTest, WhatCannotBeReadIsInvalidWithTheReason) {
  const auto requests =
      fitRequestsOf({Json{{"kind", "ConfigMap"}, {"metadata", {{"name", "c"}}}},
                     Json{{"kind", "IPUJob"}, {"metadata", {{"name", "j"}, {"namespace", "elsewhere"}}}}},
                    "team");
  EXPECT_EQ(fitRequestOf(12, 1, "team").invalid,
            "--ipus must be a power of two (a V-IPU partition's size), not 12");
  const auto outcomes = fitOf(published(), {"team", {}, std::nullopt}, requests, kNow);
  EXPECT_EQ(outcomes[0].verdict, Verdict::kInvalid);
  EXPECT_EQ(outcomes[0].message, "not an IPUJob (kind ConfigMap)");
  EXPECT_EQ(outcomes[1].verdict, Verdict::kInvalid);
  EXPECT_NE(outcomes[1].message.find("one namespace at a time"), std::string::npos);
}

TEST_F(FitReportTest, ThePublishedQueueNamesNoNamespaceAndPlansAsTheOperatorDoes) {
  occupants_.push_back({ipus(0, 32), "secret-team", "uid-o", kNow + hours(1), std::nullopt});
  queue_.push_back(queued("secret-team", "hidden-job", "uid-a", 64, 1800));
  queue_.push_back(queued("secret-team", "b", "uid-b", 16, std::nullopt));
  quotas_->quotas["secret-team"].maxIpus = 64;
  quotas_->quotas["secret-team"].maxIpusFrom = "secret-quota";
  quotas_->usage["secret-team"] = {32, 0, 1};
  const auto status = controllers::queueStatusOf(operatorInputs(), [](const std::string&) { return "n1"; });
  const std::string text = status.dump();
  for (const char* name : {"secret-team", "hidden-job", "secret-quota"})
    EXPECT_EQ(text.find(name), std::string::npos) << text;
  // The same decisions, in queue order (b before hidden-job: created together, b's name first).
  const PlanInputs read = published();
  ASSERT_EQ(read.queue.size(), 2u);
  EXPECT_EQ(read.queue[0].uid, "uid-b");
  EXPECT_EQ(read.queue[1].uid, "uid-a");
  const auto original = controllers::planFrom(operatorInputs());
  const auto replanned = controllers::planFrom(read);
  EXPECT_EQ(original.at("secret-team/b").kind, controllers::AdmissionDecision::Kind::kAdmit);
  EXPECT_EQ(replanned.at(read.queue[0].key).kind, controllers::AdmissionDecision::Kind::kAdmit);
  EXPECT_EQ(original.at("secret-team/hidden-job").kind, controllers::AdmissionDecision::Kind::kWait);
  EXPECT_EQ(replanned.at(read.queue[1].key).kind, controllers::AdmissionDecision::Kind::kWait);
  EXPECT_EQ(replanned.at(read.queue[1].key).position, original.at("secret-team/hidden-job").position);
}

}  // namespace
}  // namespace ipu::kubectl_ipu
