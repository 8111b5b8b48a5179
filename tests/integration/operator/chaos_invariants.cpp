#include "chaos_invariants.h"

#include <algorithm>

#include "held_ipus.h"

namespace ipu::testing {
namespace {

using Json = nlohmann::json;

bool livePod(const Json& pod) {
  const std::string phase = pod.value("status", Json::object()).value("phase", "");
  return phase != "Succeeded" && phase != "Failed";
}

std::string label(const Json& object, const std::string& key) {
  return object["metadata"].value("labels", Json::object()).value(key, "");
}

std::string podKey(const Json& pod) {
  return pod["metadata"].value("namespace", "") + "/" + pod["metadata"].value("name", "");
}

// The partition the pod was given (the operator's IPUOF_VIPU_API_PARTITION_ID, in every container).
std::string partitionOf(const Json& pod) {
  const Json& containers = pod["spec"].value("containers", Json::array());
  if (containers.empty()) return "";
  for (const Json& env : containers[0].value("env", Json::array())) {
    if (env.value("name", "") == "IPUOF_VIPU_API_PARTITION_ID") return env.value("value", "");
  }
  return "";
}

std::string ownerUid(const Json& object) {
  for (const Json& owner : object["metadata"].value("ownerReferences", Json::array())) {
    if (owner.value("controller", false)) return owner.value("uid", "");
  }
  return "";
}

}  // namespace

ChaosInvariants::ChaosInvariants(std::string prefix, std::map<std::string, int> quotaOf,
                                 std::chrono::seconds orphanGrace)
    : prefix_(std::move(prefix)), quotaOf_(std::move(quotaOf)), orphanGrace_(orphanGrace) {}

void ChaosInvariants::check(const ChaosSnapshot& snapshot) {
  ++snapshots_;
  for (const vipu::Partition& partition : snapshot.partitions) {
    std::vector<std::string>& ipus = ipusOf_[partition.id];
    ipus.clear();
    for (const vipu::PartitionIpu& ipu : partition.spec.ipus) {
      ipus.push_back("ild" + std::to_string(ipu.ildTopologyId) + ":" + std::to_string(ipu.topologyId));
    }
    if (partition.readyState == vipu::ReadyState::kError) inError_.insert(partition.id);
  }
  maxLivePods_ = std::max(
      maxLivePods_, static_cast<int>(std::count_if(snapshot.pods.begin(), snapshot.pods.end(), livePod)));
  checkWorkers(snapshot.pods);
  checkIpus(snapshot.pods);
  checkOwners(snapshot);
  checkQuotas(snapshot.jobs);
}

void ChaosInvariants::checkWorkers(const Json& pods) {
  std::map<std::string, std::vector<std::string>> podsOfWorker;
  for (const Json& pod : pods) {
    if (!livePod(pod)) continue;
    const std::string worker =
        pod["metadata"].value("namespace", "") + "/" + label(pod, "graphcore.ai/ipujob") + " instance " +
        label(pod, "graphcore.ai/job-instance") + " worker " + label(pod, "graphcore.ai/worker-index");
    podsOfWorker[worker].push_back(podKey(pod) + " (attempt " + label(pod, "graphcore.ai/attempt") + ")");
  }
  for (const auto& [worker, live] : podsOfWorker) {
    if (live.size() < 2) continue;
    std::string what = "two live pods of " + worker + ":";
    for (const std::string& pod : live) what += " " + pod;
    violation("worker " + worker, what);
  }
}

void ChaosInvariants::checkIpus(const Json& pods) {
  std::map<std::string, std::map<std::string, std::string>> jobsOnIpu;  // IPU -> job uid -> a pod of it
  for (const Json& pod : pods) {
    if (!livePod(pod)) continue;
    const auto ipus = ipusOf_.find(partitionOf(pod));
    if (ipus == ipusOf_.end()) continue;  // never listed: not made yet when V-IPU was asked
    for (const std::string& ipu : ipus->second) jobsOnIpu[ipu][ownerUid(pod)] = podKey(pod);
  }
  for (const auto& [ipu, jobs] : jobsOnIpu) {
    if (jobs.size() < 2) continue;
    std::string what = "IPU " + ipu + " used by live pods of " + std::to_string(jobs.size()) + " jobs:";
    for (const auto& [uid, pod] : jobs) what += " " + pod;
    violation("ipu " + ipu, what);
  }
}

void ChaosInvariants::checkOwners(const ChaosSnapshot& snapshot) {
  std::set<std::string> held;
  for (const Json& job : snapshot.jobs) {
    for (const Json& record : job.value("status", Json::object()).value("partitions", Json::array())) {
      if (isHeldRecord(record)) held.insert(record.value("id", ""));
    }
  }
  std::set<std::string> listed;
  for (const vipu::Partition& partition : snapshot.partitions) {
    if (partition.id.rfind(prefix_ + "_", 0) != 0) continue;
    listed.insert(partition.id);
    if (held.contains(partition.id)) {
      unownedSince_.erase(partition.id);
      continue;
    }
    const auto since = unownedSince_.try_emplace(partition.id, snapshot.at).first->second;
    orphansSeen_.insert(partition.id);
    const auto unowned = std::chrono::duration_cast<std::chrono::seconds>(snapshot.at - since);
    if (unowned > orphanGrace_) {
      violation("orphan " + partition.id, "partition " + partition.id + " held by no IPUJob for " +
                                              std::to_string(unowned.count()) + " s");
    }
  }
  std::erase_if(unownedSince_, [&](const auto& entry) { return !listed.contains(entry.first); });
}

void ChaosInvariants::checkQuotas(const Json& jobs) {
  std::map<std::string, int> heldBy;
  for (const Json& job : jobs) {
    heldBy[job["metadata"].value("namespace", "")] += heldIpus(job);
  }
  for (const auto& [ns, held] : heldBy) {
    const auto quota = quotaOf_.find(ns);
    if (quota == quotaOf_.end() || held <= quota->second) continue;
    violation("quota " + ns, ns + " held " + std::to_string(held) + " IPUs over its quota of " +
                                 std::to_string(quota->second));
  }
}

void ChaosInvariants::violation(const std::string& key, const std::string& what) {
  if (reported_.insert(key).second) violations_.push_back(what);
}

}  // namespace ipu::testing
