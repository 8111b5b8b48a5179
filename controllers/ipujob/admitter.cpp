#include "ipujob/admitter.h"

#include <chrono>
#include <map>
#include <memory>
#include <set>
#include <utility>

#include "api/ipujob.h"
#include "common/json_access.h"
#include "ipujob/job_status.h"
#include "ipujob/worker_pod.h"
#include "kube/resource.h"

namespace ipu::controllers {
namespace {

bool alive(const Json& job) {
  return member(member(job, "metadata"), "deletionTimestamp").is_null() && !isTerminalPhase(phaseOf(job));
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

Admitter::Admitter(VipuControllers& controllers, const kube::Store& jobs, QueueingStrategy strategy,
                   std::function<void(double)> passObserved)
    : controllers_(controllers), jobs_(jobs), strategy_(strategy), passObserved_(std::move(passObserved)) {}

const std::optional<AdmissionRequest>& Admitter::requestFor(const Json& job) {
  const Json& metadata = job["metadata"];
  const std::string uid = metadata.value("uid", "");
  const std::string version = metadata.value("resourceVersion", "");
  auto& cached = parsed_[uid];
  if (cached.resourceVersion == version && !version.empty()) return cached.request;
  cached.resourceVersion = version;
  cached.request.reset();
  auto parsed = api::parseIpuJob(job);
  if (!parsed) return cached.request;  // its own reconcile fails it with the reason
  AdmissionRequest request;
  request.key = kube::objectKey(job);
  request.priority = parsed->spec.priority;
  request.creationTimestamp = metadata.value("creationTimestamp", "");
  request.instances = static_cast<std::uint32_t>(parsed->spec.jobInstances);
  request.ipusPerInstance = static_cast<std::uint32_t>(parsed->spec.ipusPerJobInstance);
  if (auto pinned = pinnedVipuController(parsed->spec); !pinned.empty())
    request.controllers.push_back(pinned);
  cached.request = std::move(request);
  return cached.request;
}

Result<std::optional<Admission>> Admitter::decide(const std::string& key) {
  std::lock_guard pass(passMutex_);
  const auto started = std::chrono::steady_clock::now();
  auto planned = planPass(key);
  if (passObserved_)
    passObserved_(std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count());
  if (planned && *planned && (*planned)->decision.kind == AdmissionDecision::Kind::kAdmit) {
    // Until forget(), later passes count these IPUs as taken: the status write and the V-IPU calls happen
    // after this pass, outside the lock.
    inFlight_[key] = **planned;
  }
  return planned;
}

std::optional<Admission> Admitter::inFlight(const std::string& key) const {
  std::lock_guard pass(passMutex_);
  const auto found = inFlight_.find(key);
  if (found == inFlight_.end()) return std::nullopt;
  return found->second;
}

void Admitter::forget(const std::string& key) {
  std::lock_guard pass(passMutex_);
  inFlight_.erase(key);
}

Result<std::optional<Admission>> Admitter::planPass(const std::string& key) {
  const kube::ObjectPtr self = jobs_.get(key);
  if (!self || !waitsForAdmission(*self) || inFlight_.contains(key)) return std::optional<Admission>();

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
    for (const auto& [job, admission] : inFlight_) {
      if (admission.decision.controller != target.name) continue;
      for (const auto& placement : admission.decision.placements) state.taken.insert(placement.block);
    }
    states.emplace(target.name, std::move(state));
  }

  std::vector<AdmissionRequest> queue;
  std::vector<Reservation> reservations;
  std::set<std::string> seen;
  for (const kube::ObjectPtr& object : jobs_.list()) {
    const Json& job = *object;
    if (!alive(job) || member(member(job, "spec"), "suspend") == Json(true)) continue;
    if (inFlight_.contains(kube::objectKey(job))) continue;  // its IPUs are taken above
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
    seen.insert(job["metadata"].value("uid", ""));
    if (const auto& request = requestFor(job)) queue.push_back(*request);
  }
  std::erase_if(parsed_, [&](const auto& entry) { return !seen.contains(entry.first); });

  std::vector<ControllerCapacity> capacities;
  for (auto& [name, state] : states) capacities.push_back({name, state.planner.get(), state.taken});
  auto decisions = planAdmissions(std::move(queue), std::move(capacities), reservations, strategy_);
  auto decision = decisions.find(key);
  if (decision == decisions.end()) return std::optional<Admission>();

  if (decision->second.kind != AdmissionDecision::Kind::kAdmit && !unreachable.empty()) {
    const auto& request = requestFor(*self);
    const std::string pinned = request && !request->controllers.empty() ? request->controllers.front() : "";
    for (const auto& [name, error] : unreachable) {
      if (pinned.empty() || pinned == name) {
        return makeError(error.code, "V-IPU controller " + name + " is unavailable: " + error.message);
      }
    }
  }
  Admission admission{std::move(decision->second), nullptr};
  if (admission.decision.kind == AdmissionDecision::Kind::kAdmit) {
    admission.planner = states.at(admission.decision.controller).planner;
  }
  return std::optional<Admission>(std::move(admission));
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
  for (const auto& [job, admission] : inFlight_) {
    if (admission.decision.controller != controller) continue;
    for (const auto& placement : admission.decision.placements) taken->insert(placement.block);
  }
  return act((*planner)->plan(*taken, {instances, ipusPerInstance}), **planner);
}

}  // namespace ipu::controllers
