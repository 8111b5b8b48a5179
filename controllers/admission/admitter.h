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
#include "admission/plan_inputs.h"
#include "admission/quota_plan.h"
#include "admission/start_estimate.h"
#include "admission/vipu_controllers.h"
#include "admission/vipu_inventory.h"
#include "api/ipujob_status.h"
#include "api/job_lifecycle.h"
#include "api/job_summary.h"
#include "common/result.h"
#include "kube/store.h"

namespace ipu::controllers {

using Json = nlohmann::json;

using api::waitsForAdmission;

// What admission decided for one job; for kAdmit, with the planner of the chosen controller and the job
// instance each placement is for.
struct Admission {
  AdmissionDecision decision;
  std::shared_ptr<const vipu::PartitionPlanner> planner;
  std::vector<int> instances;  // decision.placements[i] is for job instance instances[i]
  bool placedNow = false;      // reservationFor() placed it in this call: status must say where

  // The placement of this job instance, if the admission planned it.
  const vipu::InstancePlacement* placementOf(int instance) const;
};

// Why a job's reservation ended: its IPUs are no longer held for it by this process.
enum class ReservationEnd {
  kPartitionsExist,     // completed: V-IPU has every partition, and lists them from now on
  kNotRecorded,         // the decision's status write failed: nothing was promised
  kQuotaRefused,        // the namespace's IPUQuota at the API server had no room after all
  kIpusTakenElsewhere,  // another partition took the planned IPUs outside the operator: planned again
  kReleased,            // the job gave its partitions back (finished, suspended, reshaped, deleted)
  kJobGone,             // the cache no longer has the job (deleted), or has another job of its name
};
const char* toString(ReservationEnd end);

// The owner of admission, for every job, from the decision until the job's partitions exist in V-IPU (or
// it gives them back). Each pass plans the whole queue (planAdmissions) over the waiting jobs in the cache
// and the V-IPU inventory (memory only: no call to a V-IPU controller is made under the admission lock). An
// admitted job's IPUs are *reserved* for it: later passes count them taken from the decision until end().
// Passes are serialized, so no two jobs are ever given the same IPUs.
//
// The lifecycle, all of it here:
//   decide()          -> kAdmit starts a reservation (the caller records the decision in status);
//   reservationFor()  -> where the job's missing partitions go: its reservation, or (after a restart of
//                        the operator, or for a lost partition) a new one placed ahead of the queue;
//   takenElsewhere()  -> a refused CreatePartition: ends the reservation if others took its IPUs;
//   end(key, why)     -> partitions exist, or the reservation is abandoned (see ReservationEnd);
//   a job the cache no longer has (deleted, even with its finalizer stripped; or made again under the same
//   name) loses its reservation at the next pass without anyone calling end().
// A reservation lives in this object only: a new leadership term starts a new Admitter, which knows the
// admitted jobs from their status (partitions recorded Planned are reserved until created).
//
// A burst of changes costs one pass: the decisions of the last pass are reused while the job store's, the
// quota store's, the inventory's and the reservations' counters have not moved; when one of the stores'
// moved, a fingerprint of what a plan reads (each job's generation, liveness and held partitions; each
// quota's generation) tells the operator's own status writes (queue positions) from changes that matter.
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
  // admitted it, or it changed) or it holds a reservation already. kAdmit starts its reservation. An
  // unreachable controller is left out of the pass; if the job could have gone there and was not admitted
  // elsewhere, the controller's error is returned instead of a decision.
  Result<std::optional<Admission>> decide(const std::string& key);

  // Where the job's missing partitions are to be created: its reservation if it holds one, else the
  // instances placed on `controller` ahead of any waiting job (a reservation starts for them). nullopt:
  // they no longer fit. NotFound: the controller is not configured.
  Result<std::optional<Admission>> reservationFor(const std::string& key, const std::string& controller,
                                                  const std::vector<int>& instances,
                                                  std::uint32_t ipusPerInstance);

  // After V-IPU refused to create the job's `missing` partitions: reads the controller's partitions afresh
  // and, if another partition holds IPUs the reservation planned, ends it (kIpusTakenElsewhere) and says so.
  bool takenElsewhere(const std::string& key, const std::string& controller,
                      const std::vector<api::PartitionRecord>& missing);

  // Ends the job's reservation, if it holds one.
  void end(const std::string& key, ReservationEnd why);

  // The job's reservation, if it holds one (read-only: what it reserved, and where).
  std::optional<Admission> reservation(const std::string& key) const;
  std::size_t reservations() const;

  // Passes planned so far (not counting decisions reused from the last pass).
  std::uint64_t passes() const;

  QueueingStrategy strategy() const { return strategy_; }

  // Only jobs whose spec.managedBy is `controllerName` (api::managerOf) are queued; other controllers' jobs
  // that hold partitions still count as their holders. Set before the first pass.
  void manageOnly(std::string controllerName) { controllerName_ = std::move(controllerName); }

