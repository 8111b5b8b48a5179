// The V-IPU proxy over real gRPC: a real vipu-sim holds two jobs' partitions, the proxy runs in this process
// on 127.0.0.1 with caches built from objects (no Kubernetes cluster), and this process, whose address the
// pod cache gives to job A's worker, calls the proxy as that worker would: with the project's VipuClient and
// with vipu-ctl.
#include "vipu_proxy/vipu_proxy.h"

#include <atomic>
#include <filesystem>

#include <gtest/gtest.h>
#include <unistd.h>

#include "free_port.h"
#include "ipujob/orphan_partitions.h"
#include "partition/partition_wait.h"
#include "proxy_objects.h"
#include "sim_process.h"
#include "vipu/vipu_client.h"

namespace ipu::controllers {
namespace {

namespace fs = std::filesystem;
using ipu::testing::ipuJobObject;
using ipu::testing::partitionRecord;
using ipu::testing::put;
using ipu::testing::workerPodObject;
using std::chrono::milliseconds;
using vipu::testing::CommandResult;
using vipu::testing::runCommand;
using vipu::testing::SimProcess;

constexpr const char* kPrefix = "ipuop";
constexpr const char* kController = "sim";

// `name`: the controller's, as the operator is configured with it and jobs' partitions record it.
Result<std::unique_ptr<vipu::VipuClient>> clientOf(const std::string& name, const std::string& endpoint) {
  vipu::ClientOptions options;
  options.name = name;
  options.endpoint = endpoint;
  options.callTimeout = milliseconds(5000);
  options.retry.maxAttempts = 2;
  options.retry.backoff = vipu::BackoffPolicy{milliseconds(50), milliseconds(200), 2.0};
  return vipu::VipuClient::create(options);
}

class VipuProxyTest : public ::testing::Test {
 protected:
  void SetUp() override {
    directory_ = fs::temp_directory_path() / ("vipu-proxy-it-" + std::to_string(::getpid()));
    fs::create_directories(directory_);
    std::string failure;
    sim_ = SimProcess::start(directory_.string(),
                             {"--pod", "pod16", "--activation-delay-ms", "50", "--reset-duration-ms", "50"},
                             0, failure);
    ASSERT_NE(sim_, nullptr) << failure;
    auto admin = clientOf(kController, sim_->endpoint());
    ASSERT_TRUE(admin) << admin.error().toString();
    admin_ = std::move(*admin);
    for (const std::string& id : {partitionA_, partitionB_}) {
      ASSERT_TRUE(admin_->createPartition({.id = id, .size = 4}));
      ASSERT_TRUE(admin_->waitUntilActive(id, milliseconds(5000)));
    }
    put(jobs_, ipuJobObject("team-a", "job-a", "uid-a",
                            Json::array({partitionRecord(partitionA_, 0, kController)})));
    put(jobs_, ipuJobObject("team-b", "job-b", "uid-b",
                            Json::array({partitionRecord(partitionB_, 0, kController)})));
    // This process is job A's worker; job B's is elsewhere.
    put(pods_, workerPodObject("team-a", "job-a-worker-0", "job-a", "uid-a", "127.0.0.1"));
    put(pods_, workerPodObject("team-b", "job-b-worker-0", "job-b", "uid-b", "10.0.0.2"));
    auto proxy = VipuProxy::start("127.0.0.1:0", pods_, jobs_, {upstreamOf(*admin_)},
                                  {.partitionIds = {kPrefix, ""}, .callTimeout = milliseconds(5000)});
    ASSERT_TRUE(proxy) << proxy.error().toString();
    proxy_ = std::move(*proxy);
    auto worker = clientOf("proxy", "127.0.0.1:" + std::to_string(proxy_->port()));
    ASSERT_TRUE(worker) << worker.error().toString();
    worker_ = std::move(*worker);
  }

  void TearDown() override {
    if (sim_ && HasFailure()) std::cerr << "---- vipu-sim log ----\n" << sim_->log();
    proxy_.reset();
    sim_.reset();
    fs::remove_all(directory_);
  }

  // Whether V-IPU itself (not through the proxy) still has the partition.
  bool exists(const std::string& id) {
    auto partitions = admin_->listPartitions("");
    EXPECT_TRUE(partitions) << partitions.error().toString();
    if (!partitions) return false;
    return std::any_of(partitions->begin(), partitions->end(),
                       [&id](const vipu::Partition& partition) { return partition.id == id; });
  }

