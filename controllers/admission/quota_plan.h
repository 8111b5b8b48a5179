#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "admission/admission_plan.h"
#include "api/ipuquota.h"

namespace ipu::controllers {

// Admission with per-namespace IPUQuotas: the same gang decision as planAdmissions (a job is admitted only
// when its whole gang fits the free topology), which must also fit the job's namespace's remaining quota,
// in an order fair across namespaces. Pure and deterministic; planAdmissions stays the plan without quotas.

// What to do with jobs in a namespace that has no IPUQuota: admit them against capacity alone (unlimited,
// the default, so that installing the operator changes nothing until an admin writes quotas), or admit none.
enum class MissingQuotaPolicy { kUnlimited, kDeny };
// "unlimited" / "deny"; false for anything else.
bool parseMissingQuotaPolicy(const std::string& text, MissingQuotaPolicy& out);
const char* missingQuotaPolicyName(MissingQuotaPolicy policy);

// One namespace's quota as admission applies it: every IPUQuota of the namespace combined, the tightest value
// of each field winning. The names are of the IPUQuota each value comes from, for messages.
struct NamespaceQuota {
  std::uint64_t maxIpus = 0;
  std::string maxIpusFrom;
  std::optional<std::uint64_t> maxJobs;
  std::string maxJobsFrom;
  std::optional<std::int64_t> maxPriority;
  std::string maxPriorityFrom;
  // Why an IPUQuota of the namespace cannot be read (""): none of its jobs is admitted until it is fixed, as
  // guessing a cap could let the namespace past the one the admin meant.
  std::string invalid;
};

// The IPUQuotas of the cluster by namespace (several in one namespace: tightest field wins; equal values:
// the first name in order).
std::map<std::string, NamespaceQuota> namespaceQuotas(const std::vector<api::IpuQuota>& quotas);

// What a namespace's admitted jobs hold, as their status records it (so a restarted operator recounts it).
struct NamespaceUsage {
  std::uint64_t runningIpus = 0;   // jobs whose partitions exist
  std::uint64_t reservedIpus = 0;  // admitted jobs whose partitions are not created yet
  std::uint64_t admittedJobs = 0;  // jobs holding partitions (running or starting)
};

struct QuotaRules {
  std::map<std::string, NamespaceQuota> quotas;  // by namespace
  std::map<std::string, NamespaceUsage> usage;   // by namespace; absent: nothing held
  MissingQuotaPolicy missingQuota = MissingQuotaPolicy::kUnlimited;
};

inline constexpr const char* kReasonQuotaExceeded = "QuotaExceeded";
inline constexpr const char* kReasonPriorityNotAllowed = "PriorityNotAllowed";

// Decides every request (each needs `ns`). Reservations take their IPUs first, as in planAdmissions. Then:
//
// 1. Requests that no admission can help while the quota stays as it is wait at once, with position 0 (not
//    in line), holding back no one, in this order of checks:
//      - an IPUQuota of the namespace that cannot be read: QuotaExceeded, naming it and why;
//      - namespace without an IPUQuota under MissingQuotaPolicy::kDeny: QuotaExceeded;
//      - spec.priority above the namespace's maxPriority: PriorityNotAllowed (the message names the cap);
//      - a gang larger than maxIPUs, or maxJobs 0: QuotaExceeded, "can never run under the current quota"
//        (an admin may raise it; the job then runs without being resubmitted).
// 2. The other requests are considered one at a time, each time taking the first undecided request of the
//    namespace that comes first by, in this order:
//      a. lowest share of use: held / cap, where held = IPUs the namespace's jobs hold (running + reserved +
//         admitted earlier in this pass) and cap = its maxIPUs, or, for a namespace without an IPUQuota, the
//         IPUs of all controllers in the pass (an unlimited namespace counts as having the whole cluster as
//         its quota, so its share is the fraction of the cluster it holds). Compared exactly (no rounding);
//      b. then that request's priority, higher first;
//      c. then its creationTimestamp, older first;
//      d. then its key, so every process computes the same order.
//    Inside a namespace requests go by priority, creationTimestamp, key (sortQueue's order). Each admission
//    raises its namespace's share at once, so a namespace with many jobs takes turns with the others instead
//    of filling the cluster before them.
// 3. The request considered: with StrictFIFO and an earlier request of its namespace waiting, it waits
//    behind that one (WaitingInQueue; other namespaces are not held back); otherwise, when the namespace
//    already has maxJobs admitted, or held + the gang's IPUs would exceed maxIPUs, it waits with
//    QuotaExceeded (the message names the quota, its limit and the use); otherwise it is offered to the
//    topology (CapacityPass::admit). A waiting request gets the next position (1 = next in line) and, with
//    StrictFIFO, holds back its namespace's later requests. A request that can never fit the topology is
//    kNeverFits (Unschedulable) whatever its quota.
// A lowered quota never touches admitted jobs: held may exceed the cap; the namespace admits nothing new
// until its use falls below.
std::map<std::string, AdmissionDecision> planQuotaAdmissions(std::vector<AdmissionRequest> queue,
                                                             std::vector<ControllerCapacity> controllers,
                                                             const std::vector<Reservation>& reservations,
                                                             QueueingStrategy strategy,
                                                             const QuotaRules& rules);

}  // namespace ipu::controllers
