// The Admitter and VipuControllers over an in-memory V-IPU (vipu-sim's SimulatedPod) and a cache filled by
// hand: queue order and positions, IPUs assumed taken while a winner writes, recorded-but-missing partitions
// reserved, an unreachable controller reported as such, the topology cache.
#include "admission/admitter.h"

#include <gtest/gtest.h>

#include "fake_clock.h"
#include "job_store.h"
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

  // The decision for `key` (an admitted job's is reserved until end()).
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
  testing::JobStore store_;
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
  ASSERT_TRUE(admitter_->reservation("ns/whole").has_value());
  EXPECT_EQ(admitter_->reservation("ns/whole")->decision.placements.size(), 1u);
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
  admitter_->end("ns/whole", ReservationEnd::kPartitionsExist);
  EXPECT_FALSE(admitter_->reservation("ns/whole").has_value());
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

TEST_F(AdmitterTest, AnAdmissionRecordedButNotCreatedCountsOnceAgainstTheQuota) {
  kube::Store quotas;
  quotas.apply(kube::WatcherEvent{kube::WatcherEvent::Kind::kApply, quotaObject(16, 2)});
  admitter_ = std::make_unique<Admitter>(*inventory_, store_, quotas, MissingQuotaPolicy::kUnlimited);
  add(job("first", "8", "2026-01-01T00:00:01Z"));
  EXPECT_EQ(decide("ns/first").kind, Kind::kAdmit);
  // The decision is in first's status (its partition Planned) while its reservation still holds: 8 IPUs,
  // not 16, so another 8 fits the quota of 16.
  Json recorded = job("first", "8", "2026-01-01T00:00:01Z", holding("Creating", "p-first", 8, "Planned"));
  recorded["metadata"]["resourceVersion"] = "2";
  add(recorded);
  add(job("second", "8", "2026-01-01T00:00:02Z"));
  EXPECT_EQ(decide("ns/second").kind, Kind::kAdmit);
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

TEST_F(AdmitterTest, TopologyIsReadOnceUntilThePollFindsItsTtlPastOrAnInvalidation) {
  ASSERT_TRUE(controllers_->planner("pod64").ok());
  ASSERT_TRUE(controllers_->planner("pod64").ok());
  EXPECT_EQ(flaky_->attributeCalls, 1);
  clock_.advance(std::chrono::minutes(6));
  ASSERT_TRUE(controllers_->planner("pod64").ok());
  EXPECT_EQ(flaky_->attributeCalls, 1) << "a job's pass never re-reads a topology held";
  auto planner = controllers_->planner("pod64", TopologyRead::kIfDue);
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

// The admission object's lifecycle: decide -> reserve -> partitions created -> released, and each way a
// reservation is abandoned.
class AdmissionLifecycleTest : public AdmitterTest {
 protected:
  void remove(const std::string& name) {
    store_.apply(kube::WatcherEvent{kube::WatcherEvent::Kind::kDelete, job(name, "64", "")});
  }
  // What the job's reconcile does once its decision is recorded and V-IPU has made the partition.
  void partitionCreated(const std::string& name) {
    const auto reserved = admitter_->reservation("ns/" + name);
    ASSERT_TRUE(reserved.has_value());
    vipu::PartitionRequest request;
    request.id = "k8s_ns_" + name + "_0";
    request.size = reserved->decision.placements.at(0).block.size;
    ASSERT_TRUE(sim_->createPartition(request).ok());
    inventory_->refresh();
    Json admitted = job(name, "64", "2026-01-01T00:00:01Z", holding("Creating", request.id, 64, "Active"));
    admitted["metadata"]["resourceVersion"] = "2";
    add(admitted);
  }
};

TEST_F(AdmissionLifecycleTest, DecideReservePartitionsCreatedReleased) {
  add(job("whole", "64", "2026-01-01T00:00:01Z"));
  add(job("next", "64", "2026-01-01T00:00:02Z"));
  ASSERT_EQ(decide("ns/whole").kind, Kind::kAdmit);
  EXPECT_EQ(admitter_->reservations(), 1u);
  EXPECT_EQ(decide("ns/next").kind, Kind::kWait) << "the reservation holds the 64 IPUs";
  // Created: the reservation completes, V-IPU's partition holds the IPUs from now on.
  partitionCreated("whole");
  admitter_->end("ns/whole", ReservationEnd::kPartitionsExist);
  EXPECT_EQ(admitter_->reservations(), 0u);
  EXPECT_EQ(decide("ns/next").kind, Kind::kWait) << "the partition holds the 64 IPUs";
  // Released: the job's partition goes and the next job is admitted.
  ASSERT_TRUE(sim_->removePartition("k8s_ns_whole_0", true).ok());
  inventory_->partitionRemoved("pod64", "k8s_ns_whole_0");
  add(job("whole", "64", "2026-01-01T00:00:01Z", {{"phase", "Succeeded"}}));
  EXPECT_EQ(decide("ns/next").kind, Kind::kAdmit);
}

TEST_F(AdmissionLifecycleTest, AbandonedWhenTheDecisionIsNotRecordedOrTheQuotaRefuses) {
  add(job("whole", "64", "2026-01-01T00:00:01Z"));
  for (const ReservationEnd why : {ReservationEnd::kNotRecorded, ReservationEnd::kQuotaRefused}) {
    ASSERT_EQ(decide("ns/whole").kind, Kind::kAdmit) << toString(why);
    admitter_->end("ns/whole", why);
    EXPECT_EQ(admitter_->reservations(), 0u) << toString(why);
  }
}

TEST_F(AdmissionLifecycleTest, AbandonedWhenTheJobIsDeletedEvenWithoutItsCleanup) {
  add(job("whole", "64", "2026-01-01T00:00:01Z"));
  add(job("next", "64", "2026-01-01T00:00:02Z"));
  ASSERT_EQ(decide("ns/whole").kind, Kind::kAdmit);
  // Deleted before its decision was recorded, its finalizer stripped: nobody will call end() for it.
  remove("whole");
  EXPECT_EQ(decide("ns/next").kind, Kind::kAdmit);
  EXPECT_FALSE(admitter_->reservation("ns/whole").has_value());
}

TEST_F(AdmissionLifecycleTest, AbandonedWhenTheJobIsMadeAgainUnderItsName) {
  add(job("whole", "64", "2026-01-01T00:00:01Z"));
  ASSERT_EQ(decide("ns/whole").kind, Kind::kAdmit);
  Json again = job("whole", "64", "2026-01-01T00:00:05Z");
  again["metadata"]["uid"] = "uid-whole-2";
  add(again);
  // The new job's decision is its own: the old reservation was not its.
  EXPECT_EQ(decide("ns/whole").kind, Kind::kAdmit);
  EXPECT_EQ(admitter_->reservations(), 1u);
}

TEST_F(AdmissionLifecycleTest, AbandonedOnASpecChangeThatMadeTheRecordingFail) {
  add(job("whole", "64", "2026-01-01T00:00:01Z"));
  ASSERT_EQ(decide("ns/whole").kind, Kind::kAdmit);
  // The user edits the job while its decision is written: the conditional write fails (409), the
  // reconciler ends the reservation, and the new spec is decided afresh.
  Json edited = job("whole", "4", "2026-01-01T00:00:01Z");
  edited["metadata"]["resourceVersion"] = "2";
  edited["metadata"]["generation"] = 2;
  add(edited);
  admitter_->end("ns/whole", ReservationEnd::kNotRecorded);
  const AdmissionDecision decision = decide("ns/whole");
  ASSERT_EQ(decision.kind, Kind::kAdmit);
  EXPECT_EQ(decision.placements.at(0).block.size, 4u);
}

TEST_F(AdmissionLifecycleTest, AbandonedWithTheLeadershipTerm) {
  add(job("whole", "64", "2026-01-01T00:00:01Z"));
  add(job("next", "64", "2026-01-01T00:00:02Z"));
  ASSERT_EQ(decide("ns/whole").kind, Kind::kAdmit);
  // Leadership lost before the decision was recorded: the term's Admitter goes with it. The next term's
  // starts from what the API server holds, where nothing was promised.
  admitter_ = std::make_unique<Admitter>(*inventory_, store_);
  EXPECT_EQ(admitter_->reservations(), 0u);
  EXPECT_EQ(decide("ns/whole").kind, Kind::kAdmit);
}

TEST_F(AdmissionLifecycleTest, APlacementAfterARestartIsAReservationUntilCreated) {
  // Recorded but not created (the process died in between): the next process places it again.
  add(job("admitted", "64", "2026-01-01T00:00:01Z", holding("Creating", "k8s_ns_admitted_0", 64, "Planned")));
  auto placed = admitter_->reservationFor("ns/admitted", "pod64", {0}, 64);
  ASSERT_TRUE(placed.ok());
  ASSERT_TRUE(placed->has_value());
  EXPECT_EQ(admitter_->reservations(), 1u);
  // Asked again (the create failed and is retried), the same reservation answers.
  auto again = admitter_->reservationFor("ns/admitted", "pod64", {0}, 64);
  ASSERT_TRUE(again.ok() && again->has_value());
  EXPECT_EQ((**again).decision.placements.at(0).block.first,
            (**placed).decision.placements.at(0).block.first);
  auto unknown = admitter_->reservationFor("ns/other", "pod16", {0}, 4);
  ASSERT_FALSE(unknown.ok());
  EXPECT_EQ(unknown.error().code, ErrorCode::kNotFound);
}

TEST_F(AdmissionLifecycleTest, PlannedIpusTakenOutsideTheOperatorEndTheReservation) {
  add(job("whole", "64", "2026-01-01T00:00:01Z"));
  ASSERT_EQ(decide("ns/whole").kind, Kind::kAdmit);
  // Someone made a partition by hand on the planned IPUs after the inventory last read V-IPU.
  vipu::PartitionRequest byHand;
  byHand.id = "by-hand";
  byHand.size = 64;
  ASSERT_TRUE(sim_->createPartition(byHand).ok());
  const Json record = {
      {"id", "k8s_ns_whole_0"}, {"instance", 0}, {"size", 64}, {"controller", "pod64"}, {"state", "Planned"}};
  const auto status = api::parseIpuJobStatus({{"partitions", Json::array({record})}});
  EXPECT_TRUE(admitter_->takenElsewhere("ns/whole", "pod64", status.partitions));
  EXPECT_EQ(admitter_->reservations(), 0u);
}

}  // namespace
}  // namespace ipu::controllers
