#include "admission/start_estimate.h"

#include <numeric>

#include <gtest/gtest.h>

namespace ipu::controllers {
namespace {

using Kind = StartEstimate::Kind;
using std::chrono::hours;
using std::chrono::minutes;
using std::chrono::seconds;

const Clock::WallTime kNow = Clock::WallTime{} + hours(24 * 20000);
constexpr auto kAllowance = seconds(15);

class StartEstimateTest : public ::testing::Test {
 protected:
  static std::vector<std::uint32_t> ipus(std::uint32_t first, std::uint32_t count) {
    std::vector<std::uint32_t> ids(count);
    std::iota(ids.begin(), ids.end(), first);
    return ids;
  }
  static Occupant job(std::string ns, std::string uid, std::vector<std::uint32_t> held,
                      std::optional<Clock::WallTime> endsBy) {
    return {std::move(held), std::move(ns), std::move(uid), endsBy, std::nullopt};
  }
  static AdmissionRequest waiting(std::string key, std::uint32_t size, std::string created,
                                  std::optional<std::int64_t> deadline, std::uint32_t instances = 1) {
    AdmissionRequest request;
    request.key = key;
    request.ns = key.substr(0, key.find('/'));
    request.creationTimestamp = std::move(created);
    request.instances = instances;
    request.ipusPerInstance = size;
    request.activeDeadlineSeconds = deadline;
    return request;
  }
  PlanInputs pod16(std::vector<Occupant> occupants, std::vector<AdmissionRequest> queue) const {
    PlanInputs inputs;
    inputs.controllers.push_back({"pod16", planner16_, std::move(occupants)});
    inputs.queue = std::move(queue);
    return inputs;
  }

