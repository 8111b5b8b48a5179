// The Admitter and VipuControllers over an in-memory V-IPU (vipu-sim's SimulatedPod) and a cache filled by
// hand: queue order and positions, IPUs assumed taken while a winner writes, recorded-but-missing partitions
// reserved, an unreachable controller reported as such, the topology cache.
#include "admission/admitter.h"

#include <gtest/gtest.h>

#include "fake_clock.h"
#include "scripted_vipu.h"
#include "vipu-sim/simulated_pod.h"

namespace ipu::controllers {
namespace {

using testing::ScriptedVipu;

using Kind = AdmissionDecision::Kind;

Json job(const std::string& name, const std::string& ipus, const std::string& created,
         Json status = nullptr) {
  Json object = {
      {"apiVersion", "graphcore.ai/v1alpha1"},
      {"kind", "IPUJob"},
      {"metadata",
       {{"namespace", "ns"},
        {"name", name},
        {"uid", "uid-" + name},
        {"resourceVersion", "1"},
        {"creationTimestamp", created}}},
      {"spec",
       {{"ipusPerJobInstance", ipus},
        {"workers", {{"template", {{"spec", {{"containers", {{{"name", "m"}, {"image", "i"}}}}}}}}}}}}};
  if (!status.is_null()) object["status"] = std::move(status);
  return object;
}

// A status holding one recorded partition.
Json holding(const std::string& phase, const std::string& id, int size, const std::string& state) {
  Json partition = {{"id", id}, {"size", size}, {"controller", "pod64"}, {"state", state}};
  return {{"phase", phase}, {"partitions", Json::array({partition})}};
}

class AdmitterTest : public ::testing::Test {
 protected:
  void SetUp() override {
    inventory_->refresh();
    admitter_ = std::make_unique<Admitter>(*inventory_, store_);
  }

  void add(Json object) {
    store_.apply(kube::WatcherEvent{kube::WatcherEvent::Kind::kApply, std::move(object)});
  }

  // The decision for `key` (an admitted job's stays in flight until forget()).
  AdmissionDecision decide(const std::string& key) {
    auto decided = admitter_->decide(key);
    EXPECT_TRUE(decided.ok()) << decided.error().message;
    EXPECT_TRUE(decided.ok() && decided->has_value()) << key << " was not waiting";
    return decided.ok() && decided->has_value() ? (**decided).decision : AdmissionDecision{};
  }

