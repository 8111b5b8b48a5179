#include "quota/quota_ledger.h"

#include "common/json_access.h"

namespace ipu::controllers {
namespace {

// Conflicts in a row before the claim gives up for this pass (the job's reconcile retries with backoff):
// each one means another writer changed the quota, which a busy namespace may do a few times in a row.
constexpr int kClaimAttempts = 8;

// Whether the quota's ledger has an entry for this job (by name and uid).
bool hasEntry(const Json& quota, const std::string& name, const std::string& uid) {
  const Json& entry = member(member(member(quota, "status"), api::kLedgerField), name);
  return entry.is_object() && stringMember(entry, "uid") == uid;
}

}  // namespace

Json ledgerEntryJson(const api::LedgerEntry& entry) {
  Json json = {{"uid", entry.uid}, {"ipus", entry.ipus}};
  if (!entry.jobVersion.empty()) json["jobVersion"] = entry.jobVersion;
  return json;
}

Json ledgerPatch(const std::string& resourceVersion, Json entries) {
  return {{"metadata", {{"resourceVersion", resourceVersion}}},
          {"status", {{api::kLedgerField, std::move(entries)}}}};
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
    const auto jobs = heldQuotaJobsOf(jobs_.summariesInNamespace<api::JobSummary>(claim.ns));
    const ClaimCheck check = checkClaim(*quota, jobs, claim);
    if (check.kind == ClaimCheck::Kind::kRecorded) return std::optional<std::string>();
    if (check.kind == ClaimCheck::Kind::kRefused) return std::optional<std::string>(check.message);
    auto written =
        client_.patch(ipuQuotaResource(), claim.ns, name, kube::PatchType::kMerge,
                      ledgerPatch(quota->resourceVersion,
                                  {{claim.name, ledgerEntryJson({claim.uid, claim.ipus, claim.jobVersion})}}),
                      "status");
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
    if (!hasEntry(*quota, name, uid)) continue;
    const Json& metadata = member(*quota, "metadata");
    // Conditional on the version that shows the entry: a claim written since (the job resumed, another
    // writer) is never removed unseen; a conflict retries the job's reconcile, which reads again.
    auto removed =
        client_.patch(ipuQuotaResource(), ns, stringMember(metadata, "name"), kube::PatchType::kMerge,
                      ledgerPatch(stringMember(metadata, "resourceVersion"), {{name, nullptr}}), "status");
    if (!removed && removed.error().code != ErrorCode::kNotFound) return removed.error();
  }
  return {};
}

bool QuotaLedger::claimed(const std::string& ns, const std::string& name, const std::string& uid) const {
  for (const kube::ObjectPtr& quota : quotas_.listNamespace(ns)) {
    if (hasEntry(*quota, name, uid)) return true;
  }
  return false;
}

}  // namespace ipu::controllers
