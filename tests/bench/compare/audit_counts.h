#pragma once

#include <cstdint>
#include <functional>
#include <istream>
#include <map>
#include <string>

#include <nlohmann/json.hpp>

// The API requests each client made, read from a kube-apiserver audit log (one JSON event per line, any
// stage): a request is one auditID, so a watch logged at ResponseStarted and again at ResponseComplete
// counts once. Clients are told apart by their User-Agent.
namespace ipu::bench {

struct ClientRequests {
  std::int64_t total = 0;
  // "<verb> <resource>[/<subresource>]", e.g. "create pods", "patch ipujobs/status".
  std::map<std::string, std::int64_t> byVerbResource;
};

struct AuditCounts {
  std::map<std::string, ClientRequests> clients;
  // Lines that are not an audit event (torn by a crash, or not JSON): counted, never fatal.
  std::int64_t malformedLines = 0;

  nlohmann::json toJson() const;
};

// The client a User-Agent belongs to, or "" for a request that is not counted.
using ClientOf = std::function<std::string(const std::string& userAgent)>;

AuditCounts countRequests(std::istream& lines, const ClientOf& clientOf);
// The same for the log at `path`; a missing file counts nothing and says so in malformedLines = -1.
AuditCounts countRequestsInFile(const std::string& path, const ClientOf& clientOf);

}  // namespace ipu::bench
