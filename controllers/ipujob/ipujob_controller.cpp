#include "ipujob/ipujob_controller.h"

#include <set>
#include <utility>

#include "api/job_summary.h"
#include "common/log.h"
#include "ipujob/job_status.h"
#include "ipujob/namespace_profiles.h"
#include "ipujob/orphan_partitions.h"
#include "ipujob/oversized_objects.h"
#include "ipujob/worker_observation.h"
#include "ipujob/worker_pod.h"
#include "ipujob/worker_pod_cache.h"

namespace ipu::controllers {
namespace {

// The worker pods' watch: only pods with the job label (the operator's own), mapped to jobs by
// ownerReference; their specs are never read (trimWorkerPodForCache), so lists leave them out as they parse.
kube::WatcherConfig workerPodWatch() {
  return {.labelSelector = kJobNameLabel, .skipItemFields = {"spec"}};
}

// The Workloads' watch: only those of IPUJobs (the operator labels them with their job), not every Workload
// of the cluster's other Kueue jobs.
kube::WatcherConfig workloadWatch() {
  return {.labelSelector = kJobNameLabel};
}

ReconcilerOptions withLedgerAndProfiles(ReconcilerOptions options, QuotaLedger& ledger,
                                        const kube::Store& namespaces, api::WorkerPodProfile fallback,
                                        const kube::Informer* workloads, const kube::Informer* flavors,
                                        const kube::Informer* admissionChecks, std::string kueueNotUsed) {
  options.quotaLedger = &ledger;
  if (workloads != nullptr && flavors != nullptr && admissionChecks != nullptr) {
    options.kueue.workloads = &workloads->store();
    options.kueue.flavors = &flavors->store();
    options.kueue.admissionChecks = &admissionChecks->store();
  }
  options.kueue.notUsed = std::move(kueueNotUsed);
  options.workerPodProfile = [&namespaces, fallback](const std::string& ns) {
    return namespaceProfile(namespaces, ns, fallback);
  };
  return options;
}

}  // namespace

bool workerEndedOrGone(const kube::ObjectPtr& old, const kube::ObjectPtr& current) {
  if (!current) return true;
  const std::string phase = podPhase(*current);
  if (phase != "Succeeded" && phase != "Failed") return false;
  return !old || podPhase(*old) != phase;
}

std::vector<std::string> waitingJobsToWakeForQuota(const kube::Store& jobs, const kube::ObjectPtr& old,
                                                   const kube::ObjectPtr& current) {
  std::vector<std::string> keys;
  const auto generation = [](const kube::ObjectPtr& quota) {
    return quota ? member(member(*quota, "metadata"), "generation") : Json();
  };
  // A claim given back (a job's entry gone from the ledger) makes room the plan did not know was taken.
  const auto claimGivenBack = [&] {
    const Json& before = member(member(*old, "status"), api::kLedgerField);
    const Json& after = member(member(*current, "status"), api::kLedgerField);
    if (!before.is_object()) return false;
    for (const auto& [name, entry] : before.items()) {
      if (!after.is_object() || !after.contains(name)) return true;
    }
    return false;
  };
  if (old && current && generation(old) == generation(current) && !claimGivenBack()) return keys;
  const std::string ns = stringMember(member(current ? *current : *old, "metadata"), "namespace");
  for (const auto& job : jobs.summariesInNamespace<api::JobSummary>(ns)) {
    if (job->waitsForAdmission) keys.push_back(job->key);
  }
  return keys;
}

IpuJobController::IpuJobController(ctrl::Manager& manager, VipuControllers& vipu, kube::EventRecorder& events,
                                   IpuJobControllerConfig config)
    : jobs_(manager.informer(ipuJobResource())),
      pods_(manager.informer(kube::ResourceRef::pods(), workerPodWatch())),
      quotas_(manager.informer(ipuQuotaResource())),
      namespaces_(manager.informer(kube::ResourceRef::namespaces())),
      workloads_(config.kueue ? &manager.informer(workloadResource(), workloadWatch()) : nullptr),
      flavors_(config.kueue ? &manager.informer(resourceFlavorResource()) : nullptr),
      admissionChecks_(config.kueue ? &manager.informer(admissionCheckResource()) : nullptr),
      inventory_(vipu),
      ledger_(manager.client(), quotas_.store(), jobs_.store()),
      admitter_(inventory_, jobs_.store(), quotas_.store(), config.missingQuota, config.queueingStrategy,
                std::move(config.admissionPassObserved)),
      reconciler_(manager.client(), pods_.store(), inventory_, admitter_, events, manager.clock(),
                  withLedgerAndProfiles(std::move(config.reconciler), ledger_, namespaces_.store(),
                                        config.workerPodProfile, workloads_, flavors_, admissionChecks_,
                                        std::move(config.kueueNotUsed))),
      sweeper_(manager.client(), reconciler_.partitionIdPrefix(), config.orphanSweepDryRun) {
  // An IPUJob or worker pod too large to read is told on its job (and logged by the informer).
  const auto tellItsJob = [&events](const Json& identity, std::size_t bytes) {
    reportOversized(events, identity, bytes);
  };
  jobs_.addHandlers({.onOversized = tellItsJob});
  pods_.addHandlers({.onOversized = tellItsJob});
  pods_.setTransform(trimWorkerPodForCache);
  pods_.setFilter(ownedByAnIpuJob);
  namespaces_.setTransform(trimNamespaceForCache);
  // Eight or more worker pods per job, each read only with its job's others: packed, a fifth of the memory.
  pods_.setStoreLayout(kube::StoreLayout::kPacked);
  // Each job read whole only by its own reconcile; admission, quotas and metrics walk the summaries.
  api::keepJobsPackedAndSummarized(jobs_);
  admitter_.manageOnly(reconciler_.controllerName());
  const kube::Store& jobs = jobs_.store();
  auto builder = manager.controller("ipujob");
  builder.forResource(ipuJobResource(), {api::kGroup, api::kKind})
      .owns(kube::ResourceRef::pods(), workerPodWatch(),
            {.window = config.podEventBatch, .passesAtOnce = workerEndedOrGone})
      .watches(ipuJobResource(),
               [this](const kube::ObjectPtr& old, const kube::ObjectPtr& current) {
                 return waitingJobs_.wakeFor(old, current);
               })
      .watches(ipuQuotaResource(), [&jobs](const kube::ObjectPtr& old, const kube::ObjectPtr& current) {
        return waitingJobsToWakeForQuota(jobs, old, current);
      });
  if (workloads_ != nullptr) {
    builder.owns(workloadResource(), workloadWatch());
    admissionCheckReconciler_ = std::make_unique<AdmissionCheckReconciler>(manager.client(), manager.clock());
    manager.controller("admissioncheck")
        .forResource(admissionCheckResource(), {"kueue.x-k8s.io", "AdmissionCheck"})
        .withOptions({.workers = 1})
        .complete(*admissionCheckReconciler_);
  }
  controller_ =
      &builder.withOptions({.workers = config.workers, .observer = std::move(config.reconcileObserved)})
           .complete(reconciler_);
  reconciler_.wakeWith([controller = controller_](const std::string& key) { controller->enqueue(key); });
  auto sweepAll = [this, &vipu](bool confirmed) {
    for (const auto& target : vipu.targets()) {
      if (auto swept = sweeper_.sweep(target.name, *target.api, confirmed); !swept) {
        log::warning("could not clean up orphaned partitions",
                     {{"controller", target.name}, {"error", swept.error().toString()}});
      }
    }
  };
  manager.add("orphan partition sweep", ctrl::RunnableGroup::kWarmup,
              [sweepAll](std::stop_token) { sweepAll(/*confirmed=*/false); });
  if (config.orphanSweepInterval > Clock::Duration::zero()) {
    manager.add(
        "periodic orphan partition sweep", ctrl::RunnableGroup::kLeaderElected,
        [sweepAll, &clock = manager.clock(), interval = config.orphanSweepInterval](std::stop_token stop) {
          while (clock.sleepFor(interval, stop)) sweepAll(/*confirmed=*/true);
        });
  }
  manager.add("V-IPU inventory", ctrl::RunnableGroup::kWarmup,
              [this](std::stop_token) { inventory_.refresh(); });
  manager.add("V-IPU inventory poller", ctrl::RunnableGroup::kLeaderElected,
              [this, &clock = manager.clock(), interval = config.inventoryPoll](std::stop_token stop) {
                inventory_.poll(stop, clock, interval);
              });
}

std::unique_ptr<IpuJobController> IpuJobController::setup(ctrl::Manager& manager, VipuControllers& vipu,
                                                          kube::EventRecorder& events,
                                                          IpuJobControllerConfig config) {
  return std::make_unique<IpuJobController>(manager, vipu, events, std::move(config));
}

}  // namespace ipu::controllers
