#pragma once

// What a service account may do according to a set of RBAC objects (a rendered Helm chart), and what it did
// according to the API server's audit log: the e2e test of the chart checks the second is within the first.
#include <istream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace ipu::testing {

// One rule of a Role or ClusterRole, in force cluster-wide (ns empty) or in one namespace.
struct Grant {
  std::string ns;
  nlohmann::json rule;  // {apiGroups, resources, verbs, resourceNames?, nonResourceURLs?}
};

// One request of the audit log (a ResponseComplete or Panic event).
struct AuditedRequest {
  std::string verb, apiGroup, resource, subresource, ns, name, uri;
  int code = 0;
  std::string received;  // requestReceivedTimestamp, RFC 3339 in UTC with microseconds: compares as text
  // "create pods/status in team-a (uid 201)" for messages.
  std::string describe() const;
};

// The rules bound to the service account ns/name by the RoleBindings and ClusterRoleBindings among
// `objects` (Kubernetes objects as JSON), through the Roles and ClusterRoles among them.
std::vector<Grant> grantsOf(const std::vector<nlohmann::json>& objects, const std::string& ns,
                            const std::string& name);

// Whether one of the grants allows the request, as the API server's RBAC authorizer decides: group,
// resource (with "/subresource"), verb, namespace, and resourceNames (which never match a create or a
// collection request). Non-resource requests (no resource) match nonResourceURLs.
bool allows(const std::vector<Grant>& grants, const AuditedRequest& request);

// The requests made by `username` in an audit log of JSON lines (one per event); lines of other users and
// other stages are skipped. A malformed line throws std::runtime_error naming its number.
std::vector<AuditedRequest> auditedRequestsOf(std::istream& log, const std::string& username);

}  // namespace ipu::testing
