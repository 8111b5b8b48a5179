#pragma once

#include <functional>
#include <optional>
#include <string>

#include "admission/admitter.h"
#include "admission/vipu_inventory.h"
#include "api/ipujob.h"
#include "api/resources.h"
#include "common/clock.h"
#include "common/result.h"
#include "ctrl/finalizer.h"
#include "ctrl/reconciler.h"
#include "ipujob/activation_polls.h"
#include "ipujob/admission_steps.h"
#include "ipujob/claimed_workers.h"
#include "ipujob/job_pass.h"
#include "ipujob/kueue_steps.h"
#include "ipujob/multikueue_dispatch.h"
#include "ipujob/partition_steps.h"
#include "ipujob/progress_writes.h"
#include "ipujob/reconciler_options.h"
#include "ipujob/release_steps.h"
#include "ipujob/restart_policy.h"
#include "ipujob/restart_steps.h"
#include "ipujob/step_outcome.h"
#include "ipujob/vipu_call_slots.h"
#include "ipujob/worker_observation.h"
#include "ipujob/worker_steps.h"
#include "kube/event_recorder.h"
#include "kube/resource.h"
#include "kube/rest_client.h"
#include "kube/store.h"
#include "quota/quota_ledger.h"

namespace ipu::controllers {

using api::ipuJobResource;
using api::kCleanupFinalizer;

using ctrl::Action;

// Drives one IPUJob towards its spec. A pass reads the job from the cache, runs the step its state calls
// for and writes what changed in its status as one patch at the end:
//   waiting          -> admission (the queue's decision: admitted with partition ids recorded, queued, or
//                       never fits);
//   admitted         -> partitions created where admission planned them, then waited on (PS_ACTIVE);
//   partitions ready -> the headless Service and the worker pods; the workers' outcome judged by
//                       restartPolicy (run, succeed, restart on reset partitions, fail); the deadline; an
//                       interactive session's end;
//   finished         -> partitions released, pods removed by cleanPodPolicy, the job deleted by TTL;
//   suspended        -> no pods, no partitions;  deleted -> partitions released (finalizer).
// Level-triggered: everything comes from the caches, status and V-IPU each time, so a new process picks up
// where a killed one stopped. Intent is recorded before it is acted on (partition ids before
// CreatePartition), and decisions made once (admission, a restart) are written conditionally on the
// version read. Safe to call concurrently for different jobs.
class IpuJobReconciler final : public ctrl::Reconciler {
 public:
  IpuJobReconciler(kube::RestClient& client, const kube::Store& pods, VipuInventory& inventory,
                   Admitter& admitter, kube::EventRecorder& events, Clock& clock = Clock::real(),
                   ReconcilerOptions options = {});

  Result<Action> reconcile(const kube::ObjectPtr& job) override;
  // Terminal errors (retrying cannot help) are told to the user as a Warning Event before the job waits for
  // a change.
  ctrl::Retry onError(const kube::ObjectPtr& job, const Error& error) override;

  // Queues a job's pass again; a job waiting for a V-IPU call slot is woken with it when one comes back. Set
  // before the first pass.
  void wakeWith(VipuCallSlots::Wake wake) { vipuSlots_.wakeWith(std::move(wake)); }

  const std::string& partitionIdPrefix() const { return options_.partitionIdPrefix; }
  const std::string& controllerName() const { return options_.controllerName; }

 private:
  Result<Action> apply(const Json& job);
  Result<std::optional<Action>> cleanup(const Json& job);
  // The step the job's state calls for.
  StepOutcome step(JobPass& pass);
  // Admission, and at the admission the runtime Secret its pods will mount (in the same status write).
  StepOutcome admit(JobPass& pass, const api::IpuJob& job);
  StepOutcome run(JobPass& pass, const api::IpuJob& job);
  StepOutcome runWorkers(JobPass& pass, const api::IpuJob& job, const PartitionsState& partitions,
                         std::optional<Clock::Duration> deadlineIn);
  // `partitionsActivating`: the pods were made while the partitions activate (startsWhileActivating); the
  // job is not Running until they are active.
  StepOutcome judge(JobPass& pass, const api::IpuJob& job, const WorkerObservation& workers,
                    std::optional<Clock::Duration> deadlineIn, bool partitionsActivating);
  // An interactive job whose workers all run (or ran): its session's status.interactive, and its end once
  // expiresAt has come (nullopt while it goes on; `next` then brought forward to expiresAt).
  std::optional<StepOutcome> keepInteractiveSession(JobPass& pass, const api::InteractiveSpec& spec,
                                                    std::optional<Clock::Duration>& next);
  // Something only another party can clear: said in lastMessage, looked at again soon.
  Action waitFor(JobPass& pass, const std::string& blocker) const;

  // Writes the status the pass leaves, as the outcome says (conditionally for a decision).
  Status write(const JobPass& pass, const StepOutcome& outcome);
  void announce(const JobPass& pass, const StepOutcome& outcome);

  kube::RestClient& client_;
  kube::EventRecorder& events_;
  WorkerPodsOfJob workerPods_;
  Clock& clock_;
  ReconcilerOptions options_;
  VipuCallSlots vipuSlots_;
  ProgressWrites progressWrites_;
  ActivationPolls activationPolls_;
  PartitionSteps partitions_;
  WorkerSteps workers_;
  AdmissionSteps admission_;
  ReleaseSteps release_;
  RestartSteps restarts_;
  KueueSteps kueue_;
  MultiKueueDispatch multiKueue_;
  ctrl::OwnWrites ownWrites_;  // before finalizer_, which records its writes in it
  ctrl::Finalizer finalizer_;
};

}  // namespace ipu::controllers
