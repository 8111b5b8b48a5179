#include "cmd/vipu_proxy_runnable.h"

#include <condition_variable>
#include <mutex>

#include "cmd/proxy_endpoint.h"
#include "common/clock.h"
#include "common/log.h"
#include "vipu_proxy/vipu_proxy.h"

namespace ipu::cmd {
namespace {

constexpr std::chrono::seconds kRetryEvery{5};

// gRPC's form of a bind address: every interface is 0.0.0.0 (IPv4, which every pod network has).
std::string grpcListenAddress(const metrics::BindAddress& listen) {
  if (listen.host.empty()) return "0.0.0.0:" + std::to_string(listen.port);
  return listen.toString();
}

}  // namespace

void runVipuProxy(const OperatorFlags& flags, const PartitionPrefixes& prefixes,
                  const std::vector<controllers::ProxyUpstream>& upstreams,
                  const controllers::IpuJobController& jobs, kube::RestClient& client, std::stop_token fence,
                  std::stop_token stop) {
  const VipuProxyFlags& proxyFlags = *flags.vipuProxy;
  std::unique_ptr<controllers::VipuProxy> proxy;
  while (!proxy) {
    auto started = controllers::VipuProxy::start(
        grpcListenAddress(proxyFlags.listen), jobs.pods(), jobs.jobs(), upstreams,
        {.partitionIds = {prefixes.current, prefixes.legacy},
         .stop = fence,
         .ready = [&jobs] { return jobs.synced(); }},
        proxyFlags.httpPort != 0
            ? std::optional<metrics::BindAddress>(
                  {false, proxyFlags.listen.host, static_cast<std::uint16_t>(proxyFlags.httpPort)})
            : std::nullopt);
    if (started) {
      proxy = std::move(*started);
      break;
    }
    log::error("the V-IPU proxy cannot listen: worker pods cannot reach V-IPU until it does",
               {{"listen", proxyFlags.listen.toString()}, {"why", started.error().message}});
    if (!Clock::real().sleepFor(kRetryEvery, stop)) return;
  }
  log::info("V-IPU proxy serving worker pods",
            {{"listen", proxyFlags.listen.toString()},
             {"workersGet", proxyFlags.advertisedHost + ":" + std::to_string(proxyFlags.advertisedPort)},
             {"httpPort", std::to_string(proxyFlags.httpPort)}});
  if (!proxyFlags.endpointSliceName.empty()) {
    publishProxyEndpoint(client,
                         {proxyFlags.endpointSliceNamespace, proxyFlags.endpointSliceName, proxyFlags.podIp,
                          proxyFlags.listen.port, proxyFlags.httpPort},
                         stop, kRetryEvery);
  }
  std::mutex mutex;
  std::condition_variable_any stopped;
  std::unique_lock lock(mutex);
  stopped.wait(lock, stop, [] { return false; });
  proxy->shutdown();
  log::info("V-IPU proxy stopped");
}

}  // namespace ipu::cmd
