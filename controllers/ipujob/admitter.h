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

// What admission decided for one job; for kAdmit, with the planner of the chosen controller.
struct Admission {
  AdmissionDecision decision;
  std::shared_ptr<const vipu::PartitionPlanner> planner;
};

// Admission across all jobs. Each pass reads the waiting jobs from the cache and the partitions from every
// V-IPU controller and plans the whole queue (planAdmissions). An admitted job's IPUs stay assumed taken by
// later passes while its admission is in flight: from the decision until forget(), which the caller calls
// once the partitions exist in V-IPU (or recording the decision failed). Passes are serialized, so no two
// jobs are ever given the same IPUs.
class Admitter {
 public:
  // `plan`: where the missing partitions go (or why they do not fit now).
  using PlaceAct = std::function<Status(const vipu::PlanResult& plan, const vipu::PartitionPlanner& planner)>;

  // `passObserved`: called with each pass's duration in seconds (for metrics); may be empty.
  Admitter(VipuControllers& controllers, const kube::Store& jobs,
           QueueingStrategy strategy = QueueingStrategy::kBestEffortFifo,
           std::function<void(double)> passObserved = {});

  // Runs a pass for the job with this key ("ns/name") and returns its decision; nullopt when the cache no
  // longer shows the job waiting (another pass admitted it, or it changed) or its admission is in flight. An
  // unreachable controller is left out of the pass; if the job could have gone there and was not admitted
  // elsewhere, the controller's error is returned instead of a decision.
  Result<std::optional<Admission>> decide(const std::string& key);
  // The job's admission in flight in this process, if any: where its partitions are to be created.
  std::optional<Admission> inFlight(const std::string& key) const;
  // Ends the job's admission in flight: its partitions exist in V-IPU now, or its decision was not recorded.
  void forget(const std::string& key);

  // Places partitions an admitted job recorded but V-IPU does not have and no admission in flight knows (a
  // process died between the two), ahead of any waiting job.
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
  // Under passMutex_: this job's admission (nullopt: not waiting).
  Result<std::optional<Admission>> planPass(const std::string& key);

  VipuControllers& controllers_;
  const kube::Store& jobs_;
  QueueingStrategy strategy_;
  std::function<void(double)> passObserved_;
  mutable std::mutex passMutex_;
  std::map<std::string, ParsedRequest> parsed_;  // by uid; under passMutex_
  std::map<std::string, Admission> inFlight_;    // admitted, partitions not created yet; by job key
};

}  // namespace ipu::controllers
