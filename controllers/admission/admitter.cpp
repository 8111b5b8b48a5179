#include "admission/admitter.h"

#include <chrono>
#include <map>
#include <memory>
#include <set>
#include <utility>

#include "api/ipujob.h"
#include "api/ipujob_status.h"
#include "api/job_lifecycle.h"
#include "common/json_access.h"
#include "common/log.h"
#include "common/stable_hash.h"
#include "kube/resource.h"
#include "quota/quota_usage.h"

namespace ipu::controllers {
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

std::optional<AdmissionRequest> Admitter::requestFor(const api::JobSummary& job) {
  if (!job.ask) return std::nullopt;
  AdmissionRequest request = admissionRequestOf(job.identity, *job.ask);
  request.queuedByKueue = job.queuedByKueue;
  return request;
}

const char* toString(ReservationEnd end) {
  switch (end) {
    case ReservationEnd::kPartitionsExist:
      return "PartitionsExist";
    case ReservationEnd::kNotRecorded:
      return "NotRecorded";
    case ReservationEnd::kQuotaRefused:
      return "QuotaRefused";
    case ReservationEnd::kIpusTakenElsewhere:
      return "IpusTakenElsewhere";
    case ReservationEnd::kReleased:
      return "Released";
    case ReservationEnd::kJobGone:
      return "JobGone";
  }
  return "Unknown";
}

Result<std::optional<Admission>> Admitter::decide(const std::string& key) {
  std::lock_guard pass(passMutex_);
  dropReservationsOfGoneJobs();
  const auto self = jobs_.summary<api::JobSummary>(key);
  if (!self || !self->waitsForAdmission || self->manager != controllerName_ || reserved_.contains(key))
    return std::optional<Admission>();
  if (!memoCurrent(key)) {
    // Both read before the plan: a change that lands while it runs moves a counter past them, so the next
    // decide() looks again.
    const Counters before = counters();
    const std::uint64_t inputs = fingerprint();
    const auto started = std::chrono::steady_clock::now();
    plan();
    memo_.counters = before;
    memo_.fingerprint = inputs;
    ++passes_;
    if (passObserved_) {
      passObserved_(std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count());
    }
  }
  auto decided = decisionFor(key, *self);
  // Until end(), later passes count these IPUs as taken: the status write and the V-IPU calls happen after
  // this pass, outside the lock.
  if (decided && *decided && (*decided)->decision.kind == AdmissionDecision::Kind::kAdmit) {
    reserve(key, **decided);
  }
  return decided;
}

std::optional<Admission> Admitter::reservation(const std::string& key) const {
  std::lock_guard pass(passMutex_);
  const auto found = reserved_.find(key);
  if (found == reserved_.end()) return std::nullopt;
  return found->second.admission;
}

std::size_t Admitter::reservations() const {
  std::lock_guard pass(passMutex_);
  return reserved_.size();
}

void Admitter::reserve(const std::string& key, Admission admission) {
  const auto job = jobs_.summary<api::JobSummary>(key);
  std::string uid = job ? job->identity.uid : "";
  reserved_[key] = {std::move(admission), std::move(uid), job ? job->activeDeadlineSeconds : std::nullopt};
  ++reservationsRevision_;
}

void Admitter::dropReservationsOfGoneJobs() {
  // Gone from the cache, or made again under the name: nobody will end the reservation (a job deleted with
  // its finalizer stripped is never cleaned up). A job being deleted, or finished, is still there: its own
  // release ends its reservation, after any partition it was creating exists.
  for (auto it = reserved_.begin(); it != reserved_.end();) {
    const auto job = jobs_.summary<api::JobSummary>(it->first);
    if (job && job->identity.uid == it->second.uid) {
      ++it;
      continue;
    }
    log::info("admission reservation given back",
              {{"job", it->first}, {"reason", toString(ReservationEnd::kJobGone)}});
    it = reserved_.erase(it);
    ++reservationsRevision_;
  }
}

void Admitter::end(const std::string& key, ReservationEnd why) {
  std::lock_guard pass(passMutex_);
  if (reserved_.erase(key) == 0) return;
  ++reservationsRevision_;
  if (why != ReservationEnd::kPartitionsExist) {
    log::info("admission reservation given back", {{"job", key}, {"reason", toString(why)}});
  }
}

std::uint64_t Admitter::passes() const {
  std::lock_guard pass(passMutex_);
  return passes_;
}

Admitter::Counters Admitter::inputsCounters() const {
  std::lock_guard pass(passMutex_);
  return counters();
}

Admitter::Counters Admitter::counters() const {
  return {jobs_.revision(), quotas_ != nullptr ? quotas_->revision() : 0, inventory_.version(),
          reservationsRevision_};
}

bool Admitter::memoCurrent(const std::string& key) {
  if (!memo_.counters || !memo_.decisions.contains(key)) return false;
  const Counters now = counters();
  if (now == *memo_.counters) return true;
  if (now.inventory != memo_.counters->inventory || now.reservations != memo_.counters->reservations) {
    return false;
  }
  // Only the stores moved: the operator's own status writes (queue positions, messages) move them too.
  if (fingerprint() != memo_.fingerprint) return false;
  memo_.counters = now;
  return true;
}

std::uint64_t Admitter::fingerprint() const {
  // Every waiting job's pass asks after another job's admission moved the store: worked out once per store
  // revision, not once per waiting job. Read before the walk: a change during it moves the revision past.
  const Revisions revisions{jobs_.revision(), quotas_ != nullptr ? quotas_->revision() : 0};
  if (fingerprintMemo_.first == revisions) return fingerprintMemo_.second;
  // What a pass reads of each job: its spec (generation), whether it is alive and the partitions it holds;
  // of each quota, its spec (by uid: a quota deleted and made again starts at generation 1 again). Not the
  // status a pass writes itself, nor a quota's counts and ledger.
  std::uint64_t hash = 0xcbf29ce484222325ULL;
  const auto mix = [&hash](std::string_view text) { hash = (hash ^ stableHash(text)) * 0x100000001b3ULL; };
  for (const auto& summary : jobs_.summaries<api::JobSummary>()) {
    const api::JobSummary& job = *summary;
    mix(job.key);
    mix(job.identity.uid);  // a job made again under its name starts at generation 1 again
    mix(job.generation);
    mix(job.alive ? "alive" : "gone");
    mix(job.waitsForAdmission ? "waits" : "not waiting");  // Kueue admitting a job it queues
    for (const auto& partition : job.held) mix(partition.id);
  }
  if (quotas_ != nullptr) {
    for (const kube::ObjectPtr& quota : quotas_->list()) {
      const Json& metadata = member(*quota, "metadata");
      mix(stringMember(metadata, "uid"));
      mix(member(metadata, "generation").dump());
    }
  }
  fingerprintMemo_ = {revisions, hash};
  return hash;
}

Result<ControllerInputs> Admitter::inputsOf(const std::string& controller,
                                            const std::map<std::string, Holder>& holders,
                                            std::set<std::string>& partitionIds) const {
  const auto view = inventory_.view(controller);
  if (!view || !view->planner) {
    return view && view->error ? *view->error
                               : makeError(ErrorCode::kUnavailable, "its topology has not been read yet");
  }
  if (view->error) return *view->error;
  ControllerInputs inputs{controller, view->planner, {}};
  std::map<std::string, std::size_t> occupantOf;  // by job uid
  for (const vipu::Partition& partition : view->partitions) {
    auto ids = vipu::globalIpusOf(view->planner->topology(), partition);
    if (!ids) {
      // An IPU outside the topology we know: the POD changed shape. Read it again next time.
      inventory_.invalidateTopology(controller);
      return ids.error();
    }
    partitionIds.insert(partition.id);
    const auto holder = holders.find(partition.id);
    if (holder == holders.end()) {
      inputs.occupants.push_back({std::move(*ids), "", "", std::nullopt, std::nullopt});
      continue;
    }
    const auto [slot, first] = occupantOf.try_emplace(holder->second.uid, inputs.occupants.size());
    if (first)
      inputs.occupants.push_back({{}, holder->second.ns, holder->second.uid, holder->second.endsBy, {}});
    auto& held = inputs.occupants[slot->second].ipus;
    held.insert(held.end(), ids->begin(), ids->end());
  }
  for (const auto& [key, reserved] : reserved_) {
    if (reserved.admission.decision.controller != controller) continue;
    Occupant occupant{
        {}, key.substr(0, key.find('/')), reserved.uid, std::nullopt, reserved.activeDeadlineSeconds};
    for (const auto& placement : reserved.admission.decision.placements) {
      for (std::uint32_t ipu = placement.block.first; ipu < placement.block.end(); ++ipu)
        occupant.ipus.push_back(ipu);
    }
    inputs.occupants.push_back(std::move(occupant));
  }
  return inputs;
}

Result<Admitter::ControllerState> Admitter::stateOf(const std::string& controller) const {
  std::set<std::string> partitionIds;
  auto inputs = inputsOf(controller, {}, partitionIds);
  if (!inputs) return inputs.error();
  return ControllerState{inputs->planner, std::move(partitionIds), inputs->taken()};
}

PlanInputs Admitter::gatherInputs(std::map<std::string, Error>& unreachable) {
  const auto jobs = jobs_.summaries<api::JobSummary>();
  std::map<std::string, Holder> holders;  // by partition id
  for (const auto& job : jobs) {
    for (const auto& partition : job->held)
      holders[partition.id] = Holder{job->identity.ns, job->identity.uid, job->latestEnd};
  }

  PlanInputs inputs;
  inputs.strategy = strategy_;
  std::map<std::string, std::set<std::string>> existing;  // partition ids V-IPU has, by controller
  for (const VipuTarget& target : inventory_.controllers().targets()) {
    auto controller = inputsOf(target.name, holders, existing[target.name]);
    if (!controller) {
      unreachable.emplace(target.name, controller.error());
      existing.erase(target.name);
      continue;
    }
    inputs.controllers.push_back(std::move(*controller));
  }

  for (const auto& summary : jobs) {
    const api::JobSummary& job = *summary;
    if (!job.alive || job.suspended) continue;
    if (reserved_.contains(job.key)) continue;  // its IPUs are its controller's occupant
    if (!job.held.empty()) {
      std::map<std::string, Reservation> missing;
      for (const auto& partition : job.held) {
        auto ids = existing.find(partition.controller);
        if (ids == existing.end() || ids->second.contains(partition.id)) continue;
        auto& reservation = missing[partition.controller];
        reservation.controller = partition.controller;
        reservation.ipusPerInstance = static_cast<std::uint32_t>(partition.size);
        reservation.ns = job.identity.ns;
        reservation.uid = job.identity.uid;
        reservation.endsBy = job.latestEnd;
        ++reservation.instances;
      }
      for (auto& [controller, reservation] : missing) inputs.reservations.push_back(reservation);
      continue;
    }
    if (!job.waitsForAdmission) continue;          // a job Kueue has not admitted yet is Kueue's to queue
    if (job.manager != controllerName_) continue;  // another install's, or MultiKueue's
    if (auto request = requestFor(job)) inputs.queue.push_back(std::move(*request));
  }
  if (quotas_ != nullptr) inputs.quotas = quotaRules();
  return inputs;
}

PlanInputs Admitter::inputs() {
  std::lock_guard pass(passMutex_);
  std::map<std::string, Error> unreachable;
  return gatherInputs(unreachable);
}

std::optional<StartEstimate> Admitter::estimateFor(const std::string& key, Clock::WallTime now) {
  std::lock_guard pass(passMutex_);
  if (!memo_.inputs) return std::nullopt;
  const bool stale = estimates_.inputs != memo_.inputs && now - estimates_.at >= kEstimateInterval;
  if (!estimates_.inputs || stale) estimates_ = {memo_.inputs, now, estimateStarts(*memo_.inputs, now)};
  const auto found = estimates_.byKey.find(key);
  if (found == estimates_.byKey.end()) return std::nullopt;
  return found->second;
}

void Admitter::plan() {
  memo_.unreachable.clear();
  auto inputs = std::make_shared<PlanInputs>(gatherInputs(memo_.unreachable));
  memo_.planners.clear();
  for (const ControllerInputs& controller : inputs->controllers)
    memo_.planners.emplace(controller.name, controller.planner);
  memo_.decisions = planFrom(*inputs);
  memo_.inputs = std::move(inputs);
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
      invalid.try_emplace(api::identityOf(*object).ns, "IPUQuota " + kube::objectKey(*object) +
                                                           " cannot be read: " + quota.error().message);
    }
  }
  rules.quotas = namespaceQuotas(quotas);
  for (auto& [ns, problem] : invalid) rules.quotas[ns].invalid = std::move(problem);
  // What each namespace holds: the partitions its jobs hold (status), and the admissions in flight here. A
  // job with a reservation is counted once, by it: its status names the same partitions once the decision is
  // recorded, until they exist.
  for (const auto& job : jobs_.summaries<api::JobSummary>()) {
    if (reserved_.contains(job->key)) continue;
    const auto held = heldQuotaJobOf(*job);
    if (!held) continue;
    NamespaceUsage& usage = rules.usage[job->identity.ns];
    const auto ipus = static_cast<std::uint64_t>(held->ipus);
    (held->state == QuotaJob::State::kRunning ? usage.runningIpus : usage.reservedIpus) += ipus;
    ++usage.admittedJobs;
  }
  for (const auto& [key, reserved] : reserved_) {
    NamespaceUsage& usage = rules.usage[key.substr(0, key.find('/'))];
    std::uint64_t ipus = 0;
    for (const auto& placement : reserved.admission.decision.placements) ipus += placement.block.size;
    usage.reservedIpus += ipus;
    ++usage.admittedJobs;
  }
  return rules;
}

