#pragma once

#include "common/clock.h"
#include "common/result.h"
#include "ctrl/reconciler.h"
#include "ipujob/kueue_steps.h"
#include "ipujob/reconciler_options.h"
#include "kube/event_recorder.h"
#include "kube/store.h"

namespace ipu::controllers {

// The manager cluster's side of MultiKueue (docs/using-kueue.md, "Several clusters with MultiKueue"), for a
// job whose spec.managedBy is kueue.x-k8s.io/multikueue. Kueue dispatches such a job to a worker cluster,
// where a copy of it (without managedBy) runs under that cluster's operator, and copies the copy's status
// back. Here the operator only keeps the job's Workload as a job's controller must: made with the job,
// PodsReady once the copy's status says it runs, its reservation given back after an eviction (nothing of
// the job runs here). It never writes the job, not even a finalizer: the status is MultiKueue's copy, and
// deleting the job deletes its Workload (its owner), on which MultiKueue deletes the copy. What goes wrong is
// said in Warning Events, since the status is not the operator's to write.
class MultiKueueDispatch {
 public:
  MultiKueueDispatch(KueueSteps& kueue, kube::EventRecorder& events, const ReconcilerOptions& options,
                     Clock& clock)
      : kueue_(kueue), events_(events), options_(options), clock_(clock) {}

  Result<ctrl::Action> reconcile(const kube::ObjectPtr& job);

 private:
  KueueSteps& kueue_;
  kube::EventRecorder& events_;
  const ReconcilerOptions& options_;
  Clock& clock_;
};

}  // namespace ipu::controllers
