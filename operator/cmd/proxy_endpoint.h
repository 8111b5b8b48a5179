#pragma once

#include <chrono>
#include <stop_token>
#include <string>

#include <nlohmann/json.hpp>

#include "kube/rest_client.h"

namespace ipu::cmd {

// How worker pods find the V-IPU proxy of whichever replica leads: a headless Service without a selector
// (its DNS name is what workers are given) and an EndpointSlice of it, made by the chart, whose one endpoint
// the leading replica sets to its own pod IP. Resolving the name gives the leader's address itself, so a
// worker's calls reach the proxy with the worker's own source address (no Service NAT between them), which
// is how the proxy knows the caller.
struct ProxyEndpoint {
  std::string sliceNamespace;
  std::string sliceName;
  std::string podIp;  // IPv4, the slice's addressType
  int port = 0;       // the proxy's listen port
  int httpPort = 0;   // its HTTP face's (--vipu-proxy-http-port); 0: none
};

// `slice` (as read) with `endpoint` its only endpoint, ready, and its ports the proxy's ("vipu", and "http"
// when it has one). Pure.
nlohmann::json withLeaderEndpoint(nlohmann::json slice, const ProxyEndpoint& endpoint);

// Points the slice at this replica: read, rewritten, updated conditionally (a conflict is read again). Runs
// until it succeeded or `stop`; a slice that does not exist or may not be written is logged with what to do
// and tried again every `retryEvery` (an admin may fix it while the operator runs).
void publishProxyEndpoint(kube::RestClient& client, const ProxyEndpoint& endpoint, std::stop_token stop,
                          std::chrono::milliseconds retryEvery = std::chrono::seconds(5));

}  // namespace ipu::cmd
