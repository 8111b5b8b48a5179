#pragma once

#include <vector>

#include "api/ipujob.h"
#include "ipujob/job_pass.h"
#include "ipujob/partition_steps.h"
#include "ipujob/reconciler_options.h"
#include "ipujob/restart_policy.h"
#include "ipujob/step_outcome.h"
#include "ipujob/worker_steps.h"
#include "kube/event_recorder.h"
#include "kube/store.h"

namespace ipu::controllers {

// A job's restarts: the decision (recorded once, conditionally), the old attempt's pods removed
// (force-deleted once their IPUs are reset when their node stopped answering), every partition reset, then
// the new attempt. A partition lost while Active is a lost attempt, judged by the restart policy.
class RestartSteps {
 public:
  RestartSteps(PartitionSteps& partitions, WorkerSteps& workers, kube::EventRecorder& events,
               const ReconcilerOptions& options)
      : partitions_(partitions), workers_(workers), events_(events), options_(options) {}

  // Records the decision to restart (restartCount, phase Restarting): Decision::kRestartDecided.
  static StepOutcome begin(JobPass& pass, const WorkerVerdict& verdict);
  // A partition that was Active disappeared: the attempt is lost, and the restart policy decides.
  StepOutcome partitionLost(JobPass& pass, const api::IpuJob& job, const PartitionsState& lost);
  // Carries a recorded restart out: the stale pods go first, then the partitions are reset
  // (Decision::kRestarted).
  StepOutcome restart(JobPass& pass, const std::vector<kube::ObjectPtr>& stalePods);

 private:
  // The pods whose deletion is overdue by options_.podDeletionTimeout (their node stopped answering).
  std::vector<kube::ObjectPtr> overdueDeletions(const JobPass& pass,
                                                const std::vector<kube::ObjectPtr>& pods) const;

  PartitionSteps& partitions_;
  WorkerSteps& workers_;
  kube::EventRecorder& events_;
  const ReconcilerOptions& options_;
};

}  // namespace ipu::controllers
