#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "api/ipujob.h"
#include "ipujob/restart_policy.h"
#include "kube/store.h"

namespace ipu::controllers {

using Json = nlohmann::json;

// A job's worker pods split by attempt (graphcore.ai/attempt): this attempt's by name, and the rest, which
// are only ever deleted (an earlier attempt's pod is never reused).
struct WorkerPods {
  std::map<std::string, kube::ObjectPtr> current;
  std::vector<kube::ObjectPtr> stale;
};
WorkerPods splitByAttempt(const std::vector<kube::ObjectPtr>& pods, int attempt);

// What the current attempt's workers amount to: one outcome per worker (in worker order) and the counts
// status shows.
struct WorkerObservation {
  std::vector<WorkerOutcome> outcomes;
  int running = 0;
  int succeeded = 0;
  int missing = 0;  // workers without a pod

  bool allUp(int workers) const { return running + succeeded == workers; }
};

// Pure. `allStarted`: every worker has run once (the job reached Running), so a missing pod was lost
// (deleted, evicted) rather than not created yet.
WorkerObservation observeWorkers(const api::IpuJob& job, const WorkerPods& pods, bool allStarted);

// The pods to delete once the job has ended: workers still running (they would hold nothing but a released
// partition), then by cleanPodPolicy: All of them, or Workers = every one but <job>-worker-0 (its logs are
// what users read). Pure.
std::vector<kube::ObjectPtr> podsToRemoveAtEnd(const std::vector<kube::ObjectPtr>& pods,
                                               api::CleanPodPolicy policy, const std::string& jobName);

// A pod's status.phase ("" when it has none yet).
std::string podPhase(const Json& pod);
bool podFinished(const Json& pod);

}  // namespace ipu::controllers
