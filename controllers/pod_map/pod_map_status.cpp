#include "pod_map/pod_map_status.h"

#include <algorithm>
#include <map>
#include <tuple>
#include <utility>

#include "api/ipujob.h"
#include "api/ipujob_status.h"
#include "common/json_access.h"
#include "ipujob/orphan_partitions.h"
#include "vipu/ipu_set.h"

namespace ipu::controllers {
namespace {

struct JobHold {
  std::string uid;
  std::string since;
};

// Partition id -> the job holding it, for the jobs whose status records a held partition on `controller`
// under an id their identity derives.
std::map<std::string, JobHold> holdersById(const std::string& controller,
                                           const std::vector<std::shared_ptr<const api::JobSummary>>& jobs,
                                           const OwnPrefixes& prefixes) {
  std::map<std::string, JobHold> byId;
  for (const auto& job : jobs) {
    if (job->identity.uid.empty()) continue;
    for (const api::PartitionRecord& record : job->held) {
      if (record.controller != controller) continue;
      if (!partitionDerivedForJob(record, job->identity, prefixes.current, prefixes.legacy)) continue;
      byId[record.id] = {job->identity.uid, job->admittedAt};
    }
  }
  return byId;
}

bool ownId(const OwnPrefixes& prefixes, const std::string& id) {
  return hasOperatorPrefix(prefixes.current, id) ||
         (!prefixes.legacy.empty() && hasOperatorPrefix(prefixes.legacy, id));
}

}  // namespace

api::IpuPodStatus ipuPodStatusOf(const std::string& controller, const VipuInventory::View* view,
                                 const std::vector<std::shared_ptr<const api::JobSummary>>& jobs,
                                 const OwnPrefixes& prefixes) {
  api::IpuPodStatus status;
  status.controller = controller;
  if (view == nullptr) {
    status.readError = "not read yet";
    return status;
  }
  if (view->error) status.readError = view->error->message;
  if (!view->planner) return status;
  const vipu::Topology& topology = view->planner->topology();
  status.cluster = topology.clusterId();
  status.ilds = static_cast<int>(topology.ildCount());
  status.ildSize = static_cast<int>(topology.ildSize());
  status.ipusPerMachine = static_cast<int>(vipu::Topology::kIpusPerMachine);
  status.totalIpus = static_cast<int>(topology.totalIpus());

  const std::map<std::string, JobHold> jobsById = holdersById(controller, jobs, prefixes);
  // Holder key -> its IPUs and partitions: a job by uid; every unowned partition together, every external
  // one together (neither names anything a user could act on apart).
  struct Held {
    api::IpuPodHolder holder;
    std::vector<std::uint32_t> ipus;
  };
  std::map<std::string, Held> held;
  vipu::IpuSet taken(topology.totalIpus());
  for (const vipu::Partition& partition : view->partitions) {
    if (!partition.spec.clusterId.empty() && partition.spec.clusterId != topology.clusterId()) continue;
    std::string key;
    api::IpuPodHolder holder;
    if (const auto job = jobsById.find(partition.id); job != jobsById.end()) {
      key = "job/" + job->second.uid;
      holder = {api::kHolderJob, job->second.uid, "", 0, 0, job->second.since};
    } else if (ownId(prefixes, partition.id)) {
      key = api::kHolderUnowned;
      holder.kind = api::kHolderUnowned;
    } else {
      key = api::kHolderExternal;
      holder.kind = api::kHolderExternal;
    }
    Held& entry = held.try_emplace(key, Held{std::move(holder), {}}).first->second;
    ++entry.holder.partitions;
    for (const vipu::PartitionIpu& ipu : partition.spec.ipus) {
      if (ipu.ildTopologyId >= topology.ildCount() || ipu.topologyId >= topology.ildSize()) continue;
      const std::uint32_t global = topology.globalIpu(ipu.ildTopologyId, ipu.topologyId);
      entry.ipus.push_back(global);
      taken.insert(global);
    }
  }
  std::vector<std::pair<std::uint32_t, api::IpuPodHolder>> ordered;  // by first IPU
  for (auto& [key, entry] : held) {
    std::sort(entry.ipus.begin(), entry.ipus.end());
    entry.ipus.erase(std::unique(entry.ipus.begin(), entry.ipus.end()), entry.ipus.end());
    entry.holder.ipuCount = static_cast<int>(entry.ipus.size());
    entry.holder.ipus = api::formatIpuRanges(entry.ipus);
    ordered.emplace_back(entry.ipus.empty() ? ~0u : entry.ipus.front(), std::move(entry.holder));
  }
  // Then by kind and uid: a stable order for a stable object.
  std::sort(ordered.begin(), ordered.end(), [](const auto& a, const auto& b) {
    return std::tie(a.first, a.second.kind, a.second.jobUid) <
           std::tie(b.first, b.second.kind, b.second.jobUid);
  });
  for (auto& [first, holder] : ordered) status.holders.push_back(std::move(holder));
  const vipu::FreeSummary free = view->planner->summarize(taken, 1);
  status.freeIpus = static_cast<int>(free.freeIpus);
  status.largestFreeBlock = static_cast<int>(free.largestFreeBlock);
  return status;
}

Json ipuPodObject(const std::string& name, const api::IpuPodStatus& status) {
  return Json{{"apiVersion", "graphcore.ai/v1alpha1"},
              {"kind", "IPUPod"},
              {"metadata", {{"name", name}, {"labels", {{"app.kubernetes.io/managed-by", "ipu-operator"}}}}},
              {"status", api::toJson(status)}};
}

}  // namespace ipu::controllers
