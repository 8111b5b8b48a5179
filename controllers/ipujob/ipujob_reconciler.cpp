#include "ipujob/ipujob_reconciler.h"

#include <algorithm>
#include <set>
#include <utility>

#include "common/failpoint.h"
#include "common/log.h"
#include "ipujob/orphan_partitions.h"

namespace ipu::controllers {
namespace {

// Failed jobs that an edit of the spec (a new generation) sends back to admission: nothing ran yet.
const std::set<std::string> kReadmittableReasons = {"InvalidSpec", "Unschedulable", "WorkerRefused",
                                                    "NameTaken"};

std::string failureReason(const api::IpuJobStatus& status) {
  const api::Condition* failed = status.condition(kPhaseFailed);
  return failed ? failed->reason : "";
}

double secondsSince(const Json& job, Clock::WallTime now) {
  const auto since = parseTime(stringMember(member(job, "metadata"), "creationTimestamp"));
  return since ? std::chrono::duration<double>(now - *since).count() : -1;
}

std::string eventReasonFor(const std::string& phase, const std::string& reason) {
  if (phase == kPhaseQueued || phase == kPhaseFailed || phase == kPhaseSucceeded ||
      phase == kPhaseRestarting) {
    return phase == kPhaseQueued ? "Queued" : phase;
  }
  return reason;
}

// Whether the API server refused a write for good. 422/400 and 403 are, except a namespace's ResourceQuota
// being full (403 "exceeded quota"), which heals as other pods end.
bool refusedForGood(const Error& error) {
  if (error.code == ErrorCode::kInvalidArgument) return true;
  return error.code == ErrorCode::kPermissionDenied &&
         error.message.find("exceeded quota") == std::string::npos;
}

}  // namespace

IpuJobReconciler::IpuJobReconciler(kube::RestClient& client, const kube::Store& pods,
                                   VipuInventory& inventory, Admitter& admitter, kube::EventRecorder& events,
                                   Clock& clock, ReconcilerOptions options)
    : client_(client),
      pods_(pods),
      admitter_(admitter),
      events_(events),
      clock_(clock),
      options_(std::move(options)),
      vipuSlots_(options_.vipuPassesPerController),
      progressWrites_(clock, options_.progressWritePeriod),
      partitions_(inventory, admitter, events, options_.partitionIdPrefix, options_.legacyPartitionIdPrefix),
      workers_(client, events, options_.pods),
      finalizer_(client, ipuJobResource(), kCleanupFinalizer) {}

Result<Action> IpuJobReconciler::reconcile(const kube::ObjectPtr& job) {
  // A job that holds partitions calls their controller in this pass: a slow one gets only its share of the
  // workers, and the job waits its turn without holding one.
  std::optional<VipuCallSlots::Slot> slot;
  if (const auto held = heldPartitionsOf(*job); !held.empty()) {
    slot = vipuSlots_.tryAcquire(held.front().controller);
    if (!slot) return Action::requeue(options_.vipuSlotRetry);
  }
  return finalizer_.run(
      *job, [this](const Json& current) { return apply(current); },
      [this](const Json& current) { return cleanup(current); });
}

ctrl::Retry IpuJobReconciler::onError(const kube::ObjectPtr& job, const Error& error) {
  const ctrl::Retry retry = ctrl::defaultRetry(error);
  if (retry == ctrl::Retry::kAfterChange && error.code != ErrorCode::kCancelled) {
    events_.record(kube::referenceTo(*job), kube::EventType::kWarning, "ReconcileError",
                   "Retrying cannot fix this error; the job waits for a change: " + error.toString());
  }
  return retry;
}

Result<Action> IpuJobReconciler::cleanup(const Json& job) {
  JobPass pass(job, clock_.wallNow());
  if (auto released = partitions_.release(pass); !released) return released.error();
  // The quota ledger entry stays until the job is gone: the IPUQuota controller removes it then, so the
  // ledger never counts less than the jobs the API server still shows holding IPUs.
  log::info("released the partitions of a deleted IPUJob", {{"job", pass.key}});
  return Action::awaitChange();
}

Result<Action> IpuJobReconciler::apply(const Json& job) {
  JobPass pass(job, clock_.wallNow());
  Result<Action> action = step(pass);
  if (action && pass.progressOnly) {
    if (const Clock::Duration hold = progressWrites_.holdFor(pass.key); hold > Clock::Duration::zero()) {
      // Written by a pass within `hold`, unless a change (the next worker running) writes it sooner.
      if (!action->requeueAfter || hold < *action->requeueAfter) action->requeueAfter = hold;
      return action;
    }
  }
  // What the step found out is written even when it failed (a reason the user should see).
  if (Status written = write(pass); !written) {
    if (pass.admitted) admitter_.forget(pass.key);  // not recorded: nothing is promised
    return action ? Result<Action>(written.error()) : action;
  }
  announce(pass);
  return action;
}

Result<Action> IpuJobReconciler::step(JobPass& pass) {
  const std::string phase = pass.status.phase;
  if (isTerminalPhase(phase)) {
    if (phase == kPhaseFailed && pass.generation != pass.status.observedGeneration.value_or(0) &&
        kReadmittableReasons.contains(failureReason(pass.status))) {
      return readmit(pass);
    }
    return finished(pass);
  }
  auto job = api::parseIpuJob(pass.object);
  if (!job) {
    // Only an older CRD could let this through while running: stop it cleanly rather than strand IPUs.
    if (pass.holdsPartitions()) return fail(pass, "InvalidSpec", job.error().message);
    pass.setPhase(kPhaseFailed, "InvalidSpec", job.error().message);
    return Action::awaitChange();  // retrying cannot help until the user edits the job
  }
  if (job->spec.suspend) return suspend(pass, *job);
  if (!pass.holdsPartitions()) return admit(pass, *job);
  if (auto drift = shapeDrift(pass.status, job->spec)) return reshape(pass, *job, *drift);
  return run(pass, *job);
}

Result<Action> IpuJobReconciler::readmit(JobPass& pass) {
  // The job never ran; its edited spec gets a fresh start (the old failure stays in the Event history).
  const std::string reason = failureReason(pass.status);
  auto& status = pass.status;
  status.phase = kPhasePending;
  status.launcherStatus = launcherStatusFor(kPhasePending);
  status.lastMessage = "The spec changed: the job is admitted again";
  status.conditions.clear();
  status.forgetPartitions();
  status.completionTime.reset();
  status.startTime.reset();
  status.restartCount.reset();
  status.queuePosition.reset();
  pass.conditional = true;
  events_.record(kube::referenceTo(pass.object), kube::EventType::kNormal, "SpecChanged",
                 "The spec changed after the job failed with " + reason + ": admitting it again");
  return Action::requeueNow();
}

Result<Action> IpuJobReconciler::finished(JobPass& pass) {
  if (pass.holdsPartitions()) {
    failpoint("ipujob/before-release");
    if (auto released = partitions_.release(pass); !released) return released.error();
  }
  if (Status released = releaseQuota(pass); !released) return released.error();
  const auto spec = api::parseIpuJobSpec(member(pass.object, "spec"));
  const auto doomed = podsToRemoveAtEnd(pods_.listOwnedBy(stringMember(pass.object["metadata"], "uid")),
                                        spec ? spec->cleanPodPolicy : api::CleanPodPolicy::kNone,
                                        stringMember(pass.object["metadata"], "name"));
  if (auto removed = workers_.remove(doomed); !removed) return removed.error();
  // The partitions are released: pods whose node stopped answering can be force-deleted.
  auto forced = workers_.forceRemoveOverdue(
      pass, pods_.listOwnedBy(stringMember(pass.object["metadata"], "uid")), options_.podDeletionTimeout);
  if (!forced) return forced.error();
  auto action = removeAfterTtl(pass);
  if (action && *forced && (!action->requeueAfter || **forced < *action->requeueAfter))
    action->requeueAfter = **forced;
  return action;
}

Result<Action> IpuJobReconciler::removeAfterTtl(JobPass& pass) {
  const Json& ttl = member(member(pass.object, "spec"), "ttlSecondsAfterFinished");
  const auto completed = parseTime(pass.status.completionTime.value_or(""));
  if (!ttl.is_number_integer() || !completed) return Action::awaitChange();
  // Saturated to the CRD's maximum (a year): an object stored before the bound must not overflow the time.
  const bool huge =
      ttl.is_number_unsigned() && ttl.get<uint64_t>() > static_cast<uint64_t>(api::kMaxSpecSeconds);
  const int64_t seconds =
      huge ? api::kMaxSpecSeconds : std::clamp<int64_t>(ttl.get<int64_t>(), 0, api::kMaxSpecSeconds);
  const auto expiry = *completed + std::chrono::seconds(seconds);
  if (pass.now < expiry)
    return Action::requeue(std::chrono::duration_cast<Clock::Duration>(expiry - pass.now));
  kube::DeleteOptions options;
  options.propagationPolicy = "Background";
  options.preconditionUid = stringMember(pass.object["metadata"], "uid");
  auto removed = client_.remove(ipuJobResource(), stringMember(pass.object["metadata"], "namespace"),
                                stringMember(pass.object["metadata"], "name"), options);
  if (!removed && removed.error().code != ErrorCode::kNotFound) return removed.error();
  log::info("deleted a finished IPUJob after ttlSecondsAfterFinished", {{"job", pass.key}});
  return Action::awaitChange();
}

Status IpuJobReconciler::letGo(JobPass& pass, const api::IpuJob& job) {
  if (auto removed = workers_.remove(pods_.listOwnedBy(job.identity.uid)); !removed) return removed.error();
  if (auto released = partitions_.release(pass); !released) return released.error();
  if (Status released = releaseQuota(pass); !released) return released.error();
  pass.status.forgetPartitions();
  pass.status.currentReplicas = 0;
  pass.status.startTime.reset();
  return {};
}

Result<Action> IpuJobReconciler::suspend(JobPass& pass, const api::IpuJob& job) {
  if (Status gone = letGo(pass, job); !gone) return gone.error();
  pass.setPhase(kPhaseSuspended, "Suspended", "The job is suspended");
  return Action::awaitChange();
}

// The spec's shape changed while the job held partitions (edited while suspended, then resumed before any
// operator saw the suspension): its pods and partitions are of the old shape, so they all go and the job is
// admitted again; pods of the new shape never run on partitions of the old.
Result<Action> IpuJobReconciler::reshape(JobPass& pass, const api::IpuJob& job, const std::string& drift) {
  if (Status gone = letGo(pass, job); !gone) return gone.error();
  pass.setPhase(kPhasePending, "SpecChanged",
                "The job's shape changed (" + drift + ") since it was admitted: admitting it again");
  return Action::requeueNow();
}

Action IpuJobReconciler::waitFor(JobPass& pass, const Error& blocker) {
  pass.status.lastMessage = blocker.message;  // the user sees what the job waits for
  return Action::requeue(options_.waitRetry);
}

Result<Action> IpuJobReconciler::admit(JobPass& pass, const api::IpuJob& job) {
  auto decided = admitter_.decide(pass.key);
  if (!decided) {
    // V-IPU could not be asked: the user sees why nothing happens; the controller retries with backoff.
    pass.setPhase(kPhaseQueued, "VipuUnavailable", decided.error().message);
    return decided.error();
  }
  if (!*decided) return Action::requeue(std::chrono::seconds(1));  // the cache is behind; its event follows
  const AdmissionDecision& decision = (*decided)->decision;
  switch (decision.kind) {
    case AdmissionDecision::Kind::kAdmit: {
      auto claimed = claimQuota(pass, job);
      if (!claimed || *claimed) admitter_.forget(pass.key);  // nothing is promised
      if (!claimed) return claimed.error();
      if (*claimed) {
        // The quota at the API server is tighter than the caches showed (another writer took the room).
        return waitInQueue(pass, job,
                           {AdmissionDecision::Kind::kWait, {}, {}, 0, kReasonQuotaExceeded, **claimed});
      }
      recordAdmission(pass, job, **decided);
      return Action::awaitChange();  // the status write's own event starts the next step
    }
    case AdmissionDecision::Kind::kNeverFits:
      pass.setPhase(kPhaseFailed, "Unschedulable", decision.message);
      return Action::awaitChange();
    case AdmissionDecision::Kind::kWait:
      break;
  }
  return waitInQueue(pass, job, decision);
}

Action IpuJobReconciler::waitInQueue(JobPass& pass, const api::IpuJob& job,
                                     const AdmissionDecision& decision) {
  // Position 0: not in line (only an admin's change of the quota, or the job's own, can let it run).
  const std::string where =
      decision.position > 0 ? " (position " + std::to_string(decision.position) + " in the queue)" : "";
  pass.setPhase(kPhaseQueued, decision.reason,
                (decision.reason == "InsufficientCapacity" ? "Waiting for capacity" : "Waiting") + where +
                    ": " + decision.message);
  if (decision.position > 0) pass.status.queuePosition = decision.position;
  pass.status.desiredReplicas = job.spec.workerCount();
  // Not in line: a claim it holds (written before a refusal, or before a crash) would only keep other jobs
  // of the namespace out.
  if (decision.position == 0 && options_.quotaLedger != nullptr &&
      options_.quotaLedger->claimed(job.identity.ns, job.identity.name, job.identity.uid)) {
    if (Status released = options_.quotaLedger->release(job.identity.ns, job.identity.name, job.identity.uid);
        !released) {
      log::warning("could not give back a waiting job's quota claim; retrying",
                   {{"job", pass.key}, {"error", released.error().toString()}});
      return Action::requeue(std::chrono::seconds(1));
    }
  }
  return Action::requeue(options_.queuedRetry);
}

Result<std::optional<std::string>> IpuJobReconciler::claimQuota(const JobPass& pass, const api::IpuJob& job) {
  if (options_.quotaLedger == nullptr) return std::optional<std::string>();
  return options_.quotaLedger->claim({job.identity.ns, job.identity.name, job.identity.uid,
                                      std::int64_t{job.spec.jobInstances} * job.spec.ipusPerJobInstance,
                                      stringMember(pass.object["metadata"], "resourceVersion")});
}

Status IpuJobReconciler::releaseQuota(const JobPass& pass) {
  // Only once the status as stored shows nothing held (this pass's release is written at its end; the next
  // pass removes the entry): the ledger never counts less than what the API server shows held.
  if (options_.quotaLedger == nullptr || !pass.observed.heldPartitions().empty()) return {};
  const Json& metadata = pass.object["metadata"];
  return options_.quotaLedger->release(stringMember(metadata, "namespace"), stringMember(metadata, "name"),
                                       stringMember(metadata, "uid"));
}

void IpuJobReconciler::recordAdmission(JobPass& pass, const api::IpuJob& job, const Admission& admission) {
  const AdmissionDecision& decision = admission.decision;
  const int size = job.spec.ipusPerJobInstance;
  auto& status = pass.status;
  status.partitions.clear();
  status.admittedShape = {job.spec.jobInstances, size, job.spec.workersPerJobInstance};
  for (std::uint32_t instance = 0; instance < decision.placements.size(); ++instance) {
    status.partitions.push_back(
        {partitionIdFor(options_.partitionIdPrefix, job.identity.ns, job.identity.name, instance),
         static_cast<int>(instance), size, decision.controller,
         describeIpus(admission.planner->topology(), decision.placements[instance].block),
         kPartitionPlanned});
  }
  // Ids go into status before any partition exists (and only if the job is still the version this pass
  // planned), so a crash after CreatePartition leaves nothing that status does not name.
  pass.setPhase(kPhaseCreating, "Admitted",
                "Admitted to " + decision.controller + ": creating " +
                    std::to_string(decision.placements.size()) + " partition(s) of " + std::to_string(size) +
                    " IPUs");
  status.desiredReplicas = job.spec.workerCount();
  status.currentReplicas = 0;
  status.startTime = formatTime(pass.now);
  status.completionTime.reset();
  pass.conditional = true;
  pass.admitted = true;
  pass.failpointAfterWrite = "ipujob/after-admission-recorded";
  warnIfLauncherNotRun(pass, job.spec);
}

Result<Action> IpuJobReconciler::run(JobPass& pass, const api::IpuJob& job) {
  std::optional<Clock::Duration> deadlineIn;
  if (job.spec.activeDeadlineSeconds) {
    if (const auto started = parseTime(pass.status.startTime.value_or(""))) {
      const auto deadline = *started + std::chrono::seconds(*job.spec.activeDeadlineSeconds);
      if (pass.now >= deadline) {
        return fail(pass, "DeadlineExceeded",
                    "The job was active longer than activeDeadlineSeconds (" +
                        std::to_string(*job.spec.activeDeadlineSeconds) + " s)");
      }
      deadlineIn = std::chrono::duration_cast<Clock::Duration>(deadline - pass.now);
    }
  }
  // A restart removes the old attempt's pods before anything else: a partition created again for the new
  // attempt must never be in reach of pods still running the old one.
  if (pass.status.phase == kPhaseRestarting) {
    const WorkerPods pods = splitByAttempt(pods_.listOwnedBy(job.identity.uid), pass.attempt());
    if (!pods.stale.empty()) return restart(pass, pods.stale);
  }
  auto partitions = partitions_.ensure(pass, job.spec);
  // Looked at once more right away: a partition V-IPU activates at once starts its pods in this pass rather
  // than after an activation poll.
  if (partitions && partitions->createdNow) partitions = partitions_.ensure(pass, job.spec);
  if (!partitions) {
    if (partitions.error().code == ErrorCode::kFailedPrecondition) return waitFor(pass, partitions.error());
    return partitions.error();
  }
  switch (partitions->kind) {
    case PartitionsState::Kind::kActive:
      return runWorkers(pass, job, *partitions, deadlineIn);
    case PartitionsState::Kind::kActivating:
      return Action::requeue(options_.activationPoll);
    case PartitionsState::Kind::kError:
      return fail(pass, "PartitionError", partitions->message);
    case PartitionsState::Kind::kControllerUnknown:
      return fail(pass, "VipuControllerUnknown", partitions->message);
    case PartitionsState::Kind::kNotOwned:
      return fail(pass, "PartitionNotOwned", partitions->message);
    case PartitionsState::Kind::kLost:
      return partitionLost(pass, job, *partitions);
    case PartitionsState::Kind::kNoLongerFits:
      break;
  }
  // Someone else took the IPUs while no process ran: give back what exists and return to the queue.
  if (auto released = partitions_.release(pass); !released) return released.error();
  pass.setPhase(kPhaseQueued, "InsufficientCapacity",
                "The capacity this job was admitted to has been taken; waiting again");
  pass.status.forgetPartitions();
  return Action::requeueNow();
}

Result<Action> IpuJobReconciler::runWorkers(JobPass& pass, const api::IpuJob& job,
                                            const PartitionsState& partitions,
                                            std::optional<Clock::Duration> deadlineIn) {
  const WorkerPods pods = splitByAttempt(pods_.listOwnedBy(job.identity.uid), pass.attempt());
  if (pass.status.phase == kPhaseRestarting) return restart(pass, pods.stale);
  // Leftovers of an earlier attempt outside a restart (a cache that was behind): they only go.
  if (auto removed = workers_.remove(pods.stale); !removed) return removed.error();
  // Until every worker has run once, missing pods are being created; after that, a missing pod was lost.
  const bool allStarted = pass.status.phase == kPhaseRunning;
  if (!allStarted) {
    if (auto created = workers_.createMissing(pass, job, pods, partitions); !created) {
      // Refused for good (invalid, or forbidden: Pod Security admission, missing permissions): the job can
      // never start, so it ends with the API server's words and gives its IPUs back instead of holding them
      // while it retries.
      if (refusedForGood(created.error())) {
        return fail(pass, "WorkerRefused",
                    "The API server refused the job's workers: " + created.error().message);
      }
      if (created.error().code == ErrorCode::kAlreadyExists)
        return fail(pass, "NameTaken", created.error().message);
      if (created.error().code == ErrorCode::kFailedPrecondition) return waitFor(pass, created.error());
      return created.error();
    }
  }
  const PodLimits limits{pass.now, options_.podStartTimeout, options_.podDeletionTimeout};
  return judge(pass, job, observeWorkers(job, pods, allStarted, limits), deadlineIn);
}

Result<Action> IpuJobReconciler::judge(JobPass& pass, const api::IpuJob& job,
                                       const WorkerObservation& workers,
                                       std::optional<Clock::Duration> deadlineIn) {
  const int count = job.spec.workerCount();
  auto& status = pass.status;
  status.currentReplicas = workers.running;
  status.desiredReplicas = count;
  status.currentInstances = job.spec.jobInstances;
  const WorkerVerdict verdict = judgeWorkers(job.spec, pass.attempt(), workers.outcomes);
  switch (verdict.kind) {
    case WorkerVerdict::Kind::kFail:
      return fail(pass, verdict.reason, verdict.message);
    case WorkerVerdict::Kind::kSucceed:
      status.completionTime = formatTime(pass.now);
      pass.setPhase(kPhaseSucceeded, verdict.reason, verdict.message);
      return Action::requeueNow();  // finished(): partitions, cleanPodPolicy, TTL
    case WorkerVerdict::Kind::kRestart:
      return beginRestart(pass, verdict);
    case WorkerVerdict::Kind::kContinue:
      break;
  }
  if (workers.allUp(count)) {
    pass.setPhase(kPhaseRunning, "Running", "All worker pods are running");
  } else {
    pass.progressOnly = pass.observed.phase == kPhaseCreating;
    pass.setPhase(kPhaseCreating, "PodsStarting",
                  "Waiting for worker pods: " + std::to_string(workers.running + workers.succeeded) + " of " +
                      std::to_string(count) + " running");
  }
  // Look again at the deadline, or when a pod reaches one of its limits, whichever is first.
  std::optional<Clock::Duration> next = deadlineIn;
  if (workers.nextCheck && (!next || *workers.nextCheck < *next)) next = workers.nextCheck;
  return Action{next};
}

std::vector<kube::ObjectPtr> IpuJobReconciler::overdueDeletions(
    const JobPass& pass, const std::vector<kube::ObjectPtr>& pods) const {
  std::vector<kube::ObjectPtr> overdue;
  if (options_.podDeletionTimeout <= Clock::Duration::zero()) return overdue;
  for (const kube::ObjectPtr& pod : pods) {
    if (deletionOverdue(*pod, pass.now, options_.podDeletionTimeout)) overdue.push_back(pod);
  }
  return overdue;
}

Result<Action> IpuJobReconciler::beginRestart(JobPass& pass, const WorkerVerdict& verdict) {
  pass.status.restartCount = pass.attempt() + 1;
  pass.status.currentReplicas = 0;
  pass.setPhase(kPhaseRestarting, verdict.reason, verdict.message);
  pass.conditional = true;
  pass.failpointAfterWrite = "ipujob/after-restart-recorded";
  return Action::requeueNow();
}

Result<Action> IpuJobReconciler::partitionLost(JobPass& pass, const api::IpuJob& job,
                                               const PartitionsState& lost) {
  PartitionSteps::planLostAgain(pass, lost);
  events_.record(kube::referenceTo(pass.object), kube::EventType::kWarning, "PartitionLost", lost.message);
  // Already restarting (the loss came between the decision and the new attempt): the lost partition is
  // simply created again before the new attempt starts.
  if (pass.status.phase == kPhaseRestarting) return Action::requeueNow();
  const WorkerVerdict verdict = judgeLostAttempt(job.spec, pass.attempt(), "PartitionLost", lost.message);
  if (verdict.kind == WorkerVerdict::Kind::kFail) return fail(pass, verdict.reason, verdict.message);
  return beginRestart(pass, verdict);
}

Result<Action> IpuJobReconciler::restart(JobPass& pass, const std::vector<kube::ObjectPtr>& stalePods) {
  // Old pods first (their names are the new pods' names), then a reset of every partition, so the new attempt
  // starts on clean IPUs; only then the next attempt's pods.
  if (!stalePods.empty()) {
    if (auto removed = workers_.remove(stalePods); !removed) return removed.error();
    failpoint("ipujob/after-restart-pods-deleted");
    // Pods whose node stopped answering never go by themselves: their IPUs are reset first, so that they can
    // no longer use them, and only then are they force-deleted.
    const auto overdue = overdueDeletions(pass, stalePods);
    if (!overdue.empty()) {
      if (auto reset = partitions_.reset(pass); !reset) return reset.error();
      if (auto forced = workers_.forceRemoveOverdue(pass, overdue, options_.podDeletionTimeout); !forced)
        return forced.error();
    }
    return Action::requeue(options_.podDeletionPoll);
  }
  if (auto reset = partitions_.reset(pass); !reset) return reset.error();
  failpoint("ipujob/after-partitions-reset");
  pass.setPhase(kPhaseCreating, "Restarted",
                "Restart " + std::to_string(pass.attempt()) + ": creating worker pods");
  pass.conditional = true;
  return Action::requeueNow();
}

Result<Action> IpuJobReconciler::fail(JobPass& pass, const std::string& reason, const std::string& message) {
  // The verdict first: finished() then stops the workers still running, releases the partitions and applies
  // cleanPodPolicy and TTL, whichever process gets there.
  pass.setPhase(kPhaseFailed, reason, message);
  pass.status.currentReplicas = 0;
  pass.status.completionTime = formatTime(pass.now);
  return Action::requeueNow();
}

Status IpuJobReconciler::write(const JobPass& pass) {
  Json changes = api::statusPatch(pass.observed, pass.status);
  if (changes.empty()) return {};  // nothing new: a repeated reconcile writes nothing
  const Json& metadata = pass.object["metadata"];
  Json patch = {{"status", std::move(changes)}};
  if (pass.conditional) patch["metadata"] = {{"resourceVersion", stringMember(metadata, "resourceVersion")}};
  auto patched = client_.patch(ipuJobResource(), stringMember(metadata, "namespace"),
                               stringMember(metadata, "name"), kube::PatchType::kMerge, patch, "status");
  if (!patched) return patched.error();
  progressWrites_.written(pass.key);
  if (pass.failpointAfterWrite != nullptr) failpoint(pass.failpointAfterWrite);
  return {};
}

void IpuJobReconciler::announce(const JobPass& pass) {
  const std::string& phase = pass.status.phase;
  if (pass.admitted && options_.hooks.admitted) options_.hooks.admitted(secondsSince(pass.object, pass.now));
  if (phase == pass.observed.phase || pass.phaseReason.empty()) return;
  if (phase == kPhaseRunning && pass.attempt() == 0 && options_.hooks.running) {
    options_.hooks.running(secondsSince(pass.object, pass.now));
  }
  log::info("IPUJob phase changed", {{"job", pass.key}, {"phase", phase}, {"reason", pass.phaseReason}});
  // Running is the routine end of starting, shown by the phase and the Ready condition: no Event, which
  // would cost every job one more write at the client's QPS. Its decisions and troubles each get one.
  if (phase == kPhaseRunning) return;
  const bool warning = phase == kPhaseFailed || phase == kPhaseRestarting;
  events_.record(kube::referenceTo(pass.object),
                 warning ? kube::EventType::kWarning : kube::EventType::kNormal,
                 eventReasonFor(phase, pass.phaseReason), pass.status.lastMessage);
}

void IpuJobReconciler::warnIfLauncherNotRun(const JobPass& pass, const api::IpuJobSpec& spec) {
  // Parsed but not acted on: say so loudly rather than let the job look as if its launcher ran.
  if (auto message = launcherNotRunMessage(spec, options_.pods.runtime)) {
    events_.record(kube::referenceTo(pass.object), kube::EventType::kWarning, "LauncherNotRun", *message);
  }
}

}  // namespace ipu::controllers
