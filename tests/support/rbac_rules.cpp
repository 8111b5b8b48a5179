#include "rbac_rules.h"

#include <algorithm>
#include <stdexcept>

namespace ipu::testing {
namespace {

using Json = nlohmann::json;

// Objects are read with value(): a missing key is a normal case here (a rule without nonResourceURLs), and
// const operator[] on a missing key is undefined.
Json metadataOf(const Json& object) {
  return object.value("metadata", Json::object());
}

bool listHas(const Json& list, const std::string& value) {
  if (!list.is_array()) return false;
  return std::any_of(list.begin(), list.end(),
                     [&](const Json& item) { return item.is_string() && (item == value || item == "*"); });
}

bool namesServiceAccount(const Json& binding, const std::string& ns, const std::string& name) {
  const std::string bindingNs = metadataOf(binding).value("namespace", "");
  for (const auto& subject : binding.value("subjects", Json::array())) {
    if (subject.value("kind", "") != "ServiceAccount" || subject.value("name", "") != name) continue;
    // A RoleBinding's subject without a namespace is in the binding's namespace.
    if (subject.value("namespace", bindingNs) == ns) return true;
  }
  return false;
}

const Json* findRole(const std::vector<Json>& objects, const std::string& kind, const std::string& name,
                     const std::string& ns) {
  for (const auto& object : objects) {
    if (object.value("kind", "") != kind || metadataOf(object).value("name", "") != name) continue;
    if (kind == "Role" && metadataOf(object).value("namespace", "") != ns) continue;
    return &object;
  }
  return nullptr;
}

bool matchesPath(const Json& urls, const std::string& path) {
  if (!urls.is_array()) return false;
  return std::any_of(urls.begin(), urls.end(), [&](const Json& url) {
    if (!url.is_string()) return false;
    const std::string pattern = url;
    if (!pattern.empty() && pattern.back() == '*')
      return path.rfind(pattern.substr(0, pattern.size() - 1), 0) == 0;
    return pattern == path;
  });
}

}  // namespace

std::string AuditedRequest::describe() const {
  std::string text = verb + " ";
  if (resource.empty()) return text + uri + " (" + std::to_string(code) + ")";
  text += apiGroup.empty() ? resource : resource + "." + apiGroup;
  if (!subresource.empty()) text += "/" + subresource;
  if (!name.empty()) text += " " + name;
  text += ns.empty() ? " (cluster-wide)" : " in " + ns;
  return text + " (" + std::to_string(code) + ")";
}

std::vector<Grant> grantsOf(const std::vector<Json>& objects, const std::string& ns,
                            const std::string& name) {
  std::vector<Grant> grants;
  for (const auto& binding : objects) {
    const std::string kind = binding.value("kind", "");
    if ((kind != "RoleBinding" && kind != "ClusterRoleBinding") || !namesServiceAccount(binding, ns, name))
      continue;
    const std::string bindingNs = kind == "RoleBinding" ? metadataOf(binding).value("namespace", "") : "";
    const Json ref = binding.value("roleRef", Json::object());
    const Json* role = findRole(objects, ref.value("kind", ""), ref.value("name", ""), bindingNs);
    if (role == nullptr) continue;
    for (const auto& rule : role->value("rules", Json::array())) grants.push_back({bindingNs, rule});
  }
  return grants;
}

bool allows(const std::vector<Grant>& grants, const AuditedRequest& request) {
  return std::any_of(grants.begin(), grants.end(), [&](const Grant& grant) {
    const Json& rule = grant.rule;
    if (!listHas(rule.value("verbs", Json::array()), request.verb)) return false;
    if (request.resource.empty())
      return grant.ns.empty() && matchesPath(rule.value("nonResourceURLs", Json::array()), request.uri);
    if (!grant.ns.empty() && grant.ns != request.ns) return false;
    if (!listHas(rule.value("apiGroups", Json::array()), request.apiGroup)) return false;
    const std::string resource =
        request.subresource.empty() ? request.resource : request.resource + "/" + request.subresource;
    if (!listHas(rule.value("resources", Json::array()), resource)) return false;
    const Json names = rule.value("resourceNames", Json::array());
    if (names.empty()) return true;
    return !request.name.empty() && listHas(names, request.name);
  });
}

std::vector<AuditedRequest> auditedRequestsOf(std::istream& log, const std::string& username) {
  std::vector<AuditedRequest> requests;
  std::string line;
  for (int number = 1; std::getline(log, line); ++number) {
    if (line.empty()) continue;
    const Json event = Json::parse(line, nullptr, false);
    if (event.is_discarded() || !event.is_object()) {
      throw std::runtime_error("audit log line " + std::to_string(number) + " is not a JSON object");
    }
    if (event.value("/user/username"_json_pointer, "") != username) continue;
    const std::string stage = event.value("stage", "");
    if (stage != "ResponseComplete" && stage != "Panic") continue;
    AuditedRequest request;
    request.verb = event.value("verb", "");
    request.uri = event.value("requestURI", "");
    request.code = event.value("/responseStatus/code"_json_pointer, 0);
    request.received = event.value("requestReceivedTimestamp", "");
    if (const auto ref = event.find("objectRef"); ref != event.end() && ref->is_object()) {
      request.apiGroup = ref->value("apiGroup", "");
      request.resource = ref->value("resource", "");
      request.subresource = ref->value("subresource", "");
      request.ns = ref->value("namespace", "");
      request.name = ref->value("name", "");
    }
    // The path alone, as nonResourceURLs are matched.
    request.uri = request.uri.substr(0, request.uri.find('?'));
    requests.push_back(std::move(request));
  }
  return requests;
}

}  // namespace ipu::testing
