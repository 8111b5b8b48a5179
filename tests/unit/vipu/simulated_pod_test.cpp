#include "vipu-sim/simulated_pod.h"

#include <thread>

#include <gtest/gtest.h>

#include "vipu/ipu_block.h"
#include "vipu/ipu_set.h"
#include "vipu/wait_until_active.h"

namespace ipu::vipu::sim {
namespace {

using std::chrono::milliseconds;

// A clock the test moves by hand.
class ManualClock {
 public:
  std::chrono::system_clock::time_point now() const { return now_; }
  void advance(milliseconds by) { now_ += by; }
  SimClock asSimClock() {
    return [this] { return now(); };
  }

 private:
  std::chrono::system_clock::time_point now_{std::chrono::milliseconds(1'700'000'000'000)};
};

class VipuSimulatedPodTest : public ::testing::Test {
 protected:
  std::unique_ptr<SimulatedPod> open(const Topology& topology, std::vector<SimAllocation> allocations = {},
                                     FaultOptions faults = {}) {
    SimBehaviour behaviour;
    behaviour.activationDelay = milliseconds(100);
    behaviour.resetDuration = milliseconds(50);
    auto pod = SimulatedPod::open(topology, std::move(allocations), behaviour,
                                  std::make_shared<FaultInjector>(std::move(faults)), std::nullopt,
                                  clock_.asSimClock());
    EXPECT_TRUE(pod) << pod.error().toString();
    return std::move(*pod);
  }

  static PartitionRequest request(std::string id, std::uint32_t size) {
    PartitionRequest r;
    r.id = std::move(id);
    r.size = size;
    return r;
  }
  static PartitionRequest explicitRequest(const Topology& topology, std::string id, IpuBlock block) {
    PartitionRequest r = request(std::move(id), block.size);
    r.clusterId = topology.clusterId();
    r.ipus = ipusOfBlock(topology, block);
    return r;
  }

