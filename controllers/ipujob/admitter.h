#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
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

  // `passObserved`: called with each pass's duration in seconds (for metrics); may be empty.
  Admitter(VipuControllers& controllers, const kube::Store& jobs,
           QueueingStrategy strategy = QueueingStrategy::kBestEffortFifo,
           std::function<void(double)> passObserved = {});

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
  // The queue's view of one job, parsed once per resourceVersion: a pass reads every waiting job, and
  // parsing each one's spec (with its pod template) again on every pass would dominate a long queue.
  struct ParsedRequest {
    std::string resourceVersion;
    std::optional<AdmissionRequest> request;  // nullopt: the spec does not parse
  };
  const std::optional<AdmissionRequest>& requestFor(const Json& job);
  // Under passMutex_: this job's decision (nullopt: not waiting), and the chosen controller's planner.
  Result<std::optional<AdmissionDecision>> planPass(const std::string& key,
                                                    std::shared_ptr<const vipu::PartitionPlanner>& chosen);

  // IPUs planned for an admitted job whose partitions are being created.
  struct Assumption {
    std::string controller;
    std::vector<vipu::IpuBlock> blocks;
  };

  VipuControllers& controllers_;
  const kube::Store& jobs_;
  QueueingStrategy strategy_;
  std::function<void(double)> passObserved_;
  std::mutex passMutex_;
  std::map<std::string, ParsedRequest> parsed_;  // by uid; under passMutex_
  std::map<std::string, Assumption> assumed_;    // by job key; under passMutex_
};

}  // namespace ipu::controllers
