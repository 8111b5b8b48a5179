#include "ipujob/namespace_profiles.h"

#include "common/json_access.h"

namespace ipu::controllers {

api::WorkerPodProfile namespaceProfile(const kube::Store& namespaces, const std::string& ns,
                                       api::WorkerPodProfile fallback) {
  const kube::ObjectPtr found = namespaces.get(ns);
  if (!found) return fallback;
  const nlohmann::json& annotation =
      member(member(member(*found, "metadata"), "annotations"), api::kWorkerPodProfileAnnotation);
  if (!annotation.is_string()) return fallback;
  return api::parseWorkerPodProfile(annotation.get<std::string>())
      .value_or(api::WorkerPodProfile::kIpuBaseline);
}

void trimNamespaceForCache(nlohmann::json& ns) {
  if (!ns.is_object()) return;
  nlohmann::json metadata = nlohmann::json::object();
  const nlohmann::json& read = member(ns, "metadata");
  for (const char* field : {"name", "uid", "resourceVersion"}) {
    if (read.contains(field)) metadata[field] = read[field];
  }
  const nlohmann::json& annotation = member(member(read, "annotations"), api::kWorkerPodProfileAnnotation);
  if (!annotation.is_null()) metadata["annotations"] = {{api::kWorkerPodProfileAnnotation, annotation}};
  ns = {{"apiVersion", "v1"}, {"kind", "Namespace"}, {"metadata", std::move(metadata)}};
}

}  // namespace ipu::controllers
