#pragma once

#include "common/clock.h"
#include "ctrl/reconciler.h"
#include "kube/rest_client.h"

namespace ipu::controllers {

// Keeps the AdmissionChecks the operator answers (spec.controllerName graphcore.ai/ipu-operator) Active:
// Kueue admits nothing through a ClusterQueue that lists a check no controller marked Active. The check's
// answers, per Workload, are the IPUJob reconciler's (ipujob/kueue_steps.h).
class AdmissionCheckReconciler final : public ctrl::Reconciler {
 public:
  AdmissionCheckReconciler(kube::RestClient& client, Clock& clock) : client_(client), clock_(clock) {}

  Result<ctrl::Action> reconcile(const kube::ObjectPtr& admissionCheck) override;

 private:
  kube::RestClient& client_;
  Clock& clock_;
};

}  // namespace ipu::controllers
