#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "admission/admission_plan.h"
#include "admission/quota_plan.h"
#include "api/ipujob.h"
#include "api/job_summary.h"
#include "common/clock.h"
#include "vipu/ipu_set.h"
#include "vipu/partition_planner.h"

namespace ipu::controllers {

// Everything one admission pass reads, as a value. The plan is a pure function of it (planFrom), and so is
// the estimate of when each waiting job starts (start_estimate.h). The operator gathers it from its caches
// (Admitter); `kubectl ipu fit` rebuilds it from the IPUQueue the operator publishes and adds the jobs it is
// asked about, so the plugin's answer is the operator's own plan.

// IPUs held on a controller now, by one job or by one partition no job holds.
struct Occupant {
  std::vector<std::uint32_t> ipus;  // global IPU ids
  std::string ns;                   // the holding job's namespace; "" when no job holds them
  std::string uid;                  // the holding job's uid; "" likewise
  // When they are given back at the latest: the job's start plus its activeDeadlineSeconds (or the end of
  // its interactive time). nullopt: not known (no deadline, or no job to end).
  std::optional<Clock::WallTime> endsBy;
  // For a job admitted but not started (no start time yet): it ends at most this long after it starts.
  std::optional<std::int64_t> runsForSeconds;
};

struct ControllerInputs {
  std::string name;
  std::shared_ptr<const vipu::PartitionPlanner> planner;
  std::vector<Occupant> occupants;

  // Every IPU an occupant holds.
  vipu::IpuSet taken() const;
};

struct PlanInputs {
  std::vector<ControllerInputs> controllers;  // the reachable ones
  std::vector<AdmissionRequest> queue;        // the jobs waiting for admission
  std::vector<Reservation> reservations;      // admitted jobs' partitions V-IPU does not have yet
  QueueingStrategy strategy = QueueingStrategy::kBestEffortFifo;
  std::optional<QuotaRules> quotas;  // nullopt: the operator runs without IPUQuotas (planAdmissions)
};

// What a job asks of admission, keyed "namespace/name".
AdmissionRequest admissionRequestOf(const api::ObjectIdentity& identity, const api::JobAsk& ask);
AdmissionRequest admissionRequestOf(const api::IpuJob& job, std::string creationTimestamp);

// The decision for every request of the queue: planQuotaAdmissions with quotas, else planAdmissions.
std::map<std::string, AdmissionDecision> planFrom(const PlanInputs& inputs);

}  // namespace ipu::controllers
