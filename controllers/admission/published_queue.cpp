#include "admission/published_queue.h"

#include <cstdio>
#include <set>
#include <utility>

#include "api/ipupod.h"
#include "common/json_access.h"
#include "common/time_format.h"

namespace ipu::controllers {
namespace {

using Json = nlohmann::json;

template <typename Integer>
std::optional<Integer> integerMember(const Json& object, const char* name) {
  const Json& value = member(object, name);
  if (!value.is_number_integer()) return std::nullopt;
  return value.get<Integer>();
}

Json endJson(const std::optional<Clock::WallTime>& endsBy) {
  return endsBy ? Json(formatTime(*endsBy)) : Json();
}

void putIfSet(Json& json, const char* name, const Json& value) {
  if (!value.is_null()) json[name] = value;
}

Json usageJson(const NamespaceUsage& usage) {
  return {{"runningIPUs", usage.runningIpus},
          {"reservedIPUs", usage.reservedIpus},
          {"admittedJobs", usage.admittedJobs}};
}

}  // namespace

Json queueStatusOf(const PlanInputs& inputs,
                   const std::function<std::string(const std::string&)>& namespaceId) {
  const auto idOf = [&](const std::string& ns) { return ns.empty() ? std::string() : namespaceId(ns); };
  Json status{{"strategy", queueingStrategyName(inputs.strategy)},
              {"controllers", Json::array()},
              {"waiting", Json::array()},
              {"reservations", Json::array()}};
  for (const ControllerInputs& controller : inputs.controllers) {
    const vipu::Topology& topology = controller.planner->topology();
    Json entry{{"name", controller.name},
               {"cluster", topology.clusterId()},
               {"ilds", topology.ildCount()},
               {"ildSize", topology.ildSize()},
               {"holders", Json::array()}};
    for (const Occupant& occupant : controller.occupants) {
      Json holder{{"ipus", api::formatIpuRanges(occupant.ipus)}};
      putIfSet(holder, "namespace", occupant.ns.empty() ? Json() : Json(idOf(occupant.ns)));
      putIfSet(holder, "jobUID", occupant.uid.empty() ? Json() : Json(occupant.uid));
      putIfSet(holder, "endsBy", endJson(occupant.endsBy));
      putIfSet(holder, "runsForSeconds", occupant.runsForSeconds ? Json(*occupant.runsForSeconds) : Json());
      entry["holders"].push_back(std::move(holder));
    }
    status["controllers"].push_back(std::move(entry));
  }
  std::vector<AdmissionRequest> queue = inputs.queue;
  sortQueue(queue);
  for (const AdmissionRequest& request : queue) {
    Json entry{{"jobUID", request.uid},          {"namespace", idOf(request.ns)},
               {"priority", request.priority},   {"created", request.creationTimestamp},
               {"instances", request.instances}, {"ipusPerInstance", request.ipusPerInstance}};
    if (!request.controllers.empty()) entry["controllers"] = request.controllers;
    if (request.activeDeadlineSeconds) entry["activeDeadlineSeconds"] = *request.activeDeadlineSeconds;
    status["waiting"].push_back(std::move(entry));
  }
  for (const Reservation& reservation : inputs.reservations) {
    Json entry{{"controller", reservation.controller},
               {"instances", reservation.instances},
               {"ipusPerInstance", reservation.ipusPerInstance}};
    putIfSet(entry, "namespace", reservation.ns.empty() ? Json() : Json(idOf(reservation.ns)));
    putIfSet(entry, "jobUID", reservation.uid.empty() ? Json() : Json(reservation.uid));
    putIfSet(entry, "endsBy", endJson(reservation.endsBy));
    status["reservations"].push_back(std::move(entry));
  }
  if (inputs.quotas) {
    Json quotas{{"missingQuota", missingQuotaPolicyName(inputs.quotas->missingQuota)},
                {"namespaces", Json::array()}};
    // Every namespace with a quota that counts (one with jobs waiting or holding IPUs), or with use.
    std::set<std::string> namespaces;
    for (const AdmissionRequest& request : inputs.queue) namespaces.insert(request.ns);
    for (const auto& [ns, usage] : inputs.quotas->usage) namespaces.insert(ns);
    for (const std::string& ns : namespaces) {
      Json entry{{"id", idOf(ns)}};
      if (const auto quota = inputs.quotas->quotas.find(ns); quota != inputs.quotas->quotas.end()) {
        Json limits{{"maxIPUs", quota->second.maxIpus}};
        if (quota->second.maxJobs) limits["maxJobs"] = *quota->second.maxJobs;
        if (quota->second.maxPriority) limits["maxPriority"] = *quota->second.maxPriority;
        if (!quota->second.invalid.empty()) limits["invalid"] = true;
        entry["quota"] = std::move(limits);
      }
      if (const auto usage = inputs.quotas->usage.find(ns); usage != inputs.quotas->usage.end()) {
        entry["usage"] = usageJson(usage->second);
      }
      quotas["namespaces"].push_back(std::move(entry));
    }
    status["quotas"] = std::move(quotas);
  }
  return status;
}

Result<PlanInputs> planInputsFromQueueStatus(const Json& status) {
  PlanInputs inputs;
  if (!parseQueueingStrategy(stringMember(status, "strategy"), inputs.strategy)) {
    return makeError(ErrorCode::kInvalidArgument, "the IPUQueue names no queueing strategy");
  }
  for (const Json& entry : arrayMember(status, "controllers")) {
    const auto ilds = integerMember<std::uint32_t>(entry, "ilds");
    const auto ildSize = integerMember<std::uint32_t>(entry, "ildSize");
    auto topology =
        vipu::Topology::create(stringMember(entry, "cluster"), ilds.value_or(0), ildSize.value_or(0));
    if (!topology) return topology.error();
    ControllerInputs controller{
        stringMember(entry, "name"), std::make_shared<vipu::PartitionPlanner>(*topology), {}};
    for (const Json& holder : arrayMember(entry, "holders")) {
      auto ipus = api::parseIpuRanges(stringMember(holder, "ipus"), topology->totalIpus());
      if (!ipus) return ipus.error();
      controller.occupants.push_back(
          {std::move(*ipus), stringMember(holder, "namespace"), stringMember(holder, "jobUID"),
           parseTime(stringMember(holder, "endsBy")), integerMember<std::int64_t>(holder, "runsForSeconds")});
    }
    inputs.controllers.push_back(std::move(controller));
  }
  int index = 0;
  for (const Json& entry : arrayMember(status, "waiting")) {
    AdmissionRequest request;
    // Published in queue order: a key that sorts as the index keeps the order among equal times.
    char key[32];
    std::snprintf(key, sizeof key, "queued/%08d", index++);
    request.key = key;
    request.uid = stringMember(entry, "jobUID");
    request.ns = stringMember(entry, "namespace");
    request.priority = integerMember<int>(entry, "priority").value_or(0);
    request.creationTimestamp = stringMember(entry, "created");
    request.instances = integerMember<std::uint32_t>(entry, "instances").value_or(1);
    request.ipusPerInstance = integerMember<std::uint32_t>(entry, "ipusPerInstance").value_or(0);
    for (const Json& name : arrayMember(entry, "controllers")) {
      if (name.is_string()) request.controllers.push_back(name.get<std::string>());
    }
    request.activeDeadlineSeconds = integerMember<std::int64_t>(entry, "activeDeadlineSeconds");
    inputs.queue.push_back(std::move(request));
  }
  for (const Json& entry : arrayMember(status, "reservations")) {
    inputs.reservations.push_back(
        {stringMember(entry, "controller"), integerMember<std::uint32_t>(entry, "instances").value_or(0),
         integerMember<std::uint32_t>(entry, "ipusPerInstance").value_or(0), stringMember(entry, "namespace"),
         stringMember(entry, "jobUID"), parseTime(stringMember(entry, "endsBy"))});
  }
  const Json& quotas = member(status, "quotas");
  if (quotas.is_object()) {
    QuotaRules rules;
    if (!parseMissingQuotaPolicy(stringMember(quotas, "missingQuota"), rules.missingQuota)) {
      return makeError(ErrorCode::kInvalidArgument,
                       "the IPUQueue names no policy for namespaces without a quota");
    }
    for (const Json& entry : arrayMember(quotas, "namespaces")) {
      const std::string id = stringMember(entry, "id");
      const Json& quota = member(entry, "quota");
      if (quota.is_object()) {
        NamespaceQuota& limits = rules.quotas[id];
        limits.maxIpus = integerMember<std::uint64_t>(quota, "maxIPUs").value_or(0);
        limits.maxJobs = integerMember<std::uint64_t>(quota, "maxJobs");
        limits.maxPriority = integerMember<std::int64_t>(quota, "maxPriority");
        if (member(quota, "invalid") == Json(true))
          limits.invalid = "an IPUQuota of the namespace cannot be read";
      }
      const Json& usage = member(entry, "usage");
      if (usage.is_object()) {
        rules.usage[id] = {integerMember<std::uint64_t>(usage, "runningIPUs").value_or(0),
                           integerMember<std::uint64_t>(usage, "reservedIPUs").value_or(0),
                           integerMember<std::uint64_t>(usage, "admittedJobs").value_or(0)};
      }
    }
    inputs.quotas = std::move(rules);
  }
  return inputs;
}

}  // namespace ipu::controllers
