#include "ipujob/ipujob_reconciler.h"

#include <set>
#include <utility>

#include "common/failpoint.h"
#include "common/log.h"

namespace ipu::controllers {
namespace {

// Failed jobs that an edit of the spec (a new generation) sends back to admission: nothing ran yet.
const std::set<std::string> kReadmittableReasons = {"InvalidSpec", "ForbiddenPodSpec", "Unschedulable",
                                                    "WorkerRefused", "NameTaken"};

bool readmittable(const JobPass& pass) {
  const api::Condition* failed = pass.status.condition(kPhaseFailed);
  return pass.status.phase == kPhaseFailed && pass.generation != pass.status.observedGeneration.value_or(0) &&
         failed != nullptr && kReadmittableReasons.contains(failed->reason);
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
      events_(events),
      workerPods_(pods, events),
      clock_(clock),
      options_(std::move(options)),
      vipuSlots_(options_.vipuPassesPerController),
      progressWrites_(clock, options_.progressWritePeriod),
      activationPolls_(options_.activationPoll),
      partitions_(inventory, admitter, events, options_.partitionIdPrefix, options_.legacyPartitionIdPrefix),
      workers_(client, events, clock, options_.pods),
      admission_(admitter, events, options_),
      release_(client, workerPods_, partitions_, workers_, admission_, events, options_),
      restarts_(partitions_, workers_, events, options_),
      kueue_(client, workerPods_, events, options_),
      multiKueue_(kueue_, events, options_, clock),
      ownWrites_(clock),
      finalizer_(client, ipuJobResource(), kCleanupFinalizer, &ownWrites_) {}

Result<Action> IpuJobReconciler::reconcile(const kube::ObjectPtr& job) {
  if (const std::string manager = api::managerOf(*job); manager != options_.controllerName) {
    // Dispatched by MultiKueue from this cluster: only its Workload is kept here.
    if (manager == api::kMultiKueueControllerName && options_.dispatchesForMultiKueue())
      return multiKueue_.reconcile(job);
    // Another install's job: never touched, not even its finalizer.
    return Action::awaitChange();
  }
  // Still the version this process's last write of the job replaced: that write's watch event is on its way
  // and queues the job again. A pass now would decide again what was decided (a second finalizer patch, an
  // admission its precondition refuses, an Event sent twice). The requeue only guards against an event lost.
  if (ownWrites_.behind(kube::objectKey(*job), stringMember(member(*job, "metadata"), "resourceVersion")))
    return Action::requeue(std::chrono::seconds(1));
  // A job that holds partitions calls their controller in this pass: a slow one gets only its share of the
  // workers, and the job waits its turn without holding one.
  std::optional<VipuCallSlots::Slot> slot;
  if (const auto held = heldPartitionsOf(*job); !held.empty()) {
    slot = vipuSlots_.tryAcquire(held.front().controller, kube::objectKey(*job));
    // Woken when a slot comes back; the requeue only guards against a wake that found nothing to do.
    if (!slot) return Action::requeue(options_.vipuSlotGuard);
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

Result<std::optional<Action>> IpuJobReconciler::cleanup(const Json& job) {
  JobPass pass(job, clock_.wallNow());
  auto done = release_.deleted(pass);
  if (!done || *done) return done;  // failed, or its workers are still stopping
  // The quota ledger entry stays until the job is gone: the IPUQuota controller removes it then, so the
  // ledger never counts less than the jobs the API server still shows holding IPUs.
  log::info("released the partitions of a deleted IPUJob", {{"job", pass.key}});
  return done;
}

Result<Action> IpuJobReconciler::apply(const Json& job) {
  JobPass pass(job, clock_.wallNow());
  StepOutcome outcome = step(pass);
  if (outcome.next && outcome.progressOnly) {
    if (const Clock::Duration hold = progressWrites_.holdFor(pass.key); hold > Clock::Duration::zero()) {
      // Written by a pass within `hold`, unless a change (the next worker running) writes it sooner.
      if (!outcome.next->requeueAfter || hold < *outcome.next->requeueAfter)
        outcome.next->requeueAfter = hold;
      return outcome.next;
    }
  }
  // What the step found out is written even when it failed (a reason the user should see).
  if (Status written = write(pass, outcome); !written) {
    if (outcome.decision == StepOutcome::Decision::kAdmitted) admission_.notRecorded(pass);
    return outcome.next ? Result<Action>(written.error()) : outcome.next;
  }
  announce(pass, outcome);
  return outcome.next;
}

StepOutcome IpuJobReconciler::step(JobPass& pass) {
  if (isTerminalPhase(pass.status.phase)) {
    if (readmittable(pass)) return release_.readmit(pass);
    StepOutcome outcome = release_.finished(pass);
    // Kueue frees the job's quota when its Workload says Finished: only once its IPUs are released.
    if (pass.status.kueue && !pass.holdsPartitions()) {
      if (Status told = kueue_.finished(pass); !told) return told.error();
    }
    return outcome;
  }
  if (!pass.parsed) {
    // Only an older CRD could let this through while running: stop it cleanly rather than strand IPUs.
    if (pass.holdsPartitions()) return pass.fail("InvalidSpec", pass.parsed.error().message);
    pass.setPhase(kPhaseFailed, "InvalidSpec", pass.parsed.error().message);
    return Action::awaitChange();  // retrying cannot help until the user edits the job
  }
  const api::IpuJob& job = *pass.parsed;
  if (job.spec.suspend) return release_.suspend(pass);
  if (kueue_.queues(pass)) {
    // The namespace's worker pod profile applies to a job Kueue queues too: refused, it never gets a
    // Workload.
    if (!pass.status.kueue && admission_.refusedTemplate(pass, job)) return Action::awaitChange();
    KueueGate gate = kueue_.gate(pass, job);
    switch (gate.kind) {
      case KueueGate::Kind::kWait:
        return std::move(gate.outcome);
      case KueueGate::Kind::kEvict:
        return release_.evict(pass, gate.reason, gate.message);
      case KueueGate::Kind::kPlace: {
        StepOutcome outcome = admit(pass, job);
        if (Status told = kueue_.reportPlacement(pass, gate.check); !told) return told.error();
        return outcome;
      }
      case KueueGate::Kind::kGoOn:
        break;
    }
  }
  if (!pass.holdsPartitions()) return admit(pass, job);
  if (auto drift = shapeDrift(pass.status, job.spec)) return release_.reshape(pass, *drift);
  return run(pass, job);
}

StepOutcome IpuJobReconciler::admit(JobPass& pass, const api::IpuJob& job) {
  StepOutcome outcome = admission_.admit(pass, job);
  if (outcome.decision != StepOutcome::Decision::kAdmitted) return outcome;
  if (auto message = kueue_.notUsedMessage(pass)) {
    events_.record(kube::referenceTo(pass.object), kube::EventType::kWarning, "KueueNotUsed", *message);
  }
  // The runtime Secret is recorded by the admission's own write, which saves the job a write of its own
  // before its pods. Not made here (the API server refused it for now), it is made before the first pod.
  if (Status issued = workers_.issueRuntimeSecret(pass, job); !issued) {
    log::warning("could not create the runtime Secret at admission; creating it before the pods",
                 {{"job", pass.key}, {"error", issued.error().toString()}});
  }
  return outcome;
}

StepOutcome IpuJobReconciler::run(JobPass& pass, const api::IpuJob& job) {
  std::optional<Clock::Duration> deadlineIn;
  if (job.spec.activeDeadlineSeconds) {
    if (const auto started = parseTime(pass.status.startTime.value_or(""))) {
      const auto deadline = *started + std::chrono::seconds(*job.spec.activeDeadlineSeconds);
      if (pass.now >= deadline) {
        return pass.fail("DeadlineExceeded", "The job was active longer than activeDeadlineSeconds (" +
                                                 std::to_string(*job.spec.activeDeadlineSeconds) + " s)");
      }
      deadlineIn = std::chrono::duration_cast<Clock::Duration>(deadline - pass.now);
    }
  }
  // A restart removes the old attempt's pods before anything else: a partition created again for the new
  // attempt must never be in reach of pods still running the old one.
  if (pass.status.phase == kPhaseRestarting) {
    const WorkerPods pods = splitByAttempt(workerPods_.of(pass), pass.attempt());
    if (!pods.stale.empty()) return restarts_.restart(pass, pods.stale);
  }
  auto partitions = partitions_.ensure(pass, job.spec);
  // Looked at once more right away: a partition V-IPU activates at once starts its pods in this pass rather
  // than after an activation poll.
  if (partitions && partitions->createdNow) partitions = partitions_.ensure(pass, job.spec);
  if (!partitions) return partitions.error();
  if (partitions->kind != PartitionsState::Kind::kActivating) activationPolls_.settled(pass.key);
  switch (partitions->kind) {
    case PartitionsState::Kind::kActive:
      return runWorkers(pass, job, *partitions, deadlineIn);
    case PartitionsState::Kind::kActivating:
      // The pods start while V-IPU activates (their runtime waits for the partition): the kubelet's start
      // of a pod and the activation overlap instead of adding up.
      if (startsWhileActivating(options_.pods) && !partitions->createdNow &&
          partitions->byId.size() == pass.status.heldPartitions().size())
        return runWorkers(pass, job, *partitions, deadlineIn);
      return Action::requeue(activationPolls_.next(pass.key, clock_.now()));
    case PartitionsState::Kind::kBlocked:
      return waitFor(pass, partitions->message);
    case PartitionsState::Kind::kError:
      return pass.fail("PartitionError", partitions->message);
    case PartitionsState::Kind::kControllerUnknown:
      return pass.fail("VipuControllerUnknown", partitions->message);
    case PartitionsState::Kind::kNotOwned:
      return pass.fail("PartitionNotOwned", partitions->message);
    case PartitionsState::Kind::kLost:
      return restarts_.partitionLost(pass, job, *partitions);
    case PartitionsState::Kind::kNoLongerFits:
      break;
  }
  // Someone else took the IPUs while no process ran: give back what exists and return to the queue (a job
  // Kueue admitted through the placement check: the check says Retry, and Kueue queues it again).
  if (auto released = partitions_.release(pass); !released) return released.error();
  if (pass.status.kueue) {
    if (Status told =
            kueue_.placementLost(pass, "The IPUs the job was placed on have been taken; placing it again");
        !told)
      return told.error();
  }
  pass.setPhase(kPhaseQueued, "InsufficientCapacity",
                "The capacity this job was admitted to has been taken; waiting again");
  pass.status.forgetPartitions();
  return Action::requeueNow();
}

StepOutcome IpuJobReconciler::runWorkers(JobPass& pass, const api::IpuJob& job,
                                         const PartitionsState& partitions,
                                         std::optional<Clock::Duration> deadlineIn) {
  const WorkerPods pods = splitByAttempt(workerPods_.of(pass), pass.attempt());
  if (pass.status.phase == kPhaseRestarting) return restarts_.restart(pass, pods.stale);
  // Leftovers of an earlier attempt outside a restart (a cache that was behind): they only go.
  if (auto removed = workers_.remove(pods.stale); !removed) return removed.error();
  // Until every worker has run once, missing pods are being created; after that, a missing pod was lost.
  const bool allStarted = pass.status.phase == kPhaseRunning;
  std::optional<Clock::Duration> awaitedIn;  // pods created but not in the cache yet: look again by then
  if (!allStarted) {
    auto placement = kueue_.placement(pass);
    if (!placement) return waitFor(pass, placement.error().message);
    auto created = workers_.createMissing(pass, job, pods, *placement, partitions);
    // Refused for good (invalid, or forbidden: Pod Security admission, missing permissions): the job can
    // never start, so it ends with the API server's words and gives its IPUs back instead of holding them
    // while it retries.
    if (!created && refusedForGood(created.error())) {
      return pass.fail("WorkerRefused",
                       "The API server refused the job's workers: " + created.error().message);
    }
    if (!created) return created.error();
    switch (created->kind) {
      case ChildrenState::Kind::kCreated:
        awaitedIn = created->recheckIn;
        break;
      case ChildrenState::Kind::kBlocked:
        return waitFor(pass, created->message);
      case ChildrenState::Kind::kNameTaken:
        return pass.fail("NameTaken", created->message);
      case ChildrenState::Kind::kInvalidSpec:
        return pass.fail("InvalidSpec", created->message);
      case ChildrenState::Kind::kSecretRecorded:
        // Only if the job is still the version read: a pass that read it stale must never record another.
        return StepOutcome::decided(StepOutcome::Decision::kRuntimeSecretRecorded, Action::requeueNow());
    }
  }
  const PodLimits limits{pass.now, options_.podStartTimeout, options_.podDeletionTimeout};
  WorkerObservation observed = observeWorkers(job, pods, allStarted, limits);
  keepSooner(observed.nextCheck, awaitedIn);
  const bool activating = partitions.kind == PartitionsState::Kind::kActivating;
  if (activating) keepSooner(observed.nextCheck, activationPolls_.next(pass.key, clock_.now()));
  return judge(pass, job, observed, deadlineIn, activating);
}

StepOutcome IpuJobReconciler::judge(JobPass& pass, const api::IpuJob& job, const WorkerObservation& workers,
                                    std::optional<Clock::Duration> deadlineIn, bool partitionsActivating) {
  const int count = job.spec.workerCount();
  auto& status = pass.status;
  status.currentReplicas = workers.running;
  status.desiredReplicas = count;
  status.currentInstances = job.spec.jobInstances;
  const WorkerVerdict verdict = judgeWorkers(job.spec, pass.attempt(), workers.outcomes);
  const bool allDone = verdict.kind == WorkerVerdict::Kind::kSucceed ||
                       (verdict.kind == WorkerVerdict::Kind::kRestart && verdict.reason == "Completed");
  if (job.spec.interactive && allDone) {
    // Ended by idle reclaim: the session is over, whatever restartPolicy would do with finished workers.
    if (auto idle = idleReclaimReason(workers.outcomes)) {
      status.completionTime = formatTime(pass.now);
      pass.setPhase(kPhaseSucceeded, "InteractiveIdle",
                    "Reclaimed as idle (" + *idle + "): workers stopped, IPUs released");
      return Action::requeueNow();  // finished(): partitions, pods, TTL
    }
  }
  switch (verdict.kind) {
    case WorkerVerdict::Kind::kFail:
      return pass.fail(verdict.reason, verdict.message);
    case WorkerVerdict::Kind::kSucceed:
      status.completionTime = formatTime(pass.now);
      pass.setPhase(kPhaseSucceeded, verdict.reason, verdict.message);
      return Action::requeueNow();  // finished(): partitions, cleanPodPolicy, TTL
    case WorkerVerdict::Kind::kRestart:
      return RestartSteps::begin(pass, verdict);
    case WorkerVerdict::Kind::kContinue:
      break;
  }
  // Look again at the deadline, or when a pod reaches one of its limits, whichever is first.
  std::optional<Clock::Duration> next = deadlineIn;
  keepSooner(next, workers.nextCheck);
  const std::string running =
      std::to_string(workers.running + workers.succeeded) + " of " + std::to_string(count);
  // Still Creating: news within the phase is progress, written with the next change (progress_writes).
  const auto creating = [&pass, &next](const char* reason, const std::string& message) {
    const bool progressOnly = pass.observed.phase == kPhaseCreating;
    pass.setPhase(kPhaseCreating, reason, message);
    return progressOnly ? StepOutcome::progress(Action{next}) : StepOutcome(Action{next});
  };
  // Not Running while the partitions activate: the workers' commands wait for them.
  if (partitionsActivating) {
    return creating("PartitionActivating",
                    "Waiting for V-IPU to activate the job's partitions; the workers' commands start then (" +
                        running + " worker pods running)");
  }
  if (job.spec.interactive && (workers.allUp(count) || status.interactive)) {
    if (auto ended = keepInteractiveSession(pass, *job.spec.interactive, next)) return std::move(*ended);
  }
  if (workers.allUp(count)) {
    pass.setPhase(kPhaseRunning, "Running", "All worker pods are running");
    if (pass.status.kueue) {
      if (Status told = kueue_.workersReady(pass); !told) return told.error();
    }
    return Action{next};
  }
  return creating("PodsStarting", "Waiting for worker pods: " + running + " running");
}

std::optional<StepOutcome> IpuJobReconciler::keepInteractiveSession(JobPass& pass,
                                                                    const api::InteractiveSpec& spec,
                                                                    std::optional<Clock::Duration>& next) {
  auto& status = pass.status;
  const std::optional<api::InteractiveStatus> before = status.interactive;
  const InteractiveTtl ttl = interactiveTtl(spec, options_.pods.interactive);
  status.interactive = interactiveStatus(before, ttl.ttl, pass.now);
  const std::string& expiresAt = status.interactive->expiresAt;
  if (ttl.capped && (!before || before->ttlSeconds != status.interactive->ttlSeconds)) {
    events_.record(kube::referenceTo(pass.object), kube::EventType::kWarning, "InteractiveTtlCapped",
                   "spec.interactive.ttl asks for " + std::to_string(spec.ttlSeconds) +
                       " s; the operator allows an interactive job at most " +
                       std::to_string(ttl.ttl.count()) + " s (--interactive-max-ttl-seconds): it ends at " +
                       expiresAt);
  }
  const Clock::WallTime expiry = interactiveExpiry(*status.interactive).value_or(pass.now);
  if (pass.now >= expiry) {
    status.completionTime = formatTime(pass.now);
    pass.setPhase(kPhaseSucceeded, "InteractiveTimeExpired",
                  "The interactive session's ttl of " + std::to_string(status.interactive->ttlSeconds) +
                      " s ended at " + expiresAt + ": workers stopped, IPUs released");
    return StepOutcome(Action::requeueNow());  // finished(): partitions, pods, TTL
  }
  keepSooner(next, std::chrono::duration_cast<Clock::Duration>(expiry - pass.now));
  return std::nullopt;
}

Action IpuJobReconciler::waitFor(JobPass& pass, const std::string& blocker) const {
  pass.status.lastMessage = blocker;  // the user sees what the job waits for
  return Action::requeue(options_.waitRetry);
}

Status IpuJobReconciler::write(const JobPass& pass, const StepOutcome& outcome) {
  Json changes = api::statusPatch(pass.observed, pass.status);
  if (changes.empty()) return {};  // nothing new: a repeated reconcile writes nothing
  Json patch = {{"status", std::move(changes)}};
  if (outcome.conditional()) patch["metadata"] = {{"resourceVersion", pass.resourceVersion}};
  auto patched = client_.patch(ipuJobResource(), pass.identity.ns, pass.identity.name,
                               kube::PatchType::kMerge, patch, "status");
  if (!patched) return patched.error();
  ownWrites_.wrote(pass.key, pass.resourceVersion,
                   stringMember(member(*patched, "metadata"), "resourceVersion"));
  progressWrites_.written(pass.key);
  if (const char* point = outcome.failpointAfterWrite()) failpoint(point);
  return {};
}

void IpuJobReconciler::announce(const JobPass& pass, const StepOutcome& outcome) {
  const std::string& phase = pass.status.phase;
  if (outcome.decision == StepOutcome::Decision::kAdmitted && options_.hooks.admitted) {
    options_.hooks.admitted(secondsSince(pass.object, pass.now));
  }
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

}  // namespace ipu::controllers