  // When the waiting job starts at the latest (start_estimate.h), played forward from the last pass's
  // inputs. The whole queue's estimates are worked out at most once per kEstimateInterval (the play plans
  // the queue many times); in between, the last ones stand. nullopt: no estimate for the job yet.
  std::optional<StartEstimate> estimateFor(const std::string& key, Clock::WallTime now);
  static constexpr Clock::Duration kEstimateInterval = std::chrono::seconds(10);

  // What a pass would read now, every controller's holders with when they end included (for the IPUQueue
  // the operator publishes, and start estimates). Plans nothing; unreachable controllers are left out.
  PlanInputs inputs();

  // The counters what inputs() reads is at: the job and quota stores', the inventory's, the reservations'.
  // Equal counters, equal inputs (the stores move with every write, so unequal ones may still be equal).
  struct Counters {
    std::uint64_t jobs = 0;
    std::uint64_t quotas = 0;
    std::uint64_t inventory = 0;
    std::uint64_t reservations = 0;
    bool operator==(const Counters&) const = default;
  };
  Counters inputsCounters() const;

 private:
  // The queue's view of one job, from its summary (the cache parsed its spec once, as the job came in: a
  // pass reads every waiting job, and parsing each one's spec again on every pass would dominate a long
  // queue). nullopt: its spec does not parse.
  static std::optional<AdmissionRequest> requestFor(const api::JobSummary& job);
  struct ControllerState {
    std::shared_ptr<const vipu::PartitionPlanner> planner;
    std::set<std::string> partitionIds;
    vipu::IpuSet taken;
  };
  // The last pass: the counters and fingerprint of its inputs, and what it decided for every waiting job.
  struct Memo {
    std::optional<Counters> counters;  // nullopt: no pass yet
    std::uint64_t fingerprint = 0;
    std::map<std::string, AdmissionDecision> decisions;
    std::map<std::string, std::shared_ptr<const vipu::PartitionPlanner>> planners;
    std::map<std::string, Error> unreachable;
    std::shared_ptr<const PlanInputs> inputs;  // what the pass read
  };
  // The queue's start estimates, from the memo's inputs at `at`.
  struct Estimates {
    std::shared_ptr<const PlanInputs> inputs;
    Clock::WallTime at{};
    std::map<std::string, StartEstimate> byKey;
  };
  Estimates estimates_;  // under passMutex_
  // Under passMutex_.
  Counters counters() const;
  std::uint64_t fingerprint() const;
  bool memoCurrent(const std::string& key);
  Result<ControllerState> stateOf(const std::string& controller) const;
  // Who holds a partition a job's status names, and until when.
  struct Holder {
    std::string ns;
    std::string uid;
    std::optional<Clock::WallTime> endsBy;
  };
  // One controller as a pass reads it: a partition a job holds is the job's (one occupant per job), any
  // other partition an occupant of its own, and each reservation of this process its job's. `partitionIds`
  // gets the ids V-IPU has.
  Result<ControllerInputs> inputsOf(const std::string& controller,
                                    const std::map<std::string, Holder>& holders,
                                    std::set<std::string>& partitionIds) const;
  PlanInputs gatherInputs(std::map<std::string, Error>& unreachable);
  QuotaRules quotaRules() const;
  void plan();
  Result<std::optional<Admission>> decisionFor(const std::string& key, const api::JobSummary& self);
  void reserve(const std::string& key, Admission admission);

  VipuInventory& inventory_;
  const kube::Store& jobs_;
  const kube::Store* quotas_ = nullptr;  // nullptr: no quotas (planAdmissions)
  MissingQuotaPolicy missingQuota_ = MissingQuotaPolicy::kUnlimited;
  QueueingStrategy strategy_;
  std::string controllerName_ = api::kDefaultControllerName;
  std::function<void(double)> passObserved_;
  mutable std::mutex passMutex_;
  // What a pass reads of each job; under passMutex_. Mutable: fingerprint() reads through it.
  // The last fingerprint and the job and quota store revisions it was worked out at; under passMutex_.
  using Revisions = std::pair<std::uint64_t, std::uint64_t>;
  mutable std::pair<std::optional<Revisions>, std::uint64_t> fingerprintMemo_;
  // A reservation and whose it is: the job's uid when it was made.
  struct Reserved {
    Admission admission;
    std::string uid;
    std::optional<std::int64_t> activeDeadlineSeconds;  // the job's, when it was reserved
  };
  void dropReservationsOfGoneJobs();
  std::map<std::string, Reserved> reserved_;  // admitted, partitions not created yet; by job key
  std::uint64_t reservationsRevision_ = 0;    // bumped when reserved_ changes
  Memo memo_;
  std::uint64_t passes_ = 0;
};

}  // namespace ipu::controllers