  std::shared_ptr<const vipu::PartitionPlanner> planner16_ =
      std::make_shared<vipu::PartitionPlanner>(*vipu::Topology::forPod("pod16", "pod16"));
};

TEST_F(StartEstimateTest, AJobThatFitsNowStartsNow) {
  const auto estimates =
      estimateStarts(pod16({}, {waiting("a/x", 8, "2026-01-01T00:00:00Z", std::nullopt)}), kNow);
  EXPECT_EQ(estimates.at("a/x").kind, Kind::kStartsBy);
  EXPECT_EQ(estimates.at("a/x").startsBy, kNow);
}

TEST_F(StartEstimateTest, EachWaitingJobStartsWhenTheDeadlinesBeforeItHaveRunOut) {
  // The POD is full until 1 h from now; the first waiting job then runs at most 2 h, the second after it.
  const auto estimates = estimateStarts(pod16({job("b", "uid-b", ipus(0, 16), kNow + hours(1))},
                                              {waiting("a/first", 16, "2026-01-01T00:00:01Z", 7200),
                                               waiting("a/second", 16, "2026-01-01T00:00:02Z", 600)}),
                                        kNow);
  ASSERT_EQ(estimates.at("a/first").kind, Kind::kStartsBy);
  EXPECT_EQ(estimates.at("a/first").startsBy, kNow + hours(1) + kAllowance);
  ASSERT_EQ(estimates.at("a/second").kind, Kind::kStartsBy);
  EXPECT_EQ(estimates.at("a/second").startsBy, kNow + hours(3) + 2 * kAllowance);
}

TEST_F(StartEstimateTest, OnlyTheHoldersWhoseIpusTheJobNeedsMatter) {
  // Two 8-IPU holders: one ends in 10 min, the other never; an 8-IPU job takes the first's IPUs.
  const auto estimates = estimateStarts(
      pod16({job("b", "uid-1", ipus(0, 8), kNow + minutes(10)), job("c", "uid-2", ipus(8, 8), std::nullopt)},
            {waiting("a/x", 8, "2026-01-01T00:00:00Z", std::nullopt)}),
      kNow);
  ASSERT_EQ(estimates.at("a/x").kind, Kind::kStartsBy);
  EXPECT_EQ(estimates.at("a/x").startsBy, kNow + minutes(10) + kAllowance);
}

TEST_F(StartEstimateTest, AHolderWithoutADeadlineMakesItUnknownAndSaysSo) {
  const auto estimates = estimateStarts(
      pod16({job("b", "uid-1", ipus(0, 8), kNow + minutes(10)), job("c", "uid-2", ipus(8, 8), std::nullopt)},
            {waiting("a/x", 16, "2026-01-01T00:00:00Z", 60)}),
      kNow);
  EXPECT_EQ(estimates.at("a/x").kind, Kind::kUnknown);
  EXPECT_EQ(estimates.at("a/x").why,
            "not known: 1 job that holds IPUs or will hold them first declares no activeDeadlineSeconds");
}

TEST_F(StartEstimateTest, AJobAheadWithoutADeadlineMakesTheJobsBehindItUnknown) {
  const auto estimates = estimateStarts(pod16({job("b", "uid-1", ipus(0, 16), kNow + minutes(10))},
                                              {waiting("a/first", 16, "2026-01-01T00:00:01Z", std::nullopt),
                                               waiting("a/second", 16, "2026-01-01T00:00:02Z", 60)}),
                                        kNow);
  ASSERT_EQ(estimates.at("a/first").kind, Kind::kStartsBy);
  EXPECT_EQ(estimates.at("a/first").startsBy, kNow + minutes(10) + kAllowance);
  EXPECT_EQ(estimates.at("a/second").kind, Kind::kUnknown);
}

TEST_F(StartEstimateTest, APartitionNoJobHoldsHasNoEnd) {
  const auto estimates = estimateStarts(
      pod16({job("", "", ipus(0, 16), std::nullopt)}, {waiting("a/x", 16, "2026-01-01T00:00:00Z", 60)}),
      kNow);
  EXPECT_EQ(estimates.at("a/x").kind, Kind::kUnknown);
  EXPECT_EQ(estimates.at("a/x").why, "not known: 1 partition no job holds has no end");
}

TEST_F(StartEstimateTest, AJobThatCanNeverFitSaysWhy) {
  const auto estimates = estimateStarts(pod16({}, {waiting("a/x", 32, "2026-01-01T00:00:00Z", 60)}), kNow);
  EXPECT_EQ(estimates.at("a/x").kind, Kind::kNever);
  EXPECT_FALSE(estimates.at("a/x").why.empty());
}

TEST_F(StartEstimateTest, AnAdmittedJobNotStartedYetEndsItsDeadlineAfterNow) {
  Occupant starting = job("b", "uid-b", ipus(0, 16), std::nullopt);
  starting.runsForSeconds = 300;
  const auto estimates =
      estimateStarts(pod16({starting}, {waiting("a/x", 16, "2026-01-01T00:00:00Z", std::nullopt)}), kNow);
  ASSERT_EQ(estimates.at("a/x").kind, Kind::kStartsBy);
  EXPECT_EQ(estimates.at("a/x").startsBy, kNow + seconds(300) + kAllowance);
}

TEST_F(StartEstimateTest, AReservationEndsWithItsJob) {
  PlanInputs inputs = pod16({}, {waiting("a/x", 16, "2026-01-01T00:00:00Z", std::nullopt)});
  inputs.reservations.push_back({"pod16", 1, 16, "b", "uid-b", kNow + minutes(5)});
  const auto estimates = estimateStarts(inputs, kNow);
  ASSERT_EQ(estimates.at("a/x").kind, Kind::kStartsBy);
  EXPECT_EQ(estimates.at("a/x").startsBy, kNow + minutes(5) + kAllowance);
}

TEST_F(StartEstimateTest, TheNamespaceQuotaHoldsAJobUntilItsOwnJobsEndEvenWithIpusFree) {
  // Namespace a may hold 8 IPUs and holds 8 until 20 min from now; 8 IPUs of the POD are free.
  PlanInputs inputs = pod16({job("a", "uid-a", ipus(0, 8), kNow + minutes(20))},
                            {waiting("a/x", 8, "2026-01-01T00:00:00Z", 60)});
  inputs.quotas = QuotaRules{};
  inputs.quotas->quotas["a"].maxIpus = 8;
  inputs.quotas->usage["a"] = {8, 0, 1};
  const auto estimates = estimateStarts(inputs, kNow);
  ASSERT_EQ(estimates.at("a/x").kind, Kind::kStartsBy);
  EXPECT_EQ(estimates.at("a/x").startsBy, kNow + minutes(20) + kAllowance);
}

TEST_F(StartEstimateTest, AJobOnlyAQuotaChangeCanLetRunIsUnknownWithTheQuotasReason) {
  PlanInputs inputs = pod16({}, {waiting("a/x", 16, "2026-01-01T00:00:00Z", 60)});
  inputs.quotas = QuotaRules{};
  inputs.quotas->quotas["a"].maxIpus = 8;
  const auto estimates = estimateStarts(inputs, kNow);
  EXPECT_EQ(estimates.at("a/x").kind, Kind::kUnknown);
  EXPECT_NE(estimates.at("a/x").why.find("can never run under the current quota"), std::string::npos)
      << estimates.at("a/x").why;
}

TEST_F(StartEstimateTest, AQueueLongerThanThePlayIsAllowedIsUnknownBeyondIt) {
  // One 16-IPU job after another, each running a minute: the third needs three plans.
  std::vector<AdmissionRequest> queue;
  for (int i = 0; i < 3; ++i)
    queue.push_back(
        waiting("a/j" + std::to_string(i), 16, "2026-01-01T00:00:0" + std::to_string(i) + "Z", 60));
  const auto estimates = estimateStarts(pod16({}, queue), kNow, {kAllowance, 2});
  EXPECT_EQ(estimates.at("a/j0").kind, Kind::kStartsBy);
  EXPECT_EQ(estimates.at("a/j1").kind, Kind::kStartsBy);
  EXPECT_EQ(estimates.at("a/j2").kind, Kind::kUnknown);
  EXPECT_EQ(estimates.at("a/j2").why, "not known: the queue is too long to play forward");
}

}  // namespace
}  // namespace ipu::controllers
