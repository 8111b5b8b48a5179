#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "metrics/exposition.h"
#include "metrics/health_checks.h"

namespace ipu::metrics {

// What one HTTP server serves. Null means that path is not served here (404): controller-runtime puts
// /metrics and the probes on separate ports, and each server gets only its share. What is pointed to must
// outlive the server.
struct Endpoints {
  const Exposition* metrics = nullptr;    // GET /metrics
  const HealthChecks* healthz = nullptr;  // GET /healthz
  const HealthChecks* readyz = nullptr;   // GET /readyz
};

struct HttpReply {
  int status = 200;
  std::string contentType;
  std::string body;
  std::vector<std::pair<std::string, std::string>> headers;  // besides Content-Type
};

// One request, as much of it as a handler reads.
struct HttpRequest {
  std::string method;
  std::string path;
  std::string query;          // raw, without '?'
  std::string authorization;  // the Authorization header; "" when absent
  // The client's IP address as Kubernetes writes a pod's ("10.0.0.7"; an IPv4 client of an IPv6 socket as
  // IPv4); "" when unknown.
  std::string remoteAddress;
};

// What answers every request of one server. Called on the server's threads, several at once.
using RequestHandler = std::function<HttpReply(const HttpRequest&)>;

inline constexpr std::string_view kMetricsContentType = "text/plain; version=0.0.4; charset=utf-8";

// The whole of request handling, apart from HTTP itself (http_endpoints.h), so that it is tested without
// sockets. `query` is the raw query string, without '?'. An unknown path is 404 whatever the method; a
// known one asked for with anything but GET is 405 with "Allow: GET". ?verbose on a probe lists every check.
// Metrics that throw while rendering (a scrape gauge's bug) are a 500 carrying the message.
HttpReply route(const Endpoints& endpoints, std::string_view method, std::string_view path,
                std::string_view query);

}  // namespace ipu::metrics
