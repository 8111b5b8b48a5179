#include "admission/plan_inputs.h"

namespace ipu::controllers {

vipu::IpuSet ControllerInputs::taken() const {
  vipu::IpuSet taken(planner->topology().totalIpus());
  for (const Occupant& occupant : occupants) {
    for (const std::uint32_t ipu : occupant.ipus) taken.insert(ipu);
  }
  return taken;
}

AdmissionRequest admissionRequestOf(const api::ObjectIdentity& identity, const api::JobAsk& ask) {
  AdmissionRequest request;
  request.key = identity.ns + "/" + identity.name;
  request.ns = identity.ns;
  request.uid = identity.uid;
  request.priority = ask.priority;
  request.creationTimestamp = ask.creationTimestamp;
  request.instances = ask.instances;
  request.ipusPerInstance = ask.ipusPerInstance;
  request.activeDeadlineSeconds = ask.activeDeadlineSeconds;
  if (!ask.pinnedController.empty()) request.controllers.push_back(ask.pinnedController);
  return request;
}

AdmissionRequest admissionRequestOf(const api::IpuJob& job, std::string creationTimestamp) {
  return admissionRequestOf(job.identity, api::askOf(job, std::move(creationTimestamp)));
}

std::map<std::string, AdmissionDecision> planFrom(const PlanInputs& inputs) {
  std::vector<ControllerCapacity> capacities;
  capacities.reserve(inputs.controllers.size());
  for (const ControllerInputs& controller : inputs.controllers) {
    capacities.push_back({controller.name, controller.planner.get(), controller.taken()});
  }
  if (!inputs.quotas) {
    return planAdmissions(inputs.queue, std::move(capacities), inputs.reservations, inputs.strategy);
  }
  return planQuotaAdmissions(inputs.queue, std::move(capacities), inputs.reservations, inputs.strategy,
                             *inputs.quotas);
}

}  // namespace ipu::controllers
