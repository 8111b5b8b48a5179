#include "admission/quota_plan.h"

#include <gtest/gtest.h>

namespace ipu::controllers {
namespace {

using Kind = AdmissionDecision::Kind;

class QuotaPlanTest : public ::testing::Test {
 protected:
  static vipu::PartitionPlanner plannerFor(const char* pod) {
    return vipu::PartitionPlanner(*vipu::Topology::forPod(pod, pod));
  }
  static ControllerCapacity empty(const std::string& name, const vipu::PartitionPlanner& planner) {
    return {name, &planner, vipu::IpuSet(planner.topology().totalIpus())};
  }
  // pod16 with its first `ipus` IPUs held by running jobs.
  ControllerCapacity pod16Using(std::uint32_t ipus) const {
    auto capacity = empty("pod16", pod16_);
    if (ipus > 0) capacity.taken.insert(vipu::IpuBlock{0, ipus});
    return capacity;
  }
  static AdmissionRequest job(const std::string& ns, const std::string& name, std::uint32_t ipus,
                              std::string created, int priority = 0, std::uint32_t instances = 1) {
    AdmissionRequest request{ns + "/" + name, priority, std::move(created), instances, ipus, {}};
    request.ns = ns;
    return request;
  }
  static NamespaceQuota quota(std::uint64_t maxIpus, std::optional<std::uint64_t> maxJobs = std::nullopt,
                              std::optional<std::int64_t> maxPriority = std::nullopt) {
    return {maxIpus, "q", maxJobs, "q", maxPriority, "q"};
  }
  static std::string at(int second) {
    return "2026-01-01T00:00:" + std::string(second < 10 ? "0" : "") + std::to_string(second) + "Z";
  }
  static bool contains(const std::string& text, const std::string& part) {
    return text.find(part) != std::string::npos;
  }

