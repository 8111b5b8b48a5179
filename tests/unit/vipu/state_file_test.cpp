#include "vipu-sim/state_file.h"

#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <unistd.h>

#include "vipu-sim/atomic_file.h"
#include "vipu-sim/file_lock.h"
#include "vipu-sim/simulated_pod.h"

namespace ipu::vipu::sim {
namespace {

namespace fs = std::filesystem;

class VipuStateFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    directory_ =
        fs::temp_directory_path() / ("vipu-state-test-" + std::to_string(::getpid()) + "-" +
                                     ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(directory_);
    fs::create_directories(directory_);
    path_ = (directory_ / "state.json").string();
  }
  void TearDown() override {
    std::error_code ignored;
    fs::remove_all(directory_, ignored);
  }

  SimState sampleState() const {
    SimState state{topology_, {SimAllocation{"default", {0, 1}}}, {}};
    SimPartition partition;
    partition.id = "job_0";
    partition.allocationId = "default";
    partition.block = IpuBlock{64, 16};
    partition.numGcds = 2;
    partition.numReplicas = 4;
    partition.ipuLinkRouting = IpuLinkRouting::kSwnc;
    partition.createdAtMs = 1000;
    partition.activeAtMs = 2000;
    partition.resetUntilMs = 2500;
    partition.faulted = true;
    partition.errors = {"link down"};
    partition.resetCount = 1;
    state.partitions.emplace(partition.id, partition);
    return state;
  }

  void write(const std::string& text) const { std::ofstream(path_, std::ios::binary) << text; }
  nlohmann::json sampleJson() const { return nlohmann::json::parse(StateFile::serialize(sampleState())); }

  // Loads `text` and expects a refusal whose message names the file and contains `problem`.
  void expectRefused(const std::string& text, const std::string& problem) const {
    write(text);
    Result<std::optional<SimState>> loaded = StateFile(path_).load();
    ASSERT_FALSE(loaded) << "accepted: " << text.substr(0, 200);
    EXPECT_NE(loaded.error().message.find(path_), std::string::npos) << loaded.error().message;
    EXPECT_NE(loaded.error().message.find(problem), std::string::npos) << loaded.error().message;
  }

