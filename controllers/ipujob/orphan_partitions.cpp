#include "ipujob/orphan_partitions.h"

#include <algorithm>
#include <map>
#include <set>

#include "common/json_access.h"
#include "common/log.h"
#include "ipujob/ipujob_reconciler.h"
#include "ipujob/job_status.h"
#include "vipu/partition_id.h"

namespace ipu::controllers {

std::string partitionIdFor(const std::string& prefix, const std::string& ns, const std::string& job,
                           std::uint32_t instance) {
  return prefix + "_" +
         vipu::derivePartitionId(ns, job, instance, vipu::kMaxPartitionIdLength - prefix.size() - 1);
}

std::string partitionIdBeforeSha256For(const std::string& prefix, const std::string& ns,
                                       const std::string& job, std::uint32_t instance) {
  return prefix + "_" +
         vipu::derivePartitionIdFnv48(ns, job, instance, vipu::kMaxPartitionIdLength - prefix.size() - 1);
}

bool partitionDerivedForJob(const api::PartitionRecord& record, const api::ObjectIdentity& job,
                            const std::string& prefix, const std::string& legacyPrefix) {
  if (record.instance < 0) return false;
  // Ids admitted by earlier builds (an FNV tail when shortened) are this job's too.
  const auto derived = [&](const std::string& under) {
    const auto instance = static_cast<std::uint32_t>(record.instance);
    return record.id == partitionIdFor(under, job.ns, job.name, instance) ||
           record.id == partitionIdBeforeSha256For(under, job.ns, job.name, instance);
  };
  return derived(prefix) || (!legacyPrefix.empty() && derived(legacyPrefix));
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
  std::map<std::string, int> held;  // id -> the size its job recorded
  for (const Json& job : jobs) {
    for (const auto& partition : heldPartitionsOf(job)) held[partition.id] = partition.size;
  }
  std::vector<std::string> orphans;
  for (const auto& partition : partitions) {
    if (!hasOperatorPrefix(prefix, partition.id)) continue;
    const auto holder = held.find(partition.id);
    // Under a held id but of another size: left by an earlier job of the same name, not the holder's.
    const bool heldAsIs =
        holder != held.end() && (holder->second <= 0 || holder->second == static_cast<int>(partition.size()));
    if (!heldAsIs) orphans.push_back(partition.id);
  }
  return orphans;
}

Result<std::vector<std::string>> OrphanSweeper::sweep(const std::string& controller, vipu::VipuApi& vipu,
                                                      bool confirmed) {
  auto partitions = vipu.listPartitions("");
  if (!partitions) return partitions.error();
  // Read after the partitions: any partition listed above was recorded in its job before it was created.
  auto jobs = client_.listAll(ipuJobResource(), "");
  if (!jobs) return jobs.error();
  std::vector<Json> snapshot;
  if (const Json& items = member(*jobs, "items"); items.is_array())
    snapshot.assign(items.begin(), items.end());
  std::set<std::string>& previous = candidates_[controller];
  std::set<std::string> current;
  std::vector<std::string> removed;
  for (const std::string& id : orphanPartitionIds(prefix_, *partitions, snapshot)) {
    current.insert(id);
    if (confirmed && !previous.contains(id)) continue;  // seen once: removed next time if still orphaned
    if (dryRun_) {
      log::info("dry run: would remove an orphaned partition no IPUJob holds",
                {{"controller", controller}, {"partition", id}});
      removed.push_back(id);
      continue;
    }
    auto status = vipu.removePartition(id, /*force=*/true);
    if (!status && status.error().code != ErrorCode::kNotFound) return status.error();
    log::info("removed an orphaned partition no IPUJob holds",
              {{"controller", controller}, {"partition", id}});
    removed.push_back(id);
  }
  previous = std::move(current);
  return removed;
}

}  // namespace ipu::controllers
