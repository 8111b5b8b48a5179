#include "cmd/proxy_endpoint.h"

#include "common/clock.h"
#include "common/log.h"

namespace ipu::cmd {

using Json = nlohmann::json;

Json withLeaderEndpoint(Json slice, const ProxyEndpoint& endpoint) {
  slice["addressType"] = "IPv4";
  slice["endpoints"] =
      Json::array({{{"addresses", Json::array({endpoint.podIp})}, {"conditions", {{"ready", true}}}}});
  slice["ports"] = Json::array({{{"name", "vipu"}, {"port", endpoint.port}, {"protocol", "TCP"}}});
  if (endpoint.httpPort != 0)
    slice["ports"].push_back({{"name", "http"}, {"port", endpoint.httpPort}, {"protocol", "TCP"}});
  return slice;
}

namespace {

// One read-rewrite-update; a conflict (another writer in between) is read again at once.
Status publishOnce(kube::RestClient& client, const ProxyEndpoint& endpoint, std::stop_token stop) {
  for (;;) {
    auto slice = client.get(kube::ResourceRef::endpointSlices(), endpoint.sliceNamespace, endpoint.sliceName,
                            "", stop);
    if (!slice) return slice.error();
    auto updated = client.update(kube::ResourceRef::endpointSlices(), endpoint.sliceNamespace,
                                 withLeaderEndpoint(std::move(*slice), endpoint), "", stop);
    if (updated) return {};
    if (updated.error().code != ErrorCode::kConflict) return updated.error();
  }
}

std::string whatToDo(const Error& error, const ProxyEndpoint& endpoint) {
  const std::string slice = "EndpointSlice " + endpoint.sliceNamespace + "/" + endpoint.sliceName;
  switch (error.code) {
    case ErrorCode::kNotFound:
      return slice + " does not exist: create it with the proxy's headless Service (the Helm chart does)";
    case ErrorCode::kPermissionDenied:
      return "the operator may not get and update " + slice + " (the Helm chart's Role grants it)";
    default:
      return slice + ": " + error.message;
  }
}

}  // namespace

void publishProxyEndpoint(kube::RestClient& client, const ProxyEndpoint& endpoint, std::stop_token stop,
                          std::chrono::milliseconds retryEvery) {
  for (;;) {
    const Status published = publishOnce(client, endpoint, stop);
    if (published) {
      log::info("V-IPU proxy endpoint published: worker pods reach this replica",
                {{"endpointSlice", endpoint.sliceNamespace + "/" + endpoint.sliceName},
                 {"address", endpoint.podIp + ":" + std::to_string(endpoint.port)}});
      return;
    }
    if (stop.stop_requested()) return;
    log::error("worker pods cannot reach the V-IPU proxy yet",
               {{"why", whatToDo(published.error(), endpoint)}});
    if (!Clock::real().sleepFor(retryEvery, stop)) return;
  }
}

}  // namespace ipu::cmd
