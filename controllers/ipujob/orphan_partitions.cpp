#include "ipujob/orphan_partitions.h"

#include <set>

#include "common/log.h"

namespace ipu::controllers {

std::vector<std::string> orphanPartitionIds(const std::vector<vipu::Partition>& partitions,
                                            const std::vector<Json>& jobs) {
  std::set<std::string> held;
  for (const Json& job : jobs) {
    const Json status = job.value("status", Json::object());
    for (const Json& partition : status.value("partitions", Json::array())) {
      if (partition.value("state", "") != "Released") held.insert(partition.value("id", ""));
    }
  }
  std::vector<std::string> orphans;
  for (const auto& partition : partitions) {
    if (partition.id.find('_') != std::string::npos && !held.contains(partition.id))
      orphans.push_back(partition.id);
  }
  return orphans;
}

Result<std::vector<std::string>> removeOrphanPartitions(vipu::VipuApi& vipu, const kube::Store& jobs) {
  auto partitions = vipu.listPartitions("");
  if (!partitions) return partitions.error();
  std::vector<Json> snapshot;
  for (const kube::ObjectPtr& job : jobs.list()) snapshot.push_back(*job);
  std::vector<std::string> removed;
  for (const std::string& id : orphanPartitionIds(*partitions, snapshot)) {
    auto status = vipu.removePartition(id, /*force=*/true);
    if (!status && status.error().code != ErrorCode::kNotFound) return status.error();
    log::info("removed an orphaned partition no IPUJob holds", {{"partition", id}});
    removed.push_back(id);
  }
  return removed;
}

}  // namespace ipu::controllers
