// Kueue's objects as the Kueue tests write and read them: YAML of queues, a manifest put in a LocalQueue, and
// what a Workload says.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "kueue/workload.h"

namespace ipu::testing {

// A ClusterQueue of `ipus` IPUs of `flavor` (and cpu and memory enough for the workers' requests) open to
// every namespace; `spec` adds lines of its spec (two-space indented, each ending in a newline).
inline std::string clusterQueueYaml(const std::string& name, const std::string& flavor, int ipus,
                                    const std::string& spec = "") {
  return "apiVersion: kueue.x-k8s.io/v1beta2\nkind: ClusterQueue\nmetadata: {name: " + name +
         "}\nspec:\n  namespaceSelector: {}\n" + spec +
         "  resourceGroups:\n  - coveredResources: [graphcore.ai/ipu, cpu, memory]\n    flavors:\n    - "
         "name: " +
         flavor +
         "\n      resources:\n      - {name: graphcore.ai/ipu, nominalQuota: " + std::to_string(ipus) +
         "}\n      - {name: cpu, nominalQuota: 1000}\n      - {name: memory, nominalQuota: 10Ti}\n---\n";
}

inline std::string localQueueYaml(const std::string& name, const std::string& clusterQueue) {
  return "apiVersion: kueue.x-k8s.io/v1beta2\nkind: LocalQueue\nmetadata: {name: " + name +
         "}\nspec: {clusterQueue: " + clusterQueue + "}\n---\n";
}

// The manifest with the job in the LocalQueue `queue` (unchanged for "").
inline std::string withLabel(std::string manifest, const std::string& queue) {
  if (queue.empty()) return manifest;
  const std::string anchor = "\nmetadata:\n";
  const auto at = manifest.find(anchor);
  if (at == std::string::npos) return "";
  return manifest.insert(at + anchor.size(), std::string("  labels: {") + controllers::kKueueQueueNameLabel +
                                                 ": " + queue + "}\n");
}

// "status/reason" of the Workload's condition `type` ("" when it has none).
inline std::string conditionOf(const nlohmann::json& workload, const std::string& type) {
  if (!workload.is_object()) return "";
  for (const nlohmann::json& condition :
       workload.value("status", nlohmann::json::object()).value("conditions", nlohmann::json::array())) {
    if (condition.value("type", "") == type)
      return condition.value("status", "") + "/" + condition.value("reason", "");
  }
  return "";
}

// "state: message" of the Workload's entry for the AdmissionCheck `check` ("" when it has none).
inline std::string checkOf(const nlohmann::json& workload, const std::string& check) {
  if (!workload.is_object()) return "";
  for (const nlohmann::json& entry :
       workload.value("status", nlohmann::json::object()).value("admissionChecks", nlohmann::json::array())) {
    if (entry.value("name", "") == check) return entry.value("state", "") + ": " + entry.value("message", "");
  }
  return "";
}

}  // namespace ipu::testing
