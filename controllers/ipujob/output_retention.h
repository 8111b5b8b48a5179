#pragma once

#include <chrono>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "api/ipujob.h"
#include "common/clock.h"
#include "ipujob/runtime_injection.h"

// Worker 0's outputs kept after its command ends (spec.outputs; docs/user-guide.md, "Files after the command
// ends"): the directory is an emptyDir shared by the worker container and a small container of the runtime
// image, which waits until the worker's runtime lets go of its lock (the command ended, however it ended) and
// then keeps the pod running for the retention, so that `kubectl ipu cp` can exec into it. The job is judged
// by its command, not by the pod: it ends, and releases its IPUs, while the pod still serves its files.
// Pure functions of the job, the pod and the time.
namespace ipu::controllers {

using Json = nlohmann::json;

// The admin's limits (--outputs-retain-seconds, --outputs-max-retain-seconds).
struct RetentionLimits {
  std::chrono::seconds defaultRetain = std::chrono::minutes(10);  // for retainSeconds 0
  std::chrono::seconds maxRetain = std::chrono::hours(1);         // a longer one is cut to this
};

// The retention in force for `spec`: its own, the default for 0, at most the maximum (`capped` when cut).
struct RetainFor {
  std::chrono::seconds seconds{0};
  bool capped = false;
};
RetainFor retainFor(const api::OutputsSpec& spec, const RetentionLimits& limits);

// Why worker 0 of a job with spec.outputs cannot keep them (nullopt when it can): the runtime is not injected
// (--runtime-image unset), or the worker container has no command (it keeps its image's entrypoint, which the
// runtime does not wrap, so nothing would say when it ended).
std::optional<std::string> outputsNotRetainedMessage(const api::IpuJobSpec& spec,
                                                     const RuntimeOptions& options);

// Adds the retention to worker 0's pod (its runtime already injected): the outputs emptyDir mounted at the
// path in the worker container, the lock's environment, the retention container and the annotation that
// records `retain`. Does nothing when outputsNotRetainedMessage says why not. InvalidArgument when the path
// collides with a mount of the worker container or of the runtime.
Status addOutputsRetention(Json& pod, const api::OutputsSpec& spec, std::chrono::seconds retain,
                           const RuntimeOptions& options);

// Whether `pod` was made to keep spec.outputs (its annotations say which directory and how long). Every
// reading here is of the pod's metadata and status only, which the operator's pod cache keeps.
bool keepsOutputs(const Json& pod);

// The phase of the worker's own command in `pod`: the pod's phase, except that a pod that keeps its outputs
// and runs on after every container but the retention container ended is Succeeded (all exited 0) or Failed.
std::string commandPhase(const Json& pod);

// A pod that keeps its outputs now: its command ended, its retention container runs.
struct KeptOutputs {
  std::string path;
  Clock::WallTime until;  // when the command ended + the retention recorded in the pod
};
// nullopt when `pod` does not (no retention container, its command still runs, or the retention ended).
std::optional<KeptOutputs> keptOutputs(const Json& pod);

}  // namespace ipu::controllers
