#include "quota/quota_ledger.h"

#include <vector>

#include "common/json_access.h"
#include "common/log.h"

namespace ipu::controllers {
namespace {

// Conflicts in a row before the claim gives up for this pass (the job's reconcile retries with backoff):
// each one means another writer changed the quota, which a busy namespace may do a few times in a row.
constexpr int kClaimAttempts = 8;

Json ledgerEntry(const std::string& resourceVersion, const LedgerClaim& claim) {
  return {{"metadata", {{"resourceVersion", resourceVersion}}},
          {"status", {{api::kLedgerField, {{claim.name, {{"uid", claim.uid}, {"ipus", claim.ipus}}}}}}}};
}

}  // namespace

Json ledgerRemoval(const std::string& jobName) {
  return {{"status", {{api::kLedgerField, {{jobName, nullptr}}}}}};
}

QuotaLedger::QuotaLedger(kube::RestClient& client, const kube::Store& quotas, const kube::Store& jobs)
    : client_(client), quotas_(quotas), jobs_(jobs) {}

Result<std::optional<std::string>> QuotaLedger::claim(const LedgerClaim& claim) {
  std::vector<std::string> written;
  for (const kube::ObjectPtr& quota : quotas_.listNamespace(claim.ns)) {
    auto claimed = claimIn(*quota, claim);
    if (claimed && !*claimed) {
      written.push_back(stringMember(member(*quota, "metadata"), "name"));
      continue;
    }
    // Refused or not asked: give back what this claim took in the namespace's other quotas (the cache may
    // not show those entries yet, so they are removed by name).
    for (const std::string& quotaName : written) {
      auto removed = client_.patch(ipuQuotaResource(), claim.ns, quotaName, kube::PatchType::kMerge,
                                   ledgerRemoval(claim.name), "status");
      if (!removed && removed.error().code != ErrorCode::kNotFound) {
        log::warning("could not give back a partial quota claim; the quota controller will",
                     {{"job", claim.ns + "/" + claim.name}, {"error", removed.error().toString()}});
      }
    }
    return claimed;
  }
  return std::optional<std::string>();
}

Result<std::optional<std::string>> QuotaLedger::claimIn(const Json& cachedQuota, const LedgerClaim& claim) {
  const std::string name = stringMember(member(cachedQuota, "metadata"), "name");
  Json current = cachedQuota;
  for (int attempt = 0; attempt < kClaimAttempts; ++attempt) {
    auto quota = api::parseIpuQuota(current);
    if (!quota) {
      return std::optional<std::string>("IPUQuota " + claim.ns + "/" + name +
                                        " cannot be read: " + quota.error().message);
    }
    const auto jobs = quotaJobsOf(jobs_.listNamespace(claim.ns));
    const ClaimCheck check = checkClaim(*quota, jobs, claim);
    if (check.kind == ClaimCheck::Kind::kRecorded) return std::optional<std::string>();
    if (check.kind == ClaimCheck::Kind::kRefused) return std::optional<std::string>(check.message);
    auto written = client_.patch(ipuQuotaResource(), claim.ns, name, kube::PatchType::kMerge,
                                 ledgerEntry(quota->resourceVersion, claim), "status");
    if (written) return std::optional<std::string>();
    if (written.error().code == ErrorCode::kNotFound) return std::optional<std::string>();  // quota deleted
    if (written.error().code != ErrorCode::kConflict) return written.error();
    auto fresh = client_.get(ipuQuotaResource(), claim.ns, name);
    if (!fresh && fresh.error().code == ErrorCode::kNotFound) return std::optional<std::string>();
    if (!fresh) return fresh.error();
    current = std::move(*fresh);
  }
  return makeError(ErrorCode::kConflict, "IPUQuota " + claim.ns + "/" + name + " changed " +
                                             std::to_string(kClaimAttempts) +
                                             " times while the job's claim was being written");
}

Status QuotaLedger::release(const std::string& ns, const std::string& name, const std::string& uid) {
  for (const kube::ObjectPtr& quota : quotas_.listNamespace(ns)) {
    const Json& entry = member(member(member(*quota, "status"), api::kLedgerField), name);
    if (!entry.is_object() || stringMember(entry, "uid") != uid) continue;
    auto removed = client_.patch(ipuQuotaResource(), ns, stringMember(member(*quota, "metadata"), "name"),
                                 kube::PatchType::kMerge, ledgerRemoval(name), "status");
    if (!removed && removed.error().code != ErrorCode::kNotFound) return removed.error();
  }
  return {};
}

}  // namespace ipu::controllers
