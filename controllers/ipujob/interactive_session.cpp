#include "ipujob/interactive_session.h"

#include <algorithm>

#include "common/time_format.h"
#include "contract/runtime_contract.h"
#include "ipujob/launch_form.h"

namespace ipu::controllers {

InteractiveTtl interactiveTtl(const api::InteractiveSpec& spec, const InteractiveLimits& limits) {
  const std::chrono::seconds asked =
      spec.ttlSeconds > 0 ? std::chrono::seconds(spec.ttlSeconds) : limits.defaultTtl;
  return {std::min(asked, limits.maxTtl), asked > limits.maxTtl};
}

std::chrono::seconds idleReclaimAfter(const api::InteractiveSpec& spec, const InteractiveLimits& limits) {
  const std::chrono::seconds asked{spec.idleSeconds};
  if (asked.count() == 0) return limits.idleDefault;
  return limits.idleDefault.count() > 0 ? std::min(asked, limits.idleDefault) : asked;
}

std::optional<std::string> idleReclaimNotWatchedMessage(const api::IpuJobSpec& spec,
                                                        const InteractiveLimits& limits,
                                                        bool runtimeInjected) {
  if (!spec.interactive || idleReclaimAfter(*spec.interactive, limits).count() == 0) return std::nullopt;
  std::string why;
  if (!runtimeInjected) {
    why = "the operator runs without --runtime-image";
  } else if (spec.workersPerJobInstance > 1 || !spec.launcherCommand.empty()) {
    why =
        "its instances start through a launch across several workers; only a single-worker instance's worker "
        "is "
        "watched";
  } else if (workerCommandLine(spec).empty()) {
    why = "the worker container has no command for ipu-runtime to wrap";
  } else {
    return std::nullopt;
  }
  return "Idle reclaim is on, but this job is not watched for activity (" + why + "): it lives its ttl";
}

std::optional<std::string> idleReclaimReason(const std::vector<WorkerOutcome>& workers) {
  const std::string_view marker = runtime::contract::kIdleReclaimedMessage;
  for (const WorkerOutcome& worker : workers) {
    if (worker.state == WorkerOutcome::State::kSucceeded && worker.detail.starts_with(marker))
      return worker.detail.substr(marker.size());
  }
  return std::nullopt;
}

api::InteractiveStatus interactiveStatus(const std::optional<api::InteractiveStatus>& previous,
                                         std::chrono::seconds ttl, Clock::WallTime now) {
  const std::optional<Clock::WallTime> recorded = previous ? parseTime(previous->runningSince) : std::nullopt;
  const Clock::WallTime since = recorded.value_or(now);
  return {formatTime(since), ttl.count(), formatTime(since + ttl)};
}

std::optional<Clock::WallTime> interactiveExpiry(const api::InteractiveStatus& status) {
  return parseTime(status.expiresAt);
}

}  // namespace ipu::controllers
