#pragma once

#include <optional>
#include <string>

#include "api/resources.h"
#include "common/result.h"
#include "kube/resource.h"
#include "kube/rest_client.h"
#include "kube/store.h"
#include "quota/quota_usage.h"

namespace ipu::controllers {

using api::ipuQuotaResource;

// The IPUQuota ledgers (status.admissions) as admission and the end of a job write them. The admission plan
// decides from caches; the ledger is where the cap is enforced at the API server: a claim is written to each
// IPUQuota of the namespace by a merge patch conditional on the resourceVersion its check read, so of two
// writers (two replicas, a dead leader's last request and its successor) only one can take the last room.
// A conflict reads the quota again and checks again.
class QuotaLedger {
 public:
  QuotaLedger(kube::RestClient& client, const kube::Store& quotas, const kube::Store& jobs);

  // Records the job in every IPUQuota of its namespace. nullopt: recorded (or the namespace has none); a
  // message: a quota refuses it. An error: the API server could not be asked; nothing is promised. Entries
  // written before a refusal or an error stay (the job then counts as reserved) until release().
  Result<std::optional<std::string>> claim(const LedgerClaim& claim);

  // Removes the job's entry from every IPUQuota of its namespace (each removal conditional on the version
  // that shows it): once the job holds no IPUs (finished, suspended), or waits without a place in line (its
  // claim was refused, or it can never run under the quota as it is). Cheap when the caches show no entry.
  Status release(const std::string& ns, const std::string& name, const std::string& uid);
  // Whether a cached IPUQuota of the namespace has an entry for the job.
  bool claimed(const std::string& ns, const std::string& name, const std::string& uid) const;

 private:
  Result<std::optional<std::string>> claimIn(const Json& cachedQuota, const LedgerClaim& claim);

  kube::RestClient& client_;
  const kube::Store& quotas_;
  const kube::Store& jobs_;
};

// One ledger entry as status.admissions holds it.
Json ledgerEntryJson(const api::LedgerEntry& entry);
// The merge patch of a quota's status that writes `entries` (job name -> entry; null removes the job's
// entry), conditional on the quota's resourceVersion: every ledger write, so that none is lost to another
// unseen.
Json ledgerPatch(const std::string& resourceVersion, Json entries);

}  // namespace ipu::controllers
