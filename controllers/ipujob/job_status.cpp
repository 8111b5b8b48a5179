#include "ipujob/job_status.h"

#include "api/ipujob_status.h"
#include "common/json_access.h"

namespace ipu::controllers {

bool isTerminalPhase(const std::string& phase) {
  return phase == kPhaseSucceeded || phase == kPhaseFailed;
}

std::string phaseOf(const Json& job) {
  return stringMember(member(job, "status"), "phase");
}

Json recordedPartitions(const Json& job) {
  const Json& partitions = member(member(job, "status"), "partitions");
  return partitions.is_array() ? partitions : Json::array();
}

std::vector<Json> heldPartitions(const Json& job) {
  std::vector<Json> held;
  for (const Json& partition : recordedPartitions(job)) {
    if (partition.value("state", "") != kPartitionReleased) held.push_back(partition);
  }
  return held;
}

Json setCondition(const Json& conditions, const Condition& condition, const std::string& now) {
  api::IpuJobStatus status = api::parseIpuJobStatus({{"conditions", conditions}});
  status.setCondition({condition.type, condition.status ? "True" : "False", condition.reason,
                       condition.message, condition.observedGeneration, ""},
                      now);
  return api::toJson(status)["conditions"];
}

Json conditionsForPhase(const Json& conditions, const std::string& phase, const std::string& reason,
                        const std::string& message, int64_t generation, const std::string& now) {
  const bool admitted = phase == kPhaseCreating || phase == kPhaseRunning || phase == kPhaseRestarting ||
                        phase == kPhaseSucceeded;
  Json result = setCondition(conditions, {"Admitted", admitted, reason, message, generation}, now);
  result = setCondition(result, {"Ready", phase == kPhaseRunning, reason, message, generation}, now);
  if (phase == kPhaseSucceeded || phase == kPhaseFailed) {
    result = setCondition(result, {phase, true, reason, message, generation}, now);
  }
  return result;
}

}  // namespace ipu::controllers
