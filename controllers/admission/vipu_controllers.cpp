#include "admission/vipu_controllers.h"

#include <utility>

#include "common/freed_memory.h"
#include "common/log.h"
#include "vipu/topology_discovery.h"

namespace ipu::controllers {

VipuControllers::VipuControllers(std::vector<VipuTarget> targets, Clock& clock, Clock::Duration topologyTtl)
    : targets_(std::move(targets)), clock_(clock), topologyTtl_(topologyTtl) {
  for (const auto& target : targets_) reading_.try_emplace(target.name, std::make_unique<std::mutex>());
}

const VipuTarget* VipuControllers::find(const std::string& name) const {
  for (const auto& target : targets_) {
    if (target.name == name) return &target;
  }
  return nullptr;
}

std::shared_ptr<const vipu::PartitionPlanner> VipuControllers::held(const std::string& name,
                                                                    TopologyRead read) {
  std::lock_guard lock(mutex_);
  const auto cached = planners_.find(name);
  if (cached == planners_.end()) return nullptr;
  if (read == TopologyRead::kIfDue && clock_.now() - cached->second.fetched >= topologyTtl_) return nullptr;
  return cached->second.planner;
}

Result<std::shared_ptr<const vipu::PartitionPlanner>> VipuControllers::planner(const std::string& name,
                                                                               TopologyRead read) {
  const VipuTarget* target = find(name);
  if (target == nullptr) return makeError(ErrorCode::kNotFound, unknownControllerMessage(name, targets_));
  if (auto planner = held(name, read)) return planner;
  // One read at a time per controller, outside the cache's lock: a slow controller holds up only those
  // waiting for its own topology, and a caller that waited here finds the read it waited for done.
  std::lock_guard reading(*reading_.at(name));
  if (auto planner = held(name, read)) return planner;
  auto attributes = target->api->listIpuAttributes({});
  if (!attributes) return attributes.error();
  auto topology = vipu::topologyFromAttributes(*attributes);
  if (!topology) {
    return makeError(topology.error().code, "V-IPU controller " + name + ": " + topology.error().message);
  }
  // The reply and its attributes (a map per IPU: tens of MB for a POD of thousands of IPUs) are gone now;
  // their pages go back at once instead of at the next periodic release.
  *attributes = {};
  releaseFreedMemory();
  std::lock_guard lock(mutex_);
  auto& entry = planners_[name];
  if (entry.planner && entry.planner->topology() == *topology) {
    // Unchanged: the planner everyone holds stays, so nothing that compares planners sees a change.
    entry.fetched = clock_.now();
    return entry.planner;
  }
  log::info("V-IPU controller topology", {{"controller", name}, {"topology", topology->describe()}});
  entry = {std::make_shared<const vipu::PartitionPlanner>(*topology), clock_.now()};
  return entry.planner;
}

void VipuControllers::invalidate(const std::string& name) {
  std::lock_guard lock(mutex_);
  planners_.erase(name);
}

std::string unknownControllerMessage(const std::string& name, const std::vector<VipuTarget>& targets) {
  std::string names;
  for (const auto& target : targets) names += (names.empty() ? "" : ", ") + target.name;
  return "there is no V-IPU controller named '" + name +
         "' (configured: " + (names.empty() ? "none" : names) + ")";
}

}  // namespace ipu::controllers