Result<std::optional<Admission>> Admitter::decisionFor(const std::string& key, const api::JobSummary& self) {
  auto decision = memo_.decisions.find(key);
  if (decision == memo_.decisions.end()) return std::optional<Admission>();
  if (decision->second.kind != AdmissionDecision::Kind::kAdmit && !memo_.unreachable.empty()) {
    const std::string pinned = self.ask ? self.ask->pinnedController : "";
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

Result<std::optional<Admission>> Admitter::reservationFor(const std::string& key,
                                                          const std::string& controller,
                                                          const std::vector<int>& instances,
                                                          std::uint32_t ipusPerInstance) {
  std::lock_guard pass(passMutex_);
  if (const auto found = reserved_.find(key); found != reserved_.end()) {
    Admission reserved = found->second.admission;
    reserved.placedNow = false;
    return std::optional<Admission>(std::move(reserved));
  }
  if (inventory_.controllers().find(controller) == nullptr) {
    return makeError(ErrorCode::kNotFound,
                     unknownControllerMessage(controller, inventory_.controllers().targets()));
  }
  auto state = stateOf(controller);
  if (!state) return state.error();
  auto plan =
      state->planner->plan(state->taken, {static_cast<std::uint32_t>(instances.size()), ipusPerInstance});
  if (!plan.placed()) return std::optional<Admission>();
  Admission admission{AdmissionDecision::admit(controller, std::move(plan.placements)), state->planner,
                      instances};
  reserve(key, admission);
  admission.placedNow = true;
  return std::optional<Admission>(std::move(admission));
}

bool Admitter::takenElsewhere(const std::string& key, const std::string& controller,
                              const std::vector<api::PartitionRecord>& missing) {
  const auto reserved = reservation(key);
  if (!reserved) return false;
  // A V-IPU call: outside the admission lock.
  if (Status read = inventory_.refresh(controller); !read) return false;
  const auto view = inventory_.view(controller);
  if (!view) return false;
  for (const auto& record : missing) {
    const vipu::InstancePlacement* placement = reserved->placementOf(record.instance);
    if (placement == nullptr) continue;
    for (const auto& existing : view->partitions) {
      if (existing.id == record.id) continue;
      for (const auto& ipu : existing.spec.ipus) {
        for (const auto& planned : placement->ipus) {
          if (ipu.ildTopologyId == planned.ildTopologyId && ipu.topologyId == planned.topologyId) {
            log::info("planned IPUs were taken outside the operator; planning the job again",
                      {{"job", key}, {"partition", record.id}, {"takenBy", existing.id}});
            end(key, ReservationEnd::kIpusTakenElsewhere);
            return true;
          }
        }
      }
    }
  }
  return false;
}

}  // namespace ipu::controllers
