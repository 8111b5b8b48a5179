#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "api/ipujob.h"
#include "api/ipujob_status.h"
#include "common/result.h"
#include "kube/rest_client.h"
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
// The id earlier builds gave the same instance (vipu::derivePartitionIdFnv48): a job they admitted still
// holds it. The same as partitionIdFor unless the id was shortened.
std::string partitionIdBeforeSha256For(const std::string& prefix, const std::string& ns,
                                       const std::string& job, std::uint32_t instance);
// Whether `record` names the partition `job`'s identity derives for its instance under `prefix`, or under
// `legacyPrefix` (may be empty: ids derived under a former default prefix are the job's too), by this build's
// rule or an earlier one's. The operator acts only on such ids, never on one merely read back from status
// (which others can write).
bool partitionDerivedForJob(const api::PartitionRecord& record, const api::ObjectIdentity& job,
                            const std::string& prefix, const std::string& legacyPrefix);
// Whether `id` was made by partitionIdFor with this prefix ('_' never occurs in Kubernetes names or in a
// valid prefix, so "<prefix>_" is unambiguous).
bool hasOperatorPrefix(const std::string& prefix, const std::string& id);
// A prefix is 1-16 characters from [a-z0-9-], starting with a letter or digit; InvalidArgument otherwise.
Status validatePartitionIdPrefix(const std::string& prefix);

// Partitions with this installation's prefix that no IPUJob in `jobs` lists in status.partitions as held
// (with the size it recorded: one of another size under a held id is an earlier job's leftover). A job's
// recorded ids are written before the partition is created, so with `jobs` read after the partitions were
// listed, nothing still being created can be an orphan. Pure.
std::vector<std::string> orphanPartitionIds(const std::string& prefix,
                                            const std::vector<vipu::Partition>& partitions,
                                            const std::vector<Json>& jobs);

// Removes the partitions no IPUJob holds (a process that died between creating a partition and recording
// its release, a job whose finalizer was removed by hand, a controller configured again): at start-up,
// before any reconcile runs, and then periodically.
//
// A periodic sweep runs while reconciles create partitions, so it never trusts a cache: IPUJobs are listed
// from the API server after the partitions were listed (a job's ids are written before its partitions are
// created), and a partition is removed only when the previous sweep found it orphaned too.
// With dryRun nothing is removed; what would be is logged.
class OrphanSweeper {
 public:
  OrphanSweeper(kube::RestClient& client, std::string prefix, bool dryRun)
      : client_(client), prefix_(std::move(prefix)), dryRun_(dryRun) {}

  // One sweep of one V-IPU controller; returns the ids removed (or, dry, that would be). `confirmed`:
  // remove only the orphans the previous sweep of this controller found too (periodic sweeps); false:
  // every orphan now (at start-up, when nothing else acts on partitions).
  Result<std::vector<std::string>> sweep(const std::string& controller, vipu::VipuApi& vipu, bool confirmed);

 private:
  kube::RestClient& client_;
  std::string prefix_;
  bool dryRun_;
  std::map<std::string, std::set<std::string>> candidates_;  // per controller: orphans of its last sweep
};

}  // namespace ipu::controllers
