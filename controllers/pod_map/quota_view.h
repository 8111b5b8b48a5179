#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace ipu::controllers {

// Each IPUQuota's use against its limits, and the jobs waiting for admission.
struct QuotaRow {
  std::string ns;
  std::string quota;
  std::int64_t usedIpus = 0;      // running jobs
  std::int64_t reservedIpus = 0;  // admitted, partitions not created yet
  std::int64_t maxIpus = 0;
  std::int64_t admittedJobs = 0;
  std::optional<std::int64_t> maxJobs;
  std::int64_t waitingJobs = 0;
};

struct WaitingJob {
  std::string ns;
  std::string job;
  int ipus = 0;  // jobInstances x ipusPerJobInstance (0 when its spec does not parse)
  std::optional<int> position;
  std::string reason;   // the Admitted condition's reason: QuotaExceeded, InsufficientCapacity, ...
  std::string message;  // status.lastMessage
};

struct QuotaReport {
  std::vector<QuotaRow> quotas;
  std::vector<WaitingJob> waiting;  // by namespace, then queue position
};

// Pure: IPUQuotas and IPUJobs as the API server returned them (or the operator's caches hold them).
QuotaReport quotaReportOf(const std::vector<nlohmann::json>& quotas, const std::vector<nlohmann::json>& jobs);

}  // namespace ipu::controllers
