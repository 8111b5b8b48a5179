#pragma once

#include <nlohmann/json.hpp>

#include "api/ipujob.h"

namespace ipu::controllers {

using Json = nlohmann::json;

// The NetworkPolicy that lets only the job's own pods reach the runtime agents of its worker pods (jobs
// whose instances span several workers): ingress on every port from pods of the namespace that carry the
// job's label, and on every port but the agent's from anywhere, so the user's own services in the pods
// (a notebook, a metrics port) stay reachable as before. Named as the job's headless Service, owned by the
// job. Only effective where the cluster's network plugin enforces NetworkPolicy (docs/security.md).
Json buildAgentNetworkPolicy(const api::IpuJob& job);

// The TCP port the job's agents listen on: the worker container's own IPU_RUNTIME_AGENT_PORT when its
// template sets one (a plain value, 1-65535), else the runtime's default.
int agentPortOf(const api::IpuJob& job);

}  // namespace ipu::controllers
