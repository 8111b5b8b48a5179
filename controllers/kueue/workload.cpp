#include "kueue/workload.h"

#include <algorithm>

#include "common/digest.h"
#include "common/json_access.h"
#include "kube/quantity.h"

namespace ipu::controllers {
namespace {

constexpr std::size_t kMaxNameLength = 253;

const Json* conditionOf(const Json& workload, const char* type) {
  for (const Json& condition : arrayMember(member(workload, "status"), "conditions")) {
    if (stringMember(condition, "type") == type) return &condition;
  }
  return nullptr;
}

bool isTrue(const Json* condition) {
  return condition != nullptr && stringMember(*condition, "status") == "True";
}

// A quantity as JSON: a string, or a number the user wrote without quotes.
std::optional<std::string> quantityText(const Json& value) {
  if (value.is_string()) return value.get<std::string>();
  if (value.is_number()) return value.dump();
  return std::nullopt;
}

bool sameQuantityValue(const Json& a, const Json& b) {
  const auto x = quantityText(a);
  const auto y = quantityText(b);
  return x && y && kube::sameQuantity(*x, *y);
}

// Two maps of resource quantities (a missing map is an empty one) with the same names and amounts.
bool sameQuantities(const Json& ours, const Json& theirs) {
  const Json empty = Json::object();
  const Json& a = ours.is_object() ? ours : empty;
  const Json& b = theirs.is_object() ? theirs : empty;
  if (a.size() != b.size()) return false;
  for (const auto& [name, amount] : a.items()) {
    if (!b.contains(name) || !sameQuantityValue(amount, b.at(name))) return false;
  }
  return true;
}

// The controller owner reference a job's Workload carries (Kueue treats a Workload with the job-uid label and
// no owner as orphaned).
Json controllerReferenceTo(const Json& jobObject) {
  const Json& metadata = member(jobObject, "metadata");
  return {{"apiVersion", stringMember(jobObject, "apiVersion")},
          {"kind", stringMember(jobObject, "kind")},
          {"name", stringMember(metadata, "name")},
          {"uid", stringMember(metadata, "uid")},
          {"controller", true},
          {"blockOwnerDeletion", true}};
}

// The template of one pod set: the user's, with only labels and annotations kept of its metadata, and `ipus`
// added to the first container's requests.
Json podSetTemplate(const Json& workerTemplate, int ipus) {
  Json out = Json::object();
  const Json& metadata = member(workerTemplate, "metadata");
  Json kept = Json::object();
  for (const char* field : {"labels", "annotations"}) {
    if (member(metadata, field).is_object()) kept[field] = metadata[field];
  }
  if (!kept.empty()) out["metadata"] = std::move(kept);
  out["spec"] = member(workerTemplate, "spec");
  if (ipus > 0) {
    Json& containers = out["spec"]["containers"];
    if (containers.is_array() && !containers.empty() && containers[0].is_object()) {
      containers[0]["resources"]["requests"][kIpuResourceName] = std::to_string(ipus);
    }
  }
  return out;
}

std::int64_t generationOf(const Json& object) {
  const Json& generation = member(member(object, "metadata"), "generation");
  return generation.is_number_integer() ? generation.get<std::int64_t>() : 0;
}

Json condition(const std::string& type, bool status, const std::string& reason, const std::string& message,
               const std::string& now, std::int64_t generation) {
  return {{"type", type},
          {"status", status ? "True" : "False"},
          {"reason", reason.empty() ? type : reason},
          {"message", message.substr(0, 32768)},
          {"lastTransitionTime", now},
          {"observedGeneration", generation}};
}

// Sets a condition in a list of them as Kubernetes does: its transition time stays unless its status flips.
void setCondition(Json& conditions, Json next) {
  for (Json& existing : conditions) {
    if (stringMember(existing, "type") != stringMember(next, "type")) continue;
    if (stringMember(existing, "status") == stringMember(next, "status") &&
        existing.contains("lastTransitionTime"))
      next["lastTransitionTime"] = existing["lastTransitionTime"];
    existing = std::move(next);
    return;
  }
  conditions.push_back(std::move(next));
}

// A server-side apply body of the Workload's status: its identity (the uid too, so the apply never lands on a
// Workload made again under the name) and only the fields given.
Json statusApply(const Json& workload, Json status) {
  const Json& metadata = member(workload, "metadata");
  return {{"apiVersion", workloadResource().apiVersion()},
          {"kind", "Workload"},
          {"metadata",
           {{"name", stringMember(metadata, "name")},
            {"namespace", stringMember(metadata, "namespace")},
            {"uid", stringMember(metadata, "uid")}}},
          {"status", std::move(status)}};
}

}  // namespace

kube::ResourceRef workloadResource() {
  return {"kueue.x-k8s.io", "v1beta2", "workloads", true};
}
kube::ResourceRef resourceFlavorResource() {
  return {"kueue.x-k8s.io", "v1beta2", "resourceflavors", false};
}
kube::ResourceRef workloadPriorityClassResource() {
  return {"kueue.x-k8s.io", "v1beta2", "workloadpriorityclasses", false};
}
kube::ResourceRef admissionCheckResource() {
  return {"kueue.x-k8s.io", "v1beta2", "admissionchecks", false};
}

std::string localQueueOf(const Json& job) {
  return stringMember(member(member(job, "metadata"), "labels"), kKueueQueueNameLabel);
}

std::string workloadPriorityClassOf(const Json& job) {
  return stringMember(member(member(job, "metadata"), "labels"), kKueuePriorityClassLabel);
}

std::string workloadNameFor(const api::ObjectIdentity& identity) {
  const std::string suffix = "-" + sha256Hex(identity.uid, 5);
  std::string prefix = "ipujob-" + identity.name;
  if (prefix.size() + suffix.size() > kMaxNameLength) prefix.resize(kMaxNameLength - suffix.size());
  return prefix + suffix;
}

Json workloadPodSets(const api::IpuJobSpec& spec) {
  const int perWorker = spec.ipusPerJobInstance / std::max(1, spec.workersPerJobInstance);
  return Json::array({{{"name", "workers"},
                       {"count", spec.workerCount()},
                       {"template", podSetTemplate(spec.workerTemplate, perWorker)}}});
}

Json desiredWorkload(const Json& jobObject, const api::IpuJob& job, const WorkloadPriority& priority) {
  Json spec = {{"queueName", localQueueOf(jobObject)},
               {"podSets", workloadPodSets(job.spec)},
               {"priority", priority.value}};
  if (!priority.className.empty()) {
    spec["priorityClassRef"] = {
        {"group", "kueue.x-k8s.io"}, {"kind", "WorkloadPriorityClass"}, {"name", priority.className}};
  }
  Json owners = Json::array();
  owners.push_back(controllerReferenceTo(jobObject));
  return {{"apiVersion", workloadResource().apiVersion()},
          {"kind", "Workload"},
          {"metadata",
           {{"name", workloadNameFor(job.identity)},
            {"namespace", job.identity.ns},
            {"labels", {{kKueueJobUidLabel, job.identity.uid}}},
            {"ownerReferences", std::move(owners)}}},
          {"spec", std::move(spec)}};
}

std::string prebuiltWorkloadOf(const Json& job) {
  const Json& metadata = member(job, "metadata");
  const std::string annotated = stringMember(member(metadata, "annotations"), kKueuePrebuiltWorkloadKey);
  return annotated.empty() ? stringMember(member(metadata, "labels"), kKueuePrebuiltWorkloadKey) : annotated;
}

Json adoptionPatch(const Json& workload, const Json& jobObject) {
  const Json& metadata = member(workload, "metadata");
  // A merge patch replaces the whole list: the owners already there are kept.
  Json owners = Json::array();
  for (const Json& owner : arrayMember(metadata, "ownerReferences")) {
    if (member(owner, "controller") != Json(true)) owners.push_back(owner);
  }
  owners.push_back(controllerReferenceTo(jobObject));
  return {{"metadata",
           {{"resourceVersion", stringMember(metadata, "resourceVersion")},
            {"ownerReferences", std::move(owners)},
            {"labels", {{kKueueJobUidLabel, stringMember(member(jobObject, "metadata"), "uid")}}}}}};
}

bool podSetsMatch(const Json& desired, const Json& stored) {
  if (!desired.is_array() || !stored.is_array() || desired.size() != stored.size()) return false;
  for (std::size_t i = 0; i < desired.size(); ++i) {
    const Json& ours = desired[i];
    const Json& theirs = stored[i];
    if (stringMember(ours, "name") != stringMember(theirs, "name") ||
        !sameQuantityValue(member(ours, "count"), member(theirs, "count")))
      return false;
    const Json& ourSpec = member(member(ours, "template"), "spec");
    const Json& theirSpec = member(member(theirs, "template"), "spec");
    for (const char* list : {"initContainers", "containers"}) {
      const Json& ourContainers = arrayMember(ourSpec, list);
      const Json& theirContainers = arrayMember(theirSpec, list);
      if (ourContainers.size() != theirContainers.size()) return false;
      for (std::size_t c = 0; c < ourContainers.size(); ++c) {
        const Json& ourResources = member(ourContainers[c], "resources");
        const Json& theirResources = member(theirContainers[c], "resources");
        if (stringMember(ourContainers[c], "name") != stringMember(theirContainers[c], "name") ||
            !sameQuantities(member(ourResources, "requests"), member(theirResources, "requests")) ||
            !sameQuantities(member(ourResources, "limits"), member(theirResources, "limits")))
          return false;
      }
    }
  }
  return true;
}

WorkloadView viewOf(const Json& workload) {
  WorkloadView view;
  for (const Json& owner : arrayMember(member(workload, "metadata"), "ownerReferences")) {
    if (member(owner, "controller") == Json(true)) view.ownerUid = stringMember(owner, "uid");
  }
  const Json* reserved = conditionOf(workload, "QuotaReserved");
  view.quotaReserved = isTrue(reserved);
  view.admitted = isTrue(conditionOf(workload, "Admitted"));
  view.finished = isTrue(conditionOf(workload, "Finished"));
  view.podsReady = isTrue(conditionOf(workload, "PodsReady"));
  view.active = member(member(workload, "spec"), "active") != Json(false);
  if (const Json* evicted = conditionOf(workload, "Evicted"); isTrue(evicted)) {
    view.evicted = true;
    view.evictedReason = stringMember(*evicted, "reason");
    view.evictedMessage = stringMember(*evicted, "message");
  }
  const Json& status = member(workload, "status");
  const Json& admission = member(status, "admission");
  view.clusterQueue = stringMember(admission, "clusterQueue");
  for (const Json& assignment : arrayMember(admission, "podSetAssignments")) {
    auto& names = view.flavors[stringMember(assignment, "name")];
    const Json& flavors = member(assignment, "flavors");
    if (!flavors.is_object()) continue;
    for (const auto& [resource, flavor] : flavors.items()) {
      if (flavor.is_string() && std::find(names.begin(), names.end(), flavor) == names.end())
        names.push_back(flavor.get<std::string>());
    }
  }
  for (const Json& check : arrayMember(status, "admissionChecks")) {
    view.checks.push_back(
        {stringMember(check, "name"), stringMember(check, "state"), stringMember(check, "message")});
  }
  if (!view.quotaReserved) {
    view.waiting = reserved != nullptr ? stringMember(*reserved, "message") : "";
  } else if (!view.admitted) {
    for (const Json& check : arrayMember(status, "admissionChecks")) {
      if (stringMember(check, "state") == "Ready") continue;
      if (!view.waiting.empty()) view.waiting += "; ";
      view.waiting += "admission check " + stringMember(check, "name") + " " + stringMember(check, "state");
      if (const std::string message = stringMember(check, "message"); !message.empty())
        view.waiting += ": " + message;
    }
  }
  return view;
}

std::optional<AdmissionCheckEntry> placementCheckOf(const WorkloadView& view,
                                                    const std::set<std::string>& ours) {
  for (const AdmissionCheckEntry& check : view.checks) {
    if (ours.contains(check.name)) return check;
  }
  return std::nullopt;
}

Json admissionCheckApply(const Json& workload, const std::string& check, const std::string& state,
                         const std::string& message, const std::string& now) {
  std::string since = now;
  for (const Json& entry : arrayMember(member(workload, "status"), "admissionChecks")) {
    if (stringMember(entry, "name") == check && stringMember(entry, "state") == state &&
        !stringMember(entry, "lastTransitionTime").empty())
      since = stringMember(entry, "lastTransitionTime");
  }
  return statusApply(workload, {{"admissionChecks", Json::array({{{"name", check},
                                                                  {"state", state},
                                                                  {"message", message.substr(0, 32768)},
                                                                  {"lastTransitionTime", since}}})}});
}

bool answersCheck(const Json& admissionCheck) {
  return stringMember(member(admissionCheck, "spec"), "controllerName") == kIpuPlacementCheckController;
}

std::optional<Json> activePatch(const Json& admissionCheck, const std::string& now) {
  const std::int64_t generation = generationOf(admissionCheck);
  Json conditions = arrayMember(member(admissionCheck, "status"), "conditions");
  if (!conditions.is_array()) conditions = Json::array();
  for (const Json& existing : conditions) {
    if (stringMember(existing, "type") == "Active" && stringMember(existing, "status") == "True" &&
        member(existing, "observedGeneration") == Json(generation))
      return std::nullopt;
  }
  setCondition(conditions,
               condition("Active", true, "Active",
                         "The IPU placement check of ipu-operator: Ready when the job's partitions "
                         "can be placed on the IPU-POD now (IPUJobs' Workloads only)",
                         now, generation));
  return Json{{"status", {{"conditions", std::move(conditions)}}}};
}

std::optional<QueuePlacement> placementFrom(const WorkloadView& view, const FlavorLookup& lookup,
                                            std::string& missing) {
  QueuePlacement placement;
  for (const auto& [podSet, names] : view.flavors) {
    for (const std::string& name : names) {
      const auto flavor = lookup.flavors.find(name);
      if (flavor == lookup.flavors.end()) {
        missing = name;
        return std::nullopt;
      }
      const Json& spec = member(flavor->second, "spec");
      if (const Json& labels = member(spec, "nodeLabels"); labels.is_object()) {
        for (const auto& [key, value] : labels.items()) {
          if (value.is_string()) placement.nodeSelector[key] = value.get<std::string>();
        }
      }
      for (const Json& toleration : arrayMember(spec, "tolerations")) {
        if (std::find(placement.tolerations.begin(), placement.tolerations.end(), toleration) ==
            placement.tolerations.end())
          placement.tolerations.push_back(toleration);
      }
    }
  }
  return placement;
}

Json workloadConditionApply(const Json& workload, const std::string& type, bool status,
                            const std::string& reason, const std::string& message, const std::string& now) {
  return statusApply(
      workload,
      {{"conditions", Json::array({condition(type, status, reason, message, now, generationOf(workload))})}});
}

Json clearedAdmissionPatch(const Json& workload, const std::string& now) {
  const Json& metadata = member(workload, "metadata");
  Json conditions = arrayMember(member(workload, "status"), "conditions");
  if (!conditions.is_array()) conditions = Json::array();
  const std::int64_t generation = generationOf(workload);
  std::string reason = "Evicted";
  std::string message;
  if (const Json* evicted = conditionOf(workload, "Evicted")) {
    reason = stringMember(*evicted, "reason");
    message = stringMember(*evicted, "message");
  }
  const bool requeued = reason == "Preempted" || reason == "NodeFailures";
  setCondition(conditions, condition("QuotaReserved", false, "Pending", message, now, generation));
  setCondition(conditions, condition("Admitted", false, "NoReservation", "The workload has no reservation",
                                     now, generation));
  setCondition(conditions, condition("Requeued", requeued, reason, message, now, generation));
  // Its pods are gone: ready again only when the next admission's all run.
  if (conditionOf(workload, "PodsReady") != nullptr) {
    setCondition(conditions, condition("PodsReady", false, "WaitForStart",
                                       "Not all pods are ready or succeeded", now, generation));
  }
  return {{"metadata", {{"resourceVersion", stringMember(metadata, "resourceVersion")}}},
          {"status", {{"admission", nullptr}, {"conditions", std::move(conditions)}}}};
}

}  // namespace ipu::controllers
