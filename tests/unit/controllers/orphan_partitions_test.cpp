#include "ipujob/orphan_partitions.h"

#include <gtest/gtest.h>

#include "vipu/partition_id.h"

namespace ipu::controllers {
namespace {

vipu::Partition partition(const std::string& id) {
  vipu::Partition p;
  p.id = id;
  return p;
}

Json jobHolding(const std::string& id, const std::string& state) {
  return {{"metadata", {{"namespace", "ns"}, {"name", "job"}}},
          {"status", {{"partitions", Json::array({{{"id", id}, {"state", state}}})}}}};
}

TEST(OrphanPartitionIdsTest, OursWithoutAHoldingJobAreOrphans) {
  const auto orphans = orphanPartitionIds("k8s", {partition("k8s_ns_job_0"), partition("k8s_ns_gone_0")},
                                          {jobHolding("k8s_ns_job_0", "Planned")});
  EXPECT_EQ(orphans, std::vector<std::string>{"k8s_ns_gone_0"});
}

TEST(OrphanPartitionIdsTest, APartitionOfAnotherSizeUnderAHeldIdIsAnOrphan) {
  vipu::Partition leftover = partition("k8s_ns_job_0");
  leftover.spec.ipus.resize(8);
  Json job = jobHolding("k8s_ns_job_0", "Planned");
  job["status"]["partitions"][0]["size"] = 4;
  EXPECT_EQ(orphanPartitionIds("k8s", {leftover}, {job}), std::vector<std::string>{"k8s_ns_job_0"});
  job["status"]["partitions"][0]["size"] = 8;
  EXPECT_TRUE(orphanPartitionIds("k8s", {leftover}, {job}).empty());
}

TEST(OrphanPartitionIdsTest, PartitionsNotNamedByTheOperatorAreLeftAlone) {
  EXPECT_TRUE(orphanPartitionIds("k8s", {partition("someones-partition")}, {}).empty());
}

TEST(OrphanPartitionIdsTest, AReleasedRecordDoesNotHoldThePartition) {
  const auto orphans =
      orphanPartitionIds("k8s", {partition("k8s_ns_job_0")}, {jobHolding("k8s_ns_job_0", "Released")});
  EXPECT_EQ(orphans, std::vector<std::string>{"k8s_ns_job_0"});
}

TEST(OrphanPartitionIdsTest, AnotherInstallationsPartitionsAreLeftAlone) {
  // Another cluster sharing the V-IPU controller, with its own prefix: never ours, even with '_' in the id.
  EXPECT_TRUE(
      orphanPartitionIds(
          "k8s",
          {partition("lab_ns_job_0"), partition("k8s-b_ns_job_0"), partition("k8s"), partition("k8s_")}, {})
          .empty());
}

TEST(PartitionIdForTest, CarriesThePrefixAndStaysWithinVipuLimits) {
  EXPECT_EQ(partitionIdFor("k8s", "ml", "bert", 1), "k8s_ml_bert_1");
  const std::string id = partitionIdFor("cluster-a", std::string(63, 'n'), std::string(63, 'j'), 7);
  EXPECT_LE(id.size(), vipu::kMaxPartitionIdLength);
  EXPECT_TRUE(hasOperatorPrefix("cluster-a", id)) << id;
  EXPECT_TRUE(vipu::validatePartitionId(id).ok()) << id;
  EXPECT_NE(partitionIdFor("k8s", "a", "b-c", 0), partitionIdFor("k8s", "a-b", "c", 0));
}

TEST(PartitionIdForTest, MalformedPrefixesAreRefused) {
  for (const std::string bad : {"", "K8S", "a_b", "-lead", "has space", "seventeen-chars-x", "dot.ted"}) {
    EXPECT_FALSE(validatePartitionIdPrefix(bad).ok()) << bad;
  }
  for (const std::string good : {"k8s", "0", "cluster-a", "sixteen-chars-xy"}) {
    EXPECT_TRUE(validatePartitionIdPrefix(good).ok()) << good;
  }
}

TEST(OrphanPartitionIdsTest, JobsWithoutStatusHoldNothing) {
  EXPECT_EQ(orphanPartitionIds("k8s", {partition("k8s_a_b_0")}, {Json{{"metadata", {{"name", "b"}}}}}).size(),
            1u);
}

}  // namespace
}  // namespace ipu::controllers
