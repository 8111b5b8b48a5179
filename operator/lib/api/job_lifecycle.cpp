#include "api/job_lifecycle.h"

#include "api/ipujob_status.h"
#include "common/json_access.h"
#include "common/time_format.h"

namespace ipu::api {

bool isTerminalPhase(const std::string& phase) {
  return phase == kPhaseSucceeded || phase == kPhaseFailed;
}

std::string phaseOf(const nlohmann::json& job) {
  return stringMember(member(job, "status"), "phase");
}

bool isAlive(const nlohmann::json& job) {
  return member(member(job, "metadata"), "deletionTimestamp").is_null() && !isTerminalPhase(phaseOf(job));
}

std::string managerOf(const nlohmann::json& job) {
  const std::string manager = stringMember(member(job, "spec"), "managedBy");
  return manager.empty() ? kDefaultControllerName : manager;
}

bool queuedByKueue(const nlohmann::json& job) {
  return !stringMember(member(member(job, "status"), "kueue"), "workload").empty();
}

bool waitsForAdmission(const nlohmann::json& job) {
  if (!isAlive(job)) return false;
  if (member(member(job, "spec"), "suspend") == nlohmann::json(true)) return false;
  // Kueue admits it first (or reserves its quota and asks the operator's placement check); then the operator
  // places it.
  const nlohmann::json& kueue = member(member(job, "status"), "kueue");
  if (queuedByKueue(job) && member(kueue, "admitted") != nlohmann::json(true) &&
      member(kueue, "awaitingPlacement") != nlohmann::json(true))
    return false;
  return heldPartitionsOf(job).empty();
}

std::optional<std::int64_t> activeDeadlineOf(const nlohmann::json& job) {
  const nlohmann::json& deadline = member(member(job, "spec"), "activeDeadlineSeconds");
  if (!deadline.is_number_integer() || deadline.get<std::int64_t>() <= 0) return std::nullopt;
  return deadline.get<std::int64_t>();
}

std::optional<Clock::WallTime> latestEndOf(const nlohmann::json& job) {
  const nlohmann::json& status = member(job, "status");
  std::optional<Clock::WallTime> end;
  const auto deadline = activeDeadlineOf(job);
  const auto started = parseTime(stringMember(status, "startTime"));
  if (deadline && started) end = *started + std::chrono::seconds(*deadline);
  if (const auto expires = parseTime(stringMember(member(status, "interactive"), "expiresAt"))) {
    if (!end || *expires < *end) end = expires;
  }
  return end;
}

}  // namespace ipu::api
