#pragma once

#include <functional>
#include <optional>
#include <string>

#include "admission/admitter.h"
#include "admission/vipu_inventory.h"
#include "api/ipujob.h"
#include "common/clock.h"
#include "common/result.h"
#include "ctrl/finalizer.h"
#include "ctrl/reconciler.h"
#include "ipujob/job_pass.h"
#include "ipujob/partition_steps.h"
#include "ipujob/progress_writes.h"
#include "ipujob/restart_policy.h"
#include "ipujob/vipu_call_slots.h"
#include "ipujob/worker_observation.h"
#include "ipujob/worker_steps.h"
#include "kube/event_recorder.h"
#include "kube/resource.h"
#include "kube/rest_client.h"
#include "kube/store.h"
#include "quota/quota_ledger.h"

namespace ipu::controllers {

// The finalizer that keeps a deleted IPUJob until its partitions are released.
inline constexpr const char* kCleanupFinalizer = "graphcore.ai/ipujob-cleanup";

inline kube::ResourceRef ipuJobResource() {
  return {"graphcore.ai", "v1alpha1", "ipujobs", true};
}

// What the reconciler tells the rest of the process about (all optional).
struct ReconcilerHooks {
  // Seconds from creation to admission, and from creation to every worker running (first attempt only).
  std::function<void(double)> admitted;
  std::function<void(double)> running;
};

struct ReconcilerOptions {
  WorkerPodOptions pods;
  std::string partitionIdPrefix = "k8s";
  // Ids derived under it for a job's own identity are still the job's (admitted under a former default);
  // never used for new partitions, never swept. Empty: none.
  std::string legacyPartitionIdPrefix;
  // Waiting jobs are woken when capacity changes; this re-check catches capacity freed outside the operator.
  Clock::Duration queuedRetry = std::chrono::seconds(15);
  Clock::Duration activationPoll = std::chrono::milliseconds(500);   // poll a PS_PENDING partition
  Clock::Duration podDeletionPoll = std::chrono::milliseconds(500);  // wait for replaced pods to go
  // A worker pod that cannot start (unschedulable, an image that cannot be pulled, a container that cannot be
  // created) fails this long after it was created; zero: never.
  Clock::Duration podStartTimeout = std::chrono::minutes(10);
  // A pod still there this long after its deletion deadline is on a node that stopped answering: lost, and
  // force-deleted once the IPUs it could reach are reset or released. Zero: never.
  Clock::Duration podDeletionTimeout = std::chrono::minutes(2);
  // Passes acting on one V-IPU controller at once (VipuCallSlots); 0: no bound. A pass that finds its
  // controller's slots taken looks again after vipuSlotRetry.
  int vipuPassesPerController = 0;
  Clock::Duration vipuSlotRetry = std::chrono::milliseconds(200);
  // Something only another party can clear (a child's name or a partition id still held by an earlier job of
  // the same name): look again this often.
  Clock::Duration waitRetry = std::chrono::seconds(1);
  // A job's progress-only status writes (workers starting) go at most this often (ProgressWrites); zero:
  // each at once.
  Clock::Duration progressWritePeriod = std::chrono::seconds(1);
  ReconcilerHooks hooks;
  // Where admissions claim their namespace's IPUQuota before they are recorded; nullptr: no quotas.
  QuotaLedger* quotaLedger = nullptr;
};

using ctrl::Action;

// Drives one IPUJob towards its spec. A pass reads the job from the cache, runs the step its state calls
// for and writes what changed in its status as one patch at the end:
//   waiting          -> admission (the queue's decision: admitted with partition ids recorded, queued, or
//                       never fits);
//   admitted         -> partitions created where admission planned them, then waited on (PS_ACTIVE);
//   partitions ready -> the headless Service and the worker pods; the workers' outcome judged by
//                       restartPolicy (run, succeed, restart on reset partitions, fail); the deadline;
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

  const std::string& partitionIdPrefix() const { return options_.partitionIdPrefix; }

 private:
  Result<Action> apply(const Json& job);
  Result<Action> cleanup(const Json& job);
  Result<Action> step(JobPass& pass);

  Result<Action> readmit(JobPass& pass);
  Result<Action> finished(JobPass& pass);
  Result<Action> removeAfterTtl(JobPass& pass);
  Result<Action> suspend(JobPass& pass, const api::IpuJob& job);
  Result<Action> reshape(JobPass& pass, const api::IpuJob& job, const std::string& drift);
  // Suspend and reshape: the job's pods go, its partitions and quota are given back, its records dropped.
  Status letGo(JobPass& pass, const api::IpuJob& job);
  // Something only another party can clear (FailedPrecondition): said in lastMessage, looked at again soon.
  Action waitFor(JobPass& pass, const Error& blocker);
  Result<Action> admit(JobPass& pass, const api::IpuJob& job);
  void recordAdmission(JobPass& pass, const api::IpuJob& job, const Admission& admission);
  // Claims the namespace's quota for an admitted job: nullopt when claimed (or no quota applies), else why it
  // waits.
  Result<std::optional<std::string>> claimQuota(const JobPass& pass, const api::IpuJob& job);
  // The job holds no IPUs any more and cannot be admitted as it is (finished, suspended): its quota ledger
  // entry goes, once its stored status shows nothing held.
  Status releaseQuota(const JobPass& pass);
  Action waitInQueue(JobPass& pass, const api::IpuJob& job, const AdmissionDecision& decision);
  Result<Action> run(JobPass& pass, const api::IpuJob& job);
  Result<Action> runWorkers(JobPass& pass, const api::IpuJob& job, const PartitionsState& partitions,
                            std::optional<Clock::Duration> deadlineIn);
  Result<Action> judge(JobPass& pass, const api::IpuJob& job, const WorkerObservation& workers,
                       std::optional<Clock::Duration> deadlineIn);
  // The pods whose deletion is overdue by options_.podDeletionTimeout (their node stopped answering).
  std::vector<kube::ObjectPtr> overdueDeletions(const JobPass& pass,
                                                const std::vector<kube::ObjectPtr>& pods) const;
  // Records the decision to restart (restartCount, phase Restarting) once, conditionally.
  Result<Action> beginRestart(JobPass& pass, const WorkerVerdict& verdict);
  // A partition that was Active disappeared: the attempt is lost, and the restart policy decides.
  Result<Action> partitionLost(JobPass& pass, const api::IpuJob& job, const PartitionsState& lost);
  Result<Action> restart(JobPass& pass, const std::vector<kube::ObjectPtr>& stalePods);
  Result<Action> fail(JobPass& pass, const std::string& reason, const std::string& message);

  Status write(const JobPass& pass);
  void announce(const JobPass& pass);
  void warnIfLauncherNotRun(const JobPass& pass, const api::IpuJobSpec& spec);

  kube::RestClient& client_;
  const kube::Store& pods_;
  Admitter& admitter_;
  kube::EventRecorder& events_;
  Clock& clock_;
  ReconcilerOptions options_;
  VipuCallSlots vipuSlots_;
  ProgressWrites progressWrites_;
  PartitionSteps partitions_;
  WorkerSteps workers_;
  ctrl::Finalizer finalizer_;
};

}  // namespace ipu::controllers
