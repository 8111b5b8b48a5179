#include "admission/admitter.h"

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
#include "quota/quota_usage.h"

namespace ipu::controllers {
namespace {

bool alive(const Json& job) {
  return member(member(job, "metadata"), "deletionTimestamp").is_null() && !isTerminalPhase(phaseOf(job));
}

}  // namespace

bool waitsForAdmission(const Json& job) {
  if (!alive(job)) return false;
  if (member(member(job, "spec"), "suspend") == Json(true)) return false;
  return heldPartitionsOf(job).empty();
}

const vipu::InstancePlacement* Admission::placementOf(int instance) const {
  for (std::size_t i = 0; i < instances.size() && i < decision.placements.size(); ++i) {
    if (instances[i] == instance) return &decision.placements[i];
  }
  return nullptr;
}

Admitter::Admitter(VipuInventory& inventory, const kube::Store& jobs, QueueingStrategy strategy,
                   std::function<void(double)> passObserved)
    : inventory_(inventory), jobs_(jobs), strategy_(strategy), passObserved_(std::move(passObserved)) {}

Admitter::Admitter(VipuInventory& inventory, const kube::Store& jobs, const kube::Store& quotas,
                   MissingQuotaPolicy missingQuota, QueueingStrategy strategy,
                   std::function<void(double)> passObserved)
    : inventory_(inventory),
      jobs_(jobs),
      quotas_(&quotas),
      missingQuota_(missingQuota),
      strategy_(strategy),
      passObserved_(std::move(passObserved)) {}

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
  request.ns = metadata.value("namespace", "");
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
  const kube::ObjectPtr self = jobs_.get(key);
  if (!self || !waitsForAdmission(*self) || inFlight_.contains(key)) return std::optional<Admission>();
  if (std::string inputs = passInputs(); inputs != memo_.inputs || !memo_.decisions.contains(key)) {
    const auto started = std::chrono::steady_clock::now();
    plan();
    memo_.inputs = std::move(inputs);
    ++passes_;
    if (passObserved_) {
      passObserved_(std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count());
    }
  }
  auto decided = decisionFor(key, self);
  if (decided && *decided && (*decided)->decision.kind == AdmissionDecision::Kind::kAdmit) {
    // Until forget(), later passes count these IPUs as taken: the status write and the V-IPU calls happen
    // after this pass, outside the lock.
    inFlight_[key] = **decided;
  }
  return decided;
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

std::uint64_t Admitter::passes() const {
  std::lock_guard pass(passMutex_);
  return passes_;
}

std::string Admitter::passInputs() const {
  // What a pass reads of each job: its spec (generation), whether it is alive and the partitions it holds.
  // Status a pass writes itself (queue positions, messages) is left out, so that waiting jobs told their
  // new place one after the other reuse one pass.
  std::string inputs = std::to_string(inventory_.version());
  for (const auto& [key, admission] : inFlight_) inputs += "|" + key;
  for (const kube::ObjectPtr& object : jobs_.list()) {
    const Json& job = *object;
    inputs += "|" + kube::objectKey(job) + "@" + member(member(job, "metadata"), "generation").dump() +
              (alive(job) ? "" : "!");
    for (const auto& partition : heldPartitionsOf(job)) inputs += ":" + partition.id;
  }
  // A quota's spec, not its status: the counts and the ledger it writes itself do not change a plan.
  if (quotas_ != nullptr) {
    for (const kube::ObjectPtr& quota : quotas_->list()) {
      // By uid: a quota deleted and made again starts at generation 1 again.
      const Json& metadata = member(*quota, "metadata");
      inputs += "|q:" + stringMember(metadata, "uid") + "@" + member(metadata, "generation").dump();
    }
  }
  return inputs;
}

Result<Admitter::ControllerState> Admitter::stateOf(const std::string& controller) const {
  const auto view = inventory_.view(controller);
  if (!view || !view->planner) {
    return view && view->error ? *view->error
                               : makeError(ErrorCode::kUnavailable, "its topology has not been read yet");
  }
  if (view->error) return *view->error;
  auto taken = vipu::IpuSet::fromPartitions(view->planner->topology(), view->partitions);
  if (!taken) {
    // An IPU outside the topology we know: the POD changed shape. Read it again next time.
    inventory_.invalidateTopology(controller);
    return taken.error();
  }
  ControllerState state{view->planner, {}, std::move(*taken)};
  for (const auto& partition : view->partitions) state.partitionIds.insert(partition.id);
  for (const auto& [job, admission] : inFlight_) {
    if (admission.decision.controller != controller) continue;
    for (const auto& placement : admission.decision.placements) state.taken.insert(placement.block);
  }
  return state;
}

void Admitter::plan() {
  std::map<std::string, ControllerState> states;
  memo_.unreachable.clear();
  for (const VipuTarget& target : inventory_.controllers().targets()) {
    auto state = stateOf(target.name);
    if (!state) {
      memo_.unreachable.emplace(target.name, state.error());
      continue;
    }
    states.emplace(target.name, std::move(*state));
  }

  std::vector<AdmissionRequest> queue;
  std::vector<Reservation> reservations;
  std::set<std::string> seen;
  for (const kube::ObjectPtr& object : jobs_.list()) {
    const Json& job = *object;
    if (!alive(job) || member(member(job, "spec"), "suspend") == Json(true)) continue;
    if (inFlight_.contains(kube::objectKey(job))) continue;  // its IPUs are taken above
    const auto held = heldPartitionsOf(job);
    if (!held.empty()) {
      std::map<std::string, Reservation> missing;
      for (const auto& partition : held) {
        auto state = states.find(partition.controller);
        if (state == states.end() || state->second.partitionIds.contains(partition.id)) continue;
        auto& reservation = missing[partition.controller];
        reservation.controller = partition.controller;
        reservation.ipusPerInstance = static_cast<std::uint32_t>(partition.size);
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
  memo_.planners.clear();
  for (auto& [name, state] : states) {
    capacities.push_back({name, state.planner.get(), state.taken});
    memo_.planners.emplace(name, state.planner);
  }
  memo_.decisions = quotas_ == nullptr
                        ? planAdmissions(std::move(queue), std::move(capacities), reservations, strategy_)
                        : planQuotaAdmissions(std::move(queue), std::move(capacities), reservations,
                                              strategy_, quotaRules());
}

QuotaRules Admitter::quotaRules() const {
  QuotaRules rules;
  rules.missingQuota = missingQuota_;
  std::vector<api::IpuQuota> quotas;
  std::map<std::string, std::string> invalid;
  for (const kube::ObjectPtr& object : quotas_->list()) {
    auto quota = api::parseIpuQuota(*object);
    if (quota) {
      quotas.push_back(std::move(*quota));
    } else {
      invalid.try_emplace(
          stringMember(member(*object, "metadata"), "namespace"),
          "IPUQuota " + kube::objectKey(*object) + " cannot be read: " + quota.error().message);
    }
  }
  rules.quotas = namespaceQuotas(quotas);
  for (auto& [ns, problem] : invalid) rules.quotas[ns].invalid = std::move(problem);
  // What each namespace holds: the partitions its jobs hold (status), and the admissions in flight here.
  for (const kube::ObjectPtr& object : jobs_.list()) {
    const auto held = heldQuotaJobOf(*object);
    if (!held) continue;
    NamespaceUsage& usage = rules.usage[stringMember(member(*object, "metadata"), "namespace")];
    const auto ipus = static_cast<std::uint64_t>(held->ipus);
    (held->state == QuotaJob::State::kRunning ? usage.runningIpus : usage.reservedIpus) += ipus;
    ++usage.admittedJobs;
  }
  for (const auto& [key, admission] : inFlight_) {
    NamespaceUsage& usage = rules.usage[key.substr(0, key.find('/'))];
    std::uint64_t ipus = 0;
    for (const auto& placement : admission.decision.placements) ipus += placement.block.size;
    usage.reservedIpus += ipus;
    ++usage.admittedJobs;
  }
  return rules;
}

Result<std::optional<Admission>> Admitter::decisionFor(const std::string& key, const kube::ObjectPtr& self) {
  auto decision = memo_.decisions.find(key);
  if (decision == memo_.decisions.end()) return std::optional<Admission>();
  if (decision->second.kind != AdmissionDecision::Kind::kAdmit && !memo_.unreachable.empty()) {
    const auto& request = requestFor(*self);
    const std::string pinned = request && !request->controllers.empty() ? request->controllers.front() : "";
    for (const auto& [name, error] : memo_.unreachable) {
      if (pinned.empty() || pinned == name) {
        return makeError(error.code, "V-IPU controller " + name + " is unavailable: " + error.message);
      }
    }
  }
  Admission admission{decision->second, nullptr, {}};
  if (admission.decision.kind == AdmissionDecision::Kind::kAdmit) {
    admission.planner = memo_.planners.at(admission.decision.controller);
    for (std::size_t i = 0; i < admission.decision.placements.size(); ++i) {
      admission.instances.push_back(static_cast<int>(i));
    }
  }
  return std::optional<Admission>(std::move(admission));
}

Result<std::optional<Admission>> Admitter::placeMissing(const std::string& key, const std::string& controller,
                                                        const std::vector<int>& instances,
                                                        std::uint32_t ipusPerInstance) {
  std::lock_guard pass(passMutex_);
  if (inventory_.controllers().find(controller) == nullptr) {
    return makeError(ErrorCode::kNotFound,
                     unknownControllerMessage(controller, inventory_.controllers().targets()));
  }
  auto state = stateOf(controller);
  if (!state) return state.error();
  auto plan =
      state->planner->plan(state->taken, {static_cast<std::uint32_t>(instances.size()), ipusPerInstance});
  if (!plan.placed()) return std::optional<Admission>();
  AdmissionDecision decision;
  decision.kind = AdmissionDecision::Kind::kAdmit;
  decision.controller = controller;
  decision.placements = std::move(plan.placements);
  Admission admission{std::move(decision), state->planner, instances};
  inFlight_[key] = admission;
  return std::optional<Admission>(std::move(admission));
}

}  // namespace ipu::controllers
