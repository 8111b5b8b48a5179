#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace ipu::kube {

// A kind of object the API serves: group/version/resource, and whether it lives in namespaces.
struct ResourceRef {
  std::string group;     // "" for the core group
  std::string version;   // "v1", "v1alpha1"
  std::string resource;  // plural, lower-case: "pods", "ipujobs"
  bool namespaced = true;

  std::string apiVersion() const { return group.empty() ? version : group + "/" + version; }
  // /api/v1 or /apis/<group>/<version>
  std::string basePath() const;
  // The collection (name empty) or object path; ns ignored for cluster-scoped resources, empty ns on a
  // namespaced resource = across all namespaces (collections only).
  std::string path(const std::string& ns, const std::string& name = "",
                   const std::string& subresource = "") const;

  static ResourceRef pods() { return {"", "v1", "pods", true}; }
  static ResourceRef services() { return {"", "v1", "services", true}; }
  static ResourceRef configMaps() { return {"", "v1", "configmaps", true}; }
  static ResourceRef secrets() { return {"", "v1", "secrets", true}; }
  static ResourceRef events() { return {"", "v1", "events", true}; }
  static ResourceRef namespaces() { return {"", "v1", "namespaces", false}; }
  static ResourceRef nodes() { return {"", "v1", "nodes", false}; }
  static ResourceRef podTemplates() { return {"", "v1", "podtemplates", true}; }
  static ResourceRef networkPolicies() { return {"networking.k8s.io", "v1", "networkpolicies", true}; }
  static ResourceRef leases() { return {"coordination.k8s.io", "v1", "leases", true}; }
  static ResourceRef endpointSlices() { return {"discovery.k8s.io", "v1", "endpointslices", true}; }
  static ResourceRef customResourceDefinitions() {
    return {"apiextensions.k8s.io", "v1", "customresourcedefinitions", false};
  }
};

// Percent-encodes a query value (RFC 3986 unreserved characters stay).
std::string urlEncode(std::string_view value);
// "?a=1&b=x%3Dy" from name/value pairs with non-empty values; "" when there are none.
std::string queryString(const std::vector<std::pair<std::string, std::string>>& parameters);

}  // namespace ipu::kube
