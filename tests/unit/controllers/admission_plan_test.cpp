#include "admission/admission_plan.h"

#include <gtest/gtest.h>

namespace ipu::controllers {
namespace {

using Kind = AdmissionDecision::Kind;

class AdmissionPlanTest : public ::testing::Test {
 protected:
  static vipu::PartitionPlanner plannerFor(const char* pod) {
    return vipu::PartitionPlanner(*vipu::Topology::forPod(pod, pod));
  }
  ControllerCapacity empty(const std::string& name, const vipu::PartitionPlanner& planner) {
    return {name, &planner, vipu::IpuSet(planner.topology().totalIpus())};
  }
  static AdmissionRequest job(std::string key, std::uint32_t ipus, std::string created, int priority = 0,
                              std::uint32_t instances = 1) {
    return {std::move(key), priority, std::move(created), instances, ipus, {}};
  }

  vipu::PartitionPlanner pod16_ = plannerFor("pod16");
  vipu::PartitionPlanner pod64_ = plannerFor("pod64");
};

TEST_F(AdmissionPlanTest, QueueOrderIsPriorityThenAgeThenName) {
  std::vector<AdmissionRequest> queue = {
      job("ns/c", 4, "2026-01-01T00:00:02Z"), job("ns/b", 4, "2026-01-01T00:00:01Z"),
      job("ns/a", 4, "2026-01-01T00:00:02Z"), job("ns/urgent", 4, "2026-01-01T00:00:09Z", 10)};
  sortQueue(queue);
  std::vector<std::string> keys;
  for (const auto& request : queue) keys.push_back(request.key);
  EXPECT_EQ(keys, (std::vector<std::string>{"ns/urgent", "ns/b", "ns/a", "ns/c"}));
}

TEST_F(AdmissionPlanTest, JobsAreAdmittedInOrderUntilCapacityRunsOutAndTheRestWaitWithPositions) {
  // 16 IPUs: 8 + 8 fit, the third 8 and a 16 wait.
  const auto decisions =
      planAdmissions({job("ns/first", 8, "2026-01-01T00:00:01Z"), job("ns/second", 8, "2026-01-01T00:00:02Z"),
                      job("ns/third", 8, "2026-01-01T00:00:03Z"), job("ns/big", 16, "2026-01-01T00:00:04Z")},
                     {empty("pod16", pod16_)}, {}, QueueingStrategy::kBestEffortFifo);
  EXPECT_EQ(decisions.at("ns/first").kind, Kind::kAdmit);
  EXPECT_EQ(decisions.at("ns/second").kind, Kind::kAdmit);
  EXPECT_NE(decisions.at("ns/first").placements[0].block.first,
            decisions.at("ns/second").placements[0].block.first);
  EXPECT_EQ(decisions.at("ns/third").kind, Kind::kWait);
  EXPECT_EQ(decisions.at("ns/third").position, 1);
  EXPECT_EQ(decisions.at("ns/third").reason, "InsufficientCapacity");
  EXPECT_EQ(decisions.at("ns/big").kind, Kind::kWait);
  EXPECT_EQ(decisions.at("ns/big").position, 2);
}

TEST_F(AdmissionPlanTest, BestEffortLetsASmallJobPassABigOneStrictDoesNot) {
  auto capacity = empty("pod16", pod16_);
  capacity.taken.insert(vipu::IpuBlock{0, 8});  // 8 of 16 IPUs in use
  const std::vector<AdmissionRequest> queue = {job("ns/big", 16, "2026-01-01T00:00:01Z"),
                                               job("ns/small", 4, "2026-01-01T00:00:02Z")};
  auto best = planAdmissions(queue, {capacity}, {}, QueueingStrategy::kBestEffortFifo);
  EXPECT_EQ(best.at("ns/big").kind, Kind::kWait);
  EXPECT_EQ(best.at("ns/small").kind, Kind::kAdmit);

  auto strict = planAdmissions(queue, {capacity}, {}, QueueingStrategy::kStrictFifo);
  EXPECT_EQ(strict.at("ns/big").kind, Kind::kWait);
  EXPECT_EQ(strict.at("ns/big").position, 1);
  EXPECT_EQ(strict.at("ns/small").kind, Kind::kWait);
  EXPECT_EQ(strict.at("ns/small").position, 2);
  EXPECT_EQ(strict.at("ns/small").reason, "WaitingInQueue");
  EXPECT_NE(strict.at("ns/small").message.find("ns/big"), std::string::npos) << strict.at("ns/small").message;
}

TEST_F(AdmissionPlanTest, AHigherPriorityJobGoesFirstEvenWhenNewer) {
  const auto decisions = planAdmissions(
      {job("ns/old", 16, "2026-01-01T00:00:01Z"), job("ns/important", 16, "2026-01-01T00:00:09Z", 5)},
      {empty("pod16", pod16_)}, {}, QueueingStrategy::kBestEffortFifo);
  EXPECT_EQ(decisions.at("ns/important").kind, Kind::kAdmit);
  EXPECT_EQ(decisions.at("ns/old").kind, Kind::kWait);
  EXPECT_EQ(decisions.at("ns/old").position, 1);
}

TEST_F(AdmissionPlanTest, AJobLargerThanAnyPartitionNeverFitsAndTakesNoPlaceInTheQueue) {
  const auto decisions = planAdmissions(
      {job("ns/huge", 128, "2026-01-01T00:00:01Z"), job("ns/waits", 32, "2026-01-01T00:00:02Z"),
       job("ns/runs", 64, "2026-01-01T00:00:00Z")},
      {empty("pod64", pod64_)}, {}, QueueingStrategy::kStrictFifo);
  EXPECT_EQ(decisions.at("ns/huge").kind, Kind::kNeverFits);
  EXPECT_EQ(decisions.at("ns/huge").reason, "Unschedulable");
  EXPECT_NE(decisions.at("ns/huge").message.find("largest possible partition is 64"), std::string::npos)
      << decisions.at("ns/huge").message;
  EXPECT_EQ(decisions.at("ns/runs").kind, Kind::kAdmit);
  EXPECT_EQ(decisions.at("ns/waits").kind, Kind::kWait);
  EXPECT_EQ(decisions.at("ns/waits").position, 1);
}

TEST_F(AdmissionPlanTest, ReservationsOfAdmittedJobsAreHonouredFirst) {
  // An admitted job's 16 IPUs are recorded but not created yet: a waiting 64 must not take them.
  const auto decisions = planAdmissions({job("ns/big", 64, "2026-01-01T00:00:01Z")}, {empty("pod64", pod64_)},
                                        {Reservation{"pod64", 1, 16}}, QueueingStrategy::kBestEffortFifo);
  EXPECT_EQ(decisions.at("ns/big").kind, Kind::kWait);
}

TEST_F(AdmissionPlanTest, SeveralControllersAJobGoesToTheFirstThatFitsOrToTheOneItPins) {
  auto small = empty("a-pod16", pod16_);
  auto large = empty("b-pod64", pod64_);
  auto decisions = planAdmissions(
      {job("ns/sixteen", 16, "2026-01-01T00:00:01Z"), job("ns/another", 16, "2026-01-01T00:00:02Z"),
       job("ns/sixty-four", 64, "2026-01-01T00:00:03Z")},
      {large, small}, {}, QueueingStrategy::kBestEffortFifo);
  EXPECT_EQ(decisions.at("ns/sixteen").controller, "a-pod16");
  EXPECT_EQ(decisions.at("ns/another").controller, "b-pod64");
  EXPECT_EQ(decisions.at("ns/sixty-four").kind, Kind::kWait) << "b-pod64 has 48 IPUs left";
  EXPECT_NE(decisions.at("ns/sixty-four").message.find("on b-pod64"), std::string::npos)
      << decisions.at("ns/sixty-four").message;

  AdmissionRequest pinned = job("ns/pinned", 4, "2026-01-01T00:00:01Z");
  pinned.controllers = {"b-pod64"};
  AdmissionRequest elsewhere = job("ns/elsewhere", 4, "2026-01-01T00:00:01Z");
  elsewhere.controllers = {"c-missing"};
  decisions = planAdmissions({pinned, elsewhere}, {large, small}, {}, QueueingStrategy::kBestEffortFifo);
  EXPECT_EQ(decisions.at("ns/pinned").controller, "b-pod64");
  EXPECT_EQ(decisions.at("ns/elsewhere").kind, Kind::kNeverFits);
  EXPECT_NE(decisions.at("ns/elsewhere").message.find("c-missing"), std::string::npos);
  EXPECT_NE(decisions.at("ns/elsewhere").message.find("a-pod16, b-pod64"), std::string::npos)
      << decisions.at("ns/elsewhere").message;
}

TEST_F(AdmissionPlanTest, GangsAreAllOrNothing) {
  // 4 instances x 8 IPUs do not fit 16 IPUs now or ever; 2 x 8 fit exactly.
  const auto decisions = planAdmissions(
      {job("ns/gang4", 8, "2026-01-01T00:00:01Z", 0, 4), job("ns/gang2", 8, "2026-01-01T00:00:02Z", 0, 2)},
      {empty("pod16", pod16_)}, {}, QueueingStrategy::kBestEffortFifo);
  EXPECT_EQ(decisions.at("ns/gang4").kind, Kind::kNeverFits);
  ASSERT_EQ(decisions.at("ns/gang2").kind, Kind::kAdmit);
  EXPECT_EQ(decisions.at("ns/gang2").placements.size(), 2u);
}

TEST_F(AdmissionPlanTest, QueueingStrategyNames) {
  QueueingStrategy strategy;
  ASSERT_TRUE(parseQueueingStrategy("StrictFIFO", strategy));
  EXPECT_EQ(strategy, QueueingStrategy::kStrictFifo);
  ASSERT_TRUE(parseQueueingStrategy("BestEffortFIFO", strategy));
  EXPECT_STREQ(queueingStrategyName(strategy), "BestEffortFIFO");
  for (const char* bad : {"", "strictfifo", "FIFO", "BestEffortFIFO "})
    EXPECT_FALSE(parseQueueingStrategy(bad, strategy)) << bad;
}

}  // namespace
}  // namespace ipu::controllers
