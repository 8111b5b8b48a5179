#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "common/clock.h"
#include "ctrl/manager.h"
#include "ctrl/reconciler.h"
#include "kube/event_recorder.h"
#include "kube/rest_client.h"
#include "kube/store.h"
#include "quota/quota_usage.h"

namespace ipu::controllers {

// Keeps each IPUQuota's status true: the counts `kubectl get ipuquotas` shows (used, reserved, pending,
// admitted, waiting), from the namespace's IPUJobs as the cache has them, and its ledger whole:
//   - jobs that hold IPUs without an entry (admitted before the quota existed) are added, conditionally on
//     the version read, so a claim racing with it sees them;
//   - entries of jobs that hold nothing any more are removed once the API server (not the cache, which may
//     not have seen a new job yet) shows the job gone, replaced, finished or suspended.
// Only the counts are patched, never the ledger, so a count write cannot undo an admission's claim.
class IpuQuotaReconciler final : public ctrl::Reconciler {
 public:
  IpuQuotaReconciler(kube::RestClient& client, const kube::Store& jobs, kube::EventRecorder& events);

  Result<ctrl::Action> reconcile(const kube::ObjectPtr& quota) override;

 private:
  Result<bool> adoptMissing(const Json& quota, const std::map<std::string, api::LedgerEntry>& missing);
  // false: the quota changed since it was read (nothing removed; read it again).
  Result<bool> removeGone(const Json& quota, const std::vector<std::string>& unknown,
                          std::map<std::string, api::LedgerEntry>& ledger);

  kube::RestClient& client_;
  const kube::Store& jobs_;
  kube::EventRecorder& events_;
};

// The IPUQuota controller: For IPUQuotas; Watches IPUJobs (a job's change queues the quotas of its
// namespace).
class IpuQuotaController {
 public:
  IpuQuotaController(ctrl::Manager& manager, kube::EventRecorder& events);
  static std::unique_ptr<IpuQuotaController> setup(ctrl::Manager& manager, kube::EventRecorder& events) {
    return std::make_unique<IpuQuotaController>(manager, events);
  }

  const kube::Store& quotas() const { return quotas_.store(); }

 private:
  kube::Informer& quotas_;
  kube::Informer& jobs_;
  IpuQuotaReconciler reconciler_;
};

}  // namespace ipu::controllers
