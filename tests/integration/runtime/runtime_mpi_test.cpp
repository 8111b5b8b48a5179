// A job instance's launch with real OpenMPI across "hosts": each worker is a network namespace (and UTS
// namespace, so it has a host name of its own) of the test's own, joined by a bridge in another namespace.
// Worker 0 runs `ipu-runtime launch`, the others `ipu-runtime agent`; mpirun's daemons start through
// `ipu-runtime rsh` over the job's mutual TLS. Needs root (namespaces) and OpenMPI (tools/install-deps.sh).
#include <csignal>
#include <map>
#include <regex>

#include <gtest/gtest.h>
#include <unistd.h>

#include "free_port.h"
#include "mpi_output.h"
#include "namespace_lab.h"
#include "runtime_fixture.h"
#include "subprocess.h"

namespace ipu::testing {
namespace {

using namespace std::chrono_literals;

struct Shape {
  int workers;
  int replicasPerWorker;
  int ipus;
};

class RuntimeMpiTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (geteuid() != 0) GTEST_SKIP() << "network namespaces need root";
    ASSERT_TRUE(run({"sh", "-c", "command -v mpirun"}).ok())
        << "OpenMPI is missing: run tools/install-deps.sh";
  }

  void start(Shape shape) {
    shape_ = shape;
    lab_ = std::make_unique<NamespaceLab>(shape.workers);
    for (int i = 1; i < shape.workers; ++i) {
      agents_.push_back(
          std::make_unique<BackgroundProcess>(lab_->inWorker(i, {runtimeBinary(), "agent"}), environment(i)));
    }
  }

  std::vector<std::string> environment(int worker) const {
    return {secret_.environment(), "IPU_RUNTIME_AGENT_PORT=" + std::to_string(port_),
            "IPU_RUNTIME_PEERS=" + lab_->peers(), "IPU_RUNTIME_TERMINATION_LOG=" + terminationLog(worker),
            "IPUJOB_INSTANCE=0", "IPUJOB_WORKERS_PER_INSTANCE=" + std::to_string(shape_.workers),
            "IPUJOB_REPLICAS_PER_WORKER=" + std::to_string(shape_.replicasPerWorker),
            "IPUJOB_IPUS_PER_INSTANCE=" + std::to_string(shape_.ipus),
            // What the operator sets in every pod; -x must carry it to every rank.
            "IPUOF_VIPU_API_PARTITION_ID=p-test-" + std::to_string(worker), "OMPI_ALLOW_RUN_AS_ROOT=1",
            "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1"};
  }

  std::string terminationLog(int worker) const {
    return ::testing::TempDir() + "/mpi-termination-" + std::to_string(getpid()) + "-" +
           std::to_string(worker);
  }

  RunResult launch(const std::vector<std::string>& rankCommand) {
    std::vector<std::string> argv = {runtimeBinary(), "launch", "--"};
    argv.insert(argv.end(), rankCommand.begin(), rankCommand.end());
    return run(lab_->inWorker(0, argv), {.timeout = 90s, .extraEnv = environment(0)});
  }

  // Each agent's exit code once the launch told it the outcome.
  std::vector<int> agentExitCodes() {
    std::vector<int> codes;
    for (auto& agent : agents_) codes.push_back(agent->wait(15s).value_or(-1));
    return codes;
  }

  void TearDown() override {
    agents_.clear();
    lab_.reset();
    for (int i = 0; i < shape_.workers; ++i) unlink(terminationLog(i).c_str());
  }

  JobSecretDir secret_{"ipujob/test/mpi/uid-3"};
  std::uint16_t port_ = freeLoopbackPort();
  Shape shape_{};
  std::unique_ptr<NamespaceLab> lab_;
  std::vector<std::unique_ptr<BackgroundProcess>> agents_;
};

// Each rank's output as one string (its lines joined).
std::map<int, std::string> stdoutByRank(const std::string& out) {
  std::map<int, std::string> joined;
  for (const auto& [rank, lines] : linesByRank(out)) {
    for (const auto& line : lines) joined[rank] += line;
  }
  return joined;
}

const char* kPrintRank =
    "echo rank=$OMPI_COMM_WORLD_RANK host=$(hostname) total=$POPDIST_NUM_TOTAL_REPLICAS "
    "local=$POPDIST_NUM_LOCAL_REPLICAS offset=$POPDIST_REPLICA_INDEX_OFFSET "
    "ipus=$POPDIST_NUM_IPUS_PER_REPLICA "
    "uniform=$POPDIST_UNIFORM_REPLICAS_PER_INSTANCE index=$POPDIST_LOCAL_INSTANCE_INDEX "
    "partition=$IPUOF_VIPU_API_PARTITION_ID";

