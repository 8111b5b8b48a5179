#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"
#include "kube/store.h"

namespace ipu::controllers {

// The seven calls of virmgrpc.UserService, as the V-IPU proxy decides on them.
enum class VipuCall {
  kListPartitions,
  kListIpuAttributes,
  kCreatePartition,
  kRemovePartition,
  kResetPartition,
  kGetPartitionIpuofConfig,
  kGetPartitionStatus,
};

// The call's name on the wire ("GetPartitionStatus").
std::string_view vipuCallName(VipuCall call);

// How the operator derives a job's partition ids (ReconcilerOptions' prefixes): a partition is a job's only
// when its id derives from the job's identity under one of them.
struct PartitionIdPrefixes {
  std::string current;
  std::string legacy;  // may be empty
};

// A worker pod calling the proxy, and what its job may use.
struct ProxyCaller {
  std::string pod;         // "namespace/name"
  std::string job;         // "namespace/name" of the IPUJob whose worker it is
  std::string controller;  // the V-IPU controller its job's partitions are on; "" when it holds none
  // The job's held partitions (status.partitions) whose ids the operator derives for the job: an id in status
  // alone is never trusted, since more than the operator may be able to write status.
  std::vector<std::string> partitions;

  bool mayUse(std::string_view partitionId) const;
};

// Who calls from `address`, given the pod cache's pods with that address (podsAt, PodsByAddress) and the
// IPUJob cache. Pure. PermissionDenied, saying why, unless exactly one live pod has the address and it is a
// claimed worker of an IPUJob (claimPods: the job's namespace, a controller ownerReference to its uid and
// kind, the attempt label). A finished pod or one being deleted is not live: its address may already be
// another pod's. A pod on its node's network (podIP is hostIP) is never identified: every process of the
// node shares its address.
Result<ProxyCaller> identifyCaller(const std::string& address, const std::vector<kube::ObjectPtr>& podsAt,
                                   const kube::Store& jobs, const PartitionIdPrefixes& prefixes);

// Whether `caller` may make `call` on `partitionId` (ignored by the calls that name no partition). Pure.
// Listing is allowed (the proxy filters the reply to caller.partitions); so are ListIPUAttributes, which
// names no partition, and status, IPUoF configuration and reset of the caller's own partitions.
// CreatePartition and RemovePartition are the operator's alone: always denied. Anything naming another
// partition is denied, naming the partition and the pod. PermissionDenied when not allowed.
Status authorizeCall(const ProxyCaller& caller, VipuCall call, std::string_view partitionId);

}  // namespace ipu::controllers
