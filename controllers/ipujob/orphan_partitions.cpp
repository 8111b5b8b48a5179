#include "ipujob/orphan_partitions.h"

#include <algorithm>
#include <set>

#include "common/log.h"
#include "ipujob/job_status.h"
#include "vipu/partition_id.h"

namespace ipu::controllers {

std::string partitionIdFor(const std::string& prefix, const std::string& ns, const std::string& job,
                           std::uint32_t instance) {
  return prefix + "_" +
         vipu::derivePartitionId(ns, job, instance, vipu::kMaxPartitionIdLength - prefix.size() - 1);
}

bool hasOperatorPrefix(const std::string& prefix, const std::string& id) {
  return id.size() > prefix.size() + 1 && id.compare(0, prefix.size(), prefix) == 0 &&
         id[prefix.size()] == '_';
}

Status validatePartitionIdPrefix(const std::string& prefix) {
  const bool valid = !prefix.empty() && prefix.size() <= 16 && prefix.front() != '-' &&
                     std::all_of(prefix.begin(), prefix.end(), [](char c) {
                       return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-';
                     });
  if (valid) return {};
  return makeError(
      ErrorCode::kInvalidArgument,
      "partition id prefix must be 1-16 characters from a-z, 0-9 and '-', starting with a letter or "
      "digit, not \"" +
          prefix + "\"");
}

std::vector<std::string> orphanPartitionIds(const std::string& prefix,
                                            const std::vector<vipu::Partition>& partitions,
                                            const std::vector<Json>& jobs) {
  std::set<std::string> held;
  for (const Json& job : jobs) {
    for (const auto& partition : heldPartitionsOf(job)) held.insert(partition.id);
  }
  std::vector<std::string> orphans;
  for (const auto& partition : partitions) {
    if (hasOperatorPrefix(prefix, partition.id) && !held.contains(partition.id))
      orphans.push_back(partition.id);
  }
  return orphans;
}

Result<std::vector<std::string>> removeOrphanPartitions(const std::string& prefix, vipu::VipuApi& vipu,
                                                        const kube::Store& jobs) {
  auto partitions = vipu.listPartitions("");
  if (!partitions) return partitions.error();
  std::vector<Json> snapshot;
  for (const kube::ObjectPtr& job : jobs.list()) snapshot.push_back(*job);
  std::vector<std::string> removed;
  for (const std::string& id : orphanPartitionIds(prefix, *partitions, snapshot)) {
    auto status = vipu.removePartition(id, /*force=*/true);
    if (!status && status.error().code != ErrorCode::kNotFound) return status.error();
    log::info("removed an orphaned partition no IPUJob holds", {{"partition", id}});
    removed.push_back(id);
  }
  return removed;
}

}  // namespace ipu::controllers
