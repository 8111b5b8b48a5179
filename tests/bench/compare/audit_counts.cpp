#include "audit_counts.h"

#include <fstream>
#include <set>

namespace ipu::bench {

namespace {

std::string verbResource(const nlohmann::json& event) {
  const nlohmann::json ref = event.value("objectRef", nlohmann::json::object());
  std::string resource = ref.is_object() ? ref.value("resource", "") : "";
  if (ref.is_object() && !ref.value("subresource", "").empty())
    resource += "/" + ref.value("subresource", "");
  if (resource.empty()) resource = event.value("requestURI", "?");
  return event.value("verb", "?") + " " + resource;
}

}  // namespace

nlohmann::json AuditCounts::toJson() const {
  nlohmann::json out = {{"malformed_lines", malformedLines}, {"clients", nlohmann::json::object()}};
  for (const auto& [client, requests] : clients)
    out["clients"][client] = {{"total", requests.total}, {"by_verb_resource", requests.byVerbResource}};
  return out;
}

AuditCounts countRequests(std::istream& lines, const ClientOf& clientOf) {
  AuditCounts counts;
  std::set<std::string> seen;
  std::string line;
  while (std::getline(lines, line)) {
    if (line.empty()) continue;
    const nlohmann::json event = nlohmann::json::parse(line, nullptr, false);
    if (!event.is_object() || !event.contains("auditID") || !event["auditID"].is_string() ||
        !event.value("verb", nlohmann::json()).is_string()) {
      ++counts.malformedLines;
      continue;
    }
    const nlohmann::json agent = event.value("userAgent", nlohmann::json(""));
    const std::string client = clientOf(agent.is_string() ? agent.get<std::string>() : "");
    if (client.empty() || !seen.insert(event["auditID"].get<std::string>()).second) continue;
    ClientRequests& requests = counts.clients[client];
    ++requests.total;
    ++requests.byVerbResource[verbResource(event)];
  }
  return counts;
}

AuditCounts countRequestsInFile(const std::string& path, const ClientOf& clientOf) {
  std::ifstream in(path);
  if (!in) return AuditCounts{.clients = {}, .malformedLines = -1};
  return countRequests(in, clientOf);
}

}  // namespace ipu::bench