  vipu::PartitionPlanner pod16_ = plannerFor("pod16");
  vipu::PartitionPlanner pod64_ = plannerFor("pod64");
};

TEST_F(QuotaPlanTest, AJobThatFitsTheTopologyButNotItsQuotaWaitsSayingWhich) {
  QuotaRules rules{{{"team-a", quota(8)}}, {{"team-a", {4, 0, 1}}}, MissingQuotaPolicy::kUnlimited};
  const auto decisions =
      planQuotaAdmissions({job("team-a", "eight", 8, at(1)), job("team-a", "four", 4, at(2))},
                          {pod16Using(4)}, {}, QueueingStrategy::kBestEffortFifo, rules);
  const AdmissionDecision& eight = decisions.at("team-a/eight");
  EXPECT_EQ(eight.kind, Kind::kWait);
  EXPECT_EQ(eight.reason, "QuotaExceeded");
  EXPECT_EQ(eight.position, 1);
  for (const char* part :
       {"IPUQuota team-a/q", "needs 8 IPUs", "allows 8 IPUs (maxIPUs)", "holds 4 (4 free)"})
    EXPECT_TRUE(contains(eight.message, part)) << part << " in " << eight.message;
  EXPECT_EQ(decisions.at("team-a/four").kind, Kind::kAdmit)
      << "the rest of the quota still serves smaller jobs";
}

TEST_F(QuotaPlanTest, AJobKueueAdmittedIsPlacedOnCapacityAloneOutsideItsNamespacesQuota) {
  // team-a's IPUQuota is full (4 of 4 held) and denies more; the job Kueue admitted is placed all the same,
  // and its IPUs do not count against the quota's next job.
  QuotaRules rules{{{"team-a", quota(4)}}, {{"team-a", {4, 0, 1}}}, MissingQuotaPolicy::kDeny};
  AdmissionRequest kueued = job("team-a", "kueued", 8, at(1));
  kueued.queuedByKueue = true;
  const auto decisions = planQuotaAdmissions({kueued, job("team-a", "own", 4, at(2))}, {pod16Using(4)}, {},
                                             QueueingStrategy::kBestEffortFifo, rules);
  EXPECT_EQ(decisions.at("team-a/kueued").kind, Kind::kAdmit);
  EXPECT_EQ(decisions.at("team-a/own").kind, Kind::kWait);
  EXPECT_EQ(decisions.at("team-a/own").reason, "QuotaExceeded");
  // In a namespace without an IPUQuota under MissingQuotaPolicy::kDeny, still placed.
  AdmissionRequest elsewhere = job("team-b", "kueued", 4, at(3));
  elsewhere.queuedByKueue = true;
  EXPECT_EQ(planQuotaAdmissions({elsewhere}, {pod16Using(0)}, {}, QueueingStrategy::kBestEffortFifo, rules)
                .at("team-b/kueued")
                .kind,
            Kind::kAdmit);
}

TEST_F(QuotaPlanTest, AJobThatFitsItsQuotaButNotTheTopologyWaitsForCapacity) {
  QuotaRules rules{{{"team-a", quota(64)}}, {}, MissingQuotaPolicy::kUnlimited};
  const auto decisions = planQuotaAdmissions({job("team-a", "sixteen", 16, at(1))}, {pod16Using(8)}, {},
                                             QueueingStrategy::kBestEffortFifo, rules);
  EXPECT_EQ(decisions.at("team-a/sixteen").kind, Kind::kWait);
  EXPECT_EQ(decisions.at("team-a/sixteen").reason, "InsufficientCapacity");
  EXPECT_EQ(decisions.at("team-a/sixteen").position, 1);
}

TEST_F(QuotaPlanTest, TwoNamespacesCompetingForOneClusterShareIt) {
  // team-a's three jobs are older, yet once it holds half of its quota team-b (holding none) goes next.
  QuotaRules rules{{{"team-a", quota(16)}, {"team-b", quota(16)}}, {}, MissingQuotaPolicy::kUnlimited};
  const auto decisions =
      planQuotaAdmissions({job("team-a", "a1", 8, at(1)), job("team-a", "a2", 8, at(2)),
                           job("team-a", "a3", 8, at(3)), job("team-b", "b1", 8, at(9))},
                          {empty("pod16", pod16_)}, {}, QueueingStrategy::kBestEffortFifo, rules);
  EXPECT_EQ(decisions.at("team-a/a1").kind, Kind::kAdmit);
  EXPECT_EQ(decisions.at("team-b/b1").kind, Kind::kAdmit);
  EXPECT_EQ(decisions.at("team-a/a2").kind, Kind::kWait);
  EXPECT_EQ(decisions.at("team-a/a2").reason, "InsufficientCapacity");
  EXPECT_EQ(decisions.at("team-a/a2").position, 1);
  EXPECT_EQ(decisions.at("team-a/a3").position, 2);
}

TEST_F(QuotaPlanTest, ANamespaceWithTwentyJobsDoesNotStarveOneWithOne) {
  // Neither namespace has a quota (unlimited): share = IPUs held / the cluster's IPUs.
  std::vector<AdmissionRequest> queue;
  for (int i = 0; i < 20; ++i) queue.push_back(job("many", "job" + std::to_string(10 + i), 4, at(10 + i)));
  queue.push_back(job("one", "late", 4, at(59)));
  const auto decisions = planQuotaAdmissions(queue, {empty("pod16", pod16_)}, {},
                                             QueueingStrategy::kBestEffortFifo, QuotaRules{});
  EXPECT_EQ(decisions.at("one/late").kind, Kind::kAdmit);
  int admittedMany = 0;
  for (int i = 0; i < 20; ++i) {
    const auto& decision = decisions.at("many/job" + std::to_string(10 + i));
    if (decision.kind == Kind::kAdmit) {
      ++admittedMany;
      EXPECT_LT(i, 3) << "the oldest of the namespace go first";
    } else {
      EXPECT_EQ(decision.position, i - 2);
    }
  }
  EXPECT_EQ(admittedMany, 3);
}

TEST_F(QuotaPlanTest, ShareIsUseOverTheNamespacesOwnLimitComparedExactly) {
  // big holds 16 of 64 (1/4), small 4 of 8 (1/2): big goes first though small's job is older. Then big
  // holds 24/64 = 3/8, still below 1/2: big again.
  QuotaRules rules{{{"big", quota(64)}, {"small", quota(8)}},
                   {{"big", {16, 0, 1}}, {"small", {4, 0, 1}}},
                   MissingQuotaPolicy::kUnlimited};
  auto decisions = planQuotaAdmissions(
      {job("small", "s", 4, at(1)), job("big", "b1", 8, at(5)), job("big", "b2", 8, at(6))}, {pod16Using(0)},
      {}, QueueingStrategy::kBestEffortFifo, rules);
  EXPECT_EQ(decisions.at("big/b1").kind, Kind::kAdmit);
  EXPECT_EQ(decisions.at("big/b2").kind, Kind::kAdmit);
  EXPECT_EQ(decisions.at("small/s").kind, Kind::kWait) << "the cluster was full when its turn came";
  EXPECT_EQ(decisions.at("small/s").position, 1);

  // Equal shares (8/32 and 16/64): priority decides before age.
  const QuotaRules equalShares{{{"x", quota(32)}, {"y", quota(64)}},
                               {{"x", {8, 0, 1}}, {"y", {16, 0, 1}}},
                               MissingQuotaPolicy::kUnlimited};
  decisions = planQuotaAdmissions({job("x", "old", 16, at(1)), job("y", "urgent", 16, at(9), 3)},
                                  {pod16Using(0)}, {}, QueueingStrategy::kBestEffortFifo, equalShares);
  EXPECT_EQ(decisions.at("y/urgent").kind, Kind::kAdmit);
  EXPECT_EQ(decisions.at("x/old").position, 1);
}

TEST_F(QuotaPlanTest, PriorityAboveTheCapIsNotAllowedAndPriorityOrdersInsideANamespace) {
  QuotaRules rules{{{"team-a", quota(64, std::nullopt, 5)}}, {}, MissingQuotaPolicy::kUnlimited};
  const auto decisions =
      planQuotaAdmissions({job("team-a", "jumper", 4, at(1), 100), job("team-a", "old", 16, at(2)),
                           job("team-a", "capped", 16, at(3), 5)},
                          {pod16Using(0)}, {}, QueueingStrategy::kStrictFifo, rules);
  const AdmissionDecision& jumper = decisions.at("team-a/jumper");
  EXPECT_EQ(jumper.kind, Kind::kWait);
  EXPECT_EQ(jumper.reason, "PriorityNotAllowed");
  EXPECT_EQ(jumper.position, 0) << "not in line: only a change of priority or quota helps";
  for (const char* part : {"priority 100 is above 5", "IPUQuota team-a/q", "maxPriority"})
    EXPECT_TRUE(contains(jumper.message, part)) << part << " in " << jumper.message;
  EXPECT_EQ(decisions.at("team-a/capped").kind, Kind::kAdmit) << "priority 5 is allowed and goes before 0";
  EXPECT_EQ(decisions.at("team-a/old").position, 1);
}

TEST_F(QuotaPlanTest, StrictFifoHoldsBackOnlyTheBlockedJobsOwnNamespace) {
  // 8 of 16 IPUs in use: team-a's 16 waits; its small job waits behind it; team-b's small job runs.
  const std::vector<AdmissionRequest> queue = {
      job("team-a", "big", 16, at(1)), job("team-a", "small", 4, at(2)), job("team-b", "small", 4, at(3))};
  const auto decisions =
      planQuotaAdmissions(queue, {pod16Using(8)}, {}, QueueingStrategy::kStrictFifo, QuotaRules{});
  EXPECT_EQ(decisions.at("team-a/big").reason, "InsufficientCapacity");
  EXPECT_EQ(decisions.at("team-a/big").position, 1);
  EXPECT_EQ(decisions.at("team-a/small").reason, "WaitingInQueue");
  EXPECT_TRUE(contains(decisions.at("team-a/small").message, "waiting behind team-a/big"))
      << decisions.at("team-a/small").message;
  EXPECT_EQ(decisions.at("team-b/small").kind, Kind::kAdmit);

  // The plan without quotas holds back everyone, as before.
  const auto global = planAdmissions(queue, {pod16Using(8)}, {}, QueueingStrategy::kStrictFifo);
  EXPECT_EQ(global.at("team-b/small").kind, Kind::kWait);
}

TEST_F(QuotaPlanTest, AQuotaBlockedJobHoldsBackItsNamespaceUnderStrictFifo) {
  QuotaRules rules{{{"team-a", quota(8)}}, {{"team-a", {4, 0, 1}}}, MissingQuotaPolicy::kUnlimited};
  const auto decisions =
      planQuotaAdmissions({job("team-a", "eight", 8, at(1)), job("team-a", "two", 2, at(2))}, {pod16Using(4)},
                          {}, QueueingStrategy::kStrictFifo, rules);
  EXPECT_EQ(decisions.at("team-a/eight").reason, "QuotaExceeded");
  EXPECT_EQ(decisions.at("team-a/two").reason, "WaitingInQueue");
  EXPECT_EQ(decisions.at("team-a/two").position, 2);
}

TEST_F(QuotaPlanTest, AJobLargerThanItsQuotaCanNeverRunUnderItAndHoldsBackNoOne) {
  QuotaRules rules{{{"team-a", quota(8)}}, {}, MissingQuotaPolicy::kUnlimited};
  const auto decisions =
      planQuotaAdmissions({job("team-a", "gang", 8, at(1), 0, 2), job("team-a", "fits", 8, at(2))},
                          {pod16Using(0)}, {}, QueueingStrategy::kStrictFifo, rules);
  const AdmissionDecision& gang = decisions.at("team-a/gang");
  EXPECT_EQ(gang.kind, Kind::kWait) << "not failed: an admin may raise the quota";
  EXPECT_EQ(gang.reason, "QuotaExceeded");
  EXPECT_EQ(gang.position, 0);
  for (const char* part : {"needs 16 IPUs (2 x 8)", "IPUQuota team-a/q", "allows the namespace 8 (maxIPUs)",
                           "can never run under the current quota", "may raise it"})
    EXPECT_TRUE(contains(gang.message, part)) << part << " in " << gang.message;
  EXPECT_EQ(decisions.at("team-a/fits").kind, Kind::kAdmit);

  rules.quotas["team-a"] = quota(64, 0);
  const auto noJobs = planQuotaAdmissions({job("team-a", "any", 1, at(1))}, {pod16Using(0)}, {},
                                          QueueingStrategy::kBestEffortFifo, rules);
  EXPECT_TRUE(contains(noJobs.at("team-a/any").message, "maxJobs 0")) << noJobs.at("team-a/any").message;
  EXPECT_EQ(noJobs.at("team-a/any").position, 0);
}

TEST_F(QuotaPlanTest, DenyPolicyAdmitsOnlyNamespacesWithAQuota) {
  const std::vector<AdmissionRequest> queue = {job("no-quota", "j", 4, at(1)), job("team-a", "j", 4, at(2))};
  QuotaRules rules{{{"team-a", quota(16)}}, {}, MissingQuotaPolicy::kDeny};
  auto decisions = planQuotaAdmissions(queue, {pod16Using(0)}, {}, QueueingStrategy::kStrictFifo, rules);
  const AdmissionDecision& denied = decisions.at("no-quota/j");
  EXPECT_EQ(denied.kind, Kind::kWait);
  EXPECT_EQ(denied.reason, "QuotaExceeded");
  EXPECT_EQ(denied.position, 0);
  EXPECT_TRUE(contains(denied.message, "namespace no-quota has no IPUQuota")) << denied.message;
  EXPECT_TRUE(contains(denied.message, "deny")) << denied.message;
  EXPECT_EQ(decisions.at("team-a/j").kind, Kind::kAdmit);

  rules.missingQuota = MissingQuotaPolicy::kUnlimited;
  decisions = planQuotaAdmissions(queue, {pod16Using(0)}, {}, QueueingStrategy::kStrictFifo, rules);
  EXPECT_EQ(decisions.at("no-quota/j").kind, Kind::kAdmit);
}

TEST_F(QuotaPlanTest, ALoweredQuotaAdmitsNothingNewAndLeavesRunningJobsAlone) {
  // The namespace runs two jobs holding 16 IPUs; its quota was lowered to 8.
  QuotaRules rules{{{"team-a", quota(8)}}, {{"team-a", {16, 0, 2}}}, MissingQuotaPolicy::kUnlimited};
  const auto decisions = planQuotaAdmissions({job("team-a", "one", 1, at(1))}, {pod16Using(16)}, {},
                                             QueueingStrategy::kBestEffortFifo, rules);
  ASSERT_EQ(decisions.size(), 1u) << "only waiting jobs are decided; running ones are not touched";
  EXPECT_EQ(decisions.at("team-a/one").reason, "QuotaExceeded");
  EXPECT_TRUE(contains(decisions.at("team-a/one").message, "holds 16 (0 free)"))
      << decisions.at("team-a/one").message;
}

TEST_F(QuotaPlanTest, JobsAdmittedEarlierInThePassCountAgainstTheQuota) {
  QuotaRules rules{{{"team-a", quota(16)}}, {{"team-a", {0, 4, 1}}}, MissingQuotaPolicy::kUnlimited};
  auto decisions = planQuotaAdmissions(
      {job("team-a", "j1", 8, at(1)), job("team-a", "j2", 4, at(2)), job("team-a", "j3", 4, at(3))},
      {empty("pod64", pod64_)}, {}, QueueingStrategy::kBestEffortFifo, rules);
  EXPECT_EQ(decisions.at("team-a/j1").kind, Kind::kAdmit);  // 4 reserved + 8
  EXPECT_EQ(decisions.at("team-a/j2").kind, Kind::kAdmit);  // + 4 = 16
  EXPECT_EQ(decisions.at("team-a/j3").reason, "QuotaExceeded");
  EXPECT_TRUE(contains(decisions.at("team-a/j3").message, "holds 16 (0 free)"))
      << decisions.at("team-a/j3").message;

  rules.quotas["team-a"] = quota(64, 2);
  decisions = planQuotaAdmissions({job("team-a", "j1", 1, at(1)), job("team-a", "j2", 1, at(2))},
                                  {empty("pod64", pod64_)}, {}, QueueingStrategy::kBestEffortFifo, rules);
  EXPECT_EQ(decisions.at("team-a/j1").kind, Kind::kAdmit);
  EXPECT_EQ(decisions.at("team-a/j2").reason, "QuotaExceeded");
  EXPECT_TRUE(
      contains(decisions.at("team-a/j2").message, "allows 2 admitted jobs (maxJobs) and 2 are admitted"))
      << decisions.at("team-a/j2").message;
}

TEST_F(QuotaPlanTest, AJobThatCanNeverFitTheTopologyIsUnschedulableWhateverItsQuota) {
  QuotaRules rules{{{"team-a", quota(256)}}, {{"team-a", {256, 0, 1}}}, MissingQuotaPolicy::kUnlimited};
  const auto decisions = planQuotaAdmissions({job("team-a", "huge", 128, at(1))}, {empty("pod64", pod64_)},
                                             {}, QueueingStrategy::kBestEffortFifo, rules);
  EXPECT_EQ(decisions.at("team-a/huge").kind, Kind::kNeverFits);
  EXPECT_EQ(decisions.at("team-a/huge").reason, "Unschedulable");
}

TEST_F(QuotaPlanTest, WithoutQuotasOneNamespaceIsPlannedExactlyAsBefore) {
  std::vector<AdmissionRequest> queue;
  for (int i = 0; i < 12; ++i) {
    queue.push_back(job("ns", "j" + std::to_string(i), 1u << (i % 5), at(i), i % 3, 1 + (i % 2)));
  }
  for (auto strategy : {QueueingStrategy::kBestEffortFifo, QueueingStrategy::kStrictFifo}) {
    const auto before = planAdmissions(queue, {pod16Using(2)}, {Reservation{"pod16", 1, 4}}, strategy);
    const auto after =
        planQuotaAdmissions(queue, {pod16Using(2)}, {Reservation{"pod16", 1, 4}}, strategy, {});
    ASSERT_EQ(before.size(), after.size());
    for (const auto& [key, decision] : before) {
      const AdmissionDecision& other = after.at(key);
      EXPECT_EQ(decision.kind, other.kind) << key;
      EXPECT_EQ(decision.position, other.position) << key;
      EXPECT_EQ(decision.reason, other.reason) << key;
      EXPECT_EQ(decision.controller, other.controller) << key;
      ASSERT_EQ(decision.placements.size(), other.placements.size()) << key;
      for (std::size_t i = 0; i < decision.placements.size(); ++i)
        EXPECT_EQ(decision.placements[i].block.first, other.placements[i].block.first) << key;
    }
  }
}

TEST_F(QuotaPlanTest, WaitingPositionsFollowTheFairOrderAcrossNamespaces) {
  // The cluster is full, so nothing is admitted and no share changes: with equal shares the waiting jobs
  // of both namespaces go by age.
  const auto decisions =
      planQuotaAdmissions({job("a", "1", 4, at(1)), job("a", "2", 4, at(2)), job("a", "3", 4, at(3)),
                           job("b", "1", 4, at(5)), job("b", "2", 4, at(6))},
                          {pod16Using(16)}, {}, QueueingStrategy::kBestEffortFifo, QuotaRules{});
  EXPECT_EQ(decisions.at("a/1").position, 1);
  EXPECT_EQ(decisions.at("a/2").position, 2) << "a's next job (second 2) is older than b's first (second 5)";
  EXPECT_EQ(decisions.at("a/3").position, 3);
  EXPECT_EQ(decisions.at("b/1").position, 4);

  // With a's share higher (it holds IPUs), b's jobs come first.
  const QuotaRules aHolds{{}, {{"a", {8, 0, 2}}}, MissingQuotaPolicy::kUnlimited};
  const auto fair =
      planQuotaAdmissions({job("a", "1", 4, at(1)), job("b", "1", 4, at(5)), job("b", "2", 4, at(6))},
                          {pod16Using(16)}, {}, QueueingStrategy::kBestEffortFifo, aHolds);
  EXPECT_EQ(fair.at("b/1").position, 1);
  EXPECT_EQ(fair.at("b/2").position, 2);
  EXPECT_EQ(fair.at("a/1").position, 3);
}

TEST_F(QuotaPlanTest, SeveralQuotasInANamespaceCombineToTheTightestOfEachField) {
  auto make = [](std::string ns, std::string name, api::IpuQuotaSpec spec) {
    return api::IpuQuota{{std::move(ns), std::move(name), ""}, 1, "", spec, {}};
  };
  const auto combined = namespaceQuotas(
      {make("a", "team", {64, 10, 100}), make("a", "freeze", {16, std::nullopt, std::nullopt}),
       make("a", "low", {32, 4, 5}), make("b", "only", {8, std::nullopt, -1})});
  const NamespaceQuota& a = combined.at("a");
  EXPECT_EQ(a.maxIpus, 16u);
  EXPECT_EQ(a.maxIpusFrom, "freeze");
  EXPECT_EQ(a.maxJobs, 4u);
  EXPECT_EQ(a.maxJobsFrom, "low");
  EXPECT_EQ(a.maxPriority, 5);
  EXPECT_EQ(a.maxPriorityFrom, "low");
  EXPECT_EQ(combined.at("b").maxPriority, -1);
  EXPECT_FALSE(combined.at("b").maxJobs.has_value());
}

TEST_F(QuotaPlanTest, AnUnreadableQuotaAdmitsNothingInItsNamespaceAndSaysWhy) {
  NamespaceQuota broken = quota(64);
  broken.invalid = "IPUQuota team-a/q: status.admissions.x: must be {uid: <job uid>, ipus: <0 or more>}";
  const QuotaRules rules{{{"team-a", broken}}, {}, MissingQuotaPolicy::kUnlimited};
  const auto decisions =
      planQuotaAdmissions({job("team-a", "j", 1, at(1)), job("team-b", "j", 1, at(2))},
                          {empty("pod64", pod64_)}, {}, QueueingStrategy::kStrictFifo, rules);
  EXPECT_EQ(decisions.at("team-a/j").reason, "QuotaExceeded");
  EXPECT_EQ(decisions.at("team-a/j").position, 0);
  EXPECT_TRUE(contains(decisions.at("team-a/j").message, "IPUQuota team-a/q: status.admissions.x"))
      << decisions.at("team-a/j").message;
  EXPECT_EQ(decisions.at("team-b/j").kind, Kind::kAdmit) << "other namespaces are not held back";
}

TEST_F(QuotaPlanTest, MissingQuotaPolicyNames) {
  MissingQuotaPolicy policy;
  ASSERT_TRUE(parseMissingQuotaPolicy("deny", policy));
  EXPECT_EQ(policy, MissingQuotaPolicy::kDeny);
  EXPECT_STREQ(missingQuotaPolicyName(policy), "deny");
  ASSERT_TRUE(parseMissingQuotaPolicy("unlimited", policy));
  EXPECT_STREQ(missingQuotaPolicyName(policy), "unlimited");
  for (const char* bad : {"", "Deny", "none", "unlimited "})
    EXPECT_FALSE(parseMissingQuotaPolicy(bad, policy)) << bad;
}

}  // namespace
}  // namespace ipu::controllers
