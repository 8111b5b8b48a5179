#include "ipujob/worker_observation.h"

#include <cstdint>
#include <exception>
#include <tuple>
#include <utility>

#include "common/json_access.h"
#include "common/time_format.h"
#include "ipujob/output_retention.h"
#include "ipujob/worker_pod.h"

namespace ipu::controllers {
namespace {

int attemptOf(const Json& pod) {
  const std::string label = stringMember(member(member(pod, "metadata"), "labels"), kAttemptLabel);
  try {
    return label.empty() ? 0 : std::stoi(label);
  } catch (const std::exception&) {
    return -1;  // not one we wrote: never the current attempt
  }
}

// The first container that ended with a non-zero exit code, init containers first (they ran first; a
// failed one is why the others never ran): its code, and its termination message (what ipu-runtime wrote:
// the instance, the command, how it ended), if any; an init container is named.
std::pair<int, std::string> firstFailedContainer(const Json& pod) {
  for (const char* kind : {"initContainerStatuses", "containerStatuses"}) {
    const Json& statuses = member(member(pod, "status"), kind);
    if (!statuses.is_array()) continue;
    for (const Json& status : statuses) {
      const Json& terminated = member(member(status, "state"), "terminated");
      const Json& code = member(terminated, "exitCode");
      if (!code.is_number_integer() || code.get<int>() == 0) continue;
      std::string message = stringMember(terminated, "message");
      while (!message.empty() && (message.back() == '\n' || message.back() == ' ')) message.pop_back();
      if (kind == std::string("initContainerStatuses")) {
        message = "init container " + stringMember(status, "name") + (message.empty() ? "" : ": " + message);
      }
      return {code.get<int>(), message};
    }
  }
  return {0, ""};
}

// The first termination message of the pod's containers ("" when none wrote one): how ipu-runtime's command
// ended, an idle reclaim's reason.
std::string firstTerminationMessage(const Json& pod) {
  for (const Json& status : ipu::arrayMember(member(pod, "status"), "containerStatuses")) {
    std::string message = stringMember(member(member(status, "state"), "terminated"), "message");
    while (!message.empty() && (message.back() == '\n' || message.back() == ' ')) message.pop_back();
    if (!message.empty()) return message;
  }
  return "";
}

// Ended by the cluster, not by its program: evicted by the kubelet (node pressure) or the Eviction API,
// preempted, or its node gone. Kubernetes marks most with the DisruptionTarget condition; the kubelet's own
// evictions say so in status.reason. Its exit code (often 137, killed) is not the program's verdict.
bool disrupted(const Json& pod) {
  const Json& status = member(pod, "status");
  const std::string reason = stringMember(status, "reason");
  if (reason == "Evicted" || reason == "Preempting" || reason == "NodeLost" || reason == "Shutdown" ||
      reason == "Terminated") {
    return true;
  }
  const Json& conditions = member(status, "conditions");
  if (!conditions.is_array()) return false;
  for (const Json& condition : conditions) {
    if (stringMember(condition, "type") == "DisruptionTarget" && stringMember(condition, "status") == "True")
      return true;
  }
  return false;
}

// The pod's status.reason and message: "Evicted: The node was low on resource: memory."
std::string podReason(const Json& pod) {
  const std::string reason = stringMember(member(pod, "status"), "reason");
  const std::string message = stringMember(member(pod, "status"), "message");
  return reason + (!reason.empty() && !message.empty() ? ": " : "") + message;
}

// A worker pod as restartPolicy sees it: by its command (a pod that keeps its outputs runs on after it).
WorkerOutcome outcomeOf(const std::string& name, const Json& pod) {
  WorkerOutcome outcome{name, WorkerOutcome::State::kActive, 0, {}};
  const std::string phase = commandPhase(pod);
  if (phase == "Succeeded") {
    outcome.state = WorkerOutcome::State::kSucceeded;
    outcome.detail = firstTerminationMessage(pod);
  }
  if (phase != "Failed") return outcome;
  if (disrupted(pod)) {
    // Lost, like a deleted pod: every restart policy but Never tries again, ExitCode included.
    outcome.state = WorkerOutcome::State::kLost;
    const std::string why = podReason(pod);
    outcome.detail = why.empty() ? "the pod was disrupted" : why;
    return outcome;
  }
  outcome.state = WorkerOutcome::State::kFailed;
  std::tie(outcome.exitCode, outcome.detail) = firstFailedContainer(pod);
  if (outcome.exitCode == 0) outcome.detail = podReason(pod);  // killed before it ran: the pod says why
  return outcome;
}

// What a waiting container's reason says when it will not get better by itself.
bool cannotCreate(const std::string& reason) {
  return reason == "ErrImagePull" || reason == "ImagePullBackOff" || reason == "ErrImageNeverPull" ||
         reason == "InvalidImageName" || reason == "CreateContainerConfigError" ||
         reason == "CreateContainerError";
}

std::string withMessage(const std::string& reason, const std::string& message) {
  return reason + (message.empty() ? "" : ": " + message);
}

}  // namespace

std::optional<std::string> cannotStartReason(const Json& pod) {
  const std::string phase = podPhase(pod);
  if (!phase.empty() && phase != "Pending") return std::nullopt;
  const Json& status = member(pod, "status");
  if (const Json& conditions = member(status, "conditions"); conditions.is_array()) {
    for (const Json& condition : conditions) {
      if (stringMember(condition, "type") == "PodScheduled" && stringMember(condition, "status") == "False" &&
          stringMember(condition, "reason") == "Unschedulable") {
        return withMessage("Unschedulable", stringMember(condition, "message"));
      }
    }
  }
  for (const char* kind : {"initContainerStatuses", "containerStatuses"}) {
    const Json& statuses = member(status, kind);
    if (!statuses.is_array()) continue;
    for (const Json& container : statuses) {
      const Json& waiting = member(member(container, "state"), "waiting");
      const std::string reason = stringMember(waiting, "reason");
      if (cannotCreate(reason)) {
        return withMessage(reason, stringMember(waiting, "message")) + " (container " +
               stringMember(container, "name") + ")";
      }
    }
  }
  return std::nullopt;
}

void keepSooner(std::optional<Clock::Duration>& next, std::optional<Clock::Duration> candidate) {
  if (candidate && (!next || *candidate < *next)) next = candidate;
}

std::string podPhase(const Json& pod) {
  return stringMember(member(pod, "status"), "phase");
}

bool deletionOverdue(const Json& pod, Clock::WallTime now, Clock::Duration grace) {
  const auto deadline = parseTime(stringMember(member(pod, "metadata"), "deletionTimestamp"));
  return deadline && now >= *deadline + grace;
}

bool releaseWaitsFor(const Json& pod, Clock::WallTime now, Clock::Duration timeout) {
  if (podFinished(pod)) return false;
  const Json& metadata = member(pod, "metadata");
  const auto deadline = parseTime(stringMember(metadata, "deletionTimestamp"));
  if (!deadline) return true;  // not going, or its deletion not in the cache yet
  if (timeout <= Clock::Duration::zero()) return now < *deadline;
  const Json& grace = member(metadata, "deletionGracePeriodSeconds");
  const auto asked =
      *deadline - std::chrono::seconds(grace.is_number_integer() ? grace.get<std::int64_t>() : 0);
  return now < asked + timeout;
}

bool podFinished(const Json& pod) {
  const std::string phase = podPhase(pod);
  return phase == "Succeeded" || phase == "Failed";
}

WorkerPods splitByAttempt(const std::vector<kube::ObjectPtr>& pods, int attempt) {
  WorkerPods split;
  for (const kube::ObjectPtr& pod : pods) {
    if (attemptOf(*pod) == attempt) {
      split.current.emplace(stringMember(member(*pod, "metadata"), "name"), pod);
    } else {
      split.stale.push_back(pod);
    }
  }
  return split;
}

namespace {

std::string seconds(Clock::Duration duration) {
  return std::to_string(std::chrono::duration_cast<std::chrono::seconds>(duration).count()) + " s";
}

// A stuck pod past its limit fails (its outcome was still active); one within it says when to look again.
void judgeStart(const Json& pod, const PodLimits& limits, WorkerObservation& observation) {
  WorkerOutcome& outcome = observation.outcomes.back();
  if (outcome.state != WorkerOutcome::State::kActive || limits.startTimeout <= Clock::Duration::zero())
    return;
  const auto reason = cannotStartReason(pod);
  if (!reason) return;
  const auto created = parseTime(stringMember(member(pod, "metadata"), "creationTimestamp"));
  if (!created) return;
  const auto due = *created + limits.startTimeout;
  if (limits.now >= due) {
    outcome.state = WorkerOutcome::State::kFailed;
    outcome.detail = "could not start within " + seconds(limits.startTimeout) + ": " + *reason;
    return;
  }
  keepSooner(observation.nextCheck, std::chrono::duration_cast<Clock::Duration>(due - limits.now));
}

// A pod whose deletion its node never confirms is lost once overdue; one within its grace says when to look
// again.
void judgeDeletion(const Json& pod, const PodLimits& limits, WorkerObservation& observation) {
  WorkerOutcome& outcome = observation.outcomes.back();
  if (outcome.state != WorkerOutcome::State::kActive || limits.deletionGrace <= Clock::Duration::zero())
    return;
  const auto deadline = parseTime(stringMember(member(pod, "metadata"), "deletionTimestamp"));
  if (!deadline) return;
  const auto due = *deadline + limits.deletionGrace;
  if (limits.now >= due) {
    outcome.state = WorkerOutcome::State::kLost;
    outcome.detail = "still terminating " + seconds(limits.deletionGrace) +
                     " after its deletion deadline: its node is not answering";
    return;
  }
  keepSooner(observation.nextCheck, std::chrono::duration_cast<Clock::Duration>(due - limits.now));
}

}  // namespace

WorkerObservation observeWorkers(const api::IpuJob& job, const WorkerPods& pods, bool allStarted,
                                 std::optional<PodLimits> limits) {
  WorkerObservation observation;
  for (int k = 0; k < job.spec.workerCount(); ++k) {
    const std::string name = workerPodName(job.identity.name, k);
    const auto pod = pods.current.find(name);
    if (pod == pods.current.end()) {
      ++observation.missing;
      observation.outcomes.push_back(
          {name, allStarted ? WorkerOutcome::State::kLost : WorkerOutcome::State::kActive, 0,
           "the pod was deleted"});
      continue;
    }
    observation.outcomes.push_back(outcomeOf(name, *pod->second));
    if (limits) {
      judgeStart(*pod->second, *limits, observation);
      judgeDeletion(*pod->second, *limits, observation);
    }
    const std::string phase = commandPhase(*pod->second);
    if (phase == "Running") ++observation.running;
    if (phase == "Succeeded") ++observation.succeeded;
  }
  return observation;
}

std::vector<kube::ObjectPtr> podsToRemoveAtEnd(const std::vector<kube::ObjectPtr>& pods,
                                               api::CleanPodPolicy policy, const std::string& jobName,
                                               const std::string& keep) {
  const std::string workerZeroName = workerPodName(jobName, 0);
  std::vector<kube::ObjectPtr> doomed;
  for (const kube::ObjectPtr& pod : pods) {
    const std::string name = stringMember(member(*pod, "metadata"), "name");
    if (!keep.empty() && name == keep) continue;
    const bool workerZero = name == workerZeroName;
    if (!podFinished(*pod) || policy == api::CleanPodPolicy::kAll ||
        (policy == api::CleanPodPolicy::kWorkers && !workerZero)) {
      doomed.push_back(pod);
    }
  }
  return doomed;
}

}  // namespace ipu::controllers