  const std::string partitionA_ = partitionIdFor(kPrefix, "team-a", "job-a", 0);
  const std::string partitionB_ = partitionIdFor(kPrefix, "team-b", "job-b", 0);
  fs::path directory_;
  std::unique_ptr<SimProcess> sim_;
  std::unique_ptr<vipu::VipuClient> admin_;
  kube::Store pods_;
  kube::Store jobs_;
  std::unique_ptr<VipuProxy> proxy_;
  std::unique_ptr<vipu::VipuClient> worker_;
};

void expectDenied(const Status& status, const std::string& naming) {
  ASSERT_FALSE(status) << "allowed; expected PermissionDenied naming " << naming;
  EXPECT_EQ(status.error().code, ErrorCode::kPermissionDenied) << status.error().toString();
  EXPECT_NE(status.error().message.find(naming), std::string::npos) << status.error().message;
}

template <typename T>
Status statusOf(const Result<T>& result) {
  if (result) return {};
  return result.error();
}

// ipu-runtime's wait for its partition (the runtime's own code) against the proxy's HTTP face: the same
// decision as the gRPC calls, over GetPartitionStatus of the real controller.
TEST_F(VipuProxyTest, TheRuntimeWaitsThroughTheHttpFaceForItsOwnPartitionOnly) {
  proxy_.reset();
  const std::uint16_t httpPort = ipu::testing::freeLoopbackPort();
  auto proxy = VipuProxy::start("127.0.0.1:0", pods_, jobs_, {upstreamOf(*admin_)},
                                {.partitionIds = {kPrefix, ""}, .callTimeout = milliseconds(5000)},
                                metrics::BindAddress{false, "127.0.0.1", httpPort});
  ASSERT_TRUE(proxy) << proxy.error().toString();
  proxy_ = std::move(*proxy);
  const auto waitFor = [httpPort](const std::string& id, std::chrono::seconds timeout) {
    return runtime::partition::waitUntilActive(
        {{"127.0.0.1", httpPort, "/v1/partitions/" + id}, id, timeout});
  };
  using Kind = runtime::partition::WaitOutcome::Kind;

  auto active = waitFor(partitionA_, std::chrono::seconds(10));
  EXPECT_EQ(active.kind, Kind::kActive) << active.lastAnswer;

  // Reset, the partition is pending again for the simulator's 50 ms: the wait sees it through.
  ASSERT_TRUE(admin_->resetPartition(partitionA_));
  auto status = admin_->getPartitionStatus(partitionA_);
  ASSERT_TRUE(status) << status.error().toString();
  EXPECT_NE(status->readyState, vipu::ReadyState::kActive) << "the reset did not make it pending";
  active = waitFor(partitionA_, std::chrono::seconds(10));
  EXPECT_EQ(active.kind, Kind::kActive) << active.lastAnswer;

  // Another job's partition, active as it is, is never this worker's to wait for.
  const auto refused = waitFor(partitionB_, std::chrono::seconds(1));
  EXPECT_EQ(refused.kind, Kind::kTimedOut);
  EXPECT_NE(refused.lastAnswer.find("HTTP 403"), std::string::npos) << refused.lastAnswer;
  EXPECT_NE(refused.lastAnswer.find(partitionB_), std::string::npos) << refused.lastAnswer;

  // An id of the job's own prefix that V-IPU does not have: the controller's NotFound, passed on.
  ASSERT_TRUE(admin_->removePartition(partitionA_, true));
  const auto gone = waitFor(partitionA_, std::chrono::seconds(1));
  EXPECT_EQ(gone.kind, Kind::kTimedOut);
  EXPECT_NE(gone.lastAnswer.find("HTTP 404"), std::string::npos) << gone.lastAnswer;
}

TEST_F(VipuProxyTest, AWorkerSeesAndUsesOnlyItsJobsPartition) {
  auto listed = worker_->listPartitions("");
  ASSERT_TRUE(listed) << listed.error().toString();
  ASSERT_EQ(listed->size(), 1u);
  EXPECT_EQ(listed->front().id, partitionA_);
  EXPECT_EQ(listed->front().spec.ipus.size(), 4u) << "forwarded whole";

  auto status = worker_->getPartitionStatus(partitionA_);
  ASSERT_TRUE(status) << status.error().toString();
  EXPECT_EQ(status->readyState, vipu::ReadyState::kActive);
  auto config = worker_->getPartitionIpuofConfig(partitionA_, 0);
  ASSERT_TRUE(config) << config.error().toString();
  EXPECT_FALSE(config->gcds.empty());
  const Status reset = worker_->resetPartition(partitionA_);
  EXPECT_TRUE(reset) << reset.error().toString();
  auto attributes = worker_->listIpuAttributes({});
  ASSERT_TRUE(attributes) << attributes.error().toString();
  EXPECT_EQ(attributes->size(), 4u) << "a POD16's four IPU-Machines";

  expectDenied(worker_->removePartition(partitionB_, true), partitionB_);
  expectDenied(worker_->resetPartition(partitionB_), partitionB_);
  expectDenied(statusOf(worker_->getPartitionStatus(partitionB_)), partitionB_);
  expectDenied(statusOf(worker_->getPartitionIpuofConfig(partitionB_, std::nullopt)), partitionB_);
  expectDenied(worker_->removePartition(partitionA_, false), "only the operator creates and removes");
  expectDenied(statusOf(worker_->createPartition({.id = "mine", .size = 1})), "job-a-worker-0");
  EXPECT_TRUE(exists(partitionA_));
  EXPECT_TRUE(exists(partitionB_));
  EXPECT_FALSE(exists("mine"));
}

TEST_F(VipuProxyTest, ACallerNoWorkerHasTheAddressOfIsRefusedEverything) {
  Json finished = workerPodObject("team-a", "job-a-worker-0", "job-a", "uid-a", "127.0.0.1");
  finished["status"]["phase"] = "Succeeded";
  put(pods_, finished);
  expectDenied(statusOf(worker_->listPartitions("")), "127.0.0.1");
  expectDenied(statusOf(worker_->listIpuAttributes({})), "127.0.0.1");
  expectDenied(statusOf(worker_->getPartitionStatus(partitionA_)), "127.0.0.1");
}

// Until the operator's caches have synced, a worker it does not know yet is asked to call again
// (UNAVAILABLE, which Poplar and the V-IPU clients retry), not refused for good.
TEST_F(VipuProxyTest, UntilItsCachesSyncedTheProxyAsksCallersToCallAgain) {
  std::atomic<bool> synced{false};
  auto starting =
      VipuProxy::start("127.0.0.1:0", pods_, jobs_, {upstreamOf(*admin_)},
                       {.partitionIds = {kPrefix, ""}, .ready = [&synced] { return synced.load(); }});
  ASSERT_TRUE(starting) << starting.error().toString();
  auto worker = clientOf("proxy", "127.0.0.1:" + std::to_string((*starting)->port()));
  ASSERT_TRUE(worker) << worker.error().toString();
  const auto listed = (*worker)->listPartitions("");
  ASSERT_FALSE(listed);
  EXPECT_EQ(listed.error().code, ErrorCode::kUnavailable) << listed.error().toString();
  EXPECT_NE(listed.error().message.find("syncing"), std::string::npos) << listed.error().message;
  synced = true;
  const auto partitions = (*worker)->listPartitions("");
  ASSERT_TRUE(partitions) << partitions.error().toString();
  ASSERT_EQ(partitions->size(), 1u);
  EXPECT_EQ(partitions->front().id, partitionA_);
}

TEST_F(VipuProxyTest, VipuCtlWorksThroughTheProxy) {
  const std::vector<std::string> ctl{vipu::testing::ctlBinary(), "--endpoint",
                                     "127.0.0.1:" + std::to_string(proxy_->port()), "--attempts", "1"};
  const auto run = [&ctl](std::vector<std::string> args) {
    std::vector<std::string> argv = ctl;
    argv.insert(argv.end(), args.begin(), args.end());
    return runCommand(argv);
  };
  const CommandResult listed = run({"list"});
  EXPECT_EQ(listed.exitCode, 0) << listed.output;
  EXPECT_NE(listed.output.find(partitionA_), std::string::npos) << listed.output;
  EXPECT_EQ(listed.output.find(partitionB_), std::string::npos) << listed.output;
  const CommandResult status = run({"status", partitionA_});
  EXPECT_EQ(status.exitCode, 0) << status.output;
  const CommandResult removed = run({"remove", partitionB_});
  EXPECT_EQ(removed.exitCode, 1) << removed.output;
  EXPECT_NE(removed.output.find("PermissionDenied"), std::string::npos) << removed.output;
  EXPECT_TRUE(exists(partitionB_));
}

}  // namespace
}  // namespace ipu::controllers
