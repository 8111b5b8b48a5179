#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "admission/start_estimate.h"
#include "api/ipupod.h"
#include "common/clock.h"

namespace ipu::kubectl_ipu {

using Json = nlohmann::json;

// `kubectl ipu why JOB`: where a job is, what it needs, what is free, which quota holds it back and what
// would let it run.

// What holds IPUs of the block a waiting job needs.
struct BlockHolder {
  std::string label;  // "team-a/bert" or "another namespace"
  int ipusInBlock = 0;
  std::optional<Clock::Duration> heldFor;
  // For jobs the user may list with spec.activeDeadlineSeconds: when it must end at the latest.
  std::optional<Clock::WallTime> endsBy;
  std::optional<std::int64_t> deadlineSeconds;
};

// One V-IPU controller, for the job's partition size.
struct ControllerFit {
  std::string controller;
  int freeIpus = 0;
  int totalIpus = 0;
  int largestFreeBlock = 0;
  int freeBlocks = 0;       // free aligned blocks of the job's size
  bool neverFits = false;   // the size is larger than any partition this POD can hold
  int largestPossible = 0;  // the largest partition it can hold
  std::string blockIpus;    // the fullest-free block the job would need next ("0-63"), when none is free
  std::vector<BlockHolder> blockHolders;
  std::string readError;
};

// What of an IPUQuota holds a waiting job back.
struct QuotaBlock {
  enum class Kind { kNeverUnderMaxIpus, kNoRoomUnderMaxIpus, kMaxJobs, kMaxPriority, kUnreadable };
  Kind kind;
  std::string text;
};

struct QuotaCheck {
  std::string name;
  std::int64_t maxIpus = 0;
  std::int64_t heldIpus = 0;  // used + reserved
  std::optional<std::int64_t> maxJobs;
  std::int64_t admittedJobs = 0;
  std::optional<std::int64_t> maxPriority;
  std::vector<QuotaBlock> blocks;  // what of it holds the job back
};

struct WhyReport {
  std::string ns, name, phase, reason, message;
  std::optional<int> position;
  int instances = 0, ipusPerInstance = 0, priority = 0;
  std::string pinnedController;   // "" = any
  std::vector<std::string> held;  // its partitions, when it holds some
  std::vector<ControllerFit> controllers;
  std::vector<QuotaCheck> quotas;
  std::vector<std::string> unblock;  // what would let it run, for people
  // When it starts at the latest (the operator's plan played forward over the IPUQueue); nullopt when the job
  // does not wait or the queue could not be read.
  std::optional<controllers::StartEstimate> estimate;
  Clock::WallTime now{};
};

// Pure: the job, the IPUPods, its namespace's IPUQuotas and the IPUJobs the user may list (for names and
// deadlines of the holders).
WhyReport whyOf(const Json& job, const std::vector<api::IpuPodStatus>& pods, const std::vector<Json>& quotas,
                const std::vector<Json>& visibleJobs, Clock::WallTime now);
std::string renderWhy(const WhyReport& report);
Json toJson(const WhyReport& report);

}  // namespace ipu::kubectl_ipu
