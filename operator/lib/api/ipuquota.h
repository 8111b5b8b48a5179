#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "api/ipujob.h"
#include "common/result.h"

namespace ipu::api {

inline constexpr const char* kQuotaKind = "IPUQuota";

// IPUQuota: a cluster admin's cap on one namespace's IPU use.
//
// Shape: a namespaced object, named anything, that applies to the namespace it lives in -- the shape of
// Kubernetes' own ResourceQuota, which admins already know:
//   - RBAC works per namespace as it does for ResourceQuota: admins grant write on ipuquotas cluster-wide to
//     themselves and read to each team in its namespace, so a team sees its own limits (`kubectl get ipuq`)
//     without seeing other teams' and cannot raise its own;
//   - the quota goes away with its namespace; `kubectl get ipuquotas -A` lists every namespace's use;
//   - several IPUQuotas in one namespace all apply (a job must satisfy each), as several ResourceQuotas do:
//     the tightest value of each field wins, so a platform team can add a temporary cap without editing the
//     team's own object. A cluster-scoped object keyed by namespace would put every team's limits in one
//     object that every change contends on, and would outlive the namespaces it names.
//
// spec:
//   maxIPUs      (required, 0..2^31-1)  IPUs the namespace's admitted jobs may hold together (a job holds
//                                       jobInstances x ipusPerJobInstance from admission to its end); 0 stops
//                                       the namespace from running IPU jobs.
//   maxJobs      (optional, 0..2^31-1)  admitted (running or starting) jobs at once; absent: no cap.
//   maxPriority  (optional, int32)      the highest spec.priority its jobs may use; a job above it is not
//                                       admitted (PriorityNotAllowed). Absent: no cap. Priority orders jobs
//                                       inside the namespace and breaks ties of share across namespaces, so
//                                       the cap keeps a team from jumping the other teams' jobs.
// Lowering any field never stops a running job: use may stay above the limit until jobs end; no new job of
// the namespace is admitted until use falls below it.
struct IpuQuotaSpec {
  std::int64_t maxIpus = 0;
  std::optional<std::int64_t> maxJobs;
  std::optional<std::int64_t> maxPriority;

  bool operator==(const IpuQuotaSpec&) const = default;
};

// What the operator shows in status (printer columns USED, RESERVED, PENDING, ADMITTED, WAITING). IPUs:
//   usedIPUs      held by the namespace's jobs whose partitions exist (running);
//   reservedIPUs  held by admitted jobs whose partitions are not created yet;
//   pendingIPUs   asked by the namespace's waiting jobs (jobInstances x ipusPerJobInstance each);
// jobs: admittedJobs (running or starting), waitingJobs (waiting for admission, for whatever reason).
struct IpuQuotaStatus {
  std::int64_t usedIpus = 0;
  std::int64_t reservedIpus = 0;
  std::int64_t pendingIpus = 0;
  std::int64_t admittedJobs = 0;
  std::int64_t waitingJobs = 0;
  std::optional<std::int64_t> observedGeneration;

  bool operator==(const IpuQuotaStatus&) const = default;
};

// One job admitted under an IPUQuota: an entry of the quota's ledger, status.admissions, keyed by job name.
// The ledger is what makes the cap hold with several writers (two operator replicas, a killed leader and its
// successor): a job is added to it before its admission is recorded, by a write conditional on the
// resourceVersion the cap was checked against, so two writers can never both admit past the limit. The
// entry goes when the job holds no IPUs any more.
struct LedgerEntry {
  std::string uid;
  std::int64_t ipus = 0;
  // The job's resourceVersion its claim was checked against: a claim for a job that changed since is written
  // again (never taken as done from a cache), so a claim always moves the quota's resourceVersion and every
  // conditional write after it sees it.
  std::string jobVersion;

  bool operator==(const LedgerEntry&) const = default;
};

// status.admissions: the field admins see in `kubectl get ipuquota -o yaml`.
inline constexpr const char* kLedgerField = "admissions";

struct IpuQuota {
  ObjectIdentity identity;
  std::int64_t generation = 0;
  std::string resourceVersion;
  IpuQuotaSpec spec;
  std::map<std::string, LedgerEntry> admissions;  // by job name
};

// Reads and checks an IPUQuota as the API server returns it. The CRD's schema refuses bad input at
// `kubectl apply`; this repeats every rule so that an object stored before a CRD change gets the same clear
// message. Errors are InvalidArgument naming the field ("spec.maxIPUs: ...").
Result<IpuQuota> parseIpuQuota(const Json& object);
Result<IpuQuotaSpec> parseIpuQuotaSpec(const Json& spec);

// status.admissions as the API server returns it. Malformed entries are an InvalidArgument error naming the
// entry: the ledger is only ever written by the operator, so a broken one is a fault to report, not to guess.
Result<std::map<std::string, LedgerEntry>> parseLedger(const Json& status);

// status as JSON: every field present (a zero is a fact worth printing), observedGeneration when known.
Json toJson(const IpuQuotaStatus& status);
// The counts of status as the API server returns it (toJson's inverse). Lenient: a count absent or of the
// wrong type reads as 0, as the status of a quota the operator has not counted yet.
IpuQuotaStatus parseIpuQuotaStatus(const Json& status);

}  // namespace ipu::api
