// The operator acts only on partitions it derives from a job's own identity: an edited status cannot make it
// remove another installation's partition, and a partition left under a job's id by an earlier job of the
// same name (of another size, or on other IPUs) is never adopted.
#include "operator_fixture.h"

namespace ipu::testing {
namespace {

using PartitionOwnershipTest = OperatorTest;

std::string jobNamed(const std::string& name) {
  return withName(readFile(kFourIpuManifest), name);  // runs until deleted
}

TEST_F(PartitionOwnershipTest, AStatusNamingAnotherInstallationsPartitionNeverGetsItRemoved) {
  // Another cluster's partition on the shared V-IPU controller.
  const std::string theirs =
      "lab_" + vipu::derivePartitionId(ns(), "victim", 0, vipu::kMaxPartitionIdLength - 4);
  ASSERT_TRUE(vipu_->createPartition(vipu::PartitionRequest{.id = theirs, .size = 4}));
  const std::string job = createJob(jobNamed("victim"));
  ASSERT_TRUE(reachesPhase(job, "Running"));

  // Somebody with access to the status subresource points the job at that partition.
  Json status = jobStatus(job);
  status["partitions"][0]["id"] = theirs;
  const auto edited = kubectl({"patch", "ipujob", job, "--subresource", "status", "--type", "merge", "-p",
                               Json{{"status", {{"partitions", status["partitions"]}}}}.dump()});
  ASSERT_TRUE(edited.ok()) << edited.describe();
  ASSERT_TRUE(reachesPhase(job, "Failed", 60s));
  EXPECT_NE(jobStatus(job).value("lastMessage", "").find("which is not this job's"), std::string::npos)
      << jobStatus(job).dump();
  auto deleted = kubectl({"delete", "ipujob", job, "--timeout", "30s"});
  EXPECT_TRUE(deleted.ok()) << deleted.describe();
  EXPECT_TRUE(partition(theirs).has_value()) << "another installation's partition was removed";
}

TEST_F(PartitionOwnershipTest, APartitionLeftUnderTheJobsIdWithAnotherShapeIsNeverAdopted) {
  // An earlier job named "reused" was force-deleted (its finalizer removed by hand): its 8-IPU partition
  // stayed under the id the new job derives.
  const std::string id = defaultPartitionId("reused");
  // After the start-up sweep, which would rightly remove it as an orphan before any job names it.
  ASSERT_TRUE(eventually(
      [&] { return operator_->stderrText().find("controller started") != std::string::npos; }, 60s));
  ASSERT_TRUE(vipu_->createPartition(vipu::PartitionRequest{.id = id, .size = 8}));
  const std::string job = createJob(jobNamed("reused"));
  ASSERT_TRUE(saysInLastMessage(job, "exists with 8 IPUs where this job recorded 4"));
  EXPECT_NE(phaseOf(job), "Running");
  EXPECT_TRUE(getJson("pod", job + "-worker-0").is_null())
      << "a worker started on the earlier job's partition";

  // The admin removes the leftover: the job gets a partition of its own size.
  ASSERT_TRUE(vipu_->removePartition(id, true));
  ASSERT_TRUE(reachesPhase(job, "Running", 60s));
  const auto own = partition(id);
  ASSERT_TRUE(own.has_value());
  EXPECT_EQ(own->size(), 4u);
}

// The same, with a leftover of the job's own size on IPUs 4-7 (a filler held 0-3 while it was made): the job
// is admitted to the first free IPUs, 0-3, so the leftover is on other IPUs than its admission recorded and
// is not the job's either.
TEST_F(PartitionOwnershipTest, APartitionLeftUnderTheJobsIdOnOtherIpusIsNeverAdopted) {
  const std::string id = defaultPartitionId("moved");
  ASSERT_TRUE(eventually(
      [&] { return operator_->stderrText().find("controller started") != std::string::npos; }, 60s));
  ASSERT_TRUE(vipu_->createPartition(vipu::PartitionRequest{.id = "filler", .size = 4}));
  ASSERT_TRUE(vipu_->createPartition(vipu::PartitionRequest{.id = id, .size = 4}));
  ASSERT_TRUE(vipu_->removePartition("filler", true));
  const std::string job = createJob(jobNamed("moved"));
  ASSERT_TRUE(saysInLastMessage(job, "exists on IPUs "));
  const std::string message = jobStatus(job).value("lastMessage", "");
  const std::string recorded = jobStatus(job)["partitions"][0].value("ipus", "");
  EXPECT_NE(message.find(" where this job recorded " + recorded + ": it is not this job's"),
            std::string::npos)
      << message;
  EXPECT_NE(phaseOf(job), "Running");
  EXPECT_TRUE(getJson("pod", job + "-worker-0").is_null()) << "a worker started on somebody else's partition";

  ASSERT_TRUE(vipu_->removePartition(id, true));
  ASSERT_TRUE(reachesPhase(job, "Running", 60s));
  EXPECT_EQ(jobStatus(job)["partitions"][0].value("ipus", ""), recorded);
}

class OrphanSweepTest : public OperatorTest {
 protected:
  bool startsOperatorInSetUp() const override { return false; }

  // Starts the operator with `args` and waits until its start-up sweep is behind it.
  void startAndWait(const std::vector<std::string>& args) {
    startOperator(args);
    ASSERT_TRUE(eventually(
        [&] { return operator_->stderrText().find("controller started") != std::string::npos; }, 60s));
  }

  std::string strayId() const { return defaultPartitionId("stray"); }
};

// A partition with this installation's prefix that no job holds appears while the operator runs (a job
// whose finalizer was removed by hand): the periodic sweep removes it, and never a partition of the jobs
// being admitted meanwhile, whose status the cache may not show yet.
TEST_F(OrphanSweepTest, ThePeriodicSweepRemovesAnOrphanAndNeverARunningJobsPartition) {
  ASSERT_NO_FATAL_FAILURE(startAndWait({"--orphan-sweep-interval-seconds", "1"}));
  std::vector<std::string> jobs;
  for (int i = 0; i < 4; ++i) jobs.push_back(createJob(manifestExitingWith(0, "", "3s")));
  ASSERT_TRUE(vipu_->createPartition(vipu::PartitionRequest{.id = strayId(), .size = 4}));
  EXPECT_TRUE(eventually([&] { return !partition(strayId()).has_value(); }, 30s)) << "the orphan was kept";
  EXPECT_NE(operator_->stderrText().find("removed an orphaned partition no IPUJob holds"), std::string::npos);
  for (const std::string& job : jobs) {
    ASSERT_TRUE(reachesPhase(job, "Succeeded", 120s));
    EXPECT_EQ(jobStatus(job).value("restartCount", 0), 0) << jobStatus(job).dump();
  }
}

TEST_F(OrphanSweepTest, ADryRunOnlySaysWhatItWouldRemove) {
  ASSERT_NO_FATAL_FAILURE(startAndWait({"--orphan-sweep-interval-seconds", "1", "--orphan-sweep-dry-run"}));
  ASSERT_TRUE(vipu_->createPartition(vipu::PartitionRequest{.id = strayId(), .size = 4}));
  ASSERT_TRUE(eventually(
      [&] {
        return operator_->stderrText().find("dry run: would remove an orphaned partition") !=
               std::string::npos;
      },
      30s));
  EXPECT_TRUE(partition(strayId()).has_value()) << "a dry run removed a partition";
}

}  // namespace
}  // namespace ipu::testing
