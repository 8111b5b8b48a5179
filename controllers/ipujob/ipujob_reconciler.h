#pragma once

#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "api/ipujob.h"
#include "common/clock.h"
#include "common/result.h"
#include "ipujob/worker_pod.h"
#include "kube/event_recorder.h"
#include "kube/resource.h"
#include "kube/rest_client.h"
#include "kube/store.h"
#include "vipu/vipu_api.h"

namespace ipu::controllers {

// The finalizer that keeps a deleted IPUJob until its partitions are released.
inline constexpr const char* kCleanupFinalizer = "graphcore.ai/ipujob-cleanup";

inline kube::ResourceRef ipuJobResource() {
  return {"graphcore.ai", "v1alpha1", "ipujobs", true};
}

// The V-IPU controller jobs get their partitions from, and how pods reach it.
struct VipuTarget {
  std::string name;  // as recorded in status.partitions[].controller
  std::string host;
  int port = 8090;
  vipu::VipuApi* api = nullptr;
};

struct ReconcilerOptions {
  WorkerPodOptions pods;
  Clock::Duration queuedRetry = std::chrono::seconds(5);            // re-check capacity while Queued
  Clock::Duration activationPoll = std::chrono::milliseconds(500);  // poll a PS_PENDING partition
};

// What the caller (the controller) should do after a successful reconcile.
struct Action {
  std::optional<Clock::Duration> requeueAfter;
};

// Drives one IPUJob towards its spec: admission by capacity, partitions (ids recorded in status before they
// are created), headless Service, worker pods, status, and release of partitions when the job ends or is
// deleted. Level-triggered: it reads everything it needs from the caches, status and V-IPU each time, so a
// new process picks up where a killed one stopped. Safe to call concurrently for different jobs.
class IpuJobReconciler {
 public:
  IpuJobReconciler(kube::RestClient& client, const kube::Store& jobs, const kube::Store& pods,
                   VipuTarget vipu, kube::EventRecorder& events, Clock& clock = Clock::real(),
                   ReconcilerOptions options = {});

  Result<Action> reconcile(const std::string& ns, const std::string& name);

 private:
  Result<Action> finalize(const Json& job);
  Status ensureFinalizer(const Json& job);
  Result<Action> suspend(const Json& job, const api::IpuJob& parsed);
  Result<Action> releaseFinished(const Json& job);
  Result<Action> runJob(const Json& job, const api::IpuJob& parsed);

  Status removeRecordedPartitions(const Json& job);
  Status patchStatus(const Json& job, Json status);
  // Writes phase, message and matching conditions; records an Event when the phase changes.
  Status setPhase(const Json& job, const std::string& phase, const std::string& reason,
                  const std::string& message, Json extra = Json::object());

  kube::RestClient& client_;
  const kube::Store& jobs_;
  const kube::Store& pods_;
  VipuTarget vipu_;
  kube::EventRecorder& events_;
  Clock& clock_;
  ReconcilerOptions options_;
};

}  // namespace ipu::controllers
