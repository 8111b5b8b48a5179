#pragma once

#include <optional>
#include <string>

#include "common/result.h"
#include "kube/resource.h"
#include "kube/rest_client.h"
#include "kube/store.h"
#include "quota/quota_usage.h"

namespace ipu::controllers {

inline kube::ResourceRef ipuQuotaResource() {
  return {"graphcore.ai", "v1alpha1", "ipuquotas", true};
}

// The IPUQuota ledgers (status.admissions) as admission and the end of a job write them. The admission plan
// decides from caches; the ledger is where the cap is enforced at the API server: a claim is written to each
// IPUQuota of the namespace by a merge patch conditional on the resourceVersion its check read, so of two
// writers (two replicas, a dead leader's last request and its successor) only one can take the last room.
// A conflict reads the quota again and checks again.
class QuotaLedger {
 public:
  QuotaLedger(kube::RestClient& client, const kube::Store& quotas, const kube::Store& jobs);

  // Records the job in every IPUQuota of its namespace. nullopt: recorded (or the namespace has none); a
  // message: a quota refuses it (the entries this claim wrote in the namespace's other quotas are removed
  // again). An error: the API server could not be asked; nothing is promised.
  Result<std::optional<std::string>> claim(const LedgerClaim& claim);

  // Removes the job's entry from every IPUQuota of its namespace, once the job holds no IPUs and can no
  // longer be admitted as it is (finished, suspended, deleted). Cheap when the caches show no entry.
  Status release(const std::string& ns, const std::string& name, const std::string& uid);

 private:
  Result<std::optional<std::string>> claimIn(const Json& cachedQuota, const LedgerClaim& claim);

  kube::RestClient& client_;
  const kube::Store& quotas_;
  const kube::Store& jobs_;
};

// The merge patch that removes one job's entry from a ledger (a null deletes a key in a merge patch).
Json ledgerRemoval(const std::string& jobName);

}  // namespace ipu::controllers
