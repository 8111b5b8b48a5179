#include "admission/quota_plan.h"

#include <algorithm>
#include <limits>
#include <tuple>
#include <utility>

namespace ipu::controllers {
namespace {

using Kind = AdmissionDecision::Kind;

AdmissionDecision waiting(const char* reason, std::string message) {
  return AdmissionDecision::waitOutOfLine(reason, std::move(message));
}

std::string quotaName(const std::string& ns, const std::string& name) {
  return "IPUQuota " + ns + "/" + name;
}

std::string gangText(const AdmissionRequest& request) {
  const std::string total = std::to_string(request.ipus()) + " IPUs";
  if (request.instances == 1) return total;
  return total + " (" + std::to_string(request.instances) + " x " + std::to_string(request.ipusPerInstance) +
         ")";
}

// The reason a request cannot be admitted while the quota stays as it is (step 1 of the plan), if any.
std::optional<AdmissionDecision> neverUnderQuota(const AdmissionRequest& request, const NamespaceQuota* quota,
                                                 MissingQuotaPolicy policy) {
  const std::string& ns = request.ns;
  if (!quota) {
    if (policy == MissingQuotaPolicy::kUnlimited) return std::nullopt;
    return waiting(kReasonQuotaExceeded,
                   "namespace " + ns +
                       " has no IPUQuota and the operator admits jobs only in namespaces that have one "
                       "(missing-quota policy deny); a cluster admin may create one");
  }
  if (!quota->invalid.empty()) {
    return waiting(kReasonQuotaExceeded, quota->invalid +
                                             "; no job of the namespace is admitted until a cluster admin "
                                             "fixes it");
  }
  if (quota->maxPriority && request.priority > *quota->maxPriority) {
    return waiting(kReasonPriorityNotAllowed,
                   "priority " + std::to_string(request.priority) + " is above " +
                       std::to_string(*quota->maxPriority) + ", the highest " +
                       quotaName(ns, quota->maxPriorityFrom) +
                       " allows (maxPriority); lower spec.priority, or a cluster admin may raise the cap");
  }
  if (request.ipus() > quota->maxIpus) {
    return waiting(kReasonQuotaExceeded,
                   "the job needs " + gangText(request) + " but " + quotaName(ns, quota->maxIpusFrom) +
                       " allows the namespace " + std::to_string(quota->maxIpus) +
                       " (maxIPUs): it can never run under the current quota; a cluster admin may raise it");
  }
  if (quota->maxJobs && *quota->maxJobs == 0) {
    return waiting(kReasonQuotaExceeded,
                   quotaName(ns, quota->maxJobsFrom) +
                       " allows the namespace no admitted jobs (maxJobs 0): the job can "
                       "never run under the current quota; a cluster admin may raise it");
  }
  return std::nullopt;
}

// One namespace during a pass: its requests in queue order and what it holds so far.
struct NamespaceTurn {
  std::string ns;
  const NamespaceQuota* quota = nullptr;  // nullptr: no IPUQuota (unlimited)
  std::uint64_t heldIpus = 0;             // running + reserved + admitted in this pass
  std::uint64_t admittedJobs = 0;
  std::uint64_t shareCap = 0;  // maxIPUs, or the cluster's IPUs for a namespace without quota
  std::vector<const AdmissionRequest*> requests;
  std::size_t next = 0;
  std::string blockedBy;  // StrictFIFO: the namespace's first request that had to wait

