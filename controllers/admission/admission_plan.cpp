#include "admission/admission_plan.h"

#include <algorithm>
#include <tuple>
#include <utility>

namespace ipu::controllers {
namespace {

using Kind = AdmissionDecision::Kind;

bool eligible(const AdmissionRequest& request, const std::string& controller) {
  return request.controllers.empty() || std::find(request.controllers.begin(), request.controllers.end(),
                                                  controller) != request.controllers.end();
}

// "a, b" of the controllers' names (any list of things with a name), "none" when empty.
template <typename Named>
std::string namesOf(const std::vector<Named>& controllers) {
  std::string names;
  for (const auto& controller : controllers) names += (names.empty() ? "" : ", ") + controller.name;
  return names.empty() ? "none" : names;
}

}  // namespace

// Tries the request on each controller it may use, in name order; the first that places it takes it.
AdmissionDecision CapacityPass::admitInto(const AdmissionRequest& request,
                                          std::vector<FreeSpace>& controllers) {
  AdmissionDecision waiting{Kind::kNeverFits, {}, {}, 0, "Unschedulable", {}};
  bool anyEligible = false;
  const bool several = controllers.size() > 1;
  for (auto& controller : controllers) {
    if (!eligible(request, controller.name)) continue;
    anyEligible = true;
    const auto plan =
        controller.planner->planInto(controller.free, {request.instances, request.ipusPerInstance});
    if (plan.placed()) {
      return {Kind::kAdmit, controller.name, plan.placements, 0, "Admitted", {}};
    }
    const std::string where = several ? "on " + controller.name + ": " : "";
    if (plan.refusal->reason == vipu::RefusalReason::kDoesNotFitNow) {
      // One controller where it could fit later is enough to wait; keep the first such explanation.
      if (waiting.kind != Kind::kWait)
        waiting = {Kind::kWait, {}, {}, 0, "InsufficientCapacity", where + plan.refusal->message};
    } else if (waiting.kind == Kind::kNeverFits && waiting.message.empty()) {
      waiting.message = where + plan.refusal->message;
    }
  }
  if (!anyEligible) {
    std::string wanted;
    for (const auto& name : request.controllers) wanted += (wanted.empty() ? "" : ", ") + name;
    waiting.message = "the job asks for V-IPU controller " + wanted +
                      " (node label ipu.graphcore.ai/vipu-controller), which the operator does not have; "
                      "configured: " +
                      namesOf(controllers);
  }
  return waiting;
}

CapacityPass::CapacityPass(std::vector<ControllerCapacity> controllers,
                           const std::vector<Reservation>& reservations) {
  std::sort(controllers.begin(), controllers.end(),
            [](const ControllerCapacity& a, const ControllerCapacity& b) { return a.name < b.name; });
  for (const auto& controller : controllers) {
    spaces_.push_back({controller.name, controller.planner, controller.planner->freeMap(controller.taken)});
  }
  for (const Reservation& reservation : reservations) {
    for (auto& space : spaces_) {
      // A reservation that no longer fits (someone else took the IPUs) holds nothing; its job waits.
      if (space.name == reservation.controller) {
        space.planner->planInto(space.free, {reservation.instances, reservation.ipusPerInstance});
      }
    }
  }
}

AdmissionDecision CapacityPass::admit(const AdmissionRequest& request) {
  return admitInto(request, spaces_);
}

AdmissionDecision CapacityPass::probe(const AdmissionRequest& request) const {
  std::vector<FreeSpace> copy = spaces_;
  return admitInto(request, copy);
}

std::uint64_t CapacityPass::totalIpus() const {
  std::uint64_t total = 0;
  for (const auto& space : spaces_) total += space.planner->topology().totalIpus();
  return total;
}

bool parseQueueingStrategy(const std::string& text, QueueingStrategy& out) {
  if (text == "BestEffortFIFO") {
    out = QueueingStrategy::kBestEffortFifo;
    return true;
  }
  if (text == "StrictFIFO") {
    out = QueueingStrategy::kStrictFifo;
    return true;
  }
  return false;
}

const char* queueingStrategyName(QueueingStrategy strategy) {
  return strategy == QueueingStrategy::kStrictFifo ? "StrictFIFO" : "BestEffortFIFO";
}

void sortQueue(std::vector<AdmissionRequest>& queue) {
  std::sort(queue.begin(), queue.end(), [](const AdmissionRequest& a, const AdmissionRequest& b) {
    return std::tie(b.priority, a.creationTimestamp, a.key) <
           std::tie(a.priority, b.creationTimestamp, b.key);
  });
}

std::map<std::string, AdmissionDecision> planAdmissions(std::vector<AdmissionRequest> queue,
                                                        std::vector<ControllerCapacity> controllers,
                                                        const std::vector<Reservation>& reservations,
                                                        QueueingStrategy strategy) {
  CapacityPass capacity(std::move(controllers), reservations);
  sortQueue(queue);
  std::map<std::string, AdmissionDecision> decisions;
  std::string blockedBy;  // StrictFIFO: the first job that had to wait
  int position = 0;
  for (const AdmissionRequest& request : queue) {
    AdmissionDecision decision;
    if (!blockedBy.empty()) {
      decision = {Kind::kWait,
                  {},
                  {},
                  0,
                  "WaitingInQueue",
                  "waiting behind " + blockedBy + " (queueing strategy StrictFIFO)"};
      // Still say so now if it could never run, rather than after the jobs ahead have gone.
      if (auto alone = capacity.probe(request); alone.kind == Kind::kNeverFits) decision = alone;
    } else {
      decision = capacity.admit(request);
    }
    if (decision.kind == Kind::kWait) {
      decision.position = ++position;
      if (strategy == QueueingStrategy::kStrictFifo && blockedBy.empty()) blockedBy = request.key;
    }
    decisions.emplace(request.key, std::move(decision));
  }
  return decisions;
}

}  // namespace ipu::controllers
