#include "ipujob/partition_steps.h"

#include <algorithm>

#include "common/failpoint.h"
#include "common/json_access.h"
#include "common/log.h"
#include "ipujob/orphan_partitions.h"
#include "vipu/ipu_block.h"

namespace ipu::controllers {
namespace {

bool refusedForThePlacement(const Error& error) {
  return error.code == ErrorCode::kInvalidArgument || error.code == ErrorCode::kFailedPrecondition ||
         error.code == ErrorCode::kNotFound;
}

// CreatePartition said ALREADY_EXISTS: nullopt when the existing partition is exactly the one requested, else
// what the job waits for (it is not this job's, or it went while being created).
Result<std::optional<Blocked>> sameAsRequested(vipu::VipuApi& api, const std::string& id,
                                               const std::vector<vipu::PartitionIpu>& ipus) {
  auto existing = api.listPartitions("");
  if (!existing) return existing.error();
  for (const auto& partition : *existing) {
    if (partition.id != id) continue;
    if (partition.spec.ipus == ipus) return std::optional<Blocked>();
    return std::optional<Blocked>(Blocked{"V-IPU partition " + id +
                                          " already exists on other IPUs than this job asked for: it is "
                                          "not this job's; waiting for it to be removed"});
  }
  return std::optional<Blocked>(Blocked{"V-IPU partition " + id + " was removed while being created"});
}

// Where a partition V-IPU lists is, as describeIpus writes it in status; "" when its IPUs are not one block
// of the topology (then it cannot be one the operator planned).
std::string ipusOf(const vipu::Topology& topology, const vipu::Partition& partition) {
  auto block = vipu::blockOfIpus(topology, partition.spec.ipus);
  return block ? describeIpus(topology, *block) : "";
}

}  // namespace

std::string describeIpus(const vipu::Topology& topology, const vipu::IpuBlock& block) {
  const auto last = block.end() - 1;
  return "ild" + std::to_string(topology.ildOf(block.first)) + ":" +
         std::to_string(topology.topologyIdOf(block.first)) + "-" +
         std::to_string(topology.topologyIdOf(last)) +
         (topology.ildOf(last) != topology.ildOf(block.first) ? "@ild" + std::to_string(topology.ildOf(last))
                                                              : "");
}

bool PartitionSteps::derivedForJob(const JobPass& pass, const api::PartitionRecord& record) const {
  return partitionDerivedForJob(record, pass.identity, prefix_, legacyPrefix_);
}

void PartitionSteps::abandon(const JobPass& pass, api::PartitionRecord& partition, const std::string& reason,
                             const std::string& message) {
  partition.state = kPartitionAbandoned;
  events_.record(kube::referenceTo(pass.object), kube::EventType::kWarning, reason, message);
  log::warning("let go of a partition without removing it",
               {{"job", pass.key}, {"partition", partition.id}, {"reason", reason}});
}

Result<PartitionsState> PartitionSteps::ensure(JobPass& pass, const api::IpuJobSpec& spec) {
  auto state = inspect(pass, spec);
  // V-IPU (or the topology it reports) says a precondition does not hold yet: only a change outside this job
  // can clear it, so the job waits, saying why, rather than backing off on an error.
  if (!state && state.error().code == ErrorCode::kFailedPrecondition) {
    PartitionsState blocked;
    blocked.kind = PartitionsState::Kind::kBlocked;
    blocked.message = state.error().message;
    return blocked;
  }
  return state;
}

Result<PartitionsState> PartitionSteps::inspect(JobPass& pass, const api::IpuJobSpec& spec) {
  const auto held = pass.status.heldPartitions();
  PartitionsState state;
  for (const auto& record : held) {
    if (derivedForJob(pass, record)) continue;
    state.kind = PartitionsState::Kind::kNotOwned;
    state.message = "status.partitions names V-IPU partition " + record.id + " for instance " +
                    std::to_string(record.instance) +
                    ", which is not this job's: the operator acts only on the partitions it derives from "
                    "the job's identity";
    return state;
  }
  const std::string controller = held.at(0).controller;
  state.target = controllers_.find(controller);
  if (state.target == nullptr) {
    // Retrying cannot help: only a change of the operator's flags could, and a restart would run it again.
    state.kind = PartitionsState::Kind::kControllerUnknown;
    state.message = "The job's partitions are on a V-IPU controller this operator is not configured with: " +
                    unknownControllerMessage(controller, controllers_.targets());
    return state;
  }
  auto planner = controllers_.planner(controller);
  if (!planner) return planner.error();
  state.planner = *planner;
  auto existing = readOwn(*state.target, held);
  if (!existing) return existing.error();
  state.byId = std::move(*existing);

  std::vector<api::PartitionRecord> missing;
  for (const auto& partition : held) {
    if (state.byId.contains(partition.id)) continue;
    if (partition.state == kPartitionActive) {
      // Active once, so it was created and then removed (by hand, or by V-IPU itself) under the pods using
      // it.
      state.kind = PartitionsState::Kind::kLost;
      state.message =
          "V-IPU partition " + partition.id + " was Active and has disappeared from " + state.target->name;
      inventory_.partitionRemoved(controller, partition.id);  // its IPUs are free for the inventory too
      return state;
    }
    missing.push_back(partition);
  }
  if (!missing.empty()) {
    auto created = createMissing(pass, spec, *state.target, missing);
    // Refused: perhaps the planned IPUs were taken outside the operator after the inventory last read V-IPU
    // (a partition made by hand, another installation). Then the job goes back to the queue, planned again
    // from a fresh read, instead of waiting for a change that will never come.
    const bool refused = !created && created.error().retryClass() != RetryClass::kTransient;
    if (refused && admitter_.takenElsewhere(pass.key, state.target->name, missing)) {
      state.kind = PartitionsState::Kind::kNoLongerFits;
      return state;
    }
    if (!created) return created.error();
    state.kind = created->kind;
    state.message = created->message;
    state.createdNow = created->createdNow;
    return state;
  }
  admitter_.end(pass.key, ReservationEnd::kPartitionsExist);  // V-IPU lists them from now on
  for (const auto& partition : held) {
    const auto& current = state.byId.at(partition.id);
    // Not the partition this job recorded (one left under the same id by an earlier job of this name, or
    // made by someone else): never adopted, waited on until it is removed.
    if (static_cast<int>(current.size()) != partition.size) {
      state.kind = PartitionsState::Kind::kBlocked;
      state.message = "V-IPU partition " + partition.id + " exists with " + std::to_string(current.size()) +
                      " IPUs where this job recorded " + std::to_string(partition.size) +
                      ": it is not this job's; waiting for it to be removed";
      return state;
    }
    if (const std::string where = ipusOf(state.planner->topology(), current);
        !partition.ipus.empty() && where != partition.ipus) {
      state.kind = PartitionsState::Kind::kBlocked;
      state.message = "V-IPU partition " + partition.id + " exists on IPUs " + where +
                      " where this job recorded " + partition.ipus +
                      ": it is not this job's; waiting for it to be removed";
      return state;
    }
    if (current.readyState == vipu::ReadyState::kError) {
      state.kind = PartitionsState::Kind::kError;
      state.message = "V-IPU partition " + current.id + " is in error";
      return state;
    }
  }
  // Every partition is the job's, where it recorded it: pods may be made while the rest activate.
  for (const auto& partition : held) {
    if (state.byId.at(partition.id).readyState != vipu::ReadyState::kActive) return state;  // kActivating
  }
  for (auto& partition : pass.status.partitions) {
    if (partition.held()) partition.state = kPartitionActive;
  }
  state.kind = PartitionsState::Kind::kActive;
  return state;
}

Result<std::map<std::string, vipu::Partition>> PartitionSteps::readOwn(
    const VipuTarget& target, const std::vector<api::PartitionRecord>& held) {
  const auto view = inventory_.view(target.name);
  // The view is in id order: a pass costs O(log n) in the partitions of the POD, not a scan of them all.
  const auto listed = [&view](const std::string& id) -> const vipu::Partition* {
    if (!view) return nullptr;
    const auto found = std::lower_bound(
        view->partitions.begin(), view->partitions.end(), id,
        [](const vipu::Partition& partition, const std::string& key) { return partition.id < key; });
    return found != view->partitions.end() && found->id == id ? &*found : nullptr;
  };
  std::map<std::string, vipu::Partition> own;
  bool unlisted = false;
  for (const auto& record : held) {
    auto status = target.api->getPartitionStatus(record.id);
    if (!status && status.error().code == ErrorCode::kNotFound) continue;
    if (!status) return status.error();
    if (status->readyState == vipu::ReadyState::kRemoved) continue;
    const vipu::Partition* known = listed(record.id);
    if (known == nullptr) {
      unlisted = true;  // made since the inventory's last read, and not by this operator
      break;
    }
    vipu::Partition partition = *known;
    partition.readyState = status->readyState;
    own.emplace(record.id, std::move(partition));
  }
  if (!unlisted) return own;
  // Only a list says on which IPUs a partition is: rare (a partition under one of the job's ids that the
  // inventory has not seen), so the whole list is read this once.
  auto all = target.api->listPartitions("");
  if (!all) return all.error();
  own.clear();
  for (auto& partition : *all) {
    for (const auto& record : held) {
      if (partition.id == record.id) own.emplace(record.id, partition);
    }
  }
  return own;
}

void PartitionSteps::planLostAgain(JobPass& pass, const PartitionsState& lost) {
  for (auto& partition : pass.status.partitions) {
    if (partition.held() && !lost.byId.contains(partition.id)) partition.state = kPartitionPlanned;
  }
}

Result<PartitionsState> PartitionSteps::createMissing(JobPass& pass, const api::IpuJobSpec& spec,
                                                      const VipuTarget& target,
                                                      const std::vector<api::PartitionRecord>& missing) {
  // Where this process's admission reserved them; after a restart of the operator (or for a lost partition),
  // placed again.
  std::vector<int> instances;
  for (const auto& partition : missing) instances.push_back(partition.instance);
  auto placed = admitter_.reservationFor(pass.key, target.name, instances,
                                         static_cast<std::uint32_t>(spec.ipusPerJobInstance));
  if (!placed) return placed.error();
  PartitionsState state;
  if (!placed->has_value()) {
    state.kind = PartitionsState::Kind::kNoLongerFits;
    return state;
  }
  const Admission& admission = **placed;
  if (admission.placedNow) {
    // Placed anew: status says where now, before any partition is created there (as for the ids: a crash
    // after CreatePartition must leave a partition on the IPUs status names, or it is not adopted). The
    // reservation holds the placement until the next pass creates it.
    bool moved = false;
    for (auto& record : pass.status.partitions) {
      const vipu::InstancePlacement* placement = admission.placementOf(record.instance);
      if (!record.held() || placement == nullptr) continue;
      std::string where = describeIpus(admission.planner->topology(), placement->block);
      moved = moved || where != record.ipus;
      record.ipus = std::move(where);
    }
    if (moved) return state;  // kActivating, nothing created yet: polled again after the status write
  }
  auto blocked = create(pass, target, missing, admission);
  if (!blocked) return blocked.error();
  if (*blocked) {
    state.kind = PartitionsState::Kind::kBlocked;
    state.message = (*blocked)->message;
    return state;
  }
  state.kind = PartitionsState::Kind::kActivating;
  state.createdNow = true;
  return state;
}

Result<std::optional<Blocked>> PartitionSteps::create(const JobPass& pass, const VipuTarget& target,
                                                      const std::vector<api::PartitionRecord>& partitions,
                                                      const Admission& admission) {
  for (const auto& partition : partitions) {
    const vipu::InstancePlacement* placement = admission.placementOf(partition.instance);
    if (placement == nullptr) {
      return makeError(ErrorCode::kInternal, "no placement was planned for partition " + partition.id);
    }
    auto created = target.api->createPartition(
        vipu::makePartitionRequest(partition.id, admission.planner->topology(), *placement));
    if (!created && created.error().code != ErrorCode::kAlreadyExists) {
      // Refused for what was asked (not for being unreachable): the IPUs planned on may have left the POD.
      // The topology is read again before the next plan, since V-IPU announces no change of it.
      if (refusedForThePlacement(created.error())) inventory_.invalidateTopology(target.name);
      return created.error();
    }
    // ALREADY_EXISTS: ours only if it is what this job asked for (an earlier attempt whose answer was
    // lost); anything else under the id is never adopted.
    if (!created) {
      auto same = sameAsRequested(*target.api, partition.id, placement->ipus);
      if (!same || *same) return same;
    }
    vipu::Partition known;
    known.id = partition.id;
    known.spec.ipus = placement->ipus;
    known.readyState = vipu::ReadyState::kPending;
    inventory_.partitionCreated(target.name, std::move(known));
    // A log line, not an Event: status.partitions shows it, and an Event per routine step would cost every
    // job a write at the client's QPS (the job's Events are its decisions and its troubles).
    log::info("created partition", {{"job", pass.key},
                                    {"partition", partition.id},
                                    {"ipus", std::to_string(partition.size)},
                                    {"controller", target.name}});
    failpoint("ipujob/after-partition-created");
  }
  return std::optional<Blocked>();
}

Status PartitionSteps::reset(const JobPass& pass) {
  for (const auto& partition : pass.status.heldPartitions()) {
    const VipuTarget* target = controllers_.find(partition.controller);
    if (target == nullptr) {
      return makeError(ErrorCode::kFailedPrecondition,
                       "cannot reset partition " + partition.id + ": " +
                           unknownControllerMessage(partition.controller, controllers_.targets()));
    }
    auto reset = target->api->resetPartition(partition.id);
    // Gone (lost, or not created yet): no pod can reach its IPUs, which is what a reset is for.
    if (!reset && reset.error().code == ErrorCode::kNotFound) continue;
    if (!reset) return reset.error();
    events_.record(
        kube::referenceTo(pass.object), kube::EventType::kNormal, "PartitionReset",
        "Reset V-IPU partition " + partition.id + " for restart " + std::to_string(pass.attempt()));
  }
  return {};
}

Status PartitionSteps::release(JobPass& pass) {
  for (auto& partition : pass.status.partitions) {
    if (!partition.held()) continue;
    if (!derivedForJob(pass, partition)) {
      abandon(pass, partition, "PartitionNotOwned",
              "Left V-IPU partition " + partition.id +
                  " untouched: status.partitions names it, but it is not "
                  "the partition this job's identity derives, so it is not this job's to remove");
      continue;
    }
    const VipuTarget* target = controllers_.find(partition.controller);
    if (target == nullptr) {
      // Nobody here can remove it: the job lets go (so it can end and be deleted) and the admin is told.
      abandon(pass, partition, "PartitionAbandoned",
              "Could not release V-IPU partition " + partition.id + ": " +
                  unknownControllerMessage(partition.controller, controllers_.targets()) +
                  ". Remove it on that controller (vipu remove partition " + partition.id +
                  "), or configure the controller again and its orphan sweep removes it");
      continue;
    }
    auto removed = target->api->removePartition(partition.id, /*force=*/true);
    if (!removed && removed.error().code != ErrorCode::kNotFound) return removed.error();
    inventory_.partitionRemoved(partition.controller, partition.id);
    partition.state = kPartitionReleased;
    log::info("removed partition", {{"job", pass.key}, {"partition", partition.id}});
  }
  admitter_.end(pass.key, ReservationEnd::kReleased);
  return {};
}

}  // namespace ipu::controllers