  const AdmissionRequest& head() const { return *requests[next]; }
};

// held / cap < other's, exactly. A cap of 0 makes any holding an infinite share. Values are clamped to 32
// bits (far above any cluster) so that the cross products cannot overflow.
bool lowerShare(const NamespaceTurn& a, const NamespaceTurn& b) {
  constexpr std::uint64_t kClamp = std::numeric_limits<std::uint32_t>::max();
  const std::uint64_t heldA = std::min(a.heldIpus, kClamp), heldB = std::min(b.heldIpus, kClamp);
  const bool infiniteA = a.shareCap == 0 && heldA > 0, infiniteB = b.shareCap == 0 && heldB > 0;
  if (infiniteA || infiniteB) return !infiniteA && infiniteB;
  const std::uint64_t capA = a.shareCap == 0 ? 1 : std::min(a.shareCap, kClamp);
  const std::uint64_t capB = b.shareCap == 0 ? 1 : std::min(b.shareCap, kClamp);
  return heldA * capB < heldB * capA;
}

// Whether namespace a's turn comes before b's (step 2 of the plan).
bool comesFirst(const NamespaceTurn& a, const NamespaceTurn& b) {
  if (lowerShare(a, b)) return true;
  if (lowerShare(b, a)) return false;
  const AdmissionRequest& x = a.head();
  const AdmissionRequest& y = b.head();
  return std::tie(y.priority, x.creationTimestamp, x.key) < std::tie(x.priority, y.creationTimestamp, y.key);
}

std::string quotaExceededMessage(const AdmissionRequest& request, const NamespaceTurn& turn) {
  const NamespaceQuota& quota = *turn.quota;
  if (quota.maxJobs && turn.admittedJobs >= *quota.maxJobs) {
    return quotaName(turn.ns, quota.maxJobsFrom) + " allows " + std::to_string(*quota.maxJobs) +
           " admitted jobs (maxJobs) and " + std::to_string(turn.admittedJobs) + " are admitted";
  }
  const std::uint64_t free = turn.heldIpus < quota.maxIpus ? quota.maxIpus - turn.heldIpus : 0;
  return "the job needs " + gangText(request) + "; " + quotaName(turn.ns, quota.maxIpusFrom) + " allows " +
         std::to_string(quota.maxIpus) + " IPUs (maxIPUs) and the namespace holds " +
         std::to_string(turn.heldIpus) + " (" + std::to_string(free) + " free)";
}

bool overQuota(const AdmissionRequest& request, const NamespaceTurn& turn) {
  if (!turn.quota) return false;
  if (turn.quota->maxJobs && turn.admittedJobs >= *turn.quota->maxJobs) return true;
  return turn.heldIpus + request.ipus() > turn.quota->maxIpus;
}

}  // namespace

bool parseMissingQuotaPolicy(const std::string& text, MissingQuotaPolicy& out) {
  if (text == "unlimited") {
    out = MissingQuotaPolicy::kUnlimited;
    return true;
  }
  if (text == "deny") {
    out = MissingQuotaPolicy::kDeny;
    return true;
  }
  return false;
}

const char* missingQuotaPolicyName(MissingQuotaPolicy policy) {
  return policy == MissingQuotaPolicy::kDeny ? "deny" : "unlimited";
}

std::map<std::string, NamespaceQuota> namespaceQuotas(const std::vector<api::IpuQuota>& quotas) {
  std::vector<const api::IpuQuota*> byName;
  for (const auto& quota : quotas) byName.push_back(&quota);
  std::sort(byName.begin(), byName.end(), [](const api::IpuQuota* a, const api::IpuQuota* b) {
    return std::tie(a->identity.ns, a->identity.name) < std::tie(b->identity.ns, b->identity.name);
  });
  std::map<std::string, NamespaceQuota> combined;
  for (const api::IpuQuota* quota : byName) {
    const std::string& name = quota->identity.name;
    const auto maxIpus = static_cast<std::uint64_t>(std::max<std::int64_t>(quota->spec.maxIpus, 0));
    auto [entry, first] = combined.try_emplace(quota->identity.ns);
    NamespaceQuota& into = entry->second;
    if (first || maxIpus < into.maxIpus) {
      into.maxIpus = maxIpus;
      into.maxIpusFrom = name;
    }
    if (const auto& jobs = quota->spec.maxJobs) {
      const auto maxJobs = static_cast<std::uint64_t>(std::max<std::int64_t>(*jobs, 0));
      if (!into.maxJobs || maxJobs < *into.maxJobs) {
        into.maxJobs = maxJobs;
        into.maxJobsFrom = name;
      }
    }
    if (const auto& priority = quota->spec.maxPriority;
        priority && (!into.maxPriority || *priority < *into.maxPriority)) {
      into.maxPriority = *priority;
      into.maxPriorityFrom = name;
    }
  }
  return combined;
}

std::map<std::string, AdmissionDecision> planQuotaAdmissions(std::vector<AdmissionRequest> queue,
                                                             std::vector<ControllerCapacity> controllers,
                                                             const std::vector<Reservation>& reservations,
                                                             QueueingStrategy strategy,
                                                             const QuotaRules& rules) {
  CapacityPass capacity(std::move(controllers), reservations);
  sortQueue(queue);
  std::map<std::string, AdmissionDecision> decisions;

  // Step 1, and each namespace's queue (in sortQueue's order, which queue now has).
  std::map<std::string, NamespaceTurn> turns;
  for (const AdmissionRequest& request : queue) {
    // A job Kueue admitted is under Kueue's quota alone: it takes its turns apart from its namespace's
    // IPUQuota (':' never occurs in a namespace's name).
    const NamespaceQuota* namespaceQuota = nullptr;
    if (!request.queuedByKueue) {
      const auto quota = rules.quotas.find(request.ns);
      namespaceQuota = quota == rules.quotas.end() ? nullptr : &quota->second;
      if (auto never = neverUnderQuota(request, namespaceQuota, rules.missingQuota)) {
        decisions.emplace(request.key, std::move(*never));
        continue;
      }
    }
    auto [entry, first] = turns.try_emplace(request.queuedByKueue ? "kueue:" + request.ns : request.ns);
    NamespaceTurn& turn = entry->second;
    if (first) {
      turn.ns = request.ns;
      turn.quota = namespaceQuota;
      if (const auto usage = rules.usage.find(request.ns);
          !request.queuedByKueue && usage != rules.usage.end()) {
        turn.heldIpus = usage->second.runningIpus + usage->second.reservedIpus;
        turn.admittedJobs = usage->second.admittedJobs;
      }
      turn.shareCap = namespaceQuota ? namespaceQuota->maxIpus : capacity.totalIpus();
    }
    turn.requests.push_back(&request);
  }

  // Steps 2 and 3: a heap of namespaces, the one whose turn comes first on top. Only the namespace taken
  // from the heap changes (its share, its head), so the others' places stay valid.
  std::vector<NamespaceTurn*> heap;
  for (auto& [ns, turn] : turns) heap.push_back(&turn);
  const auto later = [](const NamespaceTurn* a, const NamespaceTurn* b) { return comesFirst(*b, *a); };
  std::make_heap(heap.begin(), heap.end(), later);
  int position = 0;
  while (!heap.empty()) {
    std::pop_heap(heap.begin(), heap.end(), later);
    NamespaceTurn& turn = *heap.back();
    const AdmissionRequest& request = turn.head();
    AdmissionDecision decision;
    if (!turn.blockedBy.empty() || overQuota(request, turn)) {
      decision = !turn.blockedBy.empty() ? waiting("WaitingInQueue", "waiting behind " + turn.blockedBy +
                                                                         " (queueing strategy "
                                                                         "StrictFIFO, within namespace " +
                                                                         turn.ns + ")")
                                         : waiting(kReasonQuotaExceeded, quotaExceededMessage(request, turn));
      // Still say so now if it could never run, rather than after the jobs ahead have gone.
      if (auto alone = capacity.probe(request); alone.kind == Kind::kNeverFits) decision = std::move(alone);
    } else {
      decision = capacity.admit(request);
    }
    if (decision.kind == Kind::kAdmit) {
      turn.heldIpus += request.ipus();
      ++turn.admittedJobs;
    } else if (decision.kind == Kind::kWait) {
      decision.position = ++position;
      if (strategy == QueueingStrategy::kStrictFifo && turn.blockedBy.empty()) turn.blockedBy = request.key;
    }
    decisions.emplace(request.key, std::move(decision));
    if (++turn.next < turn.requests.size()) {
      std::push_heap(heap.begin(), heap.end(), later);
    } else {
      heap.pop_back();
    }
  }
  return decisions;
}

}  // namespace ipu::controllers