  const Topology topology_ = *Topology::forPod("pod128", "sim");
  fs::path directory_;
  std::string path_;
};

TEST_F(VipuStateFileTest, RoundTripsEveryField) {
  const StateFile file(path_);
  ASSERT_TRUE(file.save(sampleState()));
  Result<std::optional<SimState>> loaded = file.load();
  ASSERT_TRUE(loaded) << loaded.error().toString();
  ASSERT_TRUE(loaded->has_value());
  const SimState& state = **loaded;
  EXPECT_EQ(state.topology, topology_);
  EXPECT_EQ(state.allocations, sampleState().allocations);
  EXPECT_EQ(state.partitions, sampleState().partitions);
  EXPECT_FALSE(fs::exists(path_ + ".tmp"));
}

TEST_F(VipuStateFileTest, MissingFileMeansFirstStart) {
  Result<std::optional<SimState>> loaded = StateFile(path_).load();
  ASSERT_TRUE(loaded);
  EXPECT_FALSE(loaded->has_value());
}

TEST_F(VipuStateFileTest, RefusesDamagedFiles) {
  const std::string good = StateFile::serialize(sampleState());
  expectRefused("", "is empty");
  expectRefused("  \n", "is empty");
  expectRefused(good.substr(0, good.size() / 2), "is damaged");  // truncated mid-write by something else
  expectRefused("{\"format\": ", "is damaged");
  expectRefused("not json at all", "is damaged");
  expectRefused("[1, 2, 3]", "not a JSON object");
  expectRefused("{}", "\"format\"");
  expectRefused(std::string("\0\0\0\0", 4), "");
}

TEST_F(VipuStateFileTest, RefusesInconsistentContent) {
  auto mutated = [this](auto&& change) {
    nlohmann::json json = sampleJson();
    change(json);
    return json.dump();
  };
  expectRefused(mutated([](auto& j) { j["version"] = 99; }), "version 99 is not supported");
  expectRefused(mutated([](auto& j) { j["ild_size"] = 24; }), "power of two");
  expectRefused(mutated([](auto& j) { j["ilds"] = "two"; }), "type must be number");
  expectRefused(mutated([](auto& j) { j.erase("partitions"); }), "partitions");
  expectRefused(mutated([](auto& j) { j["partitions"][0].erase("size"); }), "partition #0");
  expectRefused(mutated([](auto& j) { j["partitions"][0]["size"] = 12; }), "aligned power-of-two block");
  expectRefused(mutated([](auto& j) { j["partitions"][0]["first_ipu"] = 8; }), "aligned power-of-two block");
  expectRefused(mutated([](auto& j) { j["partitions"][0]["first_ipu"] = 1024; }),
                "aligned power-of-two block");
  expectRefused(mutated([](auto& j) { j["partitions"][0]["id"] = "bad id"; }), "[A-Za-z0-9._-]");
  expectRefused(mutated([](auto& j) { j["partitions"][0]["allocation_id"] = "gone"; }), "allocation 'gone'");
  expectRefused(mutated([](auto& j) { j["partitions"][0]["num_gcds"] = 3; }), "num_gcds 3");
  expectRefused(mutated([](auto& j) { j["partitions"][0]["active_at_ms"] = 1; }), "timestamps");
  expectRefused(mutated([](auto& j) { j["partitions"].push_back(j["partitions"][0]); }), "overlaps");
  expectRefused(mutated([](auto& j) {
                  auto copy = j["partitions"][0];
                  copy["first_ipu"] = 0;
                  j["partitions"].push_back(copy);
                }),
                "appears twice");
  expectRefused(mutated([](auto& j) { j["allocations"][0]["ilds"] = {0, 0}; }), "repeats");
  expectRefused(mutated([](auto& j) { j["allocations"][0]["ilds"] = {5}; }), "outside");
  expectRefused(mutated([](auto& j) {
                  j["allocations"].push_back({{"id", "x"}, {"ilds", {1}}});
                }),
                "in two allocations");
}

TEST_F(VipuStateFileTest, SimRefusesAStateFileOfAnotherCluster) {
  ASSERT_TRUE(StateFile(path_).save(sampleState()));
  const Topology other = *Topology::forPod("pod64", "sim");
  auto pod = SimulatedPod::open(other, {}, SimBehaviour{}, nullptr, StateFile(path_));
  ASSERT_FALSE(pod);
  EXPECT_NE(pod.error().message.find("holds cluster 'sim': 2 ILDs"), std::string::npos)
      << pod.error().message;
  auto allocations =
      SimulatedPod::open(topology_, {SimAllocation{"a", {0}}}, SimBehaviour{}, nullptr, StateFile(path_));
  ASSERT_FALSE(allocations);
  EXPECT_NE(allocations.error().message.find("other allocations"), std::string::npos);
}

TEST_F(VipuStateFileTest, SimKeepsEveryPartitionAcrossRestarts) {
  {
    auto pod = *SimulatedPod::open(topology_, {}, SimBehaviour{}, nullptr, StateFile(path_));
    ASSERT_TRUE(pod->createPartition(PartitionRequest{.id = "a", .size = 16}));
    ASSERT_TRUE(pod->createPartition(PartitionRequest{.id = "b", .size = 128 / 2}));
    ASSERT_TRUE(pod->createPartition(PartitionRequest{.id = "c", .size = 1}));
    ASSERT_TRUE(pod->removePartition("c", false));
  }
  auto restarted = *SimulatedPod::open(topology_, {}, SimBehaviour{}, nullptr, StateFile(path_));
  const std::vector<Partition> partitions = *restarted->listPartitions("");
  ASSERT_EQ(partitions.size(), 2u);
  EXPECT_EQ(partitions[0].id, "a");
  EXPECT_EQ(partitions[1].id, "b");
  EXPECT_EQ(restarted->createPartition(PartitionRequest{.id = "a", .size = 1}).error().code,
            ErrorCode::kAlreadyExists);
}

TEST_F(VipuStateFileTest, AChangeThatCannotBePersistedIsNotMade) {
  auto pod = *SimulatedPod::open(topology_, {}, SimBehaviour{}, nullptr, StateFile(path_));
  ASSERT_TRUE(pod->createPartition(PartitionRequest{.id = "kept", .size = 4}));
  // A directory where the temporary file must go makes the write fail, even for root.
  fs::create_directory(path_ + ".tmp");
  Result<std::string> failed = pod->createPartition(PartitionRequest{.id = "lost", .size = 4});
  ASSERT_FALSE(failed);
  EXPECT_EQ(failed.error().code, ErrorCode::kInternal);
  EXPECT_NE(failed.error().message.find("was not made"), std::string::npos) << failed.error().message;
  EXPECT_EQ(pod->listPartitions("")->size(), 1u);
  EXPECT_FALSE(pod->removePartition("kept", false));
  EXPECT_EQ(pod->listPartitions("")->size(), 1u);
  fs::remove(path_ + ".tmp");
  // The file still holds exactly what the pod reports.
  EXPECT_EQ((*StateFile(path_).load())->partitions.size(), 1u);
}

TEST_F(VipuStateFileTest, AStateFileInAMissingDirectoryFailsAtStart) {
  auto pod = SimulatedPod::open(topology_, {}, SimBehaviour{}, nullptr,
                                StateFile((directory_ / "no" / "such" / "state.json").string()));
  ASSERT_FALSE(pod);
  EXPECT_NE(pod.error().message.find("cannot create"), std::string::npos) << pod.error().message;
}

TEST_F(VipuStateFileTest, AtomicWriteReplacesTheWholeFile) {
  ASSERT_TRUE(writeFileAtomically(path_, "first version, longer than the second\n"));
  ASSERT_TRUE(writeFileAtomically(path_, "second\n"));
  EXPECT_EQ(*readWholeFile(path_), "second\n");
  EXPECT_FALSE(fs::exists(path_ + ".tmp"));
  EXPECT_EQ(readWholeFile(path_ + ".missing").error().code, ErrorCode::kNotFound);
}

TEST_F(VipuStateFileTest, OnlyOneSimUsesAStateFile) {
  Result<std::unique_ptr<FileLock>> first = FileLock::acquire(path_);
  ASSERT_TRUE(first) << first.error().toString();
  Result<std::unique_ptr<FileLock>> second = FileLock::acquire(path_);
  ASSERT_FALSE(second);
  EXPECT_NE(second.error().message.find("in use by another vipu-sim"), std::string::npos);
  first->reset();
  EXPECT_TRUE(FileLock::acquire(path_));
}

TEST_F(VipuStateFileTest, PendingPartitionBecomesActiveAfterARestart) {
  std::chrono::system_clock::time_point now{std::chrono::milliseconds(5'000'000)};
  SimClock clock = [&now] { return now; };
  SimBehaviour behaviour;
  behaviour.activationDelay = std::chrono::milliseconds(1000);
  {
    auto pod = *SimulatedPod::open(topology_, {}, behaviour, nullptr, StateFile(path_), clock);
    ASSERT_TRUE(pod->createPartition(PartitionRequest{.id = "p", .size = 4}));
    EXPECT_EQ(pod->getPartitionStatus("p")->readyState, ReadyState::kPending);
  }
  now += std::chrono::milliseconds(1500);
  auto restarted = *SimulatedPod::open(topology_, {}, behaviour, nullptr, StateFile(path_), clock);
  EXPECT_EQ(restarted->getPartitionStatus("p")->readyState, ReadyState::kActive);
}

}  // namespace
}  // namespace ipu::vipu::sim
