#include "ipujob/restart_steps.h"

#include "common/failpoint.h"
#include "ipujob/worker_observation.h"

namespace ipu::controllers {

StepOutcome RestartSteps::begin(JobPass& pass, const WorkerVerdict& verdict) {
  pass.status.restartCount = pass.attempt() + 1;
  pass.status.currentReplicas = 0;
  pass.setPhase(kPhaseRestarting, verdict.reason, verdict.message);
  return StepOutcome::decided(StepOutcome::Decision::kRestartDecided, Action::requeueNow());
}

StepOutcome RestartSteps::partitionLost(JobPass& pass, const api::IpuJob& job, const PartitionsState& lost) {
  PartitionSteps::planLostAgain(pass, lost);
  events_.record(kube::referenceTo(pass.object), kube::EventType::kWarning, "PartitionLost", lost.message);
  // Already restarting (the loss came between the decision and the new attempt): the lost partition is
  // simply created again before the new attempt starts.
  if (pass.status.phase == kPhaseRestarting) return Action::requeueNow();
  const WorkerVerdict verdict = judgeLostAttempt(job.spec, pass.attempt(), "PartitionLost", lost.message);
  if (verdict.kind == WorkerVerdict::Kind::kFail) return pass.fail(verdict.reason, verdict.message);
  return begin(pass, verdict);
}

StepOutcome RestartSteps::restart(JobPass& pass, const std::vector<kube::ObjectPtr>& stalePods) {
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
  return StepOutcome::decided(StepOutcome::Decision::kRestarted, Action::requeueNow());
}

std::vector<kube::ObjectPtr> RestartSteps::overdueDeletions(const JobPass& pass,
                                                            const std::vector<kube::ObjectPtr>& pods) const {
  std::vector<kube::ObjectPtr> overdue;
  if (options_.podDeletionTimeout <= Clock::Duration::zero()) return overdue;
  for (const kube::ObjectPtr& pod : pods) {
    if (deletionOverdue(*pod, pass.now, options_.podDeletionTimeout)) overdue.push_back(pod);
  }
  return overdue;
}

}  // namespace ipu::controllers
