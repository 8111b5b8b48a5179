#include "vipu_proxy/proxy_policy.h"

#include <algorithm>

#include "api/ipujob.h"
#include "api/ipujob_status.h"
#include "common/json_access.h"
#include "ipujob/child_ownership.h"
#include "ipujob/claimed_workers.h"
#include "ipujob/orphan_partitions.h"
#include "ipujob/worker_observation.h"

namespace ipu::controllers {
namespace {

Error denied(const std::string& message) {
  return makeError(ErrorCode::kPermissionDenied, message);
}

std::string namespacedName(const Json& object) {
  const Json& metadata = member(object, "metadata");
  return stringMember(metadata, "namespace") + "/" + stringMember(metadata, "name");
}

bool beingDeleted(const Json& pod) {
  return !member(member(pod, "metadata"), "deletionTimestamp").is_null();
}

// Text a caller sent, in a message: quoted, bounded and printable, whatever it was.
std::string quotedFromCaller(std::string_view text) {
  constexpr std::size_t kMax = 80;
  std::string out = "'";
  for (char c : text.substr(0, kMax)) out += (c >= 0x20 && c < 0x7f) ? c : '?';
  return out + (text.size() > kMax ? "...'" : "'");
}

// "no live pod has it" when every pod at the address has finished or is being deleted, naming one.
std::string whyNoLivePod(const std::string& address, const std::vector<kube::ObjectPtr>& podsAt) {
  if (podsAt.empty()) return "no worker pod of an IPUJob has address " + address;
  const Json& pod = *podsAt.front();
  return "address " + address + " was pod " + namespacedName(pod) + "'s, which " +
         (podFinished(pod) ? "has finished" : "is being deleted") +
         ": it may be another pod's now, so it identifies nobody";
}

std::string listOf(const std::vector<kube::ObjectPtr>& pods) {
  std::string names;
  for (const kube::ObjectPtr& pod : pods) names += (names.empty() ? "" : ", ") + namespacedName(*pod);
  return names;
}

// The job's held partitions the operator derives for it, on the controller of its first (as the partition
// steps read them: a job's partitions are all placed on one controller).
void grantPartitions(ProxyCaller& caller, const Json& job, const PartitionIdPrefixes& prefixes) {
  const api::ObjectIdentity identity = api::identityOf(job);
  for (const api::PartitionRecord& record : api::heldPartitionsOf(job)) {
    if (!partitionDerivedForJob(record, identity, prefixes.current, prefixes.legacy)) continue;
    if (caller.controller.empty()) caller.controller = record.controller;
    if (record.controller == caller.controller) caller.partitions.push_back(record.id);
  }
}

}  // namespace

std::string_view vipuCallName(VipuCall call) {
  switch (call) {
    case VipuCall::kListPartitions:
      return "ListPartitions";
    case VipuCall::kListIpuAttributes:
      return "ListIPUAttributes";
    case VipuCall::kCreatePartition:
      return "CreatePartition";
    case VipuCall::kRemovePartition:
      return "RemovePartition";
    case VipuCall::kResetPartition:
      return "ResetPartition";
    case VipuCall::kGetPartitionIpuofConfig:
      return "GetPartitionIpuofConfig";
    case VipuCall::kGetPartitionStatus:
      return "GetPartitionStatus";
  }
  return "unknown call";
}

bool ProxyCaller::mayUse(std::string_view partitionId) const {
  return std::find(partitions.begin(), partitions.end(), partitionId) != partitions.end();
}

Result<ProxyCaller> identifyCaller(const std::string& address, const std::vector<kube::ObjectPtr>& podsAt,
                                   const kube::Store& jobs, const PartitionIdPrefixes& prefixes) {
  std::vector<kube::ObjectPtr> live;
  std::copy_if(podsAt.begin(), podsAt.end(), std::back_inserter(live),
               [](const kube::ObjectPtr& pod) { return !podFinished(*pod) && !beingDeleted(*pod); });
  if (live.empty()) return denied(whyNoLivePod(address, podsAt));
  if (live.size() > 1) {
    return denied("address " + address + " is shared by " + std::to_string(live.size()) + " pods (" +
                  listOf(live) + "): it identifies none of them");
  }
  const Json& pod = *live.front();
  const std::string podName = namespacedName(pod);
  const Json& status = member(pod, "status");
  if (stringMember(status, "hostIP") == stringMember(status, "podIP")) {
    return denied("pod " + podName +
                  " uses its node's network (hostNetwork): every process of the node has its " + "address " +
                  address + ", so the address identifies nobody");
  }
  const Json* owner = controllerReferenceOf(pod);
  if (owner == nullptr || !isIpuJobReference(*owner)) {
    return denied("pod " + podName + " at " + address + " is not controlled by an IPUJob");
  }
  const std::string ns = stringMember(member(pod, "metadata"), "namespace");
  const std::string jobName = ns + "/" + stringMember(*owner, "name");
  const kube::ObjectPtr job = jobs.get(jobName);
  if (!job)
    return denied("pod " + podName + " names IPUJob " + jobName + " as its controller, which does not exist");
  const ClaimedPods claimed = claimPods({live.front()}, api::identityOf(*job));
  if (claimed.workers.empty()) {
    return denied("pod " + podName + " is not a worker of IPUJob " + jobName + ": " +
                  claimed.impostors.front().why);
  }
  ProxyCaller caller{.pod = podName, .job = jobName};
  grantPartitions(caller, *job, prefixes);
  return caller;
}

Status authorizeCall(const ProxyCaller& caller, VipuCall call, std::string_view partitionId) {
  const std::string who = "pod " + caller.pod + " (IPUJob " + caller.job + ")";
  switch (call) {
    case VipuCall::kListPartitions:
      return {};
    case VipuCall::kListIpuAttributes:
      if (caller.controller.empty()) {
        return denied(who +
                      " may not call ListIPUAttributes: its job holds no partitions, so it has no V-IPU " +
                      "controller to ask");
      }
      return {};
    case VipuCall::kCreatePartition:
    case VipuCall::kRemovePartition:
      return denied(who + " may not call " + std::string(vipuCallName(call)) + " (partition " +
                    quotedFromCaller(partitionId) + "): only the operator creates and removes partitions");
    case VipuCall::kResetPartition:
    case VipuCall::kGetPartitionIpuofConfig:
    case VipuCall::kGetPartitionStatus:
      break;
  }
  if (caller.mayUse(partitionId)) return {};
  return denied(std::string(vipuCallName(call)) + ": partition " + quotedFromCaller(partitionId) +
                " is not one of IPUJob " + caller.job + "'s partitions; pod " + caller.pod +
                " may act only on its own job's");
}

}  // namespace ipu::controllers
