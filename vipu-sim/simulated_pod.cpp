#include "vipu-sim/simulated_pod.h"

#include <algorithm>
#include <set>

#include "vipu-sim/hardware_model.h"
#include "vipu/ipu_set.h"
#include "vipu/partition_id.h"
#include "vipu/partition_planner.h"

namespace ipu::vipu::sim {
namespace {

std::string quoted(const std::string& text) {
  return "'" + text + "'";
}

std::string ildList(const std::vector<std::uint32_t>& ilds) {
  std::string text;
  for (std::uint32_t ild : ilds) text += (text.empty() ? "" : ",") + std::to_string(ild);
  return text;
}

Status checkSameCluster(const SimState& loaded, const Topology& topology,
                        const std::vector<SimAllocation>& allocations, const std::string& path) {
  if (!(loaded.topology == topology)) {
    return makeError(ErrorCode::kFailedPrecondition,
                     "state file '" + path + "' holds " + loaded.topology.describe() +
                         " but this vipu-sim serves " + topology.describe() +
                         "; start it with the same topology, or move the file away");
  }
  if (loaded.allocations != allocations) {
    std::string stored;
    for (const SimAllocation& allocation : loaded.allocations) {
      stored += (stored.empty() ? "" : " ") + allocation.id + "=" + ildList(allocation.ilds);
    }
    return makeError(ErrorCode::kFailedPrecondition,
                     "state file '" + path + "' holds other allocations (" + stored +
                         "); start vipu-sim with the same --allocation flags");
  }
  return {};
}

}  // namespace

Result<std::unique_ptr<SimulatedPod>> SimulatedPod::open(const Topology& topology,
                                                         std::vector<SimAllocation> allocations,
                                                         SimBehaviour behaviour,
                                                         std::shared_ptr<FaultInjector> faults,
                                                         std::optional<StateFile> stateFile, SimClock clock) {
  if (allocations.empty()) {
    SimAllocation everything{"default", {}};
    for (std::uint32_t ild = 0; ild < topology.ildCount(); ++ild) everything.ilds.push_back(ild);
    allocations.push_back(std::move(everything));
  }
  SimState state{topology, std::move(allocations), {}};
  if (stateFile) {
    Result<std::optional<SimState>> loaded = stateFile->load();
    if (!loaded) return loaded.error();
    if (loaded->has_value()) {
      if (Status same = checkSameCluster(**loaded, topology, state.allocations, stateFile->path()); !same) {
        return same.error();
      }
      state = std::move(**loaded);
    } else if (Status saved = stateFile->save(state); !saved) {
      // Fail at start, not at the first CreatePartition, when the state cannot be written at all.
      return saved.error();
    }
  }
  if (!faults) faults = std::make_shared<FaultInjector>();
  return std::make_unique<SimulatedPod>(PrivateTag{}, std::move(state), std::move(behaviour),
                                        std::move(faults), std::move(stateFile), std::move(clock));
}

SimulatedPod::SimulatedPod(PrivateTag, SimState state, SimBehaviour behaviour,
                           std::shared_ptr<FaultInjector> faults, std::optional<StateFile> stateFile,
                           SimClock clock)
    : topology_(state.topology),
      behaviour_(std::move(behaviour)),
      faults_(std::move(faults)),
      stateFile_(std::move(stateFile)),
      clock_(std::move(clock)),
      state_(std::move(state)) {}

SimState SimulatedPod::snapshot() const {
  std::lock_guard lock(mutex_);
  return state_;
}

std::int64_t SimulatedPod::nowMs() const {
  return std::chrono::duration_cast<std::chrono::milliseconds>(clock_().time_since_epoch()).count();
}

Status SimulatedPod::commit(SimState next) {
  if (stateFile_) {
    if (Status saved = stateFile_->save(next); !saved) {
      return makeError(ErrorCode::kInternal,
                       "cannot persist the change, so it was not made: " + saved.error().message);
    }
  }
  state_ = std::move(next);
  return {};
}

PartitionStatus SimulatedPod::statusOf(const SimPartition& partition, std::int64_t now) const {
  PartitionStatus status;
  status.partitionId = partition.id;
  status.maxAutoResetRetries = partition.disableAutoReset ? 0 : behaviour_.maxAutoResetRetries;
  if (now < partition.resetUntilMs) {
    status.readyState = ReadyState::kPending;
    status.operationState = OperationState::kResetting;
  } else if (now < partition.activeAtMs) {
    status.readyState = ReadyState::kPending;
    status.operationState = OperationState::kCreating;
  } else if (partition.faulted) {
    status.readyState = ReadyState::kError;
    status.operationState = OperationState::kFailed;
    status.errors = partition.errors;
  } else {
    status.readyState = ReadyState::kActive;
    status.operationState = OperationState::kIdle;
  }
  return status;
}

Partition SimulatedPod::partitionOf(const SimPartition& stored, std::int64_t now) const {
  Partition partition;
  partition.id = stored.id;
  partition.spec.clusterId = topology_.clusterId();
  partition.spec.ipus = ipusOfBlock(topology_, stored.block);
  partition.spec.ipuLinkRouting = stored.ipuLinkRouting;
  partition.spec.syncType = stored.syncType;
  partition.spec.numGcds = stored.numGcds;
  partition.spec.numIpulinkSegments = static_cast<std::uint32_t>(ildsOfBlock(topology_, stored.block).size());
  partition.spec.reconfigurable = stored.reconfigurable;
  partition.spec.gatewayRouting = stored.gatewayRouting;
  partition.spec.numReplicas = stored.numReplicas;
  partition.spec.allocationId = stored.allocationId;
  partition.readyState = statusOf(stored, now).readyState;
  partition.ipuofServerVersion = behaviour_.ipuofServerVersion;
  return partition;
}

Result<const SimPartition*> SimulatedPod::find(const std::string& partitionId) const {
  if (partitionId.empty()) return makeError(ErrorCode::kInvalidArgument, "partition_id is empty");
  const auto found = state_.partitions.find(partitionId);
  if (found == state_.partitions.end()) {
    return makeError(ErrorCode::kNotFound, "partition " + quoted(partitionId) + " not found");
  }
  return &found->second;
}

Result<std::vector<Partition>> SimulatedPod::listPartitions(const std::string& allocationId) {
  std::lock_guard lock(mutex_);
  if (!allocationId.empty() && state_.findAllocation(allocationId) == nullptr) {
    return makeError(ErrorCode::kNotFound, "allocation " + quoted(allocationId) + " not found");
  }
  const std::int64_t now = nowMs();
  std::vector<Partition> partitions;
  for (const auto& [id, stored] : state_.partitions) {
    if (allocationId.empty() || stored.allocationId == allocationId)
      partitions.push_back(partitionOf(stored, now));
  }
  return partitions;
}

Result<std::vector<AgentIpuAttributes>> SimulatedPod::listIpuAttributes(
    const std::vector<std::string>& agents) {
  std::lock_guard lock(mutex_);
  std::vector<std::string> owner(topology_.totalIpus());
  for (const auto& [id, stored] : state_.partitions) {
    for (std::uint32_t ipu = stored.block.first; ipu < stored.block.end(); ++ipu) owner[ipu] = id;
  }
  std::set<std::string> wanted(agents.begin(), agents.end());
  std::vector<AgentIpuAttributes> result;
  for (std::uint32_t ild = 0; ild < topology_.ildCount(); ++ild) {
    for (std::uint32_t machine = 0; machine < topology_.machinesPerIld(); ++machine) {
      AgentIpuAttributes agent{agentName(ild, machine), {}};
      if (!wanted.empty() && wanted.erase(agent.agent) == 0) continue;
      for (std::uint32_t index = 0; index < Topology::kIpusPerMachine; ++index) {
        const std::uint32_t global = topology_.globalIpu(ild, machine * Topology::kIpusPerMachine + index);
        agent.ipus[global] = ipuAttributes(topology_, global, owner[global]);
      }
      result.push_back(std::move(agent));
    }
  }
  if (!wanted.empty()) {
    return makeError(ErrorCode::kNotFound, "unknown agent " + quoted(*wanted.begin()) +
                                               " (agents are named like " + agentName(0, 0) + ")");
  }
  return result;
}

Result<const SimAllocation*> SimulatedPod::allocationFor(const PartitionRequest& request) const {
  if (!request.allocationId.empty()) {
    const SimAllocation* allocation = state_.findAllocation(request.allocationId);
    if (allocation == nullptr) {
      return makeError(ErrorCode::kNotFound, "allocation " + quoted(request.allocationId) + " not found");
    }
    return allocation;
  }
  if (state_.allocations.size() == 1) return &state_.allocations.front();
  if (!request.ipus.empty()) {
    for (const SimAllocation& allocation : state_.allocations) {
      if (allocation.containsIld(request.ipus.front().ildTopologyId)) return &allocation;
    }
  }
  std::string names;
  for (const SimAllocation& allocation : state_.allocations)
    names += (names.empty() ? "" : ", ") + allocation.id;
  return makeError(ErrorCode::kInvalidArgument,
                   "allocation_id is required: this controller has allocations " + names);
}

Result<IpuBlock> SimulatedPod::placeExplicitly(const PartitionRequest& request,
                                               const SimAllocation& allocation) const {
  if (request.clusterId.empty()) {
    return makeError(ErrorCode::kInvalidArgument, "cluster_id is required when ipus are given");
  }
  if (request.ipus.size() != request.size) {
    return makeError(ErrorCode::kInvalidArgument, "size is " + std::to_string(request.size) + " but " +
                                                      std::to_string(request.ipus.size()) +
                                                      " IPUs are listed");
  }
  Result<IpuBlock> block = blockOfIpus(topology_, request.ipus);
  if (!block) return block.error();
  for (std::uint32_t ild : ildsOfBlock(topology_, *block)) {
    if (!allocation.containsIld(ild)) {
      return makeError(ErrorCode::kInvalidArgument, describeBlock(topology_, *block) +
                                                        " is not inside allocation " + quoted(allocation.id) +
                                                        " (ILDs " + ildList(allocation.ilds) + ")");
    }
  }
  for (const auto& [id, other] : state_.partitions) {
    if (other.block.overlaps(*block)) {
      return makeError(ErrorCode::kInvalidArgument, describeBlock(topology_, *block) +
                                                        " overlaps partition " + quoted(id) + " (" +
                                                        describeBlock(topology_, other.block) + ")");
    }
  }
  return block;
}

Result<IpuBlock> SimulatedPod::placeWithPlanner(const PartitionRequest& request,
                                                const SimAllocation& allocation) const {
  IpuSet outside(topology_.totalIpus());
  for (std::uint32_t ild = 0; ild < topology_.ildCount(); ++ild) {
    if (!allocation.containsIld(ild))
      outside.insert(IpuBlock{ild * topology_.ildSize(), topology_.ildSize()});
  }
  IpuSet taken(topology_.totalIpus());
  for (const auto& [id, other] : state_.partitions) taken.insert(other.block);
  const PartitionPlanner planner(topology_, outside);
  PlanResult plan = planner.plan(taken, GangRequest{1, request.size});
  if (plan.placed()) return plan.placements.front().block;
  const PlanRefusal& refusal = *plan.refusal;
  const ErrorCode code = refusal.reason == RefusalReason::kDoesNotFitNow ? ErrorCode::kResourceExhausted
                                                                         : ErrorCode::kInvalidArgument;
  return makeError(code, "allocation " + quoted(allocation.id) + ": " + refusal.message);
}

Result<std::string> SimulatedPod::createPartition(const PartitionRequest& request) {
  if (Status id = validatePartitionId(request.id); !id) return id.error();
  if (!isPowerOfTwo(request.size)) {
    return makeError(ErrorCode::kInvalidArgument,
                     "size must be a power of two (1, 2, 4, ...), got " + std::to_string(request.size));
  }
  if (request.size > topology_.maxPartitionSize()) {
    return makeError(ErrorCode::kInvalidArgument,
                     "size " + std::to_string(request.size) + " exceeds the largest partition of " +
                         topology_.describe() + " (" + std::to_string(topology_.maxPartitionSize()) + ")");
  }
  if (!request.clusterId.empty() && request.clusterId != topology_.clusterId()) {
    return makeError(ErrorCode::kInvalidArgument, "unknown cluster " + quoted(request.clusterId) +
                                                      " (this controller manages " +
                                                      quoted(topology_.clusterId()) + ")");
  }
  const std::uint32_t numGcds = request.numGcds == 0 ? 1 : request.numGcds;
  if (!isPowerOfTwo(numGcds) || numGcds > request.size) {
    return makeError(ErrorCode::kInvalidArgument, "num_gcds " + std::to_string(numGcds) +
                                                      " must be a power of two no larger than the size (" +
                                                      std::to_string(request.size) + ")");
  }
  const std::uint32_t numReplicas = request.numReplicas == 0 ? numGcds : request.numReplicas;
  if (numReplicas > request.size) {
    return makeError(ErrorCode::kInvalidArgument, "num_replicas " + std::to_string(numReplicas) +
                                                      " exceeds the number of IPUs (" +
                                                      std::to_string(request.size) + ")");
  }

  std::lock_guard lock(mutex_);
  if (state_.partitions.count(request.id) != 0) {
    return makeError(ErrorCode::kAlreadyExists, "partition " + quoted(request.id) + " already exists");
  }
  Result<const SimAllocation*> allocation = allocationFor(request);
  if (!allocation) return allocation.error();
  Result<IpuBlock> block =
      request.ipus.empty() ? placeWithPlanner(request, **allocation) : placeExplicitly(request, **allocation);
  if (!block) return block.error();
  const auto segments = static_cast<std::uint32_t>(ildsOfBlock(topology_, *block).size());
  if (request.numIpulinkSegments != 0 && request.numIpulinkSegments != segments) {
    return makeError(ErrorCode::kInvalidArgument,
                     "num_ipulink_segments is " + std::to_string(request.numIpulinkSegments) + " but " +
                         describeBlock(topology_, *block) + " spans " + std::to_string(segments) + " ILD(s)");
  }
  // After validation, so that an injected failure never hides a real error in the request.
  if (faults_->failThisCreate()) {
    return makeError(ErrorCode::kUnavailable,
                     "injected fault: CreatePartition failed (--create-failure-rate " +
                         std::to_string(faults_->options().createFailureRate) + ")");
  }

  SimPartition partition;
  partition.id = request.id;
  partition.allocationId = (*allocation)->id;
  partition.block = *block;
  partition.numGcds = numGcds;
  partition.numReplicas = numReplicas;
  partition.ipuLinkRouting = request.ipuLinkRouting;
  partition.syncType = request.syncType;
  partition.gatewayRouting = request.gatewayRouting;
  partition.reconfigurable = request.reconfigurable;
  partition.disableAutoReset = request.disableAutoReset;
  partition.createdAtMs = nowMs();
  partition.activeAtMs = partition.createdAtMs + behaviour_.activationDelay.count();
  if (faults_->faultThisPartition(request.id)) {
    partition.faulted = true;
    partition.errors.push_back("injected fault: IPU-Link training failed on " +
                               describeBlock(topology_, partition.block) +
                               " (--error-partition/--error-rate)");
  }
  SimState next = state_;
  next.partitions.emplace(partition.id, partition);
  if (Status committed = commit(std::move(next)); !committed) return committed.error();
  return request.id;
}

Status SimulatedPod::removePartition(const std::string& partitionId, bool /*force*/) {
  std::lock_guard lock(mutex_);
  Result<const SimPartition*> partition = find(partitionId);
  if (!partition) return partition.error();
  SimState next = state_;
  next.partitions.erase(partitionId);
  return commit(std::move(next));
}

Status SimulatedPod::resetPartition(const std::string& partitionId) {
  std::lock_guard lock(mutex_);
  Result<const SimPartition*> partition = find(partitionId);
  if (!partition) return partition.error();
  const std::int64_t now = nowMs();
  if (now < (*partition)->activeAtMs) {
    return makeError(
        ErrorCode::kFailedPrecondition,
        "partition " + quoted(partitionId) + " is still being created; reset it once it is active");
  }
  SimState next = state_;
  SimPartition& updated = next.partitions.at(partitionId);
  updated.resetUntilMs = now + behaviour_.resetDuration.count();
  updated.faulted = false;
  updated.errors.clear();
  ++updated.resetCount;
  return commit(std::move(next));
}

Result<IpuofConfig> SimulatedPod::getPartitionIpuofConfig(const std::string& partitionId,
                                                          std::optional<std::uint32_t> gcdId) {
  std::lock_guard lock(mutex_);
  Result<const SimPartition*> found = find(partitionId);
  if (!found) return found.error();
  const SimPartition& partition = **found;
  const PartitionStatus status = statusOf(partition, nowMs());
  if (status.readyState != ReadyState::kActive) {
    return makeError(ErrorCode::kFailedPrecondition,
                     "partition " + quoted(partitionId) + " is " + toString(status.readyState) + " (" +
                         toString(status.operationState) +
                         "); its IPUoF configuration exists once it is PS_ACTIVE");
  }
  if (gcdId && *gcdId >= partition.numGcds) {
    return makeError(ErrorCode::kInvalidArgument, "partition " + quoted(partitionId) + " has " +
                                                      std::to_string(partition.numGcds) +
                                                      " GCD(s); there is no GCD " + std::to_string(*gcdId));
  }
  IpuofConfig config;
  config.ipuLinkRouting = partition.ipuLinkRouting;
  config.syncType = partition.syncType;
  config.reconfigurable = partition.reconfigurable;
  config.gatewayRouting = partition.gatewayRouting;
  config.numIpulinkSegments = static_cast<std::uint32_t>(ildsOfBlock(topology_, partition.block).size());
  config.ipuofServerVersion = behaviour_.ipuofServerVersion;
  const std::uint32_t ipusPerGcd = partition.block.size / partition.numGcds;
  for (std::uint32_t gcd = 0; gcd < partition.numGcds; ++gcd) {
    if (gcdId && gcd != *gcdId) continue;
    GcdConfig gcdConfig;
    for (std::uint32_t device = 0; device < ipusPerGcd; ++device) {
      gcdConfig.devices.push_back(
          ipuofDevice(topology_, partition.block.first, gcd * ipusPerGcd + device, device));
    }
    gcdConfig.attributes = {{"gcd_id", std::to_string(gcd)},
                            {"num_ipus", std::to_string(ipusPerGcd)},
                            {"partition_id", partition.id}};
    config.gcds.push_back(std::move(gcdConfig));
  }
  return config;
}

Result<PartitionStatus> SimulatedPod::getPartitionStatus(const std::string& partitionId) {
  std::lock_guard lock(mutex_);
  Result<const SimPartition*> partition = find(partitionId);
  if (!partition) return partition.error();
  return statusOf(**partition, nowMs());
}

}  // namespace ipu::vipu::sim
