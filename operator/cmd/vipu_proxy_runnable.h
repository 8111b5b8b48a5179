#pragma once

#include <stop_token>
#include <vector>

#include "cmd/operator_flags.h"
#include "cmd/partition_prefix.h"
#include "ipujob/ipujob_controller.h"
#include "kube/rest_client.h"
#include "vipu_proxy/vipu_proxy_service.h"

namespace ipu::cmd {

// The V-IPU proxy of a leading replica (flags.vipuProxy set), as a runnable of its leadership term: started
// once the controllers run (so only the leader listens, and its caches have synced), then pointed at by the
// EndpointSlice when the flags name one, serving until `stop` (leadership ends or the process stops). Its
// calls are fenced by `fence` with the term's V-IPU clients. A listen address that cannot be bound (another
// process has the port) is logged and tried again every few seconds: worker pods cannot reach V-IPU until
// then, which the log says.
void runVipuProxy(const OperatorFlags& flags, const PartitionPrefixes& prefixes,
                  const std::vector<controllers::ProxyUpstream>& upstreams,
                  const controllers::IpuJobController& jobs, kube::RestClient& client, std::stop_token fence,
                  std::stop_token stop);

}  // namespace ipu::cmd
