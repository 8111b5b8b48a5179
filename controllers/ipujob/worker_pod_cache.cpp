#include "ipujob/worker_pod_cache.h"

#include <initializer_list>
#include <string_view>

#include "api/ipujob.h"
#include "api/resources.h"
#include "common/json_access.h"
#include "ipujob/child_ownership.h"

namespace ipu::controllers {
namespace {

using Json = nlohmann::json;

// `from`'s members named in `names`, moved into a new object (absent ones stay absent).
Json only(Json& from, std::initializer_list<const char*> names) {
  Json kept = Json::object();
  if (!from.is_object()) return kept;
  for (const char* name : names) {
    if (auto found = from.find(name); found != from.end()) kept[name] = std::move(*found);
  }
  return kept;
}

Json trimmedMetadata(Json& metadata) {
  Json kept = only(metadata, {"name", "namespace", "uid", "resourceVersion", "creationTimestamp",
                              "deletionTimestamp", "deletionGracePeriodSeconds"});
  // Only the four labels the operator writes are read (job, instance, worker index, attempt): anyone who may
  // label a pod can add more under graphcore.ai/, and none of them is kept.
  if (auto labels = metadata.find("labels"); labels != metadata.end() && labels->is_object()) {
    kept["labels"] =
        only(*labels, {api::kJobNameLabel, api::kInstanceLabel, api::kWorkerIndexLabel, api::kAttemptLabel});
  }
  // Of the annotations, only the retention of worker 0's outputs that the operator wrote.
  if (auto annotations = metadata.find("annotations");
      annotations != metadata.end() && annotations->is_object()) {
    Json outputs = only(*annotations, {api::kOutputsPathAnnotation, api::kOutputsRetainAnnotation});
    if (!outputs.empty()) kept["annotations"] = std::move(outputs);
  }
  if (auto owners = metadata.find("ownerReferences"); owners != metadata.end() && owners->is_array()) {
    Json references = Json::array();
    for (auto& owner : *owners)
      references.push_back(only(owner, {"apiVersion", "kind", "name", "uid", "controller"}));
    kept["ownerReferences"] = std::move(references);
  }
  return kept;
}

Json trimmedContainerStatuses(Json& statuses) {
  Json kept = Json::array();
  if (!statuses.is_array()) return kept;
  for (Json& status : statuses) {
    Json state = Json::object();
    Json current = status.is_object() ? status.value("state", Json::object()) : Json::object();
    if (current.contains("running")) state["running"] = Json::object();
    if (current.contains("waiting")) state["waiting"] = only(current["waiting"], {"reason", "message"});
    if (current.contains("terminated"))
      state["terminated"] = only(current["terminated"], {"exitCode", "reason", "message", "finishedAt"});
    Json entry = only(status, {"name"});
    entry["state"] = std::move(state);
    kept.push_back(std::move(entry));
  }
  return kept;
}

Json trimmedStatus(Json& status) {
  // The addresses identify a worker calling the V-IPU proxy (vipu_proxy/proxy_policy.h): podIPs for a
  // dual-stack pod's second address, hostIP to tell a pod on its node's network, whose address is not its
  // own.
  Json kept = only(status, {"phase", "reason", "message", "podIP", "hostIP"});
  if (!status.is_object()) return kept;
  if (auto addresses = status.find("podIPs"); addresses != status.end() && addresses->is_array()) {
    Json ips = Json::array();
    for (auto& address : *addresses) ips.push_back(only(address, {"ip"}));
    kept["podIPs"] = std::move(ips);
  }
  if (auto conditions = status.find("conditions"); conditions != status.end() && conditions->is_array()) {
    Json read = Json::array();
    for (auto& condition : *conditions) {
      const Json type = condition.is_object() ? condition.value("type", Json()) : Json();
      if (type == "PodScheduled" || type == "DisruptionTarget")
        read.push_back(only(condition, {"type", "status", "reason", "message"}));
    }
    if (!read.empty()) kept["conditions"] = std::move(read);
  }
  for (const char* kind : {"initContainerStatuses", "containerStatuses"}) {
    if (status.contains(kind)) kept[kind] = trimmedContainerStatuses(status[kind]);
  }
  return kept;
}

}  // namespace

void trimWorkerPodForCache(Json& pod) {
  if (!pod.is_object()) return;
  Json kept = only(pod, {"apiVersion", "kind"});
  if (pod.contains("metadata")) kept["metadata"] = trimmedMetadata(pod["metadata"]);
  if (pod.contains("status")) kept["status"] = trimmedStatus(pod["status"]);
  pod = std::move(kept);
}

bool ownedByAnIpuJob(const Json& pod) {
  const Json& owners = member(member(pod, "metadata"), "ownerReferences");
  if (!owners.is_array()) return false;
  for (const Json& owner : owners) {
    if (isIpuJobReference(owner)) return true;
  }
  return false;
}

}  // namespace ipu::controllers
