// VipuClient <-> vipu-sim over real gRPC on 127.0.0.1: the real binary, an ephemeral port, a state file.
#include <atomic>
#include <condition_variable>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <thread>

#include <grpcpp/generic/generic_stub.h>
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <unistd.h>

#include "sim_process.h"
#include "vipu/ipu_block.h"
#include "vipu/ipu_set.h"
#include "vipu/partition_planner.h"
#include "vipu/poplar_target_options.h"
#include "vipu/proto/virmgrpc.grpc.pb.h"
#include "vipu/topology_discovery.h"
#include "vipu/vipu_client.h"

namespace ipu::vipu {
namespace {

namespace fs = std::filesystem;
using std::chrono::milliseconds;
using testing::CommandResult;
using testing::runCommand;
using testing::SimProcess;

class VipuClientSimTest : public ::testing::Test {
 protected:
  void SetUp() override {
    directory_ =
        (fs::temp_directory_path() / ("vipu-it-" + std::to_string(::getpid()) + "-" +
                                      ::testing::UnitTest::GetInstance()->current_test_info()->name()))
            .string();
    fs::remove_all(directory_);
    fs::create_directories(directory_);
    stateFile_ = directory_ + "/state.json";
  }
  void TearDown() override {
    if (sim_ && HasFailure()) std::cerr << "---- vipu-sim log ----\n" << sim_->log();
    sim_.reset();
    fs::remove_all(directory_);
  }

  // Starts vipu-sim (port 0 = a free one) with a state file and quick timings, plus `extra` flags.
  void startSim(const std::vector<std::string>& extra = {}, int port = 0) {
    std::vector<std::string> args{
        "--pod", "pod128", "--state-file", stateFile_, "--activation-delay-ms", "150", "--reset-duration-ms",
        "100"};
    args.insert(args.end(), extra.begin(), extra.end());
    std::string failure;
    sim_ = SimProcess::start(directory_, args, port, failure);
    ASSERT_NE(sim_, nullptr) << failure;
  }

  std::unique_ptr<VipuClient> client(int maxAttempts = 4, milliseconds timeout = milliseconds(5000)) {
    ClientOptions options;
    options.name = "sim";
    options.endpoint = sim_->endpoint();
    options.callTimeout = timeout;
    options.retry.maxAttempts = maxAttempts;
    options.retry.backoff = BackoffPolicy{milliseconds(50), milliseconds(400), 2.0};
    auto created = VipuClient::create(options);
    EXPECT_TRUE(created) << created.error().toString();
    return std::move(*created);
  }

