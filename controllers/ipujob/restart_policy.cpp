#include "ipujob/restart_policy.h"

namespace ipu::controllers {
namespace {

using State = WorkerOutcome::State;
using Kind = WorkerVerdict::Kind;
using api::RestartType;

std::string describeFailure(const WorkerOutcome& worker) {
  if (worker.state == State::kLost) return "Worker pod " + worker.pod + " was lost (" + worker.detail + ")";
  if (worker.exitCode != 0) {
    return "Worker pod " + worker.pod + " failed with exit code " + std::to_string(worker.exitCode);
  }
  return "Worker pod " + worker.pod + " failed" + (worker.detail.empty() ? "" : " (" + worker.detail + ")");
}

// What the worker's own termination message adds (ipu-runtime's line: instance, command, duration), last,
// so that the operator's sentence reads first.
std::string terminationDetail(const WorkerOutcome& worker) {
  if (worker.state != State::kFailed || worker.exitCode == 0 || worker.detail.empty()) return "";
  return ": " + worker.detail;
}

bool restartable(const api::IpuJobSpec& spec, const WorkerOutcome& worker) {
  switch (spec.restartType) {
    case RestartType::kNever:
      return false;
    case RestartType::kOnFailure:
    case RestartType::kAlways:
      return true;
    case RestartType::kExitCode:
      // A lost pod never ran to an exit code of its own: an infrastructure failure, worth another try.
      return worker.state == State::kLost || spec.restartsOnExitCode(worker.exitCode);
  }
  return false;
}

std::string restartOrdinal(const api::IpuJobSpec& spec, int restartCount) {
  return "restart " + std::to_string(restartCount + 1) + " of " + std::to_string(spec.backOffLimit);
}

// A failure the policy may restart: fails for good when it may not, or once backOffLimit is reached.
WorkerVerdict restartOrFail(const api::IpuJobSpec& spec, int restartCount, const std::string& reason,
                            const std::string& failure, const std::string& detail) {
  if (restartCount >= spec.backOffLimit) {
    return {Kind::kFail, "BackoffLimitExceeded",
            failure + " after " + std::to_string(restartCount) + " restart(s) (backOffLimit " +
                std::to_string(spec.backOffLimit) + ")" + detail};
  }
  return {Kind::kRestart, reason,
          failure + "; restarting the job (" + restartOrdinal(spec, restartCount) + ")" + detail};
}

}  // namespace

WorkerVerdict judgeWorkers(const api::IpuJobSpec& spec, int restartCount,
                           const std::vector<WorkerOutcome>& workers) {
  for (const WorkerOutcome& worker : workers) {
    if (worker.state != State::kFailed && worker.state != State::kLost) continue;
    const std::string failure = describeFailure(worker);
    const std::string detail = terminationDetail(worker);
    const std::string reason = worker.state == State::kLost ? "WorkerLost" : "WorkerFailed";
    if (!restartable(spec, worker)) {
      if (spec.restartType == RestartType::kExitCode && worker.state == State::kFailed) {
        return {Kind::kFail, reason, failure + ", which is not in restartPolicy.exitCodes" + detail};
      }
      return {Kind::kFail, reason, failure + detail};
    }
    return restartOrFail(spec, restartCount, reason, failure, detail);
  }
  for (const WorkerOutcome& worker : workers) {
    if (worker.state != State::kSucceeded) return {Kind::kContinue, {}, {}};
  }
  if (workers.empty()) return {Kind::kContinue, {}, {}};
  if (spec.restartType == RestartType::kAlways && restartCount < spec.backOffLimit) {
    return {Kind::kRestart, "Completed",
            "All instances done; restarting the job as restartPolicy Always asks (" +
                restartOrdinal(spec, restartCount) + ")"};
  }
  return {Kind::kSucceed, "Succeeded", "All instances done"};
}

WorkerVerdict judgeLostAttempt(const api::IpuJobSpec& spec, int restartCount, const std::string& reason,
                               const std::string& what) {
  // Nothing of the job's own failed: like a lost worker, every policy but Never tries again.
  if (spec.restartType == RestartType::kNever) return {Kind::kFail, reason, what};
  return restartOrFail(spec, restartCount, reason, what, "");
}

}  // namespace ipu::controllers
