#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/result.h"
#include "kube/store.h"
#include "vipu/vipu_api.h"
#include "vipu/vipu_types.h"

namespace ipu::controllers {

using Json = nlohmann::json;

// Partitions that carry an operator-derived id ("<namespace>_<job>_<instance>", or its hash-shortened form:
// '_' never occurs in Kubernetes names, so an id with one is ours) but that no IPUJob in `jobs` lists in
// status.partitions as held. A job's recorded ids are written before the partition is created, so with
// `jobs` read after the partitions were listed, nothing still being created can be an orphan. Pure.
std::vector<std::string> orphanPartitionIds(const std::vector<vipu::Partition>& partitions,
                                            const std::vector<Json>& jobs);

// Start-up cleanup (before any reconcile runs): removes the orphans of a process that died between
// creating a partition and its job's deletion. Returns the ids removed.
Result<std::vector<std::string>> removeOrphanPartitions(vipu::VipuApi& vipu, const kube::Store& jobs);

}  // namespace ipu::controllers
