#include "api/ipujob_status.h"

#include <utility>

#include "api/job_lifecycle.h"
#include "common/json_access.h"

namespace ipu::api {
namespace {

template <typename T>
std::optional<T> optionalNumber(const Json& object, const char* name) {
  const Json& value = member(object, name);
  if (!value.is_number_integer()) return std::nullopt;
  return value.get<T>();
}

std::optional<std::string> optionalString(const Json& object, const char* name) {
  const Json& value = member(object, name);
  if (!value.is_string()) return std::nullopt;
  return value.get<std::string>();
}

Condition parseCondition(const Json& json) {
  return {stringMember(json, "type"),
          stringMember(json, "status"),
          stringMember(json, "reason"),
          stringMember(json, "message"),
          optionalNumber<int64_t>(json, "observedGeneration").value_or(0),
          stringMember(json, "lastTransitionTime")};
}

PartitionRecord parsePartition(const Json& json) {
  return {stringMember(json, "id"),
          optionalNumber<int>(json, "instance").value_or(0),
          optionalNumber<int>(json, "size").value_or(0),
          stringMember(json, "controller"),
          stringMember(json, "ipus"),
          stringMember(json, "state")};
}

std::optional<AdmittedShape> parseShape(const Json& json) {
  if (!json.is_object()) return std::nullopt;
  return AdmittedShape{optionalNumber<int>(json, "jobInstances").value_or(0),
                       optionalNumber<int>(json, "ipusPerJobInstance").value_or(0),
                       optionalNumber<int>(json, "workersPerJobInstance").value_or(0)};
}

std::optional<RuntimeSecretRecord> parseRuntimeSecret(const Json& json) {
  // Without a name there is nothing to mount: read as absent, so a new Secret is made.
  if (!json.is_object() || stringMember(json, "name").empty()) return std::nullopt;
  return RuntimeSecretRecord{stringMember(json, "name"), stringMember(json, "caSha256")};
}

std::optional<InteractiveStatus> parseInteractive(const Json& json) {
  // Without the time it started there is no session to go on with: read as absent, so it starts again.
  if (!json.is_object() || stringMember(json, "runningSince").empty()) return std::nullopt;
  return InteractiveStatus{stringMember(json, "runningSince"),
                           optionalNumber<int64_t>(json, "ttlSeconds").value_or(0),
                           stringMember(json, "expiresAt")};
}

template <typename T>
void putOptional(Json& out, const char* name, const std::optional<T>& value) {
  if (value) out[name] = *value;
}

void putNonEmpty(Json& out, const char* name, const std::string& value) {
  if (!value.empty()) out[name] = value;
}

}  // namespace

bool PartitionRecord::held() const {
  return state != kPartitionReleased && state != kPartitionAbandoned;
}

std::vector<PartitionRecord> IpuJobStatus::heldPartitions() const {
  std::vector<PartitionRecord> held;
  for (const auto& partition : partitions) {
    if (partition.held()) held.push_back(partition);
  }
  return held;
}

const Condition* IpuJobStatus::condition(const std::string& type) const {
  for (const auto& existing : conditions) {
    if (existing.type == type) return &existing;
  }
  return nullptr;
}

std::string IpuJobStatus::admittedAt() const {
  const Condition* admitted = condition("Admitted");
  return admitted && admitted->isTrue() ? admitted->lastTransitionTime : "";
}

void IpuJobStatus::setCondition(Condition condition, const std::string& now) {
  for (auto& existing : conditions) {
    if (existing.type != condition.type) continue;
    condition.lastTransitionTime = existing.status == condition.status && !existing.lastTransitionTime.empty()
                                       ? existing.lastTransitionTime
                                       : now;
    existing = std::move(condition);
    return;
  }
  condition.lastTransitionTime = now;
  conditions.push_back(std::move(condition));
}

std::vector<PartitionRecord> heldPartitionsOf(const Json& job) {
  std::vector<PartitionRecord> held;
  if (stringMember(member(job, "spec"), "managedBy") == kMultiKueueControllerName) return held;
  if (const Json& partitions = member(member(job, "status"), "partitions"); partitions.is_array()) {
    for (const Json& partition : partitions) {
      if (!partition.is_object()) continue;
      PartitionRecord record = parsePartition(partition);
      if (record.held()) held.push_back(std::move(record));
    }
  }
  return held;
}

IpuJobStatus parseIpuJobStatus(const Json& status) {
  IpuJobStatus parsed;
  parsed.phase = stringMember(status, "phase");
  parsed.launcherStatus = stringMember(status, "launcherStatus");
  parsed.lastMessage = stringMember(status, "lastMessage");
  parsed.currentReplicas = optionalNumber<int>(status, "currentReplicas");
  parsed.desiredReplicas = optionalNumber<int>(status, "desiredReplicas");
  parsed.currentInstances = optionalNumber<int>(status, "currentInstances");
  parsed.restartCount = optionalNumber<int>(status, "restartCount");
  parsed.queuePosition = optionalNumber<int>(status, "queuePosition");
  parsed.startTime = optionalString(status, "startTime");
  parsed.completionTime = optionalString(status, "completionTime");
  parsed.observedGeneration = optionalNumber<int64_t>(status, "observedGeneration");
  parsed.selector = optionalString(status, "selector");
  if (const Json& conditions = member(status, "conditions"); conditions.is_array()) {
    for (const Json& condition : conditions) {
      if (condition.is_object()) parsed.conditions.push_back(parseCondition(condition));
    }
  }
  if (const Json& partitions = member(status, "partitions"); partitions.is_array()) {
    for (const Json& partition : partitions) {
      if (partition.is_object()) parsed.partitions.push_back(parsePartition(partition));
    }
  }
  parsed.admittedShape = parseShape(member(status, "admittedShape"));
  parsed.runtimeSecret = parseRuntimeSecret(member(status, "runtimeSecret"));
  parsed.interactive = parseInteractive(member(status, "interactive"));
  if (const Json& outputs = member(status, "outputs"); outputs.is_object()) {
    parsed.outputs = OutputsStatus{stringMember(outputs, "path"), stringMember(outputs, "retainedUntil")};
  }
  if (const Json& kueue = member(status, "kueue"); kueue.is_object()) {
    parsed.kueue = KueueStatus{stringMember(kueue, "workload"), stringMember(kueue, "localQueue"),
                               stringMember(kueue, "clusterQueue"), member(kueue, "admitted") == Json(true),
                               member(kueue, "awaitingPlacement") == Json(true)};
  }
  if (const Json& estimate = member(status, "startEstimate"); estimate.is_object()) {
    parsed.startEstimate =
        StartEstimateStatus{stringMember(estimate, "startsBy"), stringMember(estimate, "unknown"),
                            stringMember(estimate, "updatedAt")};
  }
  return parsed;
}

Json toJson(const IpuJobStatus& status) {
  Json out = Json::object();
  putNonEmpty(out, "phase", status.phase);
  putNonEmpty(out, "launcherStatus", status.launcherStatus);
  putNonEmpty(out, "lastMessage", status.lastMessage);
  putOptional(out, "currentReplicas", status.currentReplicas);
  putOptional(out, "desiredReplicas", status.desiredReplicas);
  putOptional(out, "currentInstances", status.currentInstances);
  putOptional(out, "restartCount", status.restartCount);
  putOptional(out, "queuePosition", status.queuePosition);
  putOptional(out, "startTime", status.startTime);
  putOptional(out, "completionTime", status.completionTime);
  putOptional(out, "observedGeneration", status.observedGeneration);
  putOptional(out, "selector", status.selector);
  if (!status.conditions.empty()) {
    Json conditions = Json::array();
    for (const auto& c : status.conditions) {
      conditions.push_back({{"type", c.type},
                            {"status", c.status},
                            {"reason", c.reason},
                            {"message", c.message},
                            {"observedGeneration", c.observedGeneration},
                            {"lastTransitionTime", c.lastTransitionTime}});
    }
    out["conditions"] = std::move(conditions);
  }
  if (!status.partitions.empty()) {
    Json partitions = Json::array();
    for (const auto& p : status.partitions) {
      partitions.push_back({{"id", p.id},
                            {"instance", p.instance},
                            {"size", p.size},
                            {"controller", p.controller},
                            {"ipus", p.ipus},
                            {"state", p.state}});
    }
    out["partitions"] = std::move(partitions);
  }
  if (const auto& shape = status.admittedShape) {
    out["admittedShape"] = {{"jobInstances", shape->jobInstances},
                            {"ipusPerJobInstance", shape->ipusPerJobInstance},
                            {"workersPerJobInstance", shape->workersPerJobInstance}};
  }
  if (const auto& secret = status.runtimeSecret) {
    out["runtimeSecret"] = {{"name", secret->name}, {"caSha256", secret->caSha256}};
  }
  if (const auto& interactive = status.interactive) {
    out["interactive"] = {{"runningSince", interactive->runningSince},
                          {"ttlSeconds", interactive->ttlSeconds},
                          {"expiresAt", interactive->expiresAt}};
  }
  if (const auto& outputs = status.outputs) {
    out["outputs"] = {{"path", outputs->path}, {"retainedUntil", outputs->retainedUntil}};
  }
  if (const auto& kueue = status.kueue) {
    Json json{
        {"workload", kueue->workload}, {"localQueue", kueue->localQueue}, {"admitted", kueue->admitted}};
    putNonEmpty(json, "clusterQueue", kueue->clusterQueue);
    if (kueue->awaitingPlacement) json["awaitingPlacement"] = true;
    out["kueue"] = std::move(json);
  }
  if (const auto& estimate = status.startEstimate) {
    Json json{{"updatedAt", estimate->updatedAt}};
    putNonEmpty(json, "startsBy", estimate->startsBy);
    putNonEmpty(json, "unknown", estimate->unknown);
    out["startEstimate"] = std::move(json);
  }
  return out;
}

Json statusPatch(const IpuJobStatus& from, const IpuJobStatus& to) {
  const Json before = toJson(from);
  const Json after = toJson(to);
  Json patch = Json::object();
  for (const auto& [name, value] : after.items()) {
    if (!before.contains(name) || before[name] != value) patch[name] = value;
  }
  for (const auto& [name, value] : before.items()) {
    if (!after.contains(name)) patch[name] = nullptr;
  }
  return patch;
}

}  // namespace ipu::api
