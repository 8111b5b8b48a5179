#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "api/ipujob.h"
#include "common/clock.h"
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
  // The soonest a pod that cannot start, or whose deletion is not confirmed, reaches its PodLimits (look
  // again then); none: nullopt.
  std::optional<Clock::Duration> nextCheck;

  bool allUp(int workers) const { return running + succeeded == workers; }
};

// Bounds on pods that would otherwise hold a job's IPUs forever (zero: no bound).
// `startTimeout`: a pod that cannot start — no node fits it (Unschedulable), its image cannot be pulled
// (ErrImagePull, ImagePullBackOff, ErrImageNeverPull, InvalidImageName), its container cannot be created —
// fails once it has been stuck that long since it was created, with its own reason.
// `deletionGrace`: a pod still there that long after its deletion deadline (metadata.deletionTimestamp,
// which already includes its termination grace period) is on a node that stopped answering (a dead kubelet
// never confirms the deletion; the taint manager deletes pods of an unreachable node after their
// tolerationSeconds, 300 by default): it is lost.
struct PodLimits {
  Clock::WallTime now;
  Clock::Duration startTimeout{};
  Clock::Duration deletionGrace{};
};

// Whether `pod`'s deletion is overdue: still there `grace` after its deletion deadline (see PodLimits).
// Pure.
bool deletionOverdue(const Json& pod, Clock::WallTime now, Clock::Duration grace);

// Whether the release of a job's partitions still waits for `pod` to stop: a pod not finished waits until it
// is gone, but no longer than `timeout` after its deletion was asked (its deletion deadline less its grace
// period), so that neither a node that stopped answering nor a long terminationGracePeriodSeconds in the
// tenant's template holds the IPUs back; the release then fences the pod off them. A zero `timeout` waits
// until the deletion deadline. Pure.
bool releaseWaitsFor(const Json& pod, Clock::WallTime now, Clock::Duration timeout);

// Why a pod cannot start ("ErrImagePull: ..."), or nullopt when it is not stuck. Pure.
std::optional<std::string> cannotStartReason(const Json& pod);

// Sets `next` to `candidate` when there is no `next` yet or `candidate` is sooner: a pass looks again at the
// first of the times its steps ask for.
void keepSooner(std::optional<Clock::Duration>& next, std::optional<Clock::Duration> candidate);

// Pure. `allStarted`: every worker has run once (the job reached Running), so a missing pod was lost
// (deleted, evicted) rather than not created yet. `limits`: when set, pods that cannot start fail and pods
// whose deletion is overdue are lost, each after its bound.
WorkerObservation observeWorkers(const api::IpuJob& job, const WorkerPods& pods, bool allStarted,
                                 std::optional<PodLimits> limits = std::nullopt);

// The pods to delete once the job has ended: workers still running (they would hold nothing but a released
// partition), then by cleanPodPolicy: All of them, or Workers = every one but <job>-worker-0 (its logs are
// what users read). The pod named `keep` (worker 0 keeping its outputs; "" for none) is not deleted. Pure.
std::vector<kube::ObjectPtr> podsToRemoveAtEnd(const std::vector<kube::ObjectPtr>& pods,
                                               api::CleanPodPolicy policy, const std::string& jobName,
                                               const std::string& keep = "");

// A pod's status.phase ("" when it has none yet).
std::string podPhase(const Json& pod);
bool podFinished(const Json& pod);

}  // namespace ipu::controllers
