// The operator acts only on partitions it derives from a job's own identity: an edited status cannot make it
// remove another installation's partition, and a partition left under a job's id by an earlier job of the
// same name is never adopted.
#include "operator_fixture.h"

namespace ipu::testing {
namespace {

using PartitionOwnershipTest = OperatorTest;

std::string jobNamed(const std::string& name) {
  std::string manifest = readFile(kFourIpuManifest);  // runs until deleted
  const std::string generated = "generateName: bert-training-multi-ipu-";
  manifest.replace(manifest.find(generated), generated.size(), "name: " + name);
  return manifest;
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
  const std::string id = "k8s_" + vipu::derivePartitionId(ns(), "reused", 0, vipu::kMaxPartitionIdLength - 4);
  // After the start-up sweep, which would rightly remove it as an orphan before any job names it.
  ASSERT_TRUE(eventually(
      [&] { return operator_->stderrText().find("controller started") != std::string::npos; }, 60s));
  ASSERT_TRUE(vipu_->createPartition(vipu::PartitionRequest{.id = id, .size = 8}));
  const std::string job = createJob(jobNamed("reused"));
  ASSERT_TRUE(eventually(
      [&] {
        return jobStatus(job).value("lastMessage", "").find("exists with 8 IPUs where this job recorded 4") !=
               std::string::npos;
      },
      60s))
      << jobStatus(job).dump();
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

}  // namespace
}  // namespace ipu::testing
