#pragma once

#include <chrono>
#include <string>

#include "common/clock.h"
#include "common/result.h"
#include "vipu/backoff.h"
#include "vipu/vipu_api.h"

namespace ipu::vipu {

// Polls GetPartitionStatus, with backoff, until the partition is PS_ACTIVE (returns its status).
// Errors: PS_ERROR -> kFailedPrecondition naming the partition's errors (reset or recreate it);
// still pending at the deadline -> kDeadlineExceeded; gone -> kNotFound; call failures as returned.
// How often a pending partition is asked again: soon at first (activation is often quick), then at most 1 s.
inline constexpr BackoffPolicy kActivationPoll{std::chrono::milliseconds(20), std::chrono::milliseconds(1000),
                                               1.5};

// Waits on `clock`; a stop request ends the wait with kCancelled.
Result<PartitionStatus> waitUntilActive(VipuApi& api, const std::string& partitionId,
                                        std::chrono::milliseconds timeout,
                                        BackoffPolicy poll = kActivationPoll, Clock& clock = Clock::real(),
                                        std::stop_token stop = {});

}  // namespace ipu::vipu
