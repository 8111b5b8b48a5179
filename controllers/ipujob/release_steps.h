#pragma once

#include <optional>
#include <string>
#include <vector>

#include "api/ipujob.h"
#include "common/result.h"
#include "ipujob/admission_steps.h"
#include "ipujob/claimed_workers.h"
#include "ipujob/job_pass.h"
#include "ipujob/output_retention.h"
#include "ipujob/partition_steps.h"
#include "ipujob/reconciler_options.h"
#include "ipujob/step_outcome.h"
#include "ipujob/worker_steps.h"
#include "kube/event_recorder.h"
#include "kube/rest_client.h"
#include "kube/store.h"

namespace ipu::controllers {

// A job letting go of what it holds: at its end (partitions released, pods removed by cleanPodPolicy, the
// job deleted by its TTL), when deleted, when suspended, when its shape changed behind the operator's back,
// and a failed job's edited spec sent back to admission.
//
// Every path that gives partitions back stops the job's workers first and releases the partitions only once
// they are gone: V-IPU may give the IPUs to another job as soon as they are released, and they must not be
// in two jobs' hands at once. A pod still there options.podDeletionTimeout after its deletion was asked (its
// node stopped answering, or the tenant's template asked for a long grace period) no longer holds the
// release up: the release fences it off the IPUs (releaseWaitsFor), and once its deletion is overdue it is
// force-deleted.
class ReleaseSteps {
 public:
  ReleaseSteps(kube::RestClient& client, WorkerPodsOfJob& pods, PartitionSteps& partitions,
               WorkerSteps& workers, AdmissionSteps& admission, kube::EventRecorder& events,
               const ReconcilerOptions& options)
      : client_(client),
        pods_(pods),
        partitions_(partitions),
        workers_(workers),
        admission_(admission),
        events_(events),
        options_(options) {}

  // Failed before anything ran, and the spec was edited since: a fresh start (Decision::kReadmitted).
  StepOutcome readmit(JobPass& pass);
  // Succeeded or Failed: partitions released, quota given back, pods removed by cleanPodPolicy, then the TTL.
  StepOutcome finished(JobPass& pass);
  // Deleted (the finalizer's cleanup): its workers stopped, then its partitions released. nullopt once that
  // is done and the finalizer may go, else how the pass ends while the workers stop.
  Result<std::optional<Action>> deleted(JobPass& pass);
  StepOutcome suspend(JobPass& pass);
  // Kueue took the job's admission back: everything goes, and the job waits in Kueue again.
  StepOutcome evict(JobPass& pass, const std::string& reason, const std::string& message);
  // The spec's shape changed while the job held partitions: everything goes, and the job is admitted again.
  StepOutcome reshape(JobPass& pass, const std::string& drift);

 private:
  StepOutcome removeAfterTtl(const JobPass& pass);
  // Worker 0 keeping its outputs (spec.outputs) after its command ended, and until when; nullopt when it does
  // not (any more). It holds no IPUs, so its partitions' release does not wait for it, and it is kept from
  // the pods removed at the end.
  struct RetainedOutputs {
    std::string pod;
    KeptOutputs kept;
  };
  static std::optional<RetainedOutputs> retainedOutputs(const JobPass& pass,
                                                        const std::vector<kube::ObjectPtr>& pods);
  // Records `retained` in status.outputs, with an Event the first time; returns how long until the pod must
  // have stopped by itself.
  Clock::Duration holdOutputs(JobPass& pass, const RetainedOutputs& retained);
  // The pods that keep the job's partitions from being released (releaseWaitsFor), but `keep` (worker 0
  // keeping its outputs: its command has ended).
  std::vector<kube::ObjectPtr> stillRunning(const JobPass& pass, const std::vector<kube::ObjectPtr>& pods,
                                            const std::string& keep = "") const;
  // Deletes what stillRunning() finds: nullopt when nothing held the release up, else when to look again (the
  // pods' deletions wake the job sooner).
  Result<std::optional<Clock::Duration>> stopWorkers(const JobPass& pass,
                                                     const std::vector<kube::ObjectPtr>& pods,
                                                     const std::string& keep = "");
  // Suspend, evict and reshape: the job's pods go, then its partitions and quota are given back and its
  // records dropped. nullopt when done, else how the pass ends (its workers are still stopping, or an error).
  std::optional<StepOutcome> letGo(JobPass& pass);

  kube::RestClient& client_;
  WorkerPodsOfJob& pods_;
  PartitionSteps& partitions_;
  WorkerSteps& workers_;
  AdmissionSteps& admission_;
  kube::EventRecorder& events_;
  const ReconcilerOptions& options_;
};

}  // namespace ipu::controllers
