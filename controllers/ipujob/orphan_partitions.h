#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/result.h"
#include "kube/store.h"
#include "vipu/vipu_api.h"
#include "vipu/vipu_types.h"

namespace ipu::controllers {

using Json = nlohmann::json;

// The id of a job instance's partition: "<prefix>_<namespace>_<job>_<instance>", hash-shortened to V-IPU's
// limit when long. The prefix names the operator installation: several Kubernetes clusters (or other V-IPU
// users) can share a controller, and only ids with this installation's prefix are ever treated as its own.
std::string partitionIdFor(const std::string& prefix, const std::string& ns, const std::string& job,
                           std::uint32_t instance);
// Whether `id` was made by partitionIdFor with this prefix ('_' never occurs in Kubernetes names or in a
// valid prefix, so "<prefix>_" is unambiguous).
bool hasOperatorPrefix(const std::string& prefix, const std::string& id);
// A prefix is 1-16 characters from [a-z0-9-], starting with a letter or digit; InvalidArgument otherwise.
Status validatePartitionIdPrefix(const std::string& prefix);

// Partitions with this installation's prefix that no IPUJob in `jobs` lists in status.partitions as held. A
// job's recorded ids are written before the partition is created, so with `jobs` read after the partitions
// were listed, nothing still being created can be an orphan. Pure.
std::vector<std::string> orphanPartitionIds(const std::string& prefix,
                                            const std::vector<vipu::Partition>& partitions,
                                            const std::vector<Json>& jobs);

// Start-up cleanup (before any reconcile runs): removes the orphans of a process that died between
// creating a partition and its job's deletion. Returns the ids removed.
Result<std::vector<std::string>> removeOrphanPartitions(const std::string& prefix, vipu::VipuApi& vipu,
                                                        const kube::Store& jobs);

}  // namespace ipu::controllers
