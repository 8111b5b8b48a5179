#include "ipujob/admitter.h"

#include <map>
#include <memory>
#include <set>
#include <utility>

#include "api/ipujob.h"
#include "ipujob/job_status.h"
#include "ipujob/worker_pod.h"
#include "kube/resource.h"

namespace ipu::controllers {
namespace {

const Json& member(const Json& object, const char* name) {
  static const Json kNull;
  if (!object.is_object()) return kNull;
  auto it = object.find(name);
  return it == object.end() ? kNull : *it;
}

bool alive(const Json& job) {
  return member(member(job, "metadata"), "deletionTimestamp").is_null() &&
         !isTerminalPhase(member(member(job, "status"), "phase").is_string()
                              ? member(member(job, "status"), "phase").get<std::string>()
                              : "");
}

// Recorded partitions a job still holds (not released).
std::vector<Json> heldPartitions(const Json& job) {
  std::vector<Json> held;
  const Json& partitions = member(member(job, "status"), "partitions");
  if (!partitions.is_array()) return held;
  for (const Json& partition : partitions) {
    if (partition.value("state", "") != "Released") held.push_back(partition);
  }
  return held;
}

struct ControllerState {
  std::shared_ptr<const vipu::PartitionPlanner> planner;
  std::set<std::string> partitionIds;
  vipu::IpuSet taken;
};

}  // namespace

bool waitsForAdmission(const Json& job) {
  if (!alive(job)) return false;
  if (member(member(job, "spec"), "suspend") == Json(true)) return false;
  return heldPartitions(job).empty();
}

Admitter::Admitter(VipuControllers& controllers, const kube::Store& jobs, QueueingStrategy strategy)
    : controllers_(controllers), jobs_(jobs), strategy_(strategy) {}

Result<bool> Admitter::admit(const std::string& key, const Act& act) {
  std::lock_guard pass(passMutex_);
  const kube::ObjectPtr self = jobs_.get(key);
  if (!self || !waitsForAdmission(*self)) return false;

  std::map<std::string, ControllerState> states;
  std::map<std::string, Error> unreachable;
  for (const VipuTarget& target : controllers_.targets()) {
    auto planner = controllers_.planner(target.name);
    if (!planner) {
      unreachable.emplace(target.name, planner.error());
      continue;
    }
    auto partitions = target.api->listPartitions("");
    if (!partitions) {
      unreachable.emplace(target.name, partitions.error());
      continue;
    }
    auto taken = vipu::IpuSet::fromPartitions((*planner)->topology(), *partitions);
    if (!taken) {
      // An IPU outside the topology we know: the POD changed shape. Read it again next time.
      controllers_.invalidate(target.name);
      unreachable.emplace(target.name, taken.error());
      continue;
    }
    ControllerState state{*planner, {}, std::move(*taken)};
    for (const auto& partition : *partitions) state.partitionIds.insert(partition.id);
    states.emplace(target.name, std::move(state));
  }

  std::vector<AdmissionRequest> queue;
  std::vector<Reservation> reservations;
  for (const kube::ObjectPtr& object : jobs_.list()) {
    const Json& job = *object;
    if (!alive(job) || member(member(job, "spec"), "suspend") == Json(true)) continue;
    const auto held = heldPartitions(job);
    if (!held.empty()) {
      std::map<std::string, Reservation> missing;
      for (const Json& partition : held) {
        const std::string controller = partition.value("controller", "");
        auto state = states.find(controller);
        if (state == states.end() || state->second.partitionIds.contains(partition.value("id", ""))) continue;
        auto& reservation = missing[controller];
        reservation.controller = controller;
        reservation.ipusPerInstance = partition.value("size", 0U);
        ++reservation.instances;
      }
      for (auto& [controller, reservation] : missing) reservations.push_back(reservation);
      continue;
    }
    auto parsed = api::parseIpuJob(job);
    if (!parsed) continue;  // its own reconcile fails it with the reason
    AdmissionRequest request;
    request.key = kube::objectKey(job);
    request.priority = parsed->spec.priority;
    request.creationTimestamp = job["metadata"].value("creationTimestamp", "");
    request.instances = static_cast<std::uint32_t>(parsed->spec.jobInstances);
    request.ipusPerInstance = static_cast<std::uint32_t>(parsed->spec.ipusPerJobInstance);
    if (auto pinned = pinnedVipuController(parsed->spec); !pinned.empty())
      request.controllers.push_back(pinned);
    queue.push_back(std::move(request));
  }

  std::vector<ControllerCapacity> capacities;
  for (auto& [name, state] : states) capacities.push_back({name, state.planner.get(), state.taken});
  auto decisions = planAdmissions(std::move(queue), std::move(capacities), reservations, strategy_);
  auto decision = decisions.find(key);
  if (decision == decisions.end()) return false;

  if (decision->second.kind != AdmissionDecision::Kind::kAdmit && !unreachable.empty()) {
    auto parsed = api::parseIpuJob(*self);
    const std::string pinned = parsed ? pinnedVipuController(parsed->spec) : "";
    for (const auto& [name, error] : unreachable) {
      if (pinned.empty() || pinned == name) {
        return makeError(error.code, "V-IPU controller " + name + " is unavailable: " + error.message);
      }
    }
  }
  const vipu::PartitionPlanner* planner = nullptr;
  if (decision->second.kind == AdmissionDecision::Kind::kAdmit) {
    planner = states.at(decision->second.controller).planner.get();
  }
  if (auto status = act(decision->second, planner); !status) return status.error();
  return true;
}

Status Admitter::placeMissing(const std::string& controller, std::uint32_t instances,
                              std::uint32_t ipusPerInstance, const PlaceAct& act) {
  std::lock_guard pass(passMutex_);
  const VipuTarget* target = controllers_.find(controller);
  if (target == nullptr) {
    return makeError(ErrorCode::kNotFound, unknownControllerMessage(controller, controllers_.targets()));
  }
  auto planner = controllers_.planner(controller);
  if (!planner) return planner.error();
  auto partitions = target->api->listPartitions("");
  if (!partitions) return partitions.error();
  auto taken = vipu::IpuSet::fromPartitions((*planner)->topology(), *partitions);
  if (!taken) {
    controllers_.invalidate(controller);
    return taken.error();
  }
  return act((*planner)->plan(*taken, {instances, ipusPerInstance}), **planner);
}

}  // namespace ipu::controllers
