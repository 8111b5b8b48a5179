#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "admission/admission_plan.h"
#include "admission/quota_plan.h"
#include "admission/vipu_controllers.h"
#include "admission/vipu_inventory.h"
#include "common/result.h"
#include "kube/store.h"

namespace ipu::controllers {

using Json = nlohmann::json;

// True for a job that waits for admission: alive, not finished, not suspended, no partitions recorded.
bool waitsForAdmission(const Json& job);

// What admission decided for one job; for kAdmit, with the planner of the chosen controller and the job
// instance each placement is for.
struct Admission {
  AdmissionDecision decision;
  std::shared_ptr<const vipu::PartitionPlanner> planner;
  std::vector<int> instances;  // decision.placements[i] is for job instance instances[i]

  // The placement of this job instance, if the admission planned it.
  const vipu::InstancePlacement* placementOf(int instance) const;
};

// Admission across all jobs. Each pass plans the whole queue (planAdmissions) over the waiting jobs in the
// cache and the V-IPU inventory (memory only: no call to a V-IPU controller is made under the admission
// lock). An admitted job's IPUs stay assumed taken by later passes while its admission is in flight: from
// the decision until forget(), which the caller calls once the partitions exist in V-IPU (and the
// inventory), or when recording the decision failed. Passes are serialized, so no two jobs are ever given
// the same IPUs. A burst of changes costs one pass: while neither the jobs, the inventory nor the admissions
// in flight change, the decisions of the last pass are reused.
class Admitter {
 public:
  // `passObserved`: called with each pass's duration in seconds (for metrics); may be empty.
  Admitter(VipuInventory& inventory, const kube::Store& jobs,
           QueueingStrategy strategy = QueueingStrategy::kBestEffortFifo,
           std::function<void(double)> passObserved = {});
  // With IPUQuotas: each pass plans with planQuotaAdmissions (quota caps, fair order across namespaces).
  // The plan reads the caches; QuotaLedger::claim enforces the caps at the API server before an admission
  // is recorded.
  Admitter(VipuInventory& inventory, const kube::Store& jobs, const kube::Store& quotas,
           MissingQuotaPolicy missingQuota, QueueingStrategy strategy = QueueingStrategy::kBestEffortFifo,
           std::function<void(double)> passObserved = {});

  // The job's decision ("ns/name"); nullopt when the cache no longer shows the job waiting (another pass
  // admitted it, or it changed) or its admission is in flight. An unreachable controller is left out of the
  // pass; if the job could have gone there and was not admitted elsewhere, the controller's error is
  // returned instead of a decision.
  Result<std::optional<Admission>> decide(const std::string& key);
  // The job's admission in flight in this process, if any: where its partitions are to be created.
  std::optional<Admission> inFlight(const std::string& key) const;
  // Ends the job's admission in flight: its partitions exist in V-IPU now, or its decision was not recorded.
  void forget(const std::string& key);

  // Places the partitions an admitted job recorded but V-IPU does not have and no admission in flight knows
  // (a process died between the two) on their controller, ahead of any waiting job. nullopt: they no longer
  // fit. A placement is in flight for the job until forget(), like an admission.
  Result<std::optional<Admission>> placeMissing(const std::string& key, const std::string& controller,
                                                const std::vector<int>& instances,
                                                std::uint32_t ipusPerInstance);

  // Passes planned so far (not counting decisions reused from the last pass).
  std::uint64_t passes() const;

  QueueingStrategy strategy() const { return strategy_; }

 private:
  // The queue's view of one job, parsed once per resourceVersion: a pass reads every waiting job, and
  // parsing each one's spec (with its pod template) again on every pass would dominate a long queue.
  struct ParsedRequest {
    std::string resourceVersion;
    std::optional<AdmissionRequest> request;  // nullopt: the spec does not parse
  };
  const std::optional<AdmissionRequest>& requestFor(const Json& job);
  struct ControllerState {
    std::shared_ptr<const vipu::PartitionPlanner> planner;
    std::set<std::string> partitionIds;
    vipu::IpuSet taken;
  };
  // The last pass: its inputs (jobs and their versions, the inventory's version, the admissions in flight)
  // and what it decided for every waiting job.
  struct Memo {
    std::string inputs;
    std::map<std::string, AdmissionDecision> decisions;
    std::map<std::string, std::shared_ptr<const vipu::PartitionPlanner>> planners;
    std::map<std::string, Error> unreachable;
  };
  // Under passMutex_.
  std::string passInputs() const;
  Result<ControllerState> stateOf(const std::string& controller) const;
  QuotaRules quotaRules() const;
  void plan();
  Result<std::optional<Admission>> decisionFor(const std::string& key, const kube::ObjectPtr& self);

  VipuInventory& inventory_;
  const kube::Store& jobs_;
  const kube::Store* quotas_ = nullptr;  // nullptr: no quotas (planAdmissions)
  MissingQuotaPolicy missingQuota_ = MissingQuotaPolicy::kUnlimited;
  QueueingStrategy strategy_;
  std::function<void(double)> passObserved_;
  mutable std::mutex passMutex_;
  std::map<std::string, ParsedRequest> parsed_;  // by uid; under passMutex_
  std::map<std::string, Admission> inFlight_;    // admitted, partitions not created yet; by job key
  Memo memo_;
  std::uint64_t passes_ = 0;
};

}  // namespace ipu::controllers
