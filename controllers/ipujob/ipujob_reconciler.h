#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "api/ipujob.h"
#include "common/clock.h"
#include "common/result.h"
#include "ctrl/finalizer.h"
#include "ctrl/reconciler.h"
#include "ipujob/admitter.h"
#include "ipujob/restart_policy.h"
#include "ipujob/vipu_controllers.h"
#include "ipujob/worker_pod.h"
#include "kube/event_recorder.h"
#include "kube/resource.h"
#include "kube/rest_client.h"
#include "kube/store.h"

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
  // Waiting jobs are woken when capacity changes; this re-check catches capacity freed outside the operator.
  Clock::Duration queuedRetry = std::chrono::seconds(15);
  Clock::Duration activationPoll = std::chrono::milliseconds(500);   // poll a PS_PENDING partition
  Clock::Duration podDeletionPoll = std::chrono::milliseconds(500);  // wait for replaced pods to go
  ReconcilerHooks hooks;
};

using ctrl::Action;

// Drives one IPUJob towards its spec: admission by capacity and queue order, partitions (ids recorded in
// status before they are created), headless Service, worker pods, restarts by restartPolicy, deadline,
// status, and release of partitions (then pods by cleanPodPolicy, then the job by TTL) when the job ends or
// is deleted. Level-triggered: it reads everything it needs from the caches, status and V-IPU each time, so a
// new process picks up where a killed one stopped. Decisions that must happen once (admission, a restart) are
// written with the job's resourceVersion as a precondition, so a stale cache can never make them twice. Safe
// to call concurrently for different jobs.
class IpuJobReconciler final : public ctrl::Reconciler {
 public:
  IpuJobReconciler(kube::RestClient& client, const kube::Store& jobs, const kube::Store& pods,
                   VipuControllers& controllers, Admitter& admitter, kube::EventRecorder& events,
                   Clock& clock = Clock::real(), ReconcilerOptions options = {});

  Result<Action> reconcile(const kube::ObjectPtr& job) override;
  const std::string& partitionIdPrefix() const { return options_.partitionIdPrefix; }
  // Terminal errors (retrying cannot help) are told to the user as a Warning Event before the job waits for
  // a change.
  ctrl::Retry onError(const kube::ObjectPtr& job, const Error& error) override;

 private:
  Result<Action> apply(const Json& job);
  Result<Action> cleanup(const Json& job);
  Result<Action> readmit(const Json& job);
  Result<Action> finished(const Json& job);
  Result<Action> suspend(const Json& job, const api::IpuJob& parsed);
  Result<Action> admit(const Json& job, const api::IpuJob& parsed);
  Status recordAdmission(const Json& job, const api::IpuJob& parsed, const AdmissionDecision& decision,
                         const vipu::PartitionPlanner& planner);
  void warnIfLauncherNotRun(const Json& job, const api::IpuJobSpec& spec);
  Result<Action> runJob(const Json& job, const api::IpuJob& parsed);
  Result<Action> restart(const Json& job, const api::IpuJob& parsed, const VipuTarget& target,
                         const std::vector<kube::ObjectPtr>& stalePods);
  Result<Action> fail(const Json& job, const std::string& reason, const std::string& message);

  Status createPartitions(const Json& job, const VipuTarget& target,
                          const std::vector<const Json*>& partitions, const vipu::PartitionPlanner& planner,
                          const std::vector<vipu::InstancePlacement>& placements);
  Status removeRecordedPartitions(const Json& job);
  Status deletePods(const std::vector<kube::ObjectPtr>& pods);
  Status patchStatus(const Json& job, Json status, bool conditional = false);
  // Writes phase, message and matching conditions; records an Event when the phase changes. `conditional`:
  // only if the job is still the version read (409 Conflict otherwise).
  Status setPhase(const Json& job, const std::string& phase, const std::string& reason,
                  const std::string& message, Json extra = Json::object(), bool conditional = false);

  kube::RestClient& client_;
  const kube::Store& jobs_;
  const kube::Store& pods_;
  VipuControllers& controllers_;
  Admitter& admitter_;
  kube::EventRecorder& events_;
  Clock& clock_;
  ReconcilerOptions options_;
  ctrl::Finalizer finalizer_;
};

}  // namespace ipu::controllers
