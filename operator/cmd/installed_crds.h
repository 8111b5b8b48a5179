#pragma once

#include "common/result.h"
#include "kube/rest_client.h"

namespace ipu::cmd {

// Whether the API server serves the operator's CRDs (IPUJob, IPUQuota). Without one, the operator's caches
// could never sync and it would only say so after the sync timeout; a missing CRD (404) is said at once, with
// the command that installs it. Other errors (an API server not reachable yet, a missing permission) are left
// to the caches, which retry and report them.
Status requireInstalledCrds(kube::RestClient& client);

// Whether Kueue's Workload CRD (kueue.x-k8s.io/v1beta2) is served; an error when the API server could not
// tell.
Result<bool> kueueInstalled(kube::RestClient& client);

}  // namespace ipu::cmd