  const Topology pod64_ = *Topology::forPod("pod64", "sim");
  const Topology pod128_ = *Topology::forPod("pod128", "sim");
  ManualClock clock_;
};

TEST_F(VipuSimulatedPodTest, PartitionGoesFromPendingToActiveAfterTheDelay) {
  auto pod = open(pod64_);
  ASSERT_EQ(*pod->createPartition(request("job-0", 16)), "job-0");
  PartitionStatus status = *pod->getPartitionStatus("job-0");
  EXPECT_EQ(status.readyState, ReadyState::kPending);
  EXPECT_EQ(status.operationState, OperationState::kCreating);
  EXPECT_EQ(status.maxAutoResetRetries, 3u);
  clock_.advance(milliseconds(99));
  EXPECT_EQ(pod->getPartitionStatus("job-0")->readyState, ReadyState::kPending);
  clock_.advance(milliseconds(1));
  status = *pod->getPartitionStatus("job-0");
  EXPECT_EQ(status.readyState, ReadyState::kActive);
  EXPECT_EQ(status.operationState, OperationState::kIdle);

  const std::vector<Partition> partitions = *pod->listPartitions("");
  ASSERT_EQ(partitions.size(), 1u);
  EXPECT_EQ(partitions[0].id, "job-0");
  EXPECT_EQ(partitions[0].readyState, ReadyState::kActive);
  EXPECT_EQ(partitions[0].spec.clusterId, "sim");
  EXPECT_EQ(partitions[0].spec.allocationId, "default");
  EXPECT_EQ(partitions[0].spec.numGcds, 1u);
  EXPECT_EQ(partitions[0].spec.numReplicas, 1u);
  EXPECT_EQ(partitions[0].spec.numIpulinkSegments, 1u);
  EXPECT_EQ(partitions[0].spec.ipus, ipusOfBlock(pod64_, IpuBlock{0, 16}));
}

TEST_F(VipuSimulatedPodTest, ResetPassesThroughResettingAndClearsErrors) {
  FaultOptions faults;
  faults.errorPartitions = {"broken"};
  auto pod = open(pod64_, {}, faults);
  ASSERT_TRUE(pod->createPartition(request("broken", 4)));
  EXPECT_EQ(pod->resetPartition("broken").error().code, ErrorCode::kFailedPrecondition);  // still creating
  clock_.advance(milliseconds(100));
  PartitionStatus status = *pod->getPartitionStatus("broken");
  EXPECT_EQ(status.readyState, ReadyState::kError);
  EXPECT_EQ(status.operationState, OperationState::kFailed);
  ASSERT_EQ(status.errors.size(), 1u);
  EXPECT_NE(status.errors[0].find("injected fault"), std::string::npos);

  ASSERT_TRUE(pod->resetPartition("broken"));
  status = *pod->getPartitionStatus("broken");
  EXPECT_EQ(status.readyState, ReadyState::kPending);
  EXPECT_EQ(status.operationState, OperationState::kResetting);
  clock_.advance(milliseconds(50));
  status = *pod->getPartitionStatus("broken");
  EXPECT_EQ(status.readyState, ReadyState::kActive);
  EXPECT_TRUE(status.errors.empty());
}

TEST_F(VipuSimulatedPodTest, RemoveFreesTheIpus) {
  auto pod = open(pod64_);
  ASSERT_TRUE(pod->createPartition(request("whole", 64)));
  EXPECT_EQ(pod->createPartition(request("more", 1)).error().code, ErrorCode::kResourceExhausted);
  ASSERT_TRUE(pod->removePartition("whole", false));
  EXPECT_EQ(pod->getPartitionStatus("whole").error().code, ErrorCode::kNotFound);
  EXPECT_TRUE(pod->createPartition(request("more", 64)));
}

TEST_F(VipuSimulatedPodTest, RejectsMalformedRequestsWithClearErrors) {
  auto pod = open(pod128_);
  ASSERT_TRUE(pod->createPartition(explicitRequest(pod128_, "first", IpuBlock{0, 16})));
  struct Case {
    std::string name;
    PartitionRequest request;
    ErrorCode code;
    std::string message;
  };
  PartitionRequest noCluster = explicitRequest(pod128_, "x", IpuBlock{16, 4});
  noCluster.clusterId.clear();
  PartitionRequest countMismatch = explicitRequest(pod128_, "x", IpuBlock{16, 4});
  countMismatch.size = 8;
  PartitionRequest wrongCluster = request("x", 4);
  wrongCluster.clusterId = "other";
  PartitionRequest gcds = request("x", 4);
  gcds.numGcds = 3;
  PartitionRequest tooManyGcds = request("x", 4);
  tooManyGcds.numGcds = 8;
  PartitionRequest replicas = request("x", 4);
  replicas.numReplicas = 5;
  PartitionRequest segments = request("x", 4);
  segments.numIpulinkSegments = 2;
  PartitionRequest unknownAllocation = request("x", 4);
  unknownAllocation.allocationId = "nope";
  PartitionRequest misaligned = explicitRequest(pod128_, "x", IpuBlock{16, 4});
  for (PartitionIpu& ipu : misaligned.ipus) ipu.topologyId += 2;
  const std::vector<Case> cases{
      {"size 3", request("x", 3), ErrorCode::kInvalidArgument, "power of two"},
      {"size 0", request("x", 0), ErrorCode::kInvalidArgument, "power of two"},
      {"too big", request("x", 256), ErrorCode::kInvalidArgument, "largest partition"},
      {"empty id", request("", 4), ErrorCode::kInvalidArgument, "id is empty"},
      {"long id", request(std::string(100, 'a'), 4), ErrorCode::kInvalidArgument, "limit is 63"},
      {"bad id", request("a b", 4), ErrorCode::kInvalidArgument, "[A-Za-z0-9._-]"},
      {"duplicate", request("first", 4), ErrorCode::kAlreadyExists, "already exists"},
      {"overlap", explicitRequest(pod128_, "x", IpuBlock{8, 8}), ErrorCode::kInvalidArgument,
       "overlaps partition 'first'"},
      {"no cluster", noCluster, ErrorCode::kInvalidArgument, "cluster_id is required"},
      {"count", countMismatch, ErrorCode::kInvalidArgument, "4 IPUs are listed"},
      {"cluster", wrongCluster, ErrorCode::kInvalidArgument, "unknown cluster 'other'"},
      {"gcds", gcds, ErrorCode::kInvalidArgument, "num_gcds 3"},
      {"gcds", tooManyGcds, ErrorCode::kInvalidArgument, "num_gcds 8"},
      {"replicas", replicas, ErrorCode::kInvalidArgument, "num_replicas 5"},
      {"segments", segments, ErrorCode::kInvalidArgument, "num_ipulink_segments is 2"},
      {"allocation", unknownAllocation, ErrorCode::kNotFound, "allocation 'nope' not found"},
      {"misaligned", misaligned, ErrorCode::kInvalidArgument, "multiple of 4"},
  };
  for (const Case& c : cases) {
    Result<std::string> result = pod->createPartition(c.request);
    ASSERT_FALSE(result) << c.name;
    EXPECT_EQ(result.error().code, c.code) << c.name << ": " << result.error().toString();
    EXPECT_NE(result.error().message.find(c.message), std::string::npos)
        << c.name << ": " << result.error().message;
  }
  EXPECT_EQ(pod->listPartitions("")->size(), 1u);  // nothing was created on the way

  EXPECT_EQ(pod->getPartitionStatus("nope").error().code, ErrorCode::kNotFound);
  EXPECT_EQ(pod->getPartitionStatus("").error().code, ErrorCode::kInvalidArgument);
  EXPECT_EQ(pod->removePartition("nope", false).error().code, ErrorCode::kNotFound);
  EXPECT_EQ(pod->resetPartition("nope").error().code, ErrorCode::kNotFound);
  EXPECT_EQ(pod->getPartitionIpuofConfig("nope", std::nullopt).error().code, ErrorCode::kNotFound);
  EXPECT_EQ(pod->listPartitions("nope").error().code, ErrorCode::kNotFound);
  EXPECT_EQ(pod->listIpuAttributes({"ag-9-99"}).error().code, ErrorCode::kNotFound);
}

TEST_F(VipuSimulatedPodTest, PartitionsLargerThanAnIldSpanWholeIlds) {
  auto pod = open(pod128_);
  PartitionRequest big = request("big", 128);
  big.numIpulinkSegments = 2;
  ASSERT_TRUE(pod->createPartition(big));
  const Partition partition = pod->listPartitions("")->front();
  EXPECT_EQ(partition.spec.numIpulinkSegments, 2u);
  EXPECT_EQ(partition.spec.ipus.back(), (PartitionIpu{1, 1, 63, 127}));
}

TEST_F(VipuSimulatedPodTest, IpuofConfigHasDevicesPerGcd) {
  auto pod = open(pod128_);
  PartitionRequest r = explicitRequest(pod128_, "gcds", IpuBlock{64, 8});
  r.numGcds = 2;
  ASSERT_TRUE(pod->createPartition(r));
  EXPECT_EQ(pod->getPartitionIpuofConfig("gcds", std::nullopt).error().code, ErrorCode::kFailedPrecondition);
  clock_.advance(milliseconds(100));
  IpuofConfig config = *pod->getPartitionIpuofConfig("gcds", std::nullopt);
  ASSERT_EQ(config.gcds.size(), 2u);
  ASSERT_EQ(config.gcds[1].devices.size(), 4u);
  const IpuofDevice& device = config.gcds[1].devices[1];
  EXPECT_EQ(device.deviceId, 1u);
  EXPECT_EQ(device.routingId, 5u);
  EXPECT_EQ(device.ip, "10.1.1.2");  // ILD 1, IPU 5 -> machine 1
  EXPECT_EQ(device.ipuId, 1u);
  EXPECT_EQ(device.serverPort, 50052u);
  EXPECT_EQ(config.gcds[1].attributes.at("gcd_id"), "1");

  IpuofConfig one = *pod->getPartitionIpuofConfig("gcds", 1u);
  ASSERT_EQ(one.gcds.size(), 1u);
  EXPECT_EQ(one.gcds[0].devices.front().routingId, 4u);
  EXPECT_EQ(pod->getPartitionIpuofConfig("gcds", 2u).error().code, ErrorCode::kInvalidArgument);
}

TEST_F(VipuSimulatedPodTest, AttributesDescribeEveryMachine) {
  auto pod = open(pod128_);
  ASSERT_TRUE(pod->createPartition(explicitRequest(pod128_, "p", IpuBlock{4, 4})));
  const std::vector<AgentIpuAttributes> agents = *pod->listIpuAttributes({});
  ASSERT_EQ(agents.size(), 32u);
  EXPECT_EQ(agents[1].agent, "ag-0-01");
  ASSERT_EQ(agents[1].ipus.size(), 4u);
  const auto& ipu = agents[1].ipus.at(5);
  EXPECT_EQ(ipu.at("partition_id"), "p");
  EXPECT_EQ(ipu.at("ild_id"), "0");
  EXPECT_EQ(ipu.at("topology_id"), "5");
  EXPECT_EQ(ipu.at("ipu_arch"), "ipu2");
  const auto filtered = *pod->listIpuAttributes({"ag-1-15"});
  ASSERT_EQ(filtered.size(), 1u);
  EXPECT_EQ(filtered[0].ipus.begin()->first, 124u);
}

TEST_F(VipuSimulatedPodTest, AllocationsConfineAndFilterPartitions) {
  auto pod = open(pod128_, {SimAllocation{"a", {0}}, SimAllocation{"b", {1}}});
  PartitionRequest inB = request("in-b", 64);
  inB.allocationId = "b";
  ASSERT_TRUE(pod->createPartition(inB));
  EXPECT_EQ(pod->listPartitions("b")->front().spec.ipus.front().ildTopologyId, 1u);
  EXPECT_TRUE(pod->listPartitions("a")->empty());

  PartitionRequest unnamed = request("unnamed", 4);
  EXPECT_NE(pod->createPartition(unnamed).error().message.find("allocation_id is required"),
            std::string::npos);
  PartitionRequest crossing = explicitRequest(pod128_, "crossing", IpuBlock{0, 128});
  crossing.allocationId = "a";
  EXPECT_NE(pod->createPartition(crossing).error().message.find("not inside allocation 'a'"),
            std::string::npos);
  PartitionRequest tooBig = request("too-big", 128);
  tooBig.allocationId = "a";
  Result<std::string> never = pod->createPartition(tooBig);
  EXPECT_EQ(never.error().code, ErrorCode::kInvalidArgument);
  EXPECT_NE(never.error().message.find("can never fit"), std::string::npos) << never.error().message;
  // Explicit IPUs pick their allocation when none is named.
  EXPECT_EQ(pod->createPartition(explicitRequest(pod128_, "in-a", IpuBlock{0, 4}))->size(), 4u);
  EXPECT_EQ(pod->listPartitions("a")->size(), 1u);
}

TEST_F(VipuSimulatedPodTest, InjectedCreateFailuresAreUnavailableAndChangeNothing) {
  FaultOptions faults;
  faults.createFailureRate = 1.0;
  auto pod = open(pod64_, {}, faults);
  Result<std::string> failed = pod->createPartition(request("x", 4));
  EXPECT_EQ(failed.error().code, ErrorCode::kUnavailable);
  EXPECT_TRUE(pod->listPartitions("")->empty());
  // A real error in the request wins over the injected one.
  EXPECT_EQ(pod->createPartition(request("x", 3)).error().code, ErrorCode::kInvalidArgument);
}

TEST_F(VipuSimulatedPodTest, FailureRateIsReproducibleFromTheSeed) {
  FaultOptions faults;
  faults.createFailureRate = 0.5;
  faults.seed = 42;
  auto first = open(pod64_, {}, faults);
  auto second = open(pod64_, {}, faults);
  int failures = 0;
  for (int i = 0; i < 32; ++i) {
    const bool a = first->createPartition(request("p" + std::to_string(i), 1)).ok();
    const bool b = second->createPartition(request("p" + std::to_string(i), 1)).ok();
    EXPECT_EQ(a, b);
    failures += a ? 0 : 1;
  }
  EXPECT_GT(failures, 4);
  EXPECT_LT(failures, 28);
}

// --error-rate: a share of new partitions fails IPU-Link training (PS_ERROR), the same ones for the same
// seed, and a reset mends them like a named --error-partition.
TEST_F(VipuSimulatedPodTest, ErrorRateFaultsAReproducibleShareOfNewPartitions) {
  FaultOptions faults;
  faults.errorRate = 0.5;
  faults.seed = 7;
  auto first = open(pod64_, {}, faults);
  auto second = open(pod64_, {}, faults);
  std::vector<std::string> faulted;
  for (int i = 0; i < 32; ++i) {
    const std::string id = "p" + std::to_string(i);
    ASSERT_TRUE(first->createPartition(request(id, 1)));
    ASSERT_TRUE(second->createPartition(request(id, 1)));
  }
  clock_.advance(milliseconds(100));
  for (int i = 0; i < 32; ++i) {
    const std::string id = "p" + std::to_string(i);
    const ReadyState state = first->getPartitionStatus(id)->readyState;
    EXPECT_EQ(state, second->getPartitionStatus(id)->readyState) << id;
    if (state == ReadyState::kError) faulted.push_back(id);
  }
  EXPECT_GT(faulted.size(), 4u);
  EXPECT_LT(faulted.size(), 28u);
  ASSERT_FALSE(faulted.empty());
  ASSERT_TRUE(first->resetPartition(faulted.front()));
  clock_.advance(milliseconds(100));
  EXPECT_EQ(first->getPartitionStatus(faulted.front())->readyState, ReadyState::kActive);
}

TEST(VipuWaitUntilActiveTest, WaitsForActiveAndReportsErrors) {
  const Topology pod16 = *Topology::forPod("pod16", "sim");
  SimBehaviour behaviour;
  behaviour.activationDelay = milliseconds(30);
  FaultOptions faults;
  faults.errorPartitions = {"bad"};
  auto pod = *SimulatedPod::open(pod16, {}, behaviour, std::make_shared<FaultInjector>(faults), std::nullopt);
  ASSERT_TRUE(pod->createPartition(PartitionRequest{.id = "good", .size = 4}));
  ASSERT_TRUE(pod->createPartition(PartitionRequest{.id = "bad", .size = 4}));
  Result<PartitionStatus> good = waitUntilActive(*pod, "good", milliseconds(5000));
  ASSERT_TRUE(good) << good.error().toString();
  EXPECT_EQ(good->readyState, ReadyState::kActive);

  Result<PartitionStatus> bad = waitUntilActive(*pod, "bad", milliseconds(5000));
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().code, ErrorCode::kFailedPrecondition);
  EXPECT_NE(bad.error().message.find("PS_ERROR"), std::string::npos);
  EXPECT_NE(bad.error().message.find("injected fault"), std::string::npos);

