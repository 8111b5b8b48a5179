#pragma once

#include <chrono>
#include <functional>
#include <string>

#include "api/job_lifecycle.h"
#include "api/worker_pod_profile.h"
#include "common/clock.h"
#include "ipujob/worker_pod.h"
#include "kube/store.h"
#include "quota/quota_ledger.h"

namespace ipu::controllers {

// What the reconciler tells the rest of the process about (all optional).
struct ReconcilerHooks {
  // Seconds from creation to admission, and from creation to every worker running (first attempt only).
  std::function<void(double)> admitted;
  std::function<void(double)> running;
};

// Kueue, when the operator gives it the jobs with its queue-name label (ipujob/kueue_steps.h).
struct KueueOptions {
  // Its Workloads and ResourceFlavors (caches of the controller); nullptr: Kueue is not in use.
  const kube::Store* workloads = nullptr;
  const kube::Store* flavors = nullptr;
  // The AdmissionChecks (the operator answers those with its controllerName: IPU placement).
  const kube::Store* admissionChecks = nullptr;
  // Why it is not in use, told to labelled jobs, which then run under the operator's own queue.
  std::string notUsed = "the operator runs with --kueue=false";
  bool inUse() const { return workloads != nullptr; }
};

struct ReconcilerOptions {
  // The IPUJobs this operator acts on: those whose spec.managedBy is this (api::managerOf); the others are
  // left as they are, without a finalizer, a status write or an Event.
  std::string controllerName = api::kDefaultControllerName;
  // Whether it keeps the Workloads of the jobs MultiKueue dispatches from this cluster (spec.managedBy
  // kueue.x-k8s.io/multikueue; ipujob/multikueue_dispatch.h): the install of the default controller name
  // does, so that exactly one install does.
  bool dispatchesForMultiKueue() const { return controllerName == api::kDefaultControllerName; }
  WorkerPodOptions pods;
  std::string partitionIdPrefix = "k8s";
  // Ids derived under it for a job's own identity are still the job's (admitted under a former default);
  // never used for new partitions, never swept. Empty: none.
  std::string legacyPartitionIdPrefix;
  // Waiting jobs are woken when capacity changes; this re-check catches capacity freed outside the operator.
  Clock::Duration queuedRetry = std::chrono::seconds(15);
  // The longest wait between looks at a PS_PENDING partition (ActivationPolls: from 50 ms, growing).
  Clock::Duration activationPoll = std::chrono::milliseconds(500);
  Clock::Duration podDeletionPoll = std::chrono::milliseconds(500);  // wait for replaced pods to go
  // A worker pod that cannot start (unschedulable, an image that cannot be pulled, a container that cannot be
  // created) fails this long after it was created; zero: never.
  Clock::Duration podStartTimeout = std::chrono::minutes(10);
  // A pod still there this long after its deletion deadline is on a node that stopped answering: lost, and
  // force-deleted once the IPUs it could reach are reset or released. Zero: never.
  Clock::Duration podDeletionTimeout = std::chrono::minutes(2);
  // Passes acting on one V-IPU controller at once (VipuCallSlots); 0: no bound. A pass that finds its
  // controller's slots taken is woken when one comes back, and looks again after vipuSlotGuard at the latest.
  int vipuPassesPerController = 0;
  Clock::Duration vipuSlotGuard = std::chrono::seconds(2);
  // Something only another party can clear (a child's name or a partition id still held by an earlier job of
  // the same name): look again this often.
  Clock::Duration waitRetry = std::chrono::seconds(1);
  // A job's progress-only status writes (workers starting) go at most this often (ProgressWrites); zero:
  // each at once.
  Clock::Duration progressWritePeriod = std::chrono::seconds(1);
  // What a worker template may ask for in a namespace (api::WorkerPodProfile: the admin's default, or the
  // Namespace's annotation); checked before admission. Empty: ipu-baseline everywhere.
  std::function<api::WorkerPodProfile(const std::string& ns)> workerPodProfile;
  ReconcilerHooks hooks;
  // Where admissions claim their namespace's IPUQuota before they are recorded; nullptr: no quotas.
  QuotaLedger* quotaLedger = nullptr;
  KueueOptions kueue;
};

}  // namespace ipu::controllers
