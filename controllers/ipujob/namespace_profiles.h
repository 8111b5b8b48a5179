#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "api/worker_pod_profile.h"
#include "kube/store.h"

namespace ipu::controllers {

// The worker pod profile that applies to IPUJobs in `ns`: what its Namespace's annotation
// (api::kWorkerPodProfileAnnotation) names, else `fallback` (the operator's --worker-pod-profile). An
// annotation naming no profile reads as ipu-baseline: a typo of an admin never widens what tenants get.
api::WorkerPodProfile namespaceProfile(const kube::Store& namespaces, const std::string& ns,
                                       api::WorkerPodProfile fallback);

// What the Namespace cache keeps: the name and the profile annotation (a cluster's namespaces carry many
// labels and annotations the operator never reads).
void trimNamespaceForCache(nlohmann::json& ns);

}  // namespace ipu::controllers
