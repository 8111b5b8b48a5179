// A launcher written in the worker command of a multi-worker instance (docs/user-guide.md, "Your own
// poprun/mpirun"): as the program, or in a bash -c script after set-up lines, it runs once, in worker 0, with
// the hostfile and the runtime's remote start in place, and places one rank per pod; a command that hides
// what it runs gets a Warning Event and runs as every rank. Real OpenMPI and mpi4py in the debian-mpi image.
#include <string>
#include <vector>

#include <gmock/gmock.h>

#include "operator_on_real_node.h"

namespace ipu::testing {
namespace {

using ::testing::HasSubstr;

// Each rank's allreduce of rank+1 and what its pod's environment says of it (the operator sets POPDIST_* in
// every worker pod; a user's own mpirun passes nothing).
const char* kAllreduce =
    "import os; from mpi4py import MPI; c = MPI.COMM_WORLD; "
    "print('rank %d of %d sum %d offset %s on %s' % (c.Get_rank(), c.Get_size(), c.allreduce(c.Get_rank() + "
    "1), "
    "os.environ['POPDIST_REPLICA_INDEX_OFFSET'], os.environ['IPUJOB_WORKER_INDEX']))";

class LauncherInCommandTest : public OperatorOnRealNodeTest {
 protected:
  std::string log(const std::string& pod) {
    const auto logs = kubectl({"logs", pod, "-c", "train"});
    EXPECT_TRUE(logs.ok()) << logs.describe();
    return logs.out;
  }
};

TEST_F(LauncherInCommandTest, MpirunAsTheCommandOfFourWorkersPlacesOneRankInEachPod) {
  const std::string job = createJob(jobRunning(
      "mpirun-command", Json::array({"mpirun", "--tag-output", "-np", "4", "python3", "-c", kAllreduce}),
      R"({"workersPerJobInstance": "4"})", debianMpi()));
  ASSERT_TRUE(reachesPhase(job, "Succeeded", 240s));
  for (int rank = 0; rank < 4; ++rank) {
    // mpirun fills the hostfile's one slot per pod in order: rank k runs in worker k.
    const std::string k = std::to_string(rank);
    EXPECT_EQ(rankLines(job + "-worker-0", rank),
              std::vector<std::string>{"rank " + k + " of 4 sum 10 offset " + k + " on " + k});
  }
  EXPECT_THAT(log(job + "-worker-0"),
              HasSubstr("ipu-runtime launch: running the job's own launcher once: mpirun --tag-output -np 4 "
                        "python3 -c 'import os;"));
  EXPECT_THAT(
      eventWithReason(job, "LauncherInCommand"),
      HasSubstr("Normal the worker command starts the ranks itself (mpirun --tag-output -np 4 python3"));
  for (int worker = 1; worker < 4; ++worker)
    EXPECT_THAT(log(job + "-worker-" + std::to_string(worker)), HasSubstr("ipu-runtime agent: running for "));
}

TEST_F(LauncherInCommandTest, ABashScriptThatRunsMpirunRunsItsSetUpOnceInWorkerZero) {
  // As the users' 64-IPU manifest writes poprun: set-up lines, then the launcher with VAR=value prefixes.
  const std::string script =
      std::string("cd /tmp\necho \"set-up ran in $IPUJOB_WORKER_INDEX\"\n") +
      "OMPI_MCA_rmaps_base_oversubscribe=0 \\\n  mpirun --tag-output -np 2 \\\n  python3 -c \"" + kAllreduce +
      "\"\n";
  const std::string job =
      createJob(jobRunning("mpirun-script", Json::array({"/bin/bash", "-c", "--", script}),
                           R"({"workersPerJobInstance": "2"})", debianMpi()));
  ASSERT_TRUE(reachesPhase(job, "Succeeded", 240s));
  EXPECT_EQ(rankLines(job + "-worker-0", 0), std::vector<std::string>{"rank 0 of 2 sum 3 offset 0 on 0"});
  EXPECT_EQ(rankLines(job + "-worker-0", 1), std::vector<std::string>{"rank 1 of 2 sum 3 offset 1 on 1"});
  const std::string launchLog = log(job + "-worker-0");
  EXPECT_THAT(launchLog, HasSubstr("set-up ran in 0\n"));
  // One summary line, not the script.
  EXPECT_THAT(launchLog,
              HasSubstr("ipu-runtime launch: running the worker command once, a /bin/bash -c script of "
                        "5 line(s) that starts the ranks with: OMPI_MCA_rmaps_base_oversubscribe=0 mpirun "
                        "--tag-output -np 2 python3 -c 'import os;"));
  EXPECT_THAT(log(job + "-worker-1"), ::testing::Not(HasSubstr("set-up ran")))
      << "worker 1 runs only the agent";
}

TEST_F(LauncherInCommandTest, ACommandThatHidesWhatItRunsIsWarnedAboutAndRunsAsEveryRank) {
  Json manifest = Json::parse(jobRunning("hidden", Json::array({"sh", "-c", "$RANK_PROGRAM"}),
                                         R"({"workersPerJobInstance": "2"})", debianMpi()));
  manifest["spec"]["workers"]["template"]["spec"]["containers"][0]["env"] =
      Json::array({{{"name", "RANK_PROGRAM"}, {"value", "printenv OMPI_COMM_WORLD_RANK"}}});
  const std::string job = createJob(manifest.dump());
  ASSERT_TRUE(reachesPhase(job, "Succeeded", 240s));
  EXPECT_EQ(
      eventWithReason(job, "WorkerCommandUnclear"),
      "Warning the worker command runs $RANK_PROGRAM, known only when it runs ($RANK_PROGRAM), which cannot "
      "be "
      "read before it runs: it runs as one rank in each of the instance's 2 workers. If it starts poprun or "
      "mpirun itself, that fails (\"mpirun does not support recursive calls\"): put the launch line in "
      "launcher.command, or write poprun/mpirun in the command or in its sh -c script, where it is seen");
  EXPECT_EQ(rankLines(job + "-worker-0", 0), std::vector<std::string>{"0"});
  EXPECT_EQ(rankLines(job + "-worker-0", 1), std::vector<std::string>{"1"});
}

}  // namespace
}  // namespace ipu::testing
