#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/result.h"
#include "metrics/bind_address.h"
#include "metrics/http_endpoints.h"
#include "vipu/grpc_server.h"
#include "vipu_proxy/vipu_proxy_service.h"

namespace ipu::controllers {

// The operator's V-IPU proxy: VipuProxyService served on one address, until shutdown() or destruction. Worker
// pods reach V-IPU through it, with the controller's API, and act only on their own job's partitions. With an
// HTTP address too, ipu-runtime asks there whether its partition is active (partition_status_endpoint.h).
class VipuProxy {
  struct PrivateTag {};  // only start() constructs

 public:
  // `listen`: "host:port" ("host:0" picks a free port, see port()). `pods` and `jobs` (the IPUJob
  // controller's caches) and the upstreams' channels must outlive the proxy.
  static Result<std::unique_ptr<VipuProxy>> start(const std::string& listen, const kube::Store& pods,
                                                  const kube::Store& jobs,
                                                  const std::vector<ProxyUpstream>& upstreams,
                                                  VipuProxyOptions options,
                                                  std::optional<metrics::BindAddress> http = std::nullopt);
  VipuProxy(const VipuProxy&) = delete;
  VipuProxy& operator=(const VipuProxy&) = delete;
  ~VipuProxy() = default;  // the servers go first (declared last), then the service they served

  int port() const { return server_->port(); }
  // Stops accepting calls and waits (briefly) for those in flight: HTTP first (its answers use the service).
  void shutdown() {
    http_.reset();
    server_->shutdown();
  }

  explicit VipuProxy(PrivateTag, std::unique_ptr<VipuProxyService> service) : service_(std::move(service)) {}

 private:
  std::unique_ptr<VipuProxyService> service_;
  std::unique_ptr<vipu::GrpcServer> server_;
  std::unique_ptr<metrics::HttpEndpoints> http_;
};

}  // namespace ipu::controllers
