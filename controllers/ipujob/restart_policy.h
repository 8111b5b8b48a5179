#pragma once

#include <string>
#include <vector>

#include "api/ipujob.h"

namespace ipu::controllers {

// What one worker pod of the current attempt amounts to.
struct WorkerOutcome {
  enum class State { kActive, kSucceeded, kFailed, kLost };
  std::string pod;
  State state = State::kActive;
  // kFailed: the first non-zero exit code of its init containers, then its containers (0 when none)
  int exitCode = 0;
  // kFailed with an exit code: the container's termination message (ipu-runtime's line naming the instance;
  // "init container NAME: ..." for an init container); without one: the pod's reason; kLost: what happened
  // (deleted, or the pod's reason: "Evicted: The node was low on resource: memory."); kSucceeded: the
  // termination message, if any (an idle reclaim's reason).
  std::string detail;
};

struct WorkerVerdict {
  enum class Kind { kContinue, kSucceed, kRestart, kFail };
  Kind kind = Kind::kContinue;
  std::string reason;   // a stable condition/Event reason
  std::string message;  // for people
};

// What the job does about its workers, by restartPolicy (a job restarts as a whole: poprun instances start
// together, so one failed worker restarts every worker on reset partitions):
//   Never      any failure fails the job;
//   OnFailure  a failed or lost worker restarts the job, up to backOffLimit restarts;
//   ExitCode   like OnFailure for exit codes in restartPolicy.exitCodes (and lost workers); any other code
//              fails the job;
//   Always     like OnFailure, and a job whose workers all completed runs again, up to backOffLimit times.
// `restartCount` is the number of restarts so far. The first failed worker (in the order given) decides.
// Pure.
WorkerVerdict judgeWorkers(const api::IpuJobSpec& spec, int restartCount,
                           const std::vector<WorkerOutcome>& workers);

// The attempt was lost to the infrastructure as a whole (a partition that was Active disappeared from V-IPU):
// restarted like a lost worker, by every policy but Never, up to backOffLimit. `reason` names the loss
// (PartitionLost), `what` says it for people. Pure.
WorkerVerdict judgeLostAttempt(const api::IpuJobSpec& spec, int restartCount, const std::string& reason,
                               const std::string& what);

}  // namespace ipu::controllers
