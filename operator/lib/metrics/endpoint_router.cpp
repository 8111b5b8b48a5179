#include "metrics/endpoint_router.h"

#include <exception>

#include "common/log.h"

namespace ipu::metrics {
namespace {

constexpr std::string_view kTextContentType = "text/plain; charset=utf-8";

HttpReply text(int status, std::string body) {
  return HttpReply{.status = status, .contentType = std::string(kTextContentType), .body = std::move(body)};
}

// Whether `name` appears as a key, with or without a value: Go's `_, found := r.URL.Query()["verbose"]`,
// which is how the API server reads ?verbose.
bool hasQueryKey(std::string_view query, std::string_view name) {
  while (!query.empty()) {
    const auto amp = query.find('&');
    const std::string_view pair = query.substr(0, amp);
    if (pair.substr(0, pair.find('=')) == name) return true;
    if (amp == std::string_view::npos) break;
    query.remove_prefix(amp + 1);
  }
  return false;
}

HttpReply metricsReply(const Exposition& metrics) {
  try {
    return HttpReply{
        .status = 200, .contentType = std::string(kMetricsContentType), .body = metrics.render()};
  } catch (const std::exception& e) {
    log::error("cannot render metrics", {{"error", e.what()}});
    return text(500, std::string("cannot render metrics: ") + e.what() + "\n");
  }
}

HttpReply probeReply(const HealthChecks& checks, std::string_view query) {
  HealthChecks::Report report = checks.run(hasQueryKey(query, "verbose"));
  return text(report.passed ? 200 : 500, std::move(report.text));
}

}  // namespace

HttpReply route(const Endpoints& endpoints, std::string_view method, std::string_view path,
                std::string_view query) {
  const bool known = (path == "/metrics" && endpoints.metrics) || (path == "/healthz" && endpoints.healthz) ||
                     (path == "/readyz" && endpoints.readyz);
  if (!known) return text(404, "404 page not found\n");
  if (method != "GET") {
    HttpReply reply = text(405, "method not allowed\n");
    reply.headers.emplace_back("Allow", "GET");
    return reply;
  }
  if (path == "/metrics") return metricsReply(*endpoints.metrics);
  if (path == "/healthz") return probeReply(*endpoints.healthz, query);
  return probeReply(*endpoints.readyz, query);
}

}  // namespace ipu::metrics
