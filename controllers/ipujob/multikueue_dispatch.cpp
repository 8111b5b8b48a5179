#include "ipujob/multikueue_dispatch.h"

#include "common/json_access.h"
#include "common/log.h"
#include "ipujob/job_pass.h"
#include "kueue/workload.h"

namespace ipu::controllers {
namespace {

// The phases in which the copy on the worker cluster has every worker running (or has run them).
bool copyRuns(const JobPass& pass) {
  return pass.status.phase == kPhaseRunning || pass.status.phase == kPhaseSucceeded;
}

}  // namespace

Result<ctrl::Action> MultiKueueDispatch::reconcile(const kube::ObjectPtr& object) {
  const Json& job = *object;
  if (!member(member(job, "metadata"), "deletionTimestamp").is_null()) return ctrl::Action::awaitChange();
  const kube::ObjectReference reference = kube::referenceTo(job);
  const auto warn = [&](const std::string& reason, const std::string& message) {
    events_.record(reference, kube::EventType::kWarning, reason, message);
    return ctrl::Action::awaitChange();
  };
  const std::string managedBy = std::string("spec.managedBy is ") + api::kMultiKueueControllerName;
  if (!options_.kueue.inUse()) {
    return warn("KueueNotUsed", managedBy + ", but " + options_.kueue.notUsed +
                                    ": nothing dispatches the job to a worker cluster");
  }
  if (localQueueOf(job).empty()) {
    return warn("NoLocalQueue", managedBy + ", but the job has no label " +
                                    std::string(kKueueQueueNameLabel) +
                                    ": MultiKueue dispatches only jobs queued in Kueue");
  }
  JobPass pass(job, clock_.wallNow());
  if (!pass.parsed) return warn("InvalidSpec", pass.parsed.error().message);
  const kube::ObjectPtr workload =
      options_.kueue.workloads->get(pass.identity.ns + "/" + workloadNameFor(pass.identity));
  if (!workload) {
    auto created = kueue_.createWorkload(pass, *pass.parsed);
    if (!created) return created.error();
    if (created->kind == WorkloadCreation::Kind::kPriorityClassMissing) {
      warn("WorkloadPriorityClassNotFound", created->message);
      return ctrl::Action::requeue(options_.queuedRetry);
    }
    if (created->kind == WorkloadCreation::Kind::kRefused) return warn("InvalidSpec", created->message);
    events_.record(reference, kube::EventType::kNormal, "Queued",
                   "Queued in Kueue LocalQueue " + localQueueOf(job) + " (Workload " +
                       workloadNameFor(pass.identity) + "); MultiKueue dispatches it to a worker cluster");
    return ctrl::Action::awaitChange();  // the Workload's events follow
  }
  const WorkloadView view = viewOf(*workload);
  if (view.ownerUid != pass.identity.uid) {
    return warn("WorkloadNameTaken", "The Workload " + workloadNameFor(pass.identity) +
                                         " this job would use belongs to another owner; the job cannot be "
                                         "queued in Kueue under it");
  }
  if (view.finished) return ctrl::Action::awaitChange();  // MultiKueue finished it, from the worker's
  // Evicted on this cluster (preempted here, or the worker's copy lost): nothing of the job runs here, so
  // the reservation is given back at once; MultiKueue has the worker's copy deleted.
  if (view.quotaReserved && view.evicted) {
    if (Status given = kueue_.giveBackReservation(pass, *workload); !given) return given.error();
    log::info("gave back the Kueue reservation of a job MultiKueue dispatches",
              {{"job", pass.key}, {"reason", view.evictedReason}});
    return ctrl::Action::awaitChange();
  }
  if (view.admitted && !view.podsReady && copyRuns(pass)) {
    if (Status told = kueue_.applyCondition(*workload, "PodsReady", "Started",
                                            "All pods reached readiness and the workload is running", pass);
        !told)
      return told.error();
  }
  return ctrl::Action::awaitChange();
}

}  // namespace ipu::controllers