  testing::FakeClock clock_;
  testing::InMemoryVipu vipu_{clock_};
  std::unique_ptr<vipu::sim::SimulatedPod>& sim_ = vipu_.sim;
  std::unique_ptr<ScriptedVipu>& flaky_ = vipu_.api;
  std::unique_ptr<VipuControllers>& controllers_ = vipu_.controllers;
  std::unique_ptr<VipuInventory>& inventory_ = vipu_.inventory;
  kube::Store store_;
  std::unique_ptr<Admitter> admitter_;
};

TEST_F(AdmitterTest, TheQueueDecidesWhoRunsAndGivesTheOthersTheirPlace) {
  add(job("first", "4", "2026-01-01T00:00:01Z"));
  add(job("big", "64", "2026-01-01T00:00:02Z"));
  add(job("small", "4", "2026-01-01T00:00:03Z"));
  // "first" takes 4 IPUs ahead of "big", which then cannot have all 64: it waits first in line, and "small"
  // (BestEffortFIFO) runs.
  const auto big = decide("ns/big");
  EXPECT_EQ(big.kind, Kind::kWait);
  EXPECT_EQ(big.position, 1);
  EXPECT_EQ(big.reason, "InsufficientCapacity");
  EXPECT_EQ(decide("ns/small").kind, Kind::kAdmit);
  const auto first = decide("ns/first");
  EXPECT_EQ(first.kind, Kind::kAdmit);
  EXPECT_EQ(first.controller, "pod64");
}

TEST_F(AdmitterTest, AJobNoLongerWaitingGetsNoDecision) {
  add(job("running", "4", "2026-01-01T00:00:01Z", holding("Running", "k8s_ns_running_0", 4, "Active")));
  auto decided = admitter_->decide("ns/running");
  ASSERT_TRUE(decided.ok());
  EXPECT_FALSE(decided->has_value());
  auto absent = admitter_->decide("ns/absent");
  ASSERT_TRUE(absent.ok());
  EXPECT_FALSE(absent->has_value());
}

TEST_F(AdmitterTest, AWinnersIpusStayTakenWhileItsAdmissionIsInFlight) {
  add(job("whole", "64", "2026-01-01T00:00:01Z"));
  const auto whole = decide("ns/whole");
  ASSERT_EQ(whole.kind, Kind::kAdmit);
  ASSERT_TRUE(admitter_->inFlight("ns/whole").has_value());
  EXPECT_EQ(admitter_->inFlight("ns/whole")->decision.placements.size(), 1u);
  // While the winner's status write is in flight (the cache still shows it waiting, V-IPU has nothing), a
  // more urgent job arrives: it would be first in the queue, but the 64 IPUs are spoken for.
  Json urgent = job("urgent", "4", "2026-01-01T00:00:02Z");
  urgent["spec"]["priority"] = 10;
  add(urgent);
  EXPECT_EQ(decide("ns/urgent").kind, Kind::kWait);
  // The winner is not planned twice while its admission is in flight.
  auto again = admitter_->decide("ns/whole");
  ASSERT_TRUE(again.ok());
  EXPECT_FALSE(again->has_value());
  // Once the winner's admission ends (here: it recorded nothing), nothing stays assumed.
  admitter_->forget("ns/whole");
  EXPECT_FALSE(admitter_->inFlight("ns/whole").has_value());
  EXPECT_EQ(decide("ns/urgent").kind, Kind::kAdmit);
}

TEST_F(AdmitterTest, ABurstOfWaitingJobsCostsOnePass) {
  add(job("first", "64", "2026-01-01T00:00:01Z"));
  add(job("second", "64", "2026-01-01T00:00:02Z"));
  add(job("third", "64", "2026-01-01T00:00:03Z"));
  vipu::PartitionRequest whole;
  whole.id = "taken";
  whole.size = 64;
  ASSERT_TRUE(sim_->createPartition(whole).ok());
  inventory_->refresh();
  EXPECT_EQ(decide("ns/first").position, 1);
  EXPECT_EQ(decide("ns/second").position, 2);
  // A waiting job's own status write (its position, its message) is not a reason to plan again ...
  Json third = job("third", "64", "2026-01-01T00:00:03Z", {{"phase", "Queued"}, {"queuePosition", 3}});
  third["metadata"]["resourceVersion"] = "2";
  add(third);
  EXPECT_EQ(decide("ns/third").position, 3);
  EXPECT_EQ(admitter_->passes(), 1u);
  // ... while a change of what a pass reads is: capacity given back.
  ASSERT_TRUE(sim_->removePartition("taken", true).ok());
  inventory_->partitionRemoved("pod64", "taken");
  EXPECT_EQ(decide("ns/first").kind, Kind::kAdmit);
  EXPECT_EQ(admitter_->passes(), 2u);
}

Json quotaObject(int maxIpus, int generation) {
  return {{"apiVersion", "graphcore.ai/v1alpha1"},
          {"kind", "IPUQuota"},
          {"metadata",
           {{"namespace", "ns"}, {"name", "gold"}, {"generation", generation}, {"resourceVersion", "1"}}},
          {"spec", {{"maxIPUs", maxIpus}}}};
}

TEST_F(AdmitterTest, WithQuotasTheNamespacesQuotaCapsWhatIsAdmittedAndAQuotaChangeIsANewPass) {
  kube::Store quotas;
  quotas.apply(kube::WatcherEvent{kube::WatcherEvent::Kind::kApply, quotaObject(16, 1)});
  admitter_ = std::make_unique<Admitter>(*inventory_, store_, quotas, MissingQuotaPolicy::kUnlimited);
  add(job("first", "8", "2026-01-01T00:00:01Z"));
  add(job("second", "16", "2026-01-01T00:00:02Z"));
  EXPECT_EQ(decide("ns/first").kind, Kind::kAdmit);
  const AdmissionDecision second = decide("ns/second");
  EXPECT_EQ(second.reason, "QuotaExceeded") << "8 in flight + 16 > 16";
  EXPECT_NE(second.message.find("IPUQuota ns/gold allows 16 IPUs (maxIPUs) and the namespace holds 8"),
            std::string::npos)
      << second.message;
  const std::uint64_t passes = admitter_->passes();
  // The quota's own status writes (counts, ledger) keep the generation: the decisions stand.
  Json counted = quotaObject(16, 1);
  counted["metadata"]["resourceVersion"] = "2";
  counted["status"] = {{"usedIPUs", 8}};
  quotas.apply(kube::WatcherEvent{kube::WatcherEvent::Kind::kApply, counted});
  EXPECT_EQ(decide("ns/second").reason, "QuotaExceeded");
  EXPECT_EQ(admitter_->passes(), passes);
  // An admin raising it is a new pass, which admits the job at once.
  quotas.apply(kube::WatcherEvent{kube::WatcherEvent::Kind::kApply, quotaObject(24, 2)});
  EXPECT_EQ(decide("ns/second").kind, Kind::kAdmit);
  EXPECT_EQ(admitter_->passes(), passes + 1);
}

TEST_F(AdmitterTest, AnUnreadableQuotaHoldsBackItsNamespaceWithTheReason) {
  kube::Store quotas;
  Json broken = quotaObject(16, 1);
  broken["status"] = {{"admissions", {{"x", "not an entry"}}}};
  quotas.apply(kube::WatcherEvent{kube::WatcherEvent::Kind::kApply, broken});
  admitter_ = std::make_unique<Admitter>(*inventory_, store_, quotas, MissingQuotaPolicy::kUnlimited);
  add(job("first", "1", "2026-01-01T00:00:01Z"));
  const AdmissionDecision decision = decide("ns/first");
  EXPECT_EQ(decision.reason, "QuotaExceeded");
  EXPECT_NE(decision.message.find("IPUQuota ns/gold cannot be read: status.admissions.x"), std::string::npos)
      << decision.message;
}

TEST_F(AdmitterTest, PartitionsRecordedButNotCreatedAreReserved) {
  // A process died between writing the ids and creating the partition: its 64 IPUs are still promised.
  add(job("admitted", "64", "2026-01-01T00:00:01Z", holding("Creating", "k8s_ns_admitted_0", 64, "Planned")));
  add(job("newcomer", "1", "2026-01-01T00:00:02Z"));
  EXPECT_EQ(decide("ns/newcomer").kind, Kind::kWait);
}

TEST_F(AdmitterTest, AnUnreachableControllerIsAnErrorNotAFullCluster) {
  add(job("waiting", "4", "2026-01-01T00:00:01Z"));
  flaky_->down = true;
  inventory_->refresh();
  auto decided = admitter_->decide("ns/waiting");
  ASSERT_FALSE(decided.ok()) << "no decision may be made without the controller";
  EXPECT_EQ(decided.error().code, ErrorCode::kUnavailable);
  EXPECT_NE(decided.error().message.find("V-IPU controller pod64 is unavailable"), std::string::npos)
      << decided.error().message;
  flaky_->down = false;
  inventory_->refresh();
  EXPECT_EQ(decide("ns/waiting").kind, Kind::kAdmit);
}

TEST_F(AdmitterTest, TopologyIsReadOnceUntilItsTtlOrAnInvalidation) {
  ASSERT_TRUE(controllers_->planner("pod64").ok());
  ASSERT_TRUE(controllers_->planner("pod64").ok());
  EXPECT_EQ(flaky_->attributeCalls, 1);
  clock_.advance(std::chrono::minutes(6));
  auto planner = controllers_->planner("pod64");
  ASSERT_TRUE(planner.ok());
  EXPECT_EQ((*planner)->topology().totalIpus(), 64u);
  EXPECT_EQ(flaky_->attributeCalls, 2);
  controllers_->invalidate("pod64");
  ASSERT_TRUE(controllers_->planner("pod64").ok());
  EXPECT_EQ(flaky_->attributeCalls, 3);

  auto unknown = controllers_->planner("pod16");
  ASSERT_FALSE(unknown.ok());
  EXPECT_EQ(unknown.error().code, ErrorCode::kNotFound);
  EXPECT_EQ(unknown.error().message, "there is no V-IPU controller named 'pod16' (configured: pod64)");
}

TEST_F(AdmitterTest, MalformedJobsAreLeftToTheirOwnReconcile) {
  Json broken = job("broken", "3", "2026-01-01T00:00:00Z");  // not a power of two
  add(broken);
  add(job("fine", "64", "2026-01-01T00:00:01Z"));
  EXPECT_EQ(decide("ns/fine").kind, Kind::kAdmit) << "a malformed job ahead holds nothing";
  auto decided = admitter_->decide("ns/broken");
  ASSERT_TRUE(decided.ok());
  EXPECT_FALSE(decided->has_value()) << "a job that does not parse gets no decision";
}

}  // namespace
}  // namespace ipu::controllers
