#include "ipujob/interactive_session.h"

#include <algorithm>

#include "common/time_format.h"

namespace ipu::controllers {

InteractiveTtl interactiveTtl(const api::InteractiveSpec& spec, const InteractiveLimits& limits) {
  const std::chrono::seconds asked =
      spec.ttlSeconds > 0 ? std::chrono::seconds(spec.ttlSeconds) : limits.defaultTtl;
  return {std::min(asked, limits.maxTtl), asked > limits.maxTtl};
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
