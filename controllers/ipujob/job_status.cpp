#include "ipujob/job_status.h"

#include "api/ipujob_status.h"
#include "common/json_access.h"

namespace ipu::controllers {

std::optional<std::string> shapeDrift(const api::IpuJobStatus& status, const api::IpuJobSpec& spec) {
  const auto held = status.heldPartitions();
  if (held.empty()) return std::nullopt;
  api::AdmittedShape admitted;
  if (status.admittedShape) {
    admitted = *status.admittedShape;
  } else {
    admitted = {static_cast<int>(status.partitions.size()), held.front().size, spec.workersPerJobInstance};
  }
  std::string drift;
  const auto compare = [&drift](const char* field, int was, int is) {
    if (was == is) return;
    drift += (drift.empty() ? "" : ", ") + std::string(field) + " " + std::to_string(was) + " -> " +
             std::to_string(is);
  };
  compare("jobInstances", admitted.jobInstances, spec.jobInstances);
  compare("ipusPerJobInstance", admitted.ipusPerJobInstance, spec.ipusPerJobInstance);
  compare("workersPerJobInstance", admitted.workersPerJobInstance, spec.workersPerJobInstance);
  if (drift.empty()) return std::nullopt;
  return drift;
}

std::string launcherStatusFor(const std::string& phase) {
  if (phase == kPhaseRunning) return "Running";
  if (phase == kPhaseSucceeded) return "Completed";
  if (phase == kPhaseFailed) return "Failed";
  if (phase == kPhaseSuspended) return "Suspended";
  if (phase == kPhaseRestarting) return "Restarting";
  return "Pending";
}

void setPhase(api::IpuJobStatus& status, const PhaseChange& change, int64_t generation,
              const std::string& now) {
  const auto condition = [&](const std::string& type, bool value) {
    status.setCondition({type, value ? "True" : "False", change.reason, change.message, generation, ""}, now);
  };
  const std::string& phase = change.phase;
  status.phase = phase;
  status.launcherStatus = launcherStatusFor(phase);
  status.lastMessage = change.message;
  status.observedGeneration = generation;
  status.queuePosition.reset();
  condition("Admitted", phase == kPhaseCreating || phase == kPhaseRunning || phase == kPhaseRestarting ||
                            phase == kPhaseSucceeded);
  condition("Ready", phase == kPhaseRunning);
  if (isTerminalPhase(phase)) condition(phase, true);
}

}  // namespace ipu::controllers
