#include "quota/quota_usage.h"

#include <algorithm>
#include <set>

#include "api/ipujob.h"
#include "api/ipujob_status.h"
#include "api/job_lifecycle.h"
#include "common/json_access.h"

namespace ipu::controllers {
namespace {

std::string quotaName(const api::IpuQuota& quota) {
  return "IPUQuota " + quota.identity.ns + "/" + quota.identity.name;
}

}  // namespace

std::optional<QuotaJob> heldQuotaJobOf(const api::JobSummary& job) {
  if (job.queuedByKueue) return std::nullopt;  // Kueue's quota applies to it
  if (job.held.empty()) return std::nullopt;
  const bool allActive = std::all_of(
      job.held.begin(), job.held.end(),
      [](const api::PartitionRecord& partition) { return partition.state == api::kPartitionActive; });
  QuotaJob out{job.identity.name, job.identity.uid,
               allActive ? QuotaJob::State::kRunning : QuotaJob::State::kReserved, 0};
  for (const auto& partition : job.held) out.ipus += partition.size;
  return out;
}

std::optional<QuotaJob> quotaJobOf(const api::JobSummary& job) {
  if (auto held = heldQuotaJobOf(job)) return held;
  if (!job.waitsForAdmission || job.queuedByKueue || !job.ask) return std::nullopt;
  return QuotaJob{job.identity.name, job.identity.uid, QuotaJob::State::kWaiting, job.ask->ipus()};
}

std::vector<QuotaJob> quotaJobsOf(const std::vector<std::shared_ptr<const api::JobSummary>>& jobs) {
  std::vector<QuotaJob> out;
  for (const auto& job : jobs) {
    if (auto viewed = quotaJobOf(*job)) out.push_back(std::move(*viewed));
  }
  return out;
}

std::vector<QuotaJob> heldQuotaJobsOf(const std::vector<std::shared_ptr<const api::JobSummary>>& jobs) {
  std::vector<QuotaJob> out;
  for (const auto& job : jobs) {
    if (auto held = heldQuotaJobOf(*job)) out.push_back(std::move(*held));
  }
  return out;
}

api::IpuQuotaStatus observeQuota(const std::vector<QuotaJob>& jobs,
                                 const std::map<std::string, api::LedgerEntry>& ledger) {
  api::IpuQuotaStatus status;
  for (const QuotaJob& job : jobs) {
    const auto entry = ledger.find(job.name);
    const bool claimed = entry != ledger.end() && entry->second.uid == job.uid;
    switch (job.state) {
      case QuotaJob::State::kRunning:
        status.usedIpus += job.ipus;
        ++status.admittedJobs;
        break;
      case QuotaJob::State::kReserved:
        status.reservedIpus += job.ipus;
        ++status.admittedJobs;
        break;
      case QuotaJob::State::kWaiting:
        if (claimed) {
          status.reservedIpus += entry->second.ipus;
          ++status.admittedJobs;
        } else {
          status.pendingIpus += job.ipus;
          ++status.waitingJobs;
        }
        break;
    }
  }
  return status;
}

LedgerGaps ledgerGaps(const std::vector<QuotaJob>& jobs,
                      const std::map<std::string, api::LedgerEntry>& ledger) {
  LedgerGaps gaps;
  std::set<std::string> known;
  for (const QuotaJob& job : jobs) {
    const auto entry = ledger.find(job.name);
    const bool claimed = entry != ledger.end() && entry->second.uid == job.uid;
    if (claimed) known.insert(job.name);
    // An entry under the name for another uid is checked with the API server first (below): which of the
    // two is the job of that name now, only it can say.
    if (job.holds() && entry == ledger.end()) gaps.missing[job.name] = {job.uid, job.ipus, ""};
  }
  for (const auto& [name, entry] : ledger) {
    if (!known.contains(name) && !gaps.missing.contains(name)) gaps.unknown.push_back(name);
  }
  return gaps;
}

ClaimCheck checkClaim(const api::IpuQuota& quota, const std::vector<QuotaJob>& jobs,
                      const LedgerClaim& claim) {
  if (const auto own = quota.admissions.find(claim.name);
      own != quota.admissions.end() &&
      own->second == api::LedgerEntry{claim.uid, claim.ipus, claim.jobVersion}) {
    return {ClaimCheck::Kind::kRecorded, ""};
  }
  std::int64_t heldIpus = 0;
  std::int64_t heldJobs = 0;
  for (const auto& [name, entry] : quota.admissions) {
    // The claimant's own entry for another size (its spec changed while it waited), or a job of that name
    // that is gone: the claim replaces it.
    if (name == claim.name) continue;
    heldIpus += entry.ipus;
    ++heldJobs;
  }
  // Jobs holding IPUs that the ledger does not name with their uid count too (admitted before the quota
  // existed, or a cache that shows an older job of a name).
  for (const QuotaJob& job : jobs) {
    const auto entry = quota.admissions.find(job.name);
    if (!job.holds() || job.name == claim.name ||
        (entry != quota.admissions.end() && entry->second.uid == job.uid))
      continue;
    heldIpus += job.ipus;
    ++heldJobs;
  }
  const auto& spec = quota.spec;
  if (spec.maxJobs && heldJobs + 1 > *spec.maxJobs) {
    return {ClaimCheck::Kind::kRefused, quotaName(quota) + " allows " + std::to_string(*spec.maxJobs) +
                                            " admitted jobs (maxJobs) and " + std::to_string(heldJobs) +
                                            " are admitted"};
  }
  if (heldIpus + claim.ipus > spec.maxIpus) {
    const std::int64_t free = std::max<std::int64_t>(spec.maxIpus - heldIpus, 0);
    return {ClaimCheck::Kind::kRefused,
            "the job needs " + std::to_string(claim.ipus) + " IPUs; " + quotaName(quota) + " allows " +
                std::to_string(spec.maxIpus) + " IPUs (maxIPUs) and the namespace holds " +
                std::to_string(heldIpus) + " (" + std::to_string(free) + " free)"};
  }
  return {ClaimCheck::Kind::kFits, ""};
}

}  // namespace ipu::controllers
