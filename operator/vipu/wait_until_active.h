#pragma once

#include <chrono>
#include <string>

#include "common/result.h"
#include "vipu/backoff.h"
#include "vipu/vipu_api.h"

namespace ipu::vipu {

// Polls GetPartitionStatus, with backoff, until the partition is PS_ACTIVE (returns its status).
// Errors: PS_ERROR -> kFailedPrecondition naming the partition's errors (reset or recreate it);
// still pending at the deadline -> kDeadlineExceeded; gone -> kNotFound; call failures as returned.
Result<PartitionStatus> waitUntilActive(
    VipuApi& api, const std::string& partitionId, std::chrono::milliseconds timeout,
    BackoffPolicy poll = BackoffPolicy{std::chrono::milliseconds(20), std::chrono::milliseconds(1000), 1.5});

}  // namespace ipu::vipu