  std::string directory_;
  std::string stateFile_;
  std::unique_ptr<SimProcess> sim_;
};

TEST_F(VipuClientSimTest, FullLifecycle) {
  // Long enough that the first partition is still pending after both are created, and still resetting after
  // the reset, however slowly a loaded machine serves the calls (150 ms was once used up by the two
  // CreatePartition calls alone, and 100 ms by one ResetPartition saving the state file).
  ASSERT_NO_FATAL_FAILURE(startSim({"--activation-delay-ms", "1500", "--reset-duration-ms", "1500"}));
  auto vipu = client();

  // Discover the topology, plan a gang of two 16-IPU partitions, create them with explicit IPUs.
  Result<std::vector<AgentIpuAttributes>> attributes = vipu->listIpuAttributes({});
  ASSERT_TRUE(attributes) << attributes.error().toString();
  EXPECT_EQ(attributes->size(), 32u);
  Result<Topology> topology = topologyFromAttributes(*attributes);
  ASSERT_TRUE(topology) << topology.error().toString();
  EXPECT_EQ(*topology, *Topology::forPod("pod128", "vipu-sim"));
  Result<std::vector<Partition>> existing = vipu->listPartitions("");
  ASSERT_TRUE(existing);
  EXPECT_TRUE(existing->empty());
  const PlanResult plan =
      PartitionPlanner(*topology).plan(*IpuSet::fromPartitions(*topology, *existing), GangRequest{2, 16});
  ASSERT_TRUE(plan.placed());
  for (std::uint32_t instance = 0; instance < 2; ++instance) {
    PartitionRequest request =
        makePartitionRequest("team_train_" + std::to_string(instance), *topology, plan.placements[instance]);
    request.ipuLinkRouting = IpuLinkRouting::kSwnc;
    Result<std::string> id = vipu->createPartition(request);
    ASSERT_TRUE(id) << id.error().toString();
    EXPECT_EQ(*id, request.id);
  }
  Result<PartitionStatus> pending = vipu->getPartitionStatus("team_train_0");
  ASSERT_TRUE(pending) << pending.error().toString();
  EXPECT_EQ(pending->readyState, ReadyState::kPending);
  EXPECT_EQ(pending->operationState, OperationState::kCreating);
  EXPECT_EQ(vipu->getPartitionIpuofConfig("team_train_0", std::nullopt).error().code,
            ErrorCode::kFailedPrecondition);

  Result<PartitionStatus> active = vipu->waitUntilActive("team_train_0", milliseconds(5000));
  ASSERT_TRUE(active) << active.error().toString();
  EXPECT_EQ(active->readyState, ReadyState::kActive);

  const std::vector<Partition> partitions = *vipu->listPartitions("");
  ASSERT_EQ(partitions.size(), 2u);
  EXPECT_EQ(partitions[0].spec.ipus, plan.placements[0].ipus);
  EXPECT_EQ(partitions[1].spec.ipus, plan.placements[1].ipus);
  EXPECT_EQ(partitions[0].spec.ipuLinkRouting, IpuLinkRouting::kSwnc);
  EXPECT_EQ(partitions[0].spec.clusterId, "vipu-sim");
  const auto options = nlohmann::json::parse(poplarTargetOptions(partitions[0], *topology));
  EXPECT_EQ(options["instanceSize"], "16");
  EXPECT_EQ(options["ipuLinkConfiguration"], "slidingWindow");

  Result<IpuofConfig> config = vipu->getPartitionIpuofConfig("team_train_0", 0u);
  ASSERT_TRUE(config) << config.error().toString();
  ASSERT_EQ(config->gcds.size(), 1u);
  ASSERT_EQ(config->gcds[0].devices.size(), 16u);
  EXPECT_EQ(config->gcds[0].devices[5].ip, "10.1.0.2");
  EXPECT_EQ(config->gcds[0].devices[5].ipuId, 1u);

  ASSERT_TRUE(vipu->resetPartition("team_train_0"));
  Result<PartitionStatus> resetting = vipu->getPartitionStatus("team_train_0");
  ASSERT_TRUE(resetting);
  EXPECT_EQ(resetting->operationState, OperationState::kResetting);
  ASSERT_TRUE(vipu->waitUntilActive("team_train_0", milliseconds(5000)));

  ASSERT_TRUE(vipu->removePartition("team_train_0", false));
  ASSERT_TRUE(vipu->removePartition("team_train_1", true));
  EXPECT_TRUE(vipu->listPartitions("")->empty());
  EXPECT_EQ(vipu->getPartitionStatus("team_train_0").error().code, ErrorCode::kNotFound);

  // Every call is in the log, one line each, with its result.
  const std::string log = sim_->log();
  EXPECT_NE(log.find("CreatePartition id=team_train_1 size=16 ipus=16 -> OK"), std::string::npos) << log;
  EXPECT_NE(log.find("RemovePartition id=team_train_0 -> OK"), std::string::npos);
}

TEST_F(VipuClientSimTest, RestartMidWayKeepsEveryPartition) {
  ASSERT_NO_FATAL_FAILURE(startSim({"--activation-delay-ms", "1500"}));
  const int port = sim_->port();
  auto vipu = client(/*maxAttempts=*/12);
  ASSERT_TRUE(vipu->createPartition(PartitionRequest{.id = "a", .size = 64}));
  ASSERT_TRUE(vipu->createPartition(PartitionRequest{.id = "b", .size = 16}));
  ASSERT_TRUE(vipu->createPartition(PartitionRequest{.id = "c", .size = 2}));
  ASSERT_TRUE(vipu->removePartition("c", false));
  ASSERT_TRUE(vipu->createPartition(PartitionRequest{.id = "d", .size = 1}));
  const std::vector<Partition> before = *vipu->listPartitions("");
  ASSERT_EQ(before.size(), 3u);

  // A crash (SIGKILL) mid-way: the state on disk must be complete.
  EXPECT_EQ(sim_->stop(/*crash=*/true), 128 + SIGKILL);
  // While it is down, a call retries on UNAVAILABLE; the sim comes back on the same port during the retries.
  std::unique_ptr<SimProcess> restarted;
  std::string failure;
  std::thread restarter([&] {
    std::this_thread::sleep_for(milliseconds(300));
    restarted = SimProcess::start(
        directory_, {"--pod", "pod128", "--state-file", stateFile_, "--activation-delay-ms", "1500"}, port,
        failure);
  });
  Result<std::vector<Partition>> after = vipu->listPartitions("");
  restarter.join();
  ASSERT_NE(restarted, nullptr) << failure;
  sim_ = std::move(restarted);
  ASSERT_TRUE(after) << after.error().toString();
  ASSERT_EQ(after->size(), before.size());
  for (std::size_t i = 0; i < before.size(); ++i) {
    EXPECT_EQ((*after)[i].id, before[i].id);
    EXPECT_EQ((*after)[i].spec.ipus, before[i].spec.ipus);
  }
  EXPECT_NE(sim_->log().find("3 partition(s) loaded"), std::string::npos) << sim_->log();
  // Pending at the crash, active on time after the restart; the old ids stay taken.
  ASSERT_TRUE(vipu->waitUntilActive("d", milliseconds(5000)));
  EXPECT_EQ(vipu->createPartition(PartitionRequest{.id = "a", .size = 1}).error().code,
            ErrorCode::kAlreadyExists);

  // A graceful restart too.
  EXPECT_EQ(sim_->stop(), 0);
  ASSERT_NO_FATAL_FAILURE(startSim({}, port));
  EXPECT_EQ(vipu->listPartitions("")->size(), 3u);
}

TEST_F(VipuClientSimTest, MalformedRequestsGetClearErrorsAndNeverCrashTheSim) {
  ASSERT_NO_FATAL_FAILURE(startSim());
  auto vipu = client();
  const Topology topology = *Topology::forPod("pod128", "vipu-sim");
  PartitionRequest first{.id = "first", .size = 16, .clusterId = "vipu-sim"};
  first.ipus = ipusOfBlock(topology, IpuBlock{0, 16});
  ASSERT_TRUE(vipu->createPartition(first));

  auto expectError = [](const auto& result, ErrorCode code, const std::string& text) {
    ASSERT_FALSE(result);
    EXPECT_EQ(result.error().code, code) << result.error().toString();
    EXPECT_NE(result.error().message.find(text), std::string::npos) << result.error().message;
  };
  expectError(vipu->createPartition(PartitionRequest{.id = "three", .size = 3}), ErrorCode::kInvalidArgument,
              "power of two");
  expectError(vipu->createPartition(PartitionRequest{.id = "zero", .size = 0}), ErrorCode::kInvalidArgument,
              "power of two");
  PartitionRequest overlapping{.id = "overlap", .size = 8, .clusterId = "vipu-sim"};
  overlapping.ipus = ipusOfBlock(topology, IpuBlock{8, 8});
  expectError(vipu->createPartition(overlapping), ErrorCode::kInvalidArgument, "overlaps partition 'first'");
  PartitionRequest repeated{.id = "repeated", .size = 2, .clusterId = "vipu-sim"};
  repeated.ipus = {PartitionIpu{1, 0, 0, 0}, PartitionIpu{1, 0, 0, 1}};
  expectError(vipu->createPartition(repeated), ErrorCode::kInvalidArgument, "listed twice");
  expectError(vipu->createPartition(PartitionRequest{.id = "first", .size = 4}), ErrorCode::kAlreadyExists,
              "already exists");
  expectError(vipu->createPartition(PartitionRequest{.id = std::string(5000, 'x'), .size = 4}),
              ErrorCode::kInvalidArgument, "limit is 63");
  expectError(vipu->createPartition(PartitionRequest{.id = "bad\nid", .size = 4}),
              ErrorCode::kInvalidArgument, "[A-Za-z0-9._-]");
  expectError(vipu->getPartitionStatus("unknown"), ErrorCode::kNotFound, "partition 'unknown' not found");
  expectError(vipu->removePartition("unknown", false), ErrorCode::kNotFound, "not found");
  expectError(vipu->resetPartition("unknown"), ErrorCode::kNotFound, "not found");
  expectError(vipu->getPartitionIpuofConfig("unknown", std::nullopt), ErrorCode::kNotFound, "not found");
  expectError(vipu->getPartitionStatus(""), ErrorCode::kInvalidArgument, "partition_id is empty");
  expectError(vipu->listPartitions("no-such-allocation"), ErrorCode::kNotFound, "allocation");
  expectError(vipu->listIpuAttributes({"nobody"}), ErrorCode::kNotFound, "unknown agent");
  // Messages say who answered and what was asked.
  Result<PartitionStatus> unknown = vipu->getPartitionStatus("unknown");
  EXPECT_NE(unknown.error().message.find("V-IPU 'sim' at 127.0.0.1:"), std::string::npos);
  EXPECT_NE(unknown.error().message.find("GetPartitionStatus 'unknown'"), std::string::npos);

  // Requests no VipuClient would send, straight from a stub.
  auto channel = grpc::CreateChannel(sim_->endpoint(), grpc::InsecureChannelCredentials());
  auto stub = virmgrpc::UserService::NewStub(channel);
  {
    grpc::ClientContext context;
    virmgrpc::CreatePartitionRequest empty;
    virmgrpc::CreatePartitionReply reply;
    const grpc::Status status = stub->CreatePartition(&context, empty, &reply);
    EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
    EXPECT_NE(status.error_message().find("requirements are missing"), std::string::npos);
  }
  {
    grpc::ClientContext context;
    virmgrpc::CreatePartitionRequest request;
    request.mutable_requirements()->set_id("huge-list");
    request.mutable_requirements()->set_size(4);
    request.mutable_requirements()->set_cluster_id("vipu-sim");
    for (int i = 0; i < 100000; ++i) request.mutable_requirements()->add_ipus()->set_topology_id(4000000000u);
    virmgrpc::CreatePartitionReply reply;
    const grpc::Status status = stub->CreatePartition(&context, request, &reply);
    EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << status.error_message();
  }
  {
    grpc::ClientContext context;
    virmgrpc::CreatePartitionRequest request;
    request.mutable_requirements()->set_id("odd-enum");
    request.mutable_requirements()->set_size(1);
    request.mutable_requirements()->set_ipulink_routing_type(static_cast<virmgrpc::IpuLinkRoutingType>(77));
    virmgrpc::CreatePartitionReply reply;
    EXPECT_TRUE(stub->CreatePartition(&context, request, &reply).ok());
  }
  {
    grpc::ClientContext context;
    virmgrpc::GetPartitionIpuofConfigRequest request;
    request.set_partition_id("first");
    request.mutable_gcd_id()->set_id(7);
    virmgrpc::GetPartitionIpuofConfigReply reply;
    ASSERT_TRUE(vipu->waitUntilActive("first", milliseconds(5000)));
    const grpc::Status status = stub->GetPartitionIpuofConfig(&context, request, &reply);
    EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
    EXPECT_NE(status.error_message().find("no GCD 7"), std::string::npos);
  }
  // Garbage bytes where a message should be: gRPC rejects them before our code; the sim stays up.
  {
    grpc::GenericStub generic(channel);
    grpc::ClientContext context;
    const std::string garbage = "\xff\xff\xff\xff\x0f";
    grpc::Slice slice(garbage);
    grpc::ByteBuffer request(&slice, 1);
    grpc::ByteBuffer reply;
    std::mutex mutex;
    std::condition_variable done;
    bool finished = false;
    grpc::Status status;
    generic.UnaryCall(&context, "/virmgrpc.UserService/CreatePartition", grpc::StubOptions(), &request,
                      &reply, [&](grpc::Status s) {
                        std::lock_guard lock(mutex);
                        status = std::move(s);
                        finished = true;
                        done.notify_one();
                      });
    std::unique_lock lock(mutex);
    ASSERT_TRUE(done.wait_for(lock, std::chrono::seconds(10), [&] { return finished; }));
    EXPECT_FALSE(status.ok());
  }
  // Still serving, still consistent.
  Result<std::vector<Partition>> partitions = vipu->listPartitions("");
  ASSERT_TRUE(partitions) << partitions.error().toString();
  EXPECT_EQ(partitions->size(), 2u);
  EXPECT_NE(sim_->log().find("CreatePartition id=three size=3 ipus=0 -> INVALID_ARGUMENT"),
            std::string::npos);
  EXPECT_EQ(sim_->stop(), 0);  // and it shuts down cleanly
}

TEST_F(VipuClientSimTest, InjectedFaultsReachTheClientAsTheyWould) {
  ASSERT_NO_FATAL_FAILURE(startSim({"--create-failure-rate", "1", "--error-partition", "flaky"}));
  auto vipu = client(/*maxAttempts=*/3);
  Result<std::string> failed = vipu->createPartition(PartitionRequest{.id = "x", .size = 4});
  ASSERT_FALSE(failed);
  EXPECT_EQ(failed.error().code, ErrorCode::kUnavailable);
  EXPECT_NE(failed.error().message.find("unavailable after 3 attempts"), std::string::npos)
      << failed.error().message;
  EXPECT_NE(failed.error().message.find("injected fault"), std::string::npos);
  std::string log = sim_->log();
  std::size_t attempts = 0;
  for (std::size_t at = log.find("CreatePartition id=x"); at != std::string::npos;
       at = log.find("CreatePartition id=x", at + 1)) {
    ++attempts;
  }
  EXPECT_EQ(attempts, 3u);
  sim_->stop();

  ASSERT_NO_FATAL_FAILURE(startSim({"--error-partition", "flaky", "--latency-ms", "0"}));
  vipu = client();
  ASSERT_TRUE(vipu->createPartition(PartitionRequest{.id = "flaky", .size = 4}));
  Result<PartitionStatus> broken = vipu->waitUntilActive("flaky", milliseconds(5000));
  ASSERT_FALSE(broken);
  EXPECT_EQ(broken.error().code, ErrorCode::kFailedPrecondition);
  EXPECT_NE(broken.error().message.find("PS_ERROR"), std::string::npos);
  EXPECT_NE(broken.error().message.find("injected fault"), std::string::npos);
  ASSERT_TRUE(vipu->resetPartition("flaky"));
  ASSERT_TRUE(vipu->waitUntilActive("flaky", milliseconds(5000)));
  sim_->stop();

  ASSERT_NO_FATAL_FAILURE(startSim({"--latency-ms", "400"}));
  auto impatient = client(/*maxAttempts=*/1, milliseconds(100));
  Result<std::vector<Partition>> slow = impatient->listPartitions("");
  ASSERT_FALSE(slow);
  EXPECT_EQ(slow.error().code, ErrorCode::kDeadlineExceeded);
  EXPECT_NE(slow.error().message.find("no reply within 100 ms"), std::string::npos);
  EXPECT_TRUE(client(1, milliseconds(5000))->listPartitions(""));
}

// The stop token fences the client: a call in flight when it fires ends at once with Cancelled (not at its
// deadline), and no call starts afterwards: the controller never hears of it.
TEST_F(VipuClientSimTest, AStoppedClientCancelsItsCallInFlightAndStartsNoOther) {
  ASSERT_NO_FATAL_FAILURE(startSim({"--latency-ms", "3000"}));
  std::stop_source fence;
  ClientOptions options;
  options.name = "sim";
  options.endpoint = sim_->endpoint();
  options.callTimeout = milliseconds(20000);
  options.stop = fence.get_token();
  auto created = VipuClient::create(options);
  ASSERT_TRUE(created) << created.error().toString();
  std::unique_ptr<VipuClient> vipu = std::move(*created);

  std::jthread stopper([&fence] {
    std::this_thread::sleep_for(milliseconds(300));
    fence.request_stop();
  });
  const auto started = std::chrono::steady_clock::now();
  Result<std::vector<Partition>> inFlight = vipu->listPartitions("");
  const auto elapsed = std::chrono::steady_clock::now() - started;
  ASSERT_FALSE(inFlight);
  EXPECT_EQ(inFlight.error().code, ErrorCode::kCancelled) << inFlight.error().toString();
  EXPECT_LT(elapsed, milliseconds(2500)) << "the call ran on to the controller's reply";

  Result<std::string> after = vipu->createPartition(PartitionRequest{.id = "after-the-stop", .size = 4});
  ASSERT_FALSE(after);
  EXPECT_EQ(after.error().code, ErrorCode::kCancelled);
  EXPECT_NE(after.error().message.find("stopped"), std::string::npos) << after.error().message;
  // A call of another client, sent after: its answer (after the same latency) means the controller has
  // handled and logged every call that reached it before this one.
  auto partitions = client()->listPartitions("");
  ASSERT_TRUE(partitions) << partitions.error().toString();
  EXPECT_TRUE(partitions->empty());
  EXPECT_EQ(sim_->log().find("after-the-stop"), std::string::npos) << sim_->log();
}

TEST_F(VipuClientSimTest, UnreachableControllerIsUnavailableAfterBoundedRetries) {
  ASSERT_NO_FATAL_FAILURE(startSim());
  auto vipu = client(/*maxAttempts=*/3);
  sim_->stop();
  const auto started = std::chrono::steady_clock::now();
  Result<std::vector<Partition>> result = vipu->listPartitions("");
  const auto elapsed = std::chrono::steady_clock::now() - started;
  ASSERT_FALSE(result);
  EXPECT_EQ(result.error().code, ErrorCode::kUnavailable);
  EXPECT_EQ(result.error().retryClass(), RetryClass::kTransient);
  EXPECT_NE(result.error().message.find("unavailable after 3 attempts"), std::string::npos);
  EXPECT_LT(elapsed, std::chrono::seconds(5));
}

TEST_F(VipuClientSimTest, ConcurrentClientsNeverGetOverlappingPartitions) {
  ASSERT_NO_FATAL_FAILURE(startSim({"--quiet"}));
  std::vector<std::thread> threads;
  std::atomic<int> created{0};
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      auto vipu = client();
      for (int i = 0; i < 10; ++i) {
        const std::uint32_t size = 1u << (i % 4);
        if (vipu->createPartition(
                PartitionRequest{.id = "t" + std::to_string(t) + "_" + std::to_string(i), .size = size})) {
          ++created;
        }
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  const std::vector<Partition> partitions = *client()->listPartitions("");
  EXPECT_EQ(partitions.size(), static_cast<std::size_t>(created.load()));
  const Topology topology = *Topology::forPod("pod128", "vipu-sim");
  IpuSet taken(topology.totalIpus());
  for (const Partition& partition : partitions) {
    Result<IpuBlock> block = blockOfIpus(topology, partition.spec.ipus);
    ASSERT_TRUE(block) << partition.id;
    EXPECT_FALSE(taken.intersects(*block)) << partition.id;
    taken.insert(*block);
  }
}

TEST_F(VipuClientSimTest, VipuCtlWorksAgainstTheSim) {
  ASSERT_NO_FATAL_FAILURE(startSim());
  const std::vector<std::string> ctl{testing::ctlBinary(), "--endpoint", sim_->endpoint()};
  auto run = [&ctl](std::vector<std::string> args) {
    std::vector<std::string> argv = ctl;
    argv.insert(argv.end(), args.begin(), args.end());
    return runCommand(argv);
  };
  CommandResult created = run({"create", "admin-1", "--size", "8", "--plan", "--wait-ms", "5000"});
  EXPECT_EQ(created.exitCode, 0) << created.output;
  EXPECT_EQ(created.output, "created partition admin-1 (PS_ACTIVE)\n");
  CommandResult listed = run({"list"});
  EXPECT_EQ(listed.exitCode, 0);
  EXPECT_NE(listed.output.find("admin-1  8     PS_ACTIVE"), std::string::npos) << listed.output;
  CommandResult status = run({"--json", "status", "admin-1"});
  EXPECT_EQ(nlohmann::json::parse(status.output)["ready_state"], "PS_ACTIVE");
  CommandResult invalid = run({"create", "bad", "--size", "3"});
  EXPECT_EQ(invalid.exitCode, 1);
  EXPECT_NE(invalid.output.find("InvalidArgument"), std::string::npos) << invalid.output;
  EXPECT_EQ(run({"remove", "admin-1"}).exitCode, 0);
  EXPECT_EQ(run({"status", "admin-1"}).exitCode, 1);
  EXPECT_EQ(run({"bogus"}).exitCode, 2);
  CommandResult unreachable =
      runCommand({testing::ctlBinary(), "--endpoint", "127.0.0.1:1", "--attempts", "1", "list"});
  EXPECT_EQ(unreachable.exitCode, 1);
  EXPECT_NE(unreachable.output.find("Unavailable"), std::string::npos) << unreachable.output;
}

TEST_F(VipuClientSimTest, SimBinaryRefusesBadFlagsAndDamagedState) {
  CommandResult badFlag = runCommand({testing::simBinary(), "--ilds", "0"});
  EXPECT_EQ(badFlag.exitCode, 2);
  EXPECT_NE(badFlag.output.find("--ilds: 0 is outside [1, 64]"), std::string::npos) << badFlag.output;
  CommandResult unknown = runCommand({testing::simBinary(), "--frobnicate"});
  EXPECT_EQ(unknown.exitCode, 2);
  EXPECT_NE(unknown.output.find("unknown flag --frobnicate"), std::string::npos);
  CommandResult help = runCommand({testing::simBinary(), "--help"});
  EXPECT_EQ(help.exitCode, 0);
  EXPECT_NE(help.output.find("--activation-delay-ms N"), std::string::npos);

  const std::string damagedText = R"({"format": "vipu-sim-state", "version": 1, "partitions": [)";
  std::ofstream(stateFile_) << damagedText;
  CommandResult damaged =
      runCommand({testing::simBinary(), "--listen", "127.0.0.1:0", "--state-file", stateFile_});
  EXPECT_EQ(damaged.exitCode, 1);
  EXPECT_NE(damaged.output.find("state file '" + stateFile_ + "' is damaged"), std::string::npos)
      << damaged.output;
  // The damaged file is left as it was for a human to look at.
  EXPECT_EQ(fs::file_size(stateFile_), damagedText.size());
  fs::remove(stateFile_);

  ASSERT_NO_FATAL_FAILURE(startSim());
  CommandResult busy = runCommand({testing::simBinary(), "--listen", sim_->endpoint()});
  EXPECT_EQ(busy.exitCode, 1);
  EXPECT_NE(busy.output.find("cannot listen on"), std::string::npos) << busy.output;
  CommandResult shared = runCommand(
      {testing::simBinary(), "--listen", "127.0.0.1:0", "--pod", "pod128", "--state-file", stateFile_});
  EXPECT_EQ(shared.exitCode, 1);
  EXPECT_NE(shared.output.find("in use by another vipu-sim"), std::string::npos) << shared.output;
}

// TLS needs certificates; the openssl command line makes them when it is installed.
class VipuClientSimTlsTest : public VipuClientSimTest {
 protected:
  bool makeCertificates() {
    if (runCommand({"/bin/sh", "-c", "command -v openssl"}).exitCode != 0) return false;
    const std::string script =
        "set -e; cd '" + directory_ +
        "'; "
        "openssl req -x509 -newkey rsa:2048 -nodes -days 1 -subj /CN=test-ca -keyout ca.key -out ca.pem; "
        "printf 'subjectAltName=IP:127.0.0.1,DNS:localhost\\n' > san.ext; "
        "openssl req -newkey rsa:2048 -nodes -subj /CN=vipu-sim -keyout server.key -out server.csr; "
        "openssl x509 -req -in server.csr -CA ca.pem -CAkey ca.key -CAcreateserial -days 1 -extfile san.ext "
        "-out server.pem; "
        "openssl req -newkey rsa:2048 -nodes -subj /CN=operator -keyout client.key -out client.csr; "
        "openssl x509 -req -in client.csr -CA ca.pem -CAkey ca.key -CAcreateserial -days 1 -out client.pem";
    const CommandResult result = runCommand({"/bin/sh", "-c", script}, std::chrono::seconds(60));
    EXPECT_EQ(result.exitCode, 0) << result.output;
    return result.exitCode == 0;
  }
  ClientOptions tlsOptions(bool withClientCertificate) const {
    ClientOptions options;
    options.name = "secure";
    options.endpoint = sim_->endpoint();
    options.callTimeout = milliseconds(15000);  // TLS handshakes are slow under sanitizers on a busy machine
    options.retry.maxAttempts = 3;
    options.tls = TlsOptions{directory_ + "/ca.pem", withClientCertificate ? directory_ + "/client.pem" : "",
                             withClientCertificate ? directory_ + "/client.key" : "", ""};
    return options;
  }
};

TEST_F(VipuClientSimTlsTest, SecuredControllerNeedsTheRightCredentials) {
  if (!makeCertificates()) GTEST_SKIP() << "openssl is not installed";
  ASSERT_NO_FATAL_FAILURE(startSim({"--tls-cert", directory_ + "/server.pem", "--tls-key",
                                    directory_ + "/server.key", "--tls-client-ca", directory_ + "/ca.pem"}));
  auto secure = *VipuClient::create(tlsOptions(true));
  Result<std::string> created = secure->createPartition(PartitionRequest{.id = "tls", .size = 4});
  ASSERT_TRUE(created) << created.error().toString();
  EXPECT_EQ(secure->listPartitions("")->size(), 1u);

  Result<std::vector<Partition>> noClientCertificate =
      (*VipuClient::create(tlsOptions(false)))->listPartitions("");
  EXPECT_FALSE(noClientCertificate);
  ClientOptions plain = tlsOptions(false);
  plain.tls.reset();
  Result<std::vector<Partition>> insecure = (*VipuClient::create(plain))->listPartitions("");
  ASSERT_FALSE(insecure);
  EXPECT_EQ(insecure.error().code, ErrorCode::kUnavailable);
}

}  // namespace
}  // namespace ipu::vipu
