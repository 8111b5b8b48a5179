#pragma once

#include <functional>
#include <string>

#include "common/result.h"
#include "metrics/endpoint_router.h"
#include "vipu/proto/virmgrpc.pb.h"

namespace ipu::controllers {

// The partition's state for a caller at an address, or why not (VipuProxyService::partitionStatusFor).
using PartitionStatusLookup =
    std::function<Result<virmgrpc::PartitionReadyState>(const std::string& address, const std::string& id)>;

// The V-IPU proxy's HTTP face, for ipu-runtime, which speaks no gRPC: before a worker's command runs, it asks
// GET /v1/partitions/<id> (contract::kPartitionStatusPath) until the partition is active. The answer is
// GetPartitionStatus's through the proxy, decided as the gRPC call is (the caller known by its address, only
// its own job's partitions): 200 {"partition": id, "readyState": "PS_ACTIVE"}, or {"code", "message"} with
// 403 (not the caller's partition, or a caller that is no worker), 404 (V-IPU has no such partition, or
// another path), 405 (not GET), 503 (the proxy is starting or stopping), 502 (V-IPU's own error). Pure
// apart from `lookup`.
metrics::HttpReply partitionStatusReply(const metrics::HttpRequest& request,
                                        const PartitionStatusLookup& lookup);

}  // namespace ipu::controllers
