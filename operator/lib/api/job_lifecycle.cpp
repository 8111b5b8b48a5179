#include "api/job_lifecycle.h"

#include "api/ipujob_status.h"
#include "common/json_access.h"

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

bool waitsForAdmission(const nlohmann::json& job) {
  if (!isAlive(job)) return false;
  if (member(member(job, "spec"), "suspend") == nlohmann::json(true)) return false;
  return heldPartitionsOf(job).empty();
}

}  // namespace ipu::api
