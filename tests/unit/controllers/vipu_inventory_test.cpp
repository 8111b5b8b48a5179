// The V-IPU inventory admission plans from: reads, a failed read, the operator's own creates and removes seen
// at once, and an own change that happens while a read is in flight (the read predates it) not lost.
#include "admission/vipu_inventory.h"

#include <gtest/gtest.h>

#include "fake_clock.h"
#include "scripted_vipu.h"
#include "vipu-sim/simulated_pod.h"

namespace ipu::controllers {
namespace {

using testing::ScriptedVipu;

class VipuInventoryTest : public ::testing::Test {
 protected:
  // Creates a 4-IPU partition in V-IPU, as the operator does.
  vipu::Partition create(const std::string& id) {
    vipu::PartitionRequest request;
    request.id = id;
    request.size = 4;
    EXPECT_TRUE(sim_->createPartition(request).ok());
    for (const auto& partition : *sim_->listPartitions("")) {
      if (partition.id == id) return partition;
    }
    return {};
  }

  std::vector<std::string> ids() {
    std::vector<std::string> out;
    for (const auto& partition : inventory_->view("pod64")->partitions) out.push_back(partition.id);
    std::sort(out.begin(), out.end());
    return out;
  }

  testing::FakeClock clock_;
  testing::InMemoryVipu pod_{clock_};
  std::unique_ptr<vipu::sim::SimulatedPod>& sim_ = pod_.sim;
  std::unique_ptr<ScriptedVipu>& vipu_ = pod_.api;
  std::unique_ptr<VipuInventory>& inventory_ = pod_.inventory;
};

TEST_F(VipuInventoryTest, AReadShowsTheTopologyAndThePartitions) {
  EXPECT_EQ(inventory_->view("pod64"), nullptr) << "nothing is known before the first read";
  create("a");
  ASSERT_TRUE(inventory_->refresh("pod64").ok());
  ASSERT_NE(inventory_->view("pod64")->planner, nullptr);
  EXPECT_EQ(inventory_->view("pod64")->planner->topology().totalIpus(), 64u);
  EXPECT_EQ(ids(), std::vector<std::string>{"a"});
}

TEST_F(VipuInventoryTest, AFailedReadKeepsWhatWasKnownAndSaysWhy) {
  ASSERT_TRUE(inventory_->refresh("pod64").ok());
  const auto before = inventory_->version();
  vipu_->down = true;
  EXPECT_FALSE(inventory_->refresh("pod64").ok());
  ASSERT_TRUE(inventory_->view("pod64")->error.has_value());
  EXPECT_EQ(inventory_->view("pod64")->error->code, ErrorCode::kUnavailable);
  EXPECT_GT(inventory_->version(), before);
  vipu_->down = false;
  ASSERT_TRUE(inventory_->refresh("pod64").ok());
  EXPECT_FALSE(inventory_->view("pod64")->error.has_value());
}

TEST_F(VipuInventoryTest, OwnChangesAreSeenAtOnce) {
  ASSERT_TRUE(inventory_->refresh("pod64").ok());
  inventory_->partitionCreated("pod64", create("mine"));
  EXPECT_EQ(ids(), std::vector<std::string>{"mine"});
  ASSERT_TRUE(sim_->removePartition("mine", true).ok());
  inventory_->partitionRemoved("pod64", "mine");
  EXPECT_TRUE(ids().empty());
}

TEST_F(VipuInventoryTest, AReadThatPredatesAnOwnCreateDoesNotLoseIt) {
  ASSERT_TRUE(inventory_->refresh("pod64").ok());
  // The answer is taken, then the operator creates a partition, then the (older) answer arrives.
  vipu_->duringList = [this] { inventory_->partitionCreated("pod64", create("racing")); };
  ASSERT_TRUE(inventory_->refresh("pod64").ok());
  EXPECT_EQ(ids(), std::vector<std::string>{"racing"}) << "admission would hand these IPUs out twice";
  // A later read shows it by itself; the kept change is dropped then.
  ASSERT_TRUE(inventory_->refresh("pod64").ok());
  EXPECT_EQ(ids(), std::vector<std::string>{"racing"});
}

TEST_F(VipuInventoryTest, AReadThatPredatesAnOwnRemoveDoesNotBringItBack) {
  inventory_->partitionCreated("pod64", create("going"));
  ASSERT_TRUE(inventory_->refresh("pod64").ok());
  vipu_->duringList = [this] {
    ASSERT_TRUE(sim_->removePartition("going", true).ok());
    inventory_->partitionRemoved("pod64", "going");
  };
  ASSERT_TRUE(inventory_->refresh("pod64").ok());
  EXPECT_TRUE(ids().empty());
}

// What plans from the inventory (admission's memo, the IPUPod maps) works again only when its version moves:
// a poll that finds what was known, or a topology re-read that finds the same POD, must not move it.
TEST_F(VipuInventoryTest, AReadThatFindsNothingNewLeavesTheVersionAlone) {
  ASSERT_TRUE(inventory_->refresh("pod64").ok());
  inventory_->partitionCreated("pod64", create("mine"));
  create("theirs");                         // made outside the operator: only a read shows it
  clock_.advance(std::chrono::seconds(2));  // both active: nothing moves in V-IPU after this
  auto version = inventory_->version();
  ASSERT_TRUE(inventory_->refresh("pod64").ok());
  EXPECT_GT(inventory_->version(), version) << "a partition made outside the operator is news";
  EXPECT_EQ(ids(), (std::vector<std::string>{"mine", "theirs"}));

  version = inventory_->version();
  const auto planner = inventory_->view("pod64")->planner;
  ASSERT_TRUE(inventory_->refresh("pod64").ok());
  EXPECT_EQ(inventory_->version(), version) << "nothing changed";
  clock_.advance(std::chrono::minutes(6));  // past the topology's TTL: read again, the same POD
  const int topologyReads = vipu_->attributeCalls;
  ASSERT_TRUE(inventory_->refresh("pod64").ok());
  EXPECT_EQ(vipu_->attributeCalls, topologyReads + 1);
  EXPECT_EQ(inventory_->view("pod64")->planner, planner) << "the same topology keeps its planner";
  EXPECT_EQ(inventory_->version(), version);

  ASSERT_TRUE(sim_->removePartition("theirs", true).ok());
  ASSERT_TRUE(inventory_->refresh("pod64").ok());
  EXPECT_GT(inventory_->version(), version) << "a partition gone outside the operator is news";
  EXPECT_EQ(ids(), std::vector<std::string>{"mine"});
}

}  // namespace
}  // namespace ipu::controllers
