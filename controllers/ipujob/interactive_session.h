#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "api/ipujob.h"
#include "api/ipujob_status.h"
#include "common/clock.h"
#include "ipujob/restart_policy.h"

// How long an interactive job (spec.interactive) lives: pure functions from its spec, the admin's limits and
// when its workers first all ran to its status.interactive (docs/user-guide.md, "Interactive jobs").
namespace ipu::controllers {

// The admin's limits (--interactive-ttl-seconds, --interactive-max-ttl-seconds).
struct InteractiveLimits {
  std::chrono::seconds defaultTtl = std::chrono::hours(4);  // for ttl 0
  std::chrono::seconds maxTtl = std::chrono::hours(24);     // a longer ttl is cut to this
  // Idle reclaim (--interactive-idle-seconds) for idleSeconds 0, and the most a job may ask; 0: off.
  std::chrono::seconds idleDefault{0};
};

// The ttl in force for `spec`: its own, the default for 0, at most the maximum (`capped` when cut).
struct InteractiveTtl {
  std::chrono::seconds ttl{0};
  bool capped = false;
};
InteractiveTtl interactiveTtl(const api::InteractiveSpec& spec, const InteractiveLimits& limits);

// After how long without activity the job's workers end (0: never): its own idleSeconds, at most the
// admin's when the admin set one; else the admin's.
std::chrono::seconds idleReclaimAfter(const api::InteractiveSpec& spec, const InteractiveLimits& limits);

// Why the job's idle reclaim is not watched (nullopt when it is, or when it is off): only the runtime in a
// single-worker instance's worker, wrapping its command, watches for activity.
std::optional<std::string> idleReclaimNotWatchedMessage(const api::IpuJobSpec& spec,
                                                        const InteractiveLimits& limits,
                                                        bool runtimeInjected);

// The reason the runtime gave when it ended a worker as idle (the first such worker's), nullopt when none
// was.
std::optional<std::string> idleReclaimReason(const std::vector<WorkerOutcome>& workers);

// status.interactive of a job whose workers all run (or ran) at `now`: the session started when `previous`
// says (now, when it has not started), and ends `ttl` (interactiveTtl's) later. A ttl raised (or lowered) in
// the spec moves expiresAt, nothing else.
api::InteractiveStatus interactiveStatus(const std::optional<api::InteractiveStatus>& previous,
                                         std::chrono::seconds ttl, Clock::WallTime now);

// When the session ends; nullopt when `status` does not say in a form the operator writes.
std::optional<Clock::WallTime> interactiveExpiry(const api::InteractiveStatus& status);

}  // namespace ipu::controllers
