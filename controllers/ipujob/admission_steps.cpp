#include "ipujob/admission_steps.h"

#include "api/worker_pod_profile.h"
#include "common/log.h"
#include "common/time_format.h"
#include "ipujob/launch_form.h"
#include "ipujob/orphan_partitions.h"
#include "ipujob/output_retention.h"
#include "ipujob/partition_steps.h"
#include "ipujob/worker_pod.h"

namespace ipu::controllers {

StepOutcome AdmissionSteps::admit(JobPass& pass, const api::IpuJob& job) {
  if (refusedTemplate(pass, job)) return Action::awaitChange();  // until the user edits the job
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
      // Not claimed: nothing is promised.
      if (!claimed) {
        admitter_.end(pass.key, ReservationEnd::kNotRecorded);
        return claimed.error();
      }
      if (*claimed) admitter_.end(pass.key, ReservationEnd::kQuotaRefused);
      if (*claimed) {
        // The quota at the API server is tighter than the caches showed (another writer took the room).
        return waitInQueue(pass, job, AdmissionDecision::waitOutOfLine(kReasonQuotaExceeded, **claimed));
      }
      recordAdmission(pass, job, **decided);
      // The status write's own event starts the next step.
      return StepOutcome::decided(StepOutcome::Decision::kAdmitted, Action::awaitChange());
    }
    case AdmissionDecision::Kind::kNeverFits:
      pass.status.startEstimate.reset();
      pass.setPhase(kPhaseFailed, "Unschedulable", decision.message);
      return Action::awaitChange();
    case AdmissionDecision::Kind::kWait:
      break;
  }
  return waitInQueue(pass, job, decision);
}

bool AdmissionSteps::refusedTemplate(JobPass& pass, const api::IpuJob& job) {
  const api::WorkerPodProfile profile = options_.workerPodProfile ? options_.workerPodProfile(job.identity.ns)
                                                                  : api::WorkerPodProfile::kIpuBaseline;
  if (auto violation = api::profileViolation(job.spec.workerTemplate, profile, "spec.workers.template")) {
    pass.setPhase(kPhaseFailed, "ForbiddenPodSpec",
                  violation->field + ": " + violation->message + " (worker pod profile " +
                      std::string(api::profileName(profile)) + " in namespace " + job.identity.ns +
                      "; a cluster admin can change it with the Namespace annotation " +
                      api::kWorkerPodProfileAnnotation + ")");
    return true;
  }
  // Worker 0 as it would be made: what cannot be built fails now, before IPUs are held for it.
  if (auto built = tryBuildWorkerPod(job, 0, WorkerAssignment{}, options_.pods); !built) {
    pass.setPhase(kPhaseFailed, "InvalidSpec", built.error().message);
    return true;
  }
  return false;
}

StepOutcome AdmissionSteps::waitInQueue(JobPass& pass, const api::IpuJob& job,
                                        const AdmissionDecision& decision) {
  // Position 0: not in line (only an admin's change of the quota, or the job's own, can let it run).
  const std::string where =
      decision.position > 0 ? " (position " + std::to_string(decision.position) + " in the queue)" : "";
  pass.setPhase(kPhaseQueued, decision.reason,
                (decision.reason == "InsufficientCapacity" ? "Waiting for capacity" : "Waiting") + where +
                    ": " + decision.message);
  if (decision.position > 0) pass.status.queuePosition = decision.position;
  pass.status.desiredReplicas = job.spec.workerCount();
  updateStartEstimate(pass);
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

void AdmissionSteps::updateStartEstimate(JobPass& pass) {
  const auto estimate = admitter_.estimateFor(pass.key, pass.now);
  if (!estimate) return;  // none yet: what status has stands until there is
  api::StartEstimateStatus next;
  if (estimate->kind == StartEstimate::Kind::kStartsBy) {
    next.startsBy = formatTime(estimate->startsBy);
  } else {
    next.unknown = estimate->why;
  }
  auto& current = pass.status.startEstimate;
  if (current && current->startsBy == next.startsBy && current->unknown == next.unknown) return;
  // At most once a minute: a busy queue moves every estimate often, and each change is a write.
  if (current) {
    const auto updated = parseTime(current->updatedAt);
    if (updated && pass.now - *updated < kEstimateRewrite && pass.now >= *updated) return;
  }
  next.updatedAt = formatTime(pass.now);
  current = std::move(next);
}

Result<std::optional<std::string>> AdmissionSteps::claimQuota(const JobPass& pass, const api::IpuJob& job) {
  // Kueue's quota applies to a job Kueue admitted, never an IPUQuota as well.
  if (options_.quotaLedger == nullptr || pass.status.kueue) return std::optional<std::string>();
  return options_.quotaLedger->claim({job.identity.ns, job.identity.name, job.identity.uid,
                                      std::int64_t{job.spec.jobInstances} * job.spec.ipusPerJobInstance,
                                      pass.resourceVersion});
}

Status AdmissionSteps::releaseQuota(const JobPass& pass) {
  // Only once the status as stored shows nothing held (this pass's release is written at its end; the next
  // pass removes the entry): the ledger never counts less than what the API server shows held.
  if (options_.quotaLedger == nullptr || !pass.observed.heldPartitions().empty()) return {};
  return options_.quotaLedger->release(pass.identity.ns, pass.identity.name, pass.identity.uid);
}

void AdmissionSteps::recordAdmission(JobPass& pass, const api::IpuJob& job, const Admission& admission) {
  const AdmissionDecision& decision = admission.decision;
  const int size = job.spec.ipusPerJobInstance;
  auto& status = pass.status;
  status.startEstimate.reset();  // it has started
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
  tellHowInstancesStart(pass, job.spec);
}

void AdmissionSteps::tellHowInstancesStart(const JobPass& pass, const api::IpuJobSpec& spec) {
  // Parsed but not acted on: say so loudly rather than let the job look as if its launcher ran.
  if (auto message = launcherNotRunMessage(spec, options_.pods.runtime)) {
    events_.record(kube::referenceTo(pass.object), kube::EventType::kWarning, "LauncherNotRun", *message);
  }
  if (auto notice = launchFormNotice(spec, !options_.pods.runtime.image.empty()))
    events_.record(kube::referenceTo(pass.object), notice->type, notice->reason, notice->message);
  if (auto message = idleReclaimNotWatchedMessage(spec, options_.pods.interactive,
                                                  !options_.pods.runtime.image.empty())) {
    events_.record(kube::referenceTo(pass.object), kube::EventType::kWarning, "IdleReclaimNotWatched",
                   *message);
  }
  if (auto message = outputsNotRetainedMessage(spec, options_.pods.runtime)) {
    events_.record(kube::referenceTo(pass.object), kube::EventType::kWarning, "OutputsNotRetained", *message);
  } else if (spec.outputs) {
    if (const RetainFor retain = retainFor(*spec.outputs, options_.pods.outputs); retain.capped) {
      events_.record(kube::referenceTo(pass.object), kube::EventType::kWarning, "OutputsRetentionCapped",
                     "spec.outputs.retainSeconds asks for " + std::to_string(spec.outputs->retainSeconds) +
                         " s; the operator keeps worker 0 at most " + std::to_string(retain.seconds.count()) +
                         " s after its command ends (--outputs-max-retain-seconds)");
    }
  }
}

}  // namespace ipu::controllers