TEST_F(RuntimeMpiTest, TwoWorkersOfTwoReplicasEachGetExactlyWhatPoprunWouldPass) {
  start({2, 2, 4});
  RunResult result = launch({"sh", "-c", kPrintRank});
  ASSERT_EQ(result.exitCode, 0) << result.out << result.err;
  EXPECT_EQ(stdoutByRank(result.out),
            (std::map<int, std::string>{
                {0, "rank=0 host=w0 total=4 local=2 offset=0 ipus=1 uniform=1 index=0 partition=p-test-0"},
                {1, "rank=1 host=w1 total=4 local=2 offset=2 ipus=1 uniform=1 index=0 partition=p-test-0"}}))
      << result.out << result.err;
  EXPECT_EQ(agentExitCodes(), (std::vector<int>{0}));
  EXPECT_NE(fileText(terminationLog(0)).find("instance 0 (w0): mpirun succeeded after"), std::string::npos)
      << fileText(terminationLog(0));
  // The peer's pod reports the launch's outcome in the launch's words.
  EXPECT_NE(fileText(terminationLog(1)).find("instance 0 (w0): mpirun succeeded after "), std::string::npos)
      << fileText(terminationLog(1));
  EXPECT_NE(fileText(terminationLog(1)).find("(reported by the agent of w1, which served "),
            std::string::npos)
      << fileText(terminationLog(1));
  EXPECT_NE(agents_[0]->stderrText().find("running for 10.77.0.1:"), std::string::npos)
      << agents_[0]->stderrText();
}

TEST_F(RuntimeMpiTest, ThreeAgentsJoinARealAllreduce) {
  start({4, 1, 4});
  // Debian's python3 (with mpi4py), whatever else PATH offers.
  RunResult result =
      launch({"/usr/bin/python3", "-c",
              "from mpi4py import MPI; c = MPI.COMM_WORLD; "
              "print('rank %d of %d sum %d' % (c.Get_rank(), c.Get_size(), c.allreduce(c.Get_rank() + 1)))"});
  ASSERT_EQ(result.exitCode, 0) << result.out << result.err;
  EXPECT_EQ(stdoutByRank(result.out), (std::map<int, std::string>{{0, "rank 0 of 4 sum 10"},
                                                                  {1, "rank 1 of 4 sum 10"},
                                                                  {2, "rank 2 of 4 sum 10"},
                                                                  {3, "rank 3 of 4 sum 10"}}))
      << result.out << result.err;
  EXPECT_EQ(agentExitCodes(), (std::vector<int>{0, 0, 0}));
}

TEST_F(RuntimeMpiTest, ARankExitingWithThreeFailsTheLaunchAndEveryWorker) {
  start({2, 1, 2});
  RunResult result = launch({"sh", "-c", "if [ $OMPI_COMM_WORLD_RANK = 1 ]; then exit 3; fi"});
  EXPECT_EQ(result.exitCode, 3) << result.out << result.err;
  EXPECT_EQ(agentExitCodes(), (std::vector<int>{3}));
  EXPECT_NE(fileText(terminationLog(0)).find("mpirun exited with code 3"), std::string::npos)
      << fileText(terminationLog(0));
  EXPECT_NE(fileText(terminationLog(1)).find("instance 0 (w0): mpirun exited with code 3"), std::string::npos)
      << fileText(terminationLog(1));
}

TEST_F(RuntimeMpiTest, AnAgentKilledMidRunFailsTheLaunchWithAClearMessageAndNothingHangs) {
  start({4, 1, 4});
  std::thread killer([this] {
    // Once every rank runs, the second agent's pod "dies".
    std::this_thread::sleep_for(3s);
    ::kill(-agents_[1]->pid(), SIGKILL);
  });
  auto started = std::chrono::steady_clock::now();
  RunResult result = launch({"sh", "-c", "echo running; sleep 30"});
  killer.join();
  EXPECT_NE(result.exitCode, 0);
  EXPECT_FALSE(result.timedOut);
  EXPECT_LT(std::chrono::steady_clock::now() - started, 25s) << result.err;
  EXPECT_NE(result.err.find("ipu-runtime rsh: 10.77.0.3: lost the connection to the agent"),
            std::string::npos)
      << result.out << result.err;
  // The agents that were not killed hear the outcome and end with it.
  EXPECT_EQ(agents_[0]->wait(15s), result.exitCode) << agents_[0]->stderrText();
  EXPECT_EQ(agents_[2]->wait(15s), result.exitCode) << agents_[2]->stderrText();
}

TEST_F(RuntimeMpiTest, APeerThatNeverAnswersFailsTheLaunchAfterItsTimeout) {
  start({2, 1, 2});
  agents_[0]->stop();
  std::vector<std::string> env = environment(0);
  env.push_back("IPU_RUNTIME_PEER_TIMEOUT_SECONDS=2");
  RunResult result =
      run(lab_->inWorker(0, {runtimeBinary(), "launch", "--", "true"}), {.timeout = 30s, .extraEnv = env});
  EXPECT_EQ(result.exitCode, 1);
  EXPECT_NE(
      result.err.find("peer 10.77.0.2 did not answer within 2 s (10.77.0.2: cannot connect to 10.77.0.2:"),
      std::string::npos)
      << result.err;
}

}  // namespace
}  // namespace ipu::testing
