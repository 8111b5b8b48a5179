#include "ipujob/worker_observation.h"

#include <exception>
#include <tuple>
#include <utility>

#include "common/json_access.h"
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

// The first container that ended with a non-zero exit code: its code, and its termination message (what
// ipu-runtime wrote: the instance, the command, how it ended), if any.
std::pair<int, std::string> firstFailedContainer(const Json& pod) {
  const Json& statuses = member(member(pod, "status"), "containerStatuses");
  if (!statuses.is_array()) return {0, ""};
  for (const Json& status : statuses) {
    const Json& terminated = member(member(status, "state"), "terminated");
    const Json& code = member(terminated, "exitCode");
    if (code.is_number_integer() && code.get<int>() != 0) {
      std::string message = stringMember(terminated, "message");
      while (!message.empty() && (message.back() == '\n' || message.back() == ' ')) message.pop_back();
      return {code.get<int>(), message};
    }
  }
  return {0, ""};
}

// A worker pod as restartPolicy sees it.
WorkerOutcome outcomeOf(const std::string& name, const Json& pod) {
  WorkerOutcome outcome{name, WorkerOutcome::State::kActive, 0, {}};
  const std::string phase = podPhase(pod);
  if (phase == "Succeeded") outcome.state = WorkerOutcome::State::kSucceeded;
  if (phase != "Failed") return outcome;
  outcome.state = WorkerOutcome::State::kFailed;
  std::tie(outcome.exitCode, outcome.detail) = firstFailedContainer(pod);
  if (outcome.exitCode == 0) {  // evicted, or killed before it ran: the pod's reason says why
    const std::string reason = stringMember(member(pod, "status"), "reason");
    const std::string message = stringMember(member(pod, "status"), "message");
    outcome.detail = reason + (!reason.empty() && !message.empty() ? ": " : "") + message;
  }
  return outcome;
}

}  // namespace

std::string podPhase(const Json& pod) {
  return stringMember(member(pod, "status"), "phase");
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

WorkerObservation observeWorkers(const api::IpuJob& job, const WorkerPods& pods, bool allStarted) {
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
    const std::string phase = podPhase(*pod->second);
    if (phase == "Running") ++observation.running;
    if (phase == "Succeeded") ++observation.succeeded;
  }
  return observation;
}

std::vector<kube::ObjectPtr> podsToRemoveAtEnd(const std::vector<kube::ObjectPtr>& pods,
                                               api::CleanPodPolicy policy, const std::string& jobName) {
  const std::string keep = workerPodName(jobName, 0);
  std::vector<kube::ObjectPtr> doomed;
  for (const kube::ObjectPtr& pod : pods) {
    const bool workerZero = stringMember(member(*pod, "metadata"), "name") == keep;
    if (!podFinished(*pod) || policy == api::CleanPodPolicy::kAll ||
        (policy == api::CleanPodPolicy::kWorkers && !workerZero)) {
      doomed.push_back(pod);
    }
  }
  return doomed;
}

}  // namespace ipu::controllers