  EXPECT_EQ(waitUntilActive(*pod, "missing", milliseconds(100)).error().code, ErrorCode::kNotFound);
  behaviour.activationDelay = std::chrono::hours(1);
  auto slow = *SimulatedPod::open(pod16, {}, behaviour, nullptr, std::nullopt);
  ASSERT_TRUE(slow->createPartition(PartitionRequest{.id = "slow", .size = 4}));
  Result<PartitionStatus> timedOut = waitUntilActive(*slow, "slow", milliseconds(60));
  EXPECT_EQ(timedOut.error().code, ErrorCode::kDeadlineExceeded);
  EXPECT_NE(timedOut.error().message.find("still PS_PENDING (POS_CREATING)"), std::string::npos);
}

TEST(VipuSimulatedPodConcurrencyTest, ConcurrentCreatesNeverOverlap) {
  const Topology pod64 = *Topology::forPod("pod64", "sim");
  auto pod = *SimulatedPod::open(pod64, {}, SimBehaviour{}, nullptr, std::nullopt);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&pod, t] {
      for (int i = 0; i < 20; ++i) {
        (void)pod->createPartition(PartitionRequest{.id = "t" + std::to_string(t) + "-" + std::to_string(i),
                                                    .size = (i % 2 == 0) ? 1u : 2u});
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  IpuSet taken(64);
  std::uint32_t used = 0;
  const std::vector<Partition> partitions = *pod->listPartitions("");
  for (const Partition& partition : partitions) {
    Result<IpuBlock> block = blockOfIpus(pod64, partition.spec.ipus);
    ASSERT_TRUE(block) << block.error().toString();
    ASSERT_FALSE(taken.intersects(*block));
    taken.insert(*block);
    used += block->size;
  }
  // 40 x 1 + 40 x 2 = 120 IPUs requested, 64 exist: (nearly) all are used, none twice.
  EXPECT_LE(used, 64u);
  EXPECT_GE(used, 62u);
}

}  // namespace
}  // namespace ipu::vipu::sim
