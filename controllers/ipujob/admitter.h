#pragma once

#include <cstdint>
#include <functional>
#include <mutex>
#include <string>

#include <nlohmann/json.hpp>

#include "common/result.h"
#include "ipujob/admission_plan.h"
#include "ipujob/vipu_controllers.h"
#include "kube/store.h"

namespace ipu::controllers {

using Json = nlohmann::json;

// True for a job that waits for admission: alive, not finished, not suspended, no partitions recorded.
bool waitsForAdmission(const Json& job);

// Admission across all jobs. Each pass reads the waiting jobs from the cache and the partitions from every
// V-IPU controller, plans the whole queue (planAdmissions) and hands one job's decision to the caller, who
// records it and creates the partitions before the pass ends: passes are serialized, so the next one sees
// those partitions in V-IPU and never hands out the same IPUs twice.
class Admitter {
 public:
  // `decision`: this job's; `planner`: the chosen controller's (kAdmit), else nullptr.
  using Act = std::function<Status(const AdmissionDecision& decision, const vipu::PartitionPlanner* planner)>;
  // `plan`: where the missing partitions go (or why they do not fit now).
  using PlaceAct = std::function<Status(const vipu::PlanResult& plan, const vipu::PartitionPlanner& planner)>;

  Admitter(VipuControllers& controllers, const kube::Store& jobs,
           QueueingStrategy strategy = QueueingStrategy::kBestEffortFifo);

  // Runs a pass for the job with this key ("ns/name") and calls `act` with its decision. Returns false,
  // without calling `act`, when the cache no longer shows the job waiting (another pass admitted it, or it
  // changed). An unreachable controller is left out of the pass; if the job could have gone there and was not
  // admitted elsewhere, the controller's error is returned instead of a decision.
  Result<bool> admit(const std::string& key, const Act& act);

  // Places partitions an admitted job recorded but V-IPU does not have (a process died between the two),
  // ahead of any waiting job.
  Status placeMissing(const std::string& controller, std::uint32_t instances, std::uint32_t ipusPerInstance,
                      const PlaceAct& act);

  QueueingStrategy strategy() const { return strategy_; }

 private:
  VipuControllers& controllers_;
  const kube::Store& jobs_;
  QueueingStrategy strategy_;
  std::mutex passMutex_;
};

}  // namespace ipu::controllers
