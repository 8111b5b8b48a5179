#include "ipujob/orphan_partitions.h"

#include <gtest/gtest.h>

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
  const auto orphans = orphanPartitionIds({partition("ns_job_0"), partition("ns_gone_0")},
                                          {jobHolding("ns_job_0", "Planned")});
  EXPECT_EQ(orphans, std::vector<std::string>{"ns_gone_0"});
}

TEST(OrphanPartitionIdsTest, PartitionsNotNamedByTheOperatorAreLeftAlone) {
  EXPECT_TRUE(orphanPartitionIds({partition("someones-partition")}, {}).empty());
}

TEST(OrphanPartitionIdsTest, AReleasedRecordDoesNotHoldThePartition) {
  const auto orphans = orphanPartitionIds({partition("ns_job_0")}, {jobHolding("ns_job_0", "Released")});
  EXPECT_EQ(orphans, std::vector<std::string>{"ns_job_0"});
}

TEST(OrphanPartitionIdsTest, JobsWithoutStatusHoldNothing) {
  EXPECT_EQ(orphanPartitionIds({partition("a_b_0")}, {Json{{"metadata", {{"name", "b"}}}}}).size(), 1u);
}

}  // namespace
}  // namespace ipu::controllers
