#include "ipujob/kueue_steps.h"

#include <algorithm>
#include <vector>

#include "common/log.h"
#include "common/time_format.h"

namespace ipu::controllers {
namespace {

std::string queueText(const api::KueueStatus& kueue) {
  std::string text = "Kueue LocalQueue " + kueue.localQueue;
  if (!kueue.clusterQueue.empty()) text += " (ClusterQueue " + kueue.clusterQueue + ")";
  return text;
}

// A condition's reason as Kueue writes them: "Succeeded" or "Failed" for Finished.
std::string finishedReason(const std::string& phase) {
  return phase == kPhaseSucceeded ? "Succeeded" : "Failed";
}

}  // namespace

bool KueueSteps::queues(const JobPass& pass) const {
  if (pass.status.kueue) return true;
  return options_.kueue.inUse() && !localQueueOf(pass.object).empty() && !pass.holdsPartitions();
}

std::optional<std::string> KueueSteps::notUsedMessage(const JobPass& pass) const {
  if (options_.kueue.inUse() || pass.status.kueue) return std::nullopt;
  const std::string queue = localQueueOf(pass.object);
  if (queue.empty()) return std::nullopt;
  return std::string("The job has the label ") + kKueueQueueNameLabel + "=" + queue + ", but " +
         options_.kueue.notUsed + ": it runs under the operator's own queue and IPUQuota";
}

kube::ObjectPtr KueueSteps::workloadOf(const JobPass& pass) const {
  if (options_.kueue.workloads == nullptr) return nullptr;
  return options_.kueue.workloads->get(pass.identity.ns + "/" + workloadNameOf(pass));
}

std::string KueueSteps::workloadNameOf(const JobPass& pass) {
  if (pass.status.kueue) return pass.status.kueue->workload;
  const std::string prebuilt = prebuiltWorkloadOf(pass.object);
  return prebuilt.empty() ? workloadNameFor(pass.identity) : prebuilt;
}

KueueGate KueueSteps::gate(JobPass& pass, const api::IpuJob& job) {
  if (!options_.kueue.inUse()) {
    // Queued by Kueue earlier, and the operator now runs without it: nothing admits the job but Kueue, so it
    // waits, saying why, rather than bypass the cluster's queues.
    const KueueGate wait = KueueGate::wait(StepOutcome(ctrl::Action::awaitChange()));
    if (!pass.holdsPartitions()) {
      pass.setPhase(kPhaseQueued, "KueueNotInUse",
                    "The job is queued in Kueue (Workload " + pass.status.kueue->workload + "), but " +
                        options_.kueue.notUsed + ": it waits until Kueue is in use again");
      return wait;
    }
    return KueueGate::goOn();  // a job already placed finishes its run
  }
  // What of the job still runs: its partitions and live pods let go at an eviction; pods being deleted are
  // waited for before its Workload is made or given back, so Kueue never counts a job twice.
  const std::vector<kube::ObjectPtr> pods = pods_.of(pass);
  const bool running =
      pass.holdsPartitions() || std::any_of(pods.begin(), pods.end(), [](const kube::ObjectPtr& pod) {
        return member(member(*pod, "metadata"), "deletionTimestamp").is_null();
      });
  const KueueGate podsGoing = KueueGate::wait(StepOutcome(ctrl::Action::awaitChange()));
  const kube::ObjectPtr workload = workloadOf(pass);
  if (!workload) {
    if (running) {
      return KueueGate::evict(
          "WorkloadDeleted",
          "The job's Workload was deleted while it ran: workers stopped, IPUs released; queued in Kueue "
          "again");
    }
    if (!pods.empty()) return podsGoing;
    if (const std::string prebuilt = prebuiltWorkloadOf(pass.object); !prebuilt.empty()) {
      // MultiKueue made the Workload before the job; one not there (yet, or deleted) is never made here.
      pass.setPhase(kPhaseQueued, "WaitingForWorkload",
                    "Waiting for the Workload " + prebuilt + " that MultiKueue dispatched this job with");
      return KueueGate::wait(StepOutcome(ctrl::Action::requeue(options_.queuedRetry)));
    }
    return create(pass, job);
  }
  const WorkloadView view = viewOf(*workload);
  if (view.ownerUid.empty() && !pass.status.kueue && !prebuiltWorkloadOf(pass.object).empty())
    return adopt(pass, job, *workload);
  if (view.ownerUid != pass.identity.uid) {
    pass.fail("WorkloadNameTaken", "The Workload " + stringMember(member(*workload, "metadata"), "name") +
                                       " this job would use belongs to another owner; the job cannot be "
                                       "queued in Kueue under it");
    return KueueGate::wait(StepOutcome(ctrl::Action::requeueNow()));
  }
  auto& kueue = pass.status.kueue;
  if (!kueue)
    kueue = api::KueueStatus{stringMember(member(*workload, "metadata"), "name"), localQueueOf(pass.object)};
  if (view.admitted && !view.evicted && !view.finished) {
    if (!kueue->admitted || kueue->clusterQueue != view.clusterQueue) {
      kueue->admitted = true;
      kueue->awaitingPlacement = false;
      kueue->clusterQueue = view.clusterQueue;
      events_.record(kube::referenceTo(pass.object), kube::EventType::kNormal, "AdmittedByKueue",
                     "Kueue admitted the job in ClusterQueue " + view.clusterQueue + " (LocalQueue " +
                         kueue->localQueue + "); placing its partitions");
      if (!pass.holdsPartitions()) {
        // Written first: the operator's queue takes the job from its recorded status.kueue.admitted.
        pass.setPhase(kPhaseQueued, "AdmittedByKueue",
                      "Admitted by " + queueText(*kueue) + ": waiting for the IPU placement");
        return KueueGate::wait(StepOutcome(ctrl::Action::awaitChange()));
      }
    }
    return {};
  }
  if (auto placed = placementGate(pass, *kueue, *workload, view)) return std::move(*placed);
  if (view.finished) {
    // Finished, for a job that is not: the job was sent back to admission after it failed (its spec edited).
    // Its old Workload goes; a new one is made once it is gone.
    if (running) return KueueGate::evict("WorkloadFinished", "The job's Workload is finished");
    // MultiKueue's Workload is the manager's to replace: the job waits to be dispatched again (or deleted).
    if (!prebuiltWorkloadOf(pass.object).empty()) return waitInKueue(pass, view);
    auto removed = client_.remove(workloadResource(), pass.identity.ns, kueue->workload);
    if (!removed && removed.error().code != ErrorCode::kNotFound)
      return KueueGate::wait(StepOutcome(removed.error()));
    pass.status.kueue.reset();
    pass.setPhase(kPhaseQueued, "WaitingForKueue", "Queuing the job in Kueue again");
    return KueueGate::wait(StepOutcome(ctrl::Action::requeue(std::chrono::seconds(1))));
  }
  // Not admitted (any more).
  if (running) {
    const std::string why =
        view.evicted ? view.evictedReason + ": " + view.evictedMessage : "its Workload is no longer admitted";
    events_.record(kube::referenceTo(pass.object), kube::EventType::kWarning, "EvictedByKueue",
                   "Kueue evicted the job (" + why + "): stopping its workers and releasing its IPUs");
    return KueueGate::evict(view.evicted ? "EvictedByKueue" : "NotAdmittedByKueue",
                            "Kueue evicted the job (" + why +
                                "): workers stopped, IPUs released; queued in " + queueText(*kueue) +
                                " again");
  }
  if (!pods.empty()) return podsGoing;
  if (view.quotaReserved && view.evicted) return giveBack(pass, *workload, view);
  return waitInKueue(pass, view);
}

std::optional<KueueGate> KueueSteps::placementGate(JobPass& pass, api::KueueStatus& kueue,
                                                   const Json& workload, const WorkloadView& view) {
  const auto check = placementCheckOf(view, placementChecks());
  if (!check || !view.quotaReserved || view.evicted || view.finished ||
      (check->state != "Pending" && check->state != "Ready"))
    return std::nullopt;
  kueue.clusterQueue = view.clusterQueue;
  if (!kueue.awaitingPlacement) {
    kueue.awaitingPlacement = true;
    kueue.admitted = false;
    // Written first: the operator's queue takes the job from its recorded status.kueue.
    pass.setPhase(kPhaseQueued, "PlacingForKueue",
                  "Kueue reserved quota in " + queueText(kueue) +
                      ": placing the job's partitions (admission check " + check->name + ")");
    return KueueGate::wait(StepOutcome(ctrl::Action::awaitChange()));
  }
  const auto held = pass.observed.heldPartitions();
  if (held.empty()) return KueueGate::place(check->name);
  // Placed and recorded (so a restarted operator keeps the IPUs reserved): the check says so, and the
  // partitions are made once Kueue admits the job.
  const std::string placed = std::to_string(held.size()) + " partition(s) of " +
                             std::to_string(held[0].size) + " IPUs on " + held[0].controller + " (" +
                             held[0].ipus + (held.size() > 1 ? ", ..." : "") + ")";
  if (check->state != "Ready") {
    if (Status told = answer(workload, check->name, "Ready", "Placed: " + placed, pass); !told)
      return KueueGate::wait(StepOutcome(told.error()));
  }
  pass.setPhase(
      kPhaseQueued, "PlacedForKueue",
      "Placed (" + placed + " reserved): waiting for Kueue to admit the job in " + queueText(kueue));
  return KueueGate::wait(StepOutcome(ctrl::Action::awaitChange()));
}

std::set<std::string> KueueSteps::placementChecks() const {
  std::set<std::string> names;
  if (options_.kueue.admissionChecks == nullptr) return names;
  for (const kube::ObjectPtr& check : options_.kueue.admissionChecks->list()) {
    if (answersCheck(*check)) names.insert(stringMember(member(*check, "metadata"), "name"));
  }
  return names;
}

Status KueueSteps::answer(const Json& workload, const std::string& check, const std::string& state,
                          const std::string& message, const JobPass& pass) {
  if (Status applied = applyStatus(admissionCheckApply(workload, check, state, message, formatTime(pass.now)),
                                   kIpuPlacementCheckController, pass);
      !applied)
    return applied;
  log::info("answered the IPU placement check",
            {{"job", pass.key}, {"check", check}, {"state", state}, {"message", message}});
  return {};
}

Status KueueSteps::reportPlacement(const JobPass& pass, const std::string& check) {
  const kube::ObjectPtr workload = workloadOf(pass);
  if (!workload) return {};
  const auto entry = placementCheckOf(viewOf(*workload), {check});
  if (!entry) return {};
  if (pass.status.phase == kPhaseFailed) {
    return answer(*workload, check, "Rejected", pass.status.lastMessage, pass);
  }
  if (!pass.status.heldPartitions().empty()) return {};  // Ready once the placement is recorded
  // No decision in this pass (the cache was behind): nothing new to say.
  if (pass.phaseReason.empty() || pass.status.phase != kPhaseQueued) return {};
  const std::string why = "Cannot be placed now: " + pass.status.lastMessage;
  if (entry->state == "Pending" && entry->message == why) return {};
  return answer(*workload, check, "Pending", why, pass);
}

Status KueueSteps::placementLost(const JobPass& pass, const std::string& why) {
  const kube::ObjectPtr workload = workloadOf(pass);
  if (!workload) return {};
  const auto entry = placementCheckOf(viewOf(*workload), placementChecks());
  if (!entry || entry->state == "Retry") return {};
  return answer(*workload, entry->name, "Retry", why, pass);
}

Result<WorkloadCreation> KueueSteps::createWorkload(const JobPass& pass, const api::IpuJob& job) {
  WorkloadPriority priority{"", job.spec.priority};
  if (const std::string className = workloadPriorityClassOf(pass.object); !className.empty()) {
    auto found = client_.get(workloadPriorityClassResource(), "", className);
    if (!found && found.error().code == ErrorCode::kNotFound) {
      return WorkloadCreation{WorkloadCreation::Kind::kPriorityClassMissing,
                              std::string("The label ") + kKueuePriorityClassLabel +
                                  " names the WorkloadPriorityClass " + className +
                                  ", which does not exist: the job is not queued in Kueue until it does"};
    }
    if (!found) return found.error();
    const Json& value = member(*found, "value");
    priority = {className, value.is_number_integer() ? value.get<int>() : 0};
  }
  Json desired = desiredWorkload(pass.object, job, priority);
  desired["metadata"]["labels"][kJobNameLabel] = jobLabelValue(pass.identity.name);  // the watch selects it
  auto created = client_.create(workloadResource(), pass.identity.ns, desired);
  if (!created && created.error().code != ErrorCode::kAlreadyExists) {
    // Kueue's webhook or schema refused it: what the job asks cannot be queued as it is.
    if (created.error().code == ErrorCode::kInvalidArgument)
      return WorkloadCreation{WorkloadCreation::Kind::kRefused,
                              "Kueue refused the job's Workload: " + created.error().message};
    return created.error();
  }
  log::info("created the job's Kueue Workload",
            {{"job", pass.key}, {"workload", workloadNameFor(pass.identity)}});
  return WorkloadCreation{};
}

KueueGate KueueSteps::create(JobPass& pass, const api::IpuJob& job) {
  auto created = createWorkload(pass, job);
  if (!created) return KueueGate::wait(StepOutcome(created.error()));
  switch (created->kind) {
    case WorkloadCreation::Kind::kPriorityClassMissing:
      pass.setPhase(kPhaseQueued, "WorkloadPriorityClassNotFound", created->message);
      return KueueGate::wait(StepOutcome(ctrl::Action::requeue(options_.queuedRetry)));
    case WorkloadCreation::Kind::kRefused:
      pass.fail("InvalidSpec", created->message);
      return KueueGate::wait(StepOutcome(ctrl::Action::requeueNow()));
    case WorkloadCreation::Kind::kCreated:
      break;
  }
  pass.status.kueue = api::KueueStatus{workloadNameFor(pass.identity), localQueueOf(pass.object)};
  pass.setPhase(
      kPhaseQueued, "WaitingForKueue",
      "Queued in " + queueText(*pass.status.kueue) + " (Workload " + pass.status.kueue->workload + ")");
  pass.status.desiredReplicas = job.spec.workerCount();
  return KueueGate::wait(StepOutcome(ctrl::Action::awaitChange()));  // the Workload's events follow
}

KueueGate KueueSteps::adopt(JobPass& pass, const api::IpuJob& job, const Json& workload) {
  const std::string name = stringMember(member(workload, "metadata"), "name");
  if (!podSetsMatch(workloadPodSets(job.spec), member(member(workload, "spec"), "podSets"))) {
    // As Kueue's own job integrations do: the Workload finished OutOfSync, and MultiKueue dispatches the job
    // again from the manager cluster.
    if (Status told = applyCondition(workload, "Finished", "OutOfSync",
                                     "The prebuilt workload is out of sync with its user job", pass);
        !told)
      return KueueGate::wait(StepOutcome(told.error()));
    pass.setPhase(kPhaseQueued, "WorkloadOutOfSync",
                  "The Workload " + name +
                      " MultiKueue dispatched this job with asks for other pod sets than the job's: it is "
                      "marked Finished (OutOfSync), and MultiKueue dispatches the job again");
    return KueueGate::wait(StepOutcome(ctrl::Action::awaitChange()));
  }
  auto patched = client_.patch(workloadResource(), pass.identity.ns, name, kube::PatchType::kMerge,
                               adoptionPatch(workload, pass.object));
  if (!patched && patched.error().code != ErrorCode::kConflict)
    return KueueGate::wait(StepOutcome(patched.error()));
  if (!patched) return KueueGate::wait(StepOutcome(ctrl::Action::requeueNow()));  // changed meanwhile
  log::info("adopted the Kueue Workload MultiKueue dispatched the job with",
            {{"job", pass.key}, {"workload", name}});
  pass.status.kueue = api::KueueStatus{name, localQueueOf(pass.object)};
  pass.setPhase(
      kPhaseQueued, "WaitingForKueue",
      "Dispatched by MultiKueue; waiting in " + queueText(*pass.status.kueue) + " (Workload " + name + ")");
  pass.status.desiredReplicas = job.spec.workerCount();
  return KueueGate::wait(StepOutcome(ctrl::Action::awaitChange()));
}

KueueGate KueueSteps::waitInKueue(JobPass& pass, const WorkloadView& view) {
  auto& kueue = *pass.status.kueue;
  kueue.admitted = false;
  kueue.awaitingPlacement = false;
  if (!view.clusterQueue.empty()) kueue.clusterQueue = view.clusterQueue;
  std::string message = "Waiting in " + queueText(kueue);
  if (!view.waiting.empty()) message += ": " + view.waiting;
  if (!view.active) message += " (its Workload is deactivated: spec.active is false)";
  pass.setPhase(kPhaseQueued, "WaitingForKueue", message);
  pass.status.queuePosition.reset();
  pass.status.startEstimate.reset();
  return KueueGate::wait(StepOutcome(ctrl::Action::awaitChange()));
}

KueueGate KueueSteps::giveBack(JobPass& pass, const Json& workload, const WorkloadView& view) {
  if (Status given = giveBackReservation(pass, workload); !given)
    return KueueGate::wait(StepOutcome(given.error()));
  return waitInKueue(pass, view);  // a conflict: the Workload changed, and its event brings the next pass
}

Status KueueSteps::giveBackReservation(const JobPass& pass, const Json& workload) {
  const Json patch = clearedAdmissionPatch(workload, formatTime(pass.now));
  auto patched =
      client_.patch(workloadResource(), pass.identity.ns, stringMember(member(workload, "metadata"), "name"),
                    kube::PatchType::kMerge, patch, "status");
  if (!patched && patched.error().code != ErrorCode::kConflict &&
      patched.error().code != ErrorCode::kNotFound)
    return patched.error();
  return {};
}

Status KueueSteps::applyStatus(const Json& body, const std::string& fieldManager, const JobPass& pass) {
  auto applied = client_.apply(workloadResource(), pass.identity.ns, body, fieldManager, true, "status");
  if (!applied && applied.error().code != ErrorCode::kNotFound) return applied.error();
  return {};
}

Status KueueSteps::applyCondition(const Json& workload, const std::string& type, const std::string& reason,
                                  const std::string& message, const JobPass& pass) {
  return applyStatus(workloadConditionApply(workload, type, true, reason, message, formatTime(pass.now)),
                     "ipu-operator-" + type, pass);
}

Status KueueSteps::workersReady(const JobPass& pass) {
  const kube::ObjectPtr workload = workloadOf(pass);
  if (!workload || viewOf(*workload).podsReady) return {};
  return applyCondition(*workload, "PodsReady", "Started",
                        "All pods reached readiness and the workload is running", pass);
}

Status KueueSteps::finished(const JobPass& pass) {
  const kube::ObjectPtr workload = workloadOf(pass);
  if (!workload || viewOf(*workload).finished) return {};
  return applyCondition(*workload, "Finished", finishedReason(pass.status.phase), pass.status.lastMessage,
                        pass);
}

Result<QueuePlacement> KueueSteps::placement(const JobPass& pass) const {
  if (!pass.status.kueue || options_.kueue.flavors == nullptr) return QueuePlacement{};
  const kube::ObjectPtr workload = workloadOf(pass);
  if (!workload) return QueuePlacement{};
  FlavorLookup lookup;
  const WorkloadView view = viewOf(*workload);
  for (const auto& [podSet, names] : view.flavors) {
    for (const std::string& name : names) {
      if (auto flavor = options_.kueue.flavors->get(name)) lookup.flavors[name] = *flavor;
    }
  }
  std::string missing;
  auto placed = placementFrom(view, lookup, missing);
  if (!placed) {
    return makeError(ErrorCode::kUnavailable, "Kueue assigned the ResourceFlavor " + missing +
                                                  ", which the operator does not see (yet)");
  }
  return *placed;
}

}  // namespace ipu::controllers
