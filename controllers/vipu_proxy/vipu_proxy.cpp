#include "vipu_proxy/vipu_proxy.h"

namespace ipu::controllers {

Result<std::unique_ptr<VipuProxy>> VipuProxy::start(const std::string& listen, const kube::Store& pods,
                                                    const kube::Store& jobs,
                                                    const std::vector<ProxyUpstream>& upstreams,
                                                    VipuProxyOptions options) {
  auto proxy = std::make_unique<VipuProxy>(
      PrivateTag{}, std::make_unique<VipuProxyService>(pods, jobs, upstreams, std::move(options)));
  // Plain gRPC, as Poplar speaks to a V-IPU controller: a caller is known by its address, not by a
  // certificate.
  auto server = vipu::GrpcServer::start(listen, *proxy->service_, std::nullopt);
  if (!server) return server.error();
  proxy->server_ = std::move(*server);
  return proxy;
}

}  // namespace ipu::controllers
