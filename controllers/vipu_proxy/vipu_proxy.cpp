#include "vipu_proxy/vipu_proxy.h"

#include "vipu_proxy/partition_status_endpoint.h"

namespace ipu::controllers {

Result<std::unique_ptr<VipuProxy>> VipuProxy::start(const std::string& listen, const kube::Store& pods,
                                                    const kube::Store& jobs,
                                                    const std::vector<ProxyUpstream>& upstreams,
                                                    VipuProxyOptions options,
                                                    std::optional<metrics::BindAddress> http) {
  auto proxy = std::make_unique<VipuProxy>(
      PrivateTag{}, std::make_unique<VipuProxyService>(pods, jobs, upstreams, std::move(options)));
  // Plain gRPC, as Poplar speaks to a V-IPU controller: a caller is known by its address, not by a
  // certificate.
  auto server = vipu::GrpcServer::start(listen, *proxy->service_, std::nullopt);
  if (!server) return server.error();
  proxy->server_ = std::move(*server);
  if (http) {
    VipuProxyService& service = *proxy->service_;
    auto endpoint = metrics::HttpEndpoints::start(
        *http,
        [&service](const metrics::HttpRequest& request) {
          return partitionStatusReply(request, [&service](const std::string& address, const std::string& id) {
            return service.partitionStatusFor(address, id);
          });
        },
        "V-IPU proxy (partition status)");
    if (!endpoint) return endpoint.error();
    proxy->http_ = std::move(*endpoint);
  }
  return proxy;
}

}  // namespace ipu::controllers
