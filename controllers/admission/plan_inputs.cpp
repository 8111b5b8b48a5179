#include "admission/plan_inputs.h"

namespace ipu::controllers {

vipu::IpuSet ControllerInputs::taken() const {
  vipu::IpuSet taken(planner->topology().totalIpus());
  for (const Occupant& occupant : occupants) {
    for (const std::uint32_t ipu : occupant.ipus) taken.insert(ipu);
  }
  return taken;
}

AdmissionRequest admissionRequestOf(const api::IpuJob& job, std::string creationTimestamp) {
  AdmissionRequest request;
  request.key = job.identity.ns + "/" + job.identity.name;
  request.ns = job.identity.ns;
  request.uid = job.identity.uid;
  request.priority = job.spec.priority;
  request.creationTimestamp = std::move(creationTimestamp);
  request.instances = static_cast<std::uint32_t>(job.spec.jobInstances);
  request.ipusPerInstance = static_cast<std::uint32_t>(job.spec.ipusPerJobInstance);
  request.activeDeadlineSeconds = job.spec.activeDeadlineSeconds;
  if (auto pinned = api::pinnedVipuController(job.spec); !pinned.empty())
    request.controllers.push_back(pinned);
  return request;
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
