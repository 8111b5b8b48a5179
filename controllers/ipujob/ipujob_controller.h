#pragma once

#include <functional>
#include <memory>

#include "admission/admitter.h"
#include "admission/vipu_controllers.h"
#include "admission/vipu_inventory.h"
#include "ctrl/manager.h"
#include "ipujob/ipujob_reconciler.h"
#include "ipujob/orphan_partitions.h"
#include "ipujob/waiting_jobs.h"
#include "kube/event_recorder.h"
#include "kueue/admission_check_controller.h"
#include "quota/quota_ledger.h"

namespace ipu::controllers {

struct IpuJobControllerConfig {
  ReconcilerOptions reconciler;
  // How often every V-IPU controller's partitions are read for admission (changes made outside this operator
  // are seen after at most this long; its own are seen at once).
  Clock::Duration inventoryPoll = std::chrono::seconds(5);
  QueueingStrategy queueingStrategy = QueueingStrategy::kBestEffortFifo;
  // Jobs in namespaces without an IPUQuota: admitted against capacity alone, or not at all.
  MissingQuotaPolicy missingQuota = MissingQuotaPolicy::kUnlimited;
  int workers = 2;
  // A worker pod's change passes its job this much later, with every other change of its pods in that time
  // (eight pods created, scheduled and started are some thirty changes): a job whose pods all start is
  // written Running at most this late, for a fraction of the passes. A pod ending or going passes at once
  // (workerEndedOrGone). Zero: a pass per change.
  Clock::Duration podEventBatch = std::chrono::seconds(1);
  // Orphaned partitions are removed at start-up and then every this often (zero: at start-up only); a
  // periodic sweep removes a partition found orphaned twice in a row. Dry run: only logged.
  Clock::Duration orphanSweepInterval = std::chrono::minutes(5);
  bool orphanSweepDryRun = false;
  // What worker templates may ask for where no Namespace annotation says otherwise (api::WorkerPodProfile).
  api::WorkerPodProfile workerPodProfile = api::WorkerPodProfile::kIpuBaseline;
  ctrl::ReconcileObserver reconcileObserved;          // metrics; may be empty
  std::function<void(double)> admissionPassObserved;  // seconds per admission pass; may be empty
  // Whether jobs with Kueue's queue-name label are given to Kueue (--kueue and its CRDs installed), and if
  // not, why (told to those jobs).
  bool kueue = false;
  std::string kueueNotUsed = "the operator runs with --kueue=false";
};

// The IPUJob controller and what it owns: its caches, the admitter and the reconciler. setup() registers it
// with the manager:
//   For      IPUJobs;
//   Owns     worker pods (by their controller ownerReference; the cache keeps no pod no IPUJob owns);
//   Reads    Namespaces, for the worker pod profile an admin annotated one with;
//   Watches  IPUJobs again: when a job takes or gives back IPUs (its held partitions change) or leaves the
//            queue, every waiting job is queued, to be admitted or to learn its new position;
//   Watches  IPUQuotas: a quota created, deleted or whose spec changed queues its namespace's waiting jobs;
//   Owns     with Kueue in use, the jobs' Workloads (labelled with their job); Reads ResourceFlavors and
//            AdmissionChecks, and keeps those it answers (IPU placement) Active (AdmissionCheckReconciler);
//   warm-up  the orphan sweep on every V-IPU controller, after the caches synced and before any reconcile
//            (partitions a killed process created that no IPUJob records), then a first read of the V-IPU
//            inventory admission plans from;
//   leader-elected  the inventory's poller, and the periodic orphan sweep.
class IpuJobController {
 public:
  static std::unique_ptr<IpuJobController> setup(ctrl::Manager& manager, VipuControllers& vipu,
                                                 kube::EventRecorder& events, IpuJobControllerConfig config);

  const kube::Store& jobs() const { return jobs_.store(); }
  // The worker pods (trimmed: worker_pod_cache.h), for the V-IPU proxy to know its callers by.
  const kube::Store& pods() const { return pods_.store(); }
  // What admission plans from: each V-IPU controller's topology and partitions (the IPU-POD map reads it).
  const VipuInventory& inventory() const { return inventory_; }
  Admitter& admitter() { return admitter_; }
  bool synced() const { return jobs_.hasSynced() && pods_.hasSynced() && namespaces_.hasSynced(); }
  ctrl::Controller& controller() { return *controller_; }

  IpuJobController(ctrl::Manager& manager, VipuControllers& vipu, kube::EventRecorder& events,
                   IpuJobControllerConfig config);

 private:
  kube::Informer& jobs_;
  kube::Informer& pods_;
  kube::Informer& quotas_;
  kube::Informer& namespaces_;       // their worker pod profile annotation only (namespace_profiles.h)
  kube::Informer* workloads_;        // with Kueue in use, else nullptr
  kube::Informer* flavors_;          // with Kueue in use, else nullptr
  kube::Informer* admissionChecks_;  // with Kueue in use, else nullptr
  VipuInventory inventory_;
  QuotaLedger ledger_;
  Admitter admitter_;
  IpuJobReconciler reconciler_;
  OrphanSweeper sweeper_;
  WaitingJobs waitingJobs_;  // fed by the IPUJob informer's changes, for the wakes they call for
  std::unique_ptr<AdmissionCheckReconciler> admissionCheckReconciler_;  // with Kueue in use
  ctrl::Controller* controller_ = nullptr;
};

// Whether a change of a worker pod goes to its job at once rather than in the pod changes' batch: the pod
// ended (Succeeded or Failed, newly) or is gone. The job's end, or its restart, and the IPUs it gives back
// then follow without waiting for the batch.
bool workerEndedOrGone(const kube::ObjectPtr& old, const kube::ObjectPtr& current);

// The waiting jobs to queue after a change of one IPUQuota: its namespace's, when the quota was created or
// deleted, its spec changed or a claim left its ledger (not for its count writes or new claims).
std::vector<std::string> waitingJobsToWakeForQuota(const kube::Store& jobs, const kube::ObjectPtr& old,
                                                   const kube::ObjectPtr& current);

}  // namespace ipu::controllers
