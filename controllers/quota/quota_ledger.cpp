#include "quota/quota_ledger.h"

#include "common/json_access.h"
#include "common/log.h"

namespace ipu::controllers {
namespace {

// Conflicts in a row before the claim gives up for this pass (the job's reconcile retries with backoff):
// each one means another writer changed the quota, which a busy namespace may do a few times in a row.
constexpr int kClaimAttempts = 8;

Json ledgerEntry(const std::string& resourceVersion, const LedgerClaim& claim) {
  return {{"metadata", {{"resourceVersion", resourceVersion}}},
          {"status",
           {{api::kLedgerField,
             {{claim.name, {{"uid", claim.uid}, {"ipus", claim.ipus}, {"jobVersion", claim.jobVersion}}}}}}}};
}

}  // namespace

Json ledgerRemoval(const std::string& jobName, const std::string& resourceVersion) {
  return {{"metadata", {{"resourceVersion", resourceVersion}}},
          {"status", {{api::kLedgerField, {{jobName, nullptr}}}}}};
}

QuotaLedger::QuotaLedger(kube::RestClient& client, const kube::Store& quotas, const kube::Store& jobs)
    : client_(client), quotas_(quotas), jobs_(jobs) {}

Result<std::optional<std::string>> QuotaLedger::claim(const LedgerClaim& claim) {
  for (const kube::ObjectPtr& quota : quotas_.listNamespace(claim.ns)) {
    auto claimed = claimIn(*quota, claim);
    // Refused or not asked: the entries written in the namespace's other quotas stay (they count the job as
    // reserved, never less than the truth) until the job is given back() or admitted.
    if (!claimed || *claimed) return claimed;
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
    const Json& metadata = member(*quota, "metadata");
    const Json& entry = member(member(member(*quota, "status"), api::kLedgerField), name);
    if (!entry.is_object() || stringMember(entry, "uid") != uid) continue;
    // Conditional on the version that shows the entry: a claim written since (the job resumed, another
    // writer) is never removed unseen; a conflict retries the job's reconcile, which reads again.
    auto removed =
        client_.patch(ipuQuotaResource(), ns, stringMember(metadata, "name"), kube::PatchType::kMerge,
                      ledgerRemoval(name, stringMember(metadata, "resourceVersion")), "status");
    if (!removed && removed.error().code != ErrorCode::kNotFound) return removed.error();
  }
  return {};
}

bool QuotaLedger::claimed(const std::string& ns, const std::string& name, const std::string& uid) const {
  for (const kube::ObjectPtr& quota : quotas_.listNamespace(ns)) {
    const Json& entry = member(member(member(*quota, "status"), api::kLedgerField), name);
    if (entry.is_object() && stringMember(entry, "uid") == uid) return true;
  }
  return false;
}

}  // namespace ipu::controllers
