#include "vipu/wait_until_active.h"

#include <algorithm>

namespace ipu::vipu {

Result<PartitionStatus> waitUntilActive(VipuApi& api, const std::string& partitionId,
                                        std::chrono::milliseconds timeout, BackoffPolicy poll, Clock& clock,
                                        std::stop_token stop) {
  const auto deadline = clock.now() + timeout;
  Backoff backoff(poll);
  while (true) {
    Result<PartitionStatus> status = api.getPartitionStatus(partitionId);
    if (!status) return status;
    if (status->readyState == ReadyState::kActive) return status;
    if (status->readyState == ReadyState::kError) {
      std::string errors;
      for (const std::string& error : status->errors) errors += (errors.empty() ? "" : "; ") + error;
      return makeError(ErrorCode::kFailedPrecondition, "partition '" + partitionId + "' is in PS_ERROR (" +
                                                           toString(status->operationState) + ")" +
                                                           (errors.empty() ? std::string() : ": " + errors));
    }
    if (status->readyState == ReadyState::kRemoved) {
      return makeError(ErrorCode::kNotFound,
                       "partition '" + partitionId + "' was removed while waiting for it");
    }
    const auto now = clock.now();
    if (now >= deadline) {
      return makeError(ErrorCode::kDeadlineExceeded, "partition '" + partitionId + "' is still " +
                                                         toString(status->readyState) + " (" +
                                                         toString(status->operationState) + ") after " +
                                                         std::to_string(timeout.count()) + " ms");
    }
    const auto remaining = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - now);
    if (!clock.sleepFor(std::min<Clock::Duration>(backoff.next(), remaining + std::chrono::milliseconds(1)),
                        stop)) {
      return makeError(ErrorCode::kCancelled, "stopped while waiting for partition '" + partitionId + "'");
    }
  }
}

}  // namespace ipu::vipu
